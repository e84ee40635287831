"""The inputs of ``lsplits beams``: a text file (one input a line), a JSONL file or a Hub / local dataset,
read into ids and texts in order, with errors that name the file, line and field.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from lsplits.errors import DataError
from lsplits.runtime.failures import hub_failures

logger = logging.getLogger(__name__)

INPUT_FIELDS = ("text", "sentence", "snt", "input", "question", "source")
"""Fields tried, in order, when ``--input-field`` is not given."""
DEFAULT_SPLIT = "test"
"""The split read from a Hub dataset or dataset folder when none is named."""


_TEXT_SUFFIXES = {".txt", ".text", ".tsv", ".jsonl", ".json"}


@dataclass(frozen=True)
class BeamInputs:
    """The inputs of a run: ids and texts, in order, and where they came from (for messages)."""

    ids: list[str]
    texts: list[str]
    source: str


def read_inputs(source: str, *, input_field: str | None = None, id_field: str | None = None,
                split: str = DEFAULT_SPLIT) -> BeamInputs:
    """Inputs from a text file (one a line; ids 0, 1, ...), a JSONL file or a Hub dataset / local dataset
    folder (``split``). JSONL and datasets take the text from ``input_field`` (default: the first of
    :data:`INPUT_FIELDS` present) and the id from ``id_field`` (default ``id`` when present, else the
    position).

    Raises:
        DataError: a missing file, a line that is not JSON, a missing field, an empty line or input,
            repeated ids, a dataset that cannot be loaded.
    """
    path = Path(source).expanduser()
    if path.is_file():
        if path.suffix.lower() in {".jsonl", ".json"}:
            from lsplits.data.files import read_jsonl

            rows = [(number, None, row) for number, row in read_jsonl(path)]
            return _from_rows(rows, str(path), input_field, id_field)
        return _from_text_file(path)
    if path.is_dir():
        return _from_dataset(str(path), split, input_field, id_field)
    if path.suffix.lower() in _TEXT_SUFFIXES or source.startswith((".", "/", "~")) or source.count("/") > 1:
        raise DataError("no such file", source=source)
    return _from_dataset(source, split, input_field, id_field)


def _from_text_file(path: Path) -> BeamInputs:
    from lsplits.data.files import text_lines

    texts = [text.removesuffix("\n") for _, text in text_lines(path)]  # not UTF-8: DataError naming the line
    for number, text in enumerate(texts, start=1):
        if not text.strip():
            raise DataError("empty line (one input per line; ids are line positions, so lines cannot be "
                            "skipped)", source=str(path), line=number)
    if not texts:
        raise DataError("no inputs (the file is empty)", source=str(path))
    return BeamInputs([str(i) for i in range(len(texts))], [text.strip() for text in texts], str(path))


def _from_dataset(name: str, split: str, input_field: str | None, id_field: str | None) -> BeamInputs:
    from lsplits.data.loading import check_no_dataset_script

    check_no_dataset_script(name)
    import datasets

    try:
        splits = datasets.load_dataset(name)  # all splits, so that an unknown one is named with the choices
    except hub_failures() as exc:  # what datasets documents for a failed load; a bug propagates
        detail = " ".join(str(exc).split())[:300]
        raise DataError(f"cannot load split {split!r} of dataset {name!r}: {type(exc).__name__}: {detail}",
                        source=name) from exc
    if split not in splits:
        raise DataError(f"no split {split!r} (splits: {', '.join(map(str, splits))})", source=name)
    dataset = splits[split]
    rows = [(None, f"#{n}", row) for n, row in enumerate(dataset)]
    return _from_rows(rows, f"{name} ({split})", input_field, id_field)


def _from_rows(rows: list[tuple[int | None, str | None, dict]], source: str, input_field: str | None,
               id_field: str | None) -> BeamInputs:
    """Ids and texts of ``(line number or None, example label or None, row)`` records."""
    if not rows:
        raise DataError("no inputs (it is empty)", source=source)
    first = rows[0][2]
    field = input_field or next((name for name in INPUT_FIELDS if name in first), None)
    if field is None:
        raise DataError(f"no input field: give {{opt:input_field}} (fields: {', '.join(map(str, first))})", source=source,
                        line=rows[0][0], example=rows[0][1])
    id_name = id_field or ("id" if "id" in first else None)
    ids, texts, seen = [], [], set()
    for position, (line, example, row) in enumerate(rows):
        if row.get(field) is None or not isinstance(row[field], str):
            raise DataError(f"missing text field (fields: {', '.join(map(str, row))})" if field not in row else
                            "the input must be a string", source=source, line=line, example=example, field=field)
        if id_name is None:
            name = str(position)
        elif row.get(id_name) is None:
            raise DataError("missing id", source=source, line=line, example=example, field=id_name)
        else:
            name = str(row[id_name])
        if name in seen:
            raise DataError("id appears more than once; ids must be unique", source=source, line=line,
                            example=name, field=id_name)
        seen.add(name)
        ids.append(name)
        texts.append(row[field])
    return BeamInputs(ids, texts, source)
