"""Loading examples from local files (JSONL, JSON, CSV, parquet) or the Hugging Face Hub, with stable ids.

Every loaded example carries ``id``: the dataset's own unique ``id`` field when it has one,
otherwise ``"{source}-{index}"`` where ``source`` is the split name (Hub) or the split/file name
(local files) and ``index`` the 0-based position in that source. Ids therefore point back to where
an example came from and stay the same from run to run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import DataError
from .tasks import Task

logger = logging.getLogger(__name__)

ID_FIELD = "id"
SOURCE_FIELD = "source_split"


@dataclass
class LoadedData:
    """Examples pooled from one or more sources, in source order, plus bookkeeping for reports."""

    examples: list[dict[str, Any]]
    columns: list[str]
    source: str
    dropped: dict[str, int]


def parse_data_files(data_files: Sequence[str]) -> list[tuple[str, Path]]:
    """Turn ``["train=a.jsonl", "b.csv"]`` into ``[("train", a.jsonl), ("b", b.csv)]``."""
    pairs = []
    for item in data_files:
        name, sep, path = item.partition("=")
        if not sep:
            path, name = item, Path(item).stem
        pairs.append((name, Path(path)))
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise DataError(f"two data files share the source name in {list(data_files)}; name them split=path")
    return pairs


def read_records(path: Path) -> list[dict[str, Any]]:
    """Read one local file into a list of dicts; errors name the file and line."""
    if not path.exists():
        raise DataError("file not found", source=str(path))
    suffix = "".join(path.suffixes[-1:]).lower()
    if suffix in {".jsonl", ".ndjson"}:
        return _read_jsonl(path)
    if suffix == ".json":
        text = path.read_text(encoding="utf-8")
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return _read_jsonl(path)
        if isinstance(data, dict) and "data" in data:
            data = data["data"]
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise DataError("expected a JSON list of objects (or JSON Lines)", source=str(path))
        return data
    if suffix in {".csv", ".tsv"}:
        import pandas as pd

        try:
            frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", keep_default_na=False)
        except Exception as exc:  # pandas raises many types; report them uniformly
            raise DataError(f"cannot read CSV: {exc}", source=str(path)) from exc
        return frame.to_dict("records")
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    raise DataError(f"unsupported file type {suffix or '(none)'}; use .jsonl, .json, .csv, .tsv or .parquet",
                    source=str(path))


def read_jsonl(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-empty line of a JSON Lines file; errors name file and line."""
    rows = []
    with Path(path).open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"invalid JSON: {exc.msg}", source=str(path), line=line_no) from exc
            if not isinstance(record, dict):
                raise DataError("expected a JSON object", source=str(path), line=line_no)
            rows.append((line_no, record))
    return rows


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [record for _, record in read_jsonl(path)]


def load_sources(data: str | None = None, data_files: Sequence[str] | None = None,
                 splits: Sequence[str] | None = None) -> list[tuple[str, list[dict[str, Any]], str]]:
    """Load raw records per source: ``[(source name, records, description for errors)]``.

    ``data`` is a Hub dataset id (all its splits, or ``splits``); ``data_files`` are local files.
    """
    if data_files:
        return [(name, read_records(path), str(path)) for name, path in parse_data_files(data_files)]
    if not data:
        raise DataError("no data given: pass a Hub dataset id or --data-files")
    if Path(data).is_file():
        path = Path(data)
        return [(path.stem, read_records(path), str(path))]
    import datasets

    try:
        dataset_dict = datasets.load_dataset(data)
    except Exception as exc:  # offline, missing repo, ...: one readable line
        raise DataError(f"cannot load the dataset from the Hub or folder: {exc}", source=data) from exc
    names = list(splits) if splits else list(dataset_dict)
    return [(name, dataset_dict[name].to_list(), f"{data}[{name}]") for name in names]


def prepare_examples(sources: list[tuple[str, list[dict[str, Any]], str]], task: Task) -> LoadedData:
    """Check fields, assign stable ids, apply the task's filters; raises DataError on bad input."""
    examples: list[dict[str, Any]] = []
    dropped: dict[str, int] = {}
    columns: list[str] = []
    seen_ids: dict[str, str] = {}
    for source_name, records, description in sources:
        if not records:
            continue
        first = list(records[0])
        task.check_fields(first, description)
        columns.extend(c for c in first if c not in columns)
        use_own_ids = ID_FIELD in first
        for index, record in enumerate(records):
            for name in first:
                if name not in record:
                    raise DataError("missing field", source=description, line=index + 1, field=name)
            example_id = str(record[ID_FIELD]) if use_own_ids else f"{source_name}-{index}"
            if example_id in seen_ids:
                raise DataError(f"duplicate id (also in {seen_ids[example_id]})", source=description,
                                example=example_id)
            seen_ids[example_id] = description
            reason = task.keep(record)
            if reason is not None:
                dropped[reason] = dropped.get(reason, 0) + 1
                continue
            example = {ID_FIELD: example_id, **{k: v for k, v in record.items() if k != ID_FIELD}}
            example.setdefault(SOURCE_FIELD, source_name)
            examples.append(example)
    description = ", ".join(d for _, _, d in sources)
    if not examples:
        raise DataError("the dataset is empty after loading and filtering", source=description or None)
    for reason, count in dropped.items():
        logger.info("dropped %d examples: %s", count, reason)
    if ID_FIELD not in columns:
        columns.insert(0, ID_FIELD)
    if SOURCE_FIELD not in columns:
        columns.append(SOURCE_FIELD)
    return LoadedData(examples=examples, columns=columns, source=description, dropped=dropped)


def load_examples(task: Task, data: str | None = None, data_files: Sequence[str] | None = None,
                  splits: Sequence[str] | None = None) -> LoadedData:
    """Load, check and filter a dataset for ``task`` from the Hub or local files."""
    return prepare_examples(load_sources(data, data_files, splits), task)
