"""Helpers shared by the builders: naming official files by split, loading official or Hub data."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lsplits.data.files import read_records
from lsplits.data.loading import (
    LoadedData,
    LoadOptions,
    bulk_loading,
    load_sources,
    parse_data_files,
    prepare_examples,
)
from lsplits.data.tasks import Task
from lsplits.errors import DataError

Record = dict[str, Any]
Sources = list[tuple[str, list[Record], str]]


def official_split_name(path: str | Path) -> str:
    """Guess the split of an official file from its name: *train* -> train, *dev*/*val* -> validation, *test* -> test."""
    stem = Path(path).stem.lower()
    for needle, split in (("train", "train"), ("dev", "validation"), ("val", "validation"), ("test", "test")):
        if needle in stem:
            return split
    return Path(path).stem


def load_official(task: Task, hub_id: str, hub_splits: Sequence[str], data_files: Sequence[str] | None,
                  convert: Callable[[Record], Record] | None = None, *, options: LoadOptions | None = None,
                  sources: Sources | None = None) -> LoadedData:
    """Pool ``hub_splits`` of ``hub_id`` (or local official files, or ``sources`` already read), convert
    records, check and filter.

    Local files named without ``split=`` get their split from the file name, so ids read
    ``validation-12`` whether the data came from the Hub or from the official files. ``sources``
    (``[(split, records, description)]``, what :func:`lsplits.api.likelihood_splits` reads from a
    Dataset, DataFrame or list) replaces both.
    """
    with bulk_loading():  # reading, converting and checking many records
        if sources is None and data_files:
            sources = []
            for item in data_files:
                name, path = parse_data_files([item])[0]
                if "=" not in item:
                    name = official_split_name(path)
                sources.append((name, read_records(path), str(path)))
        elif sources is None:
            sources = load_sources(hub_id, splits=hub_splits)
        if convert is not None:
            sources = [(name, _convert_all(convert, records, desc), desc) for name, records, desc in sources]
        return prepare_examples(sources, task, options)


def _convert_all(convert: Callable[[Record], Record], records: list[Record], source: str) -> list[Record]:
    """``convert`` applied to every record; a record lacking a field it reads is a DataError naming it."""
    converted = []
    for index, record in enumerate(records):
        try:
            converted.append(convert(record))
        except KeyError as exc:
            raise DataError(f"missing field (the record has: {', '.join(map(str, record)) or 'no fields'})",
                            source=source, line=index + 1, field=str(exc.args[0])) from None
    return converted
