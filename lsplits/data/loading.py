"""Loading examples from local files (JSONL, JSON, CSV, parquet) or the Hugging Face Hub, with stable ids.

Every loaded example carries ``id``: the dataset's own unique ``id`` field when it has one,
otherwise ``"{source}-{index}"`` where ``source`` is the split name (Hub) or the split/file name
(local files) and ``index`` the 0-based position in that source. Ids therefore point back to where
an example came from and stay the same from run to run.

Two silent mistakes are refused here, before any work (:class:`LoadOptions` says how to proceed):
an example without a label (null, NaN, empty) is an error unless ``missing_labels="drop"``, and a
user field named like one lsplits writes (:data:`LSPLITS_FIELDS`) is an error unless it is renamed.
Every example dropped, and why, is counted in :attr:`LoadedData.dropped` (the card and
``lsplits.json`` report it).
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import numbers
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsplits.data.tasks import Task, is_missing
from lsplits.errors import DataError, InvalidOption
from lsplits.params import check_choice
from lsplits.runtime.failures import hub_failures

logger = logging.getLogger(__name__)

ID_FIELD = "id"
SOURCE_FIELD = "source_split"
LSPLITS_FIELDS = ("ll_score", "ll_tokens", "length")
"""Fields lsplits adds to every exported example; a user field of the same name would be overwritten."""
MISSING_LABEL_CHOICES = ("error", "drop")
DEFAULT_MISSING_LABELS = "error"
EMPTY_QUERY = "empty query"
"""The reason recorded in :attr:`LoadedData.dropped` for examples whose query field is null, NaN or blank."""
MISSING_LABEL = "missing label"
"""The reason recorded in :attr:`LoadedData.dropped` for examples dropped by ``missing_labels="drop"``."""


def dropped_label_reason(label: str) -> str:
    """The reason recorded in :attr:`LoadedData.dropped` for examples of a class dropped by ``--drop-label``."""
    return f"label {label!r} dropped (--drop-label)"


@dataclass(frozen=True)
class LoadOptions:
    """How loading treats examples without a label and user fields that clash with lsplits' own.

    ``missing_labels``: ``"error"`` (default: one line with the count and the first example) or
    ``"drop"`` (drop them, counted). ``rename``: ``(OLD, NEW)`` pairs applied to every record first,
    so a user's ``length`` survives as, say, ``length_orig`` (``--rename length=length_orig``).
    ``drop_labels``: label values (as text) whose examples are dropped, counted (``--drop-label -``): a
    class too small for its eval quota, or a "no gold label" class such as raw SNLI's ``-``.
    """

    missing_labels: str = DEFAULT_MISSING_LABELS
    rename: tuple[tuple[str, str], ...] = ()
    drop_labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_choice("missing_labels", self.missing_labels, MISSING_LABEL_CHOICES)
        olds = [old for old, _ in self.rename]
        news = [new for _, new in self.rename]
        for old, new in self.rename:
            if not old or not new or old == new:
                raise InvalidOption(name="rename", problem="entries must be OLD=NEW with two different, non-empty "
                                    "names", value=f"{old}={new}")
        for names in (olds, news):
            twice = next((name for name in names if names.count(name) > 1), None)
            if twice is not None:
                raise InvalidOption(name="rename", problem=f": {twice!r} is named twice")
        if any(not isinstance(label, str) for label in self.drop_labels):
            raise InvalidOption(name="drop_labels", problem="must be labels as text", value=list(self.drop_labels))

    @classmethod
    def from_cli(cls, missing_labels: str = DEFAULT_MISSING_LABELS, rename: Sequence[str] | None = None,
                 drop_labels: Sequence[str] | None = None) -> LoadOptions:
        """The options from ``--missing-labels``, ``--rename OLD=NEW ...`` (InvalidOption naming a bad pair) and
        ``--drop-label LABEL ...``."""
        pairs = []
        for item in rename or ():
            old, sep, new = item.partition("=")
            if not sep:
                raise InvalidOption(name="rename", problem="entries must be OLD=NEW (for example length=length_orig)",
                                    value=item)
            pairs.append((old.strip(), new.strip()))
        return cls(missing_labels=missing_labels, rename=tuple(pairs), drop_labels=tuple(drop_labels or ()))


def _renamed(records: list[dict[str, Any]], rename: Sequence[tuple[str, str]], description: str
             ) -> list[dict[str, Any]]:
    """``records`` with the fields renamed; DataError when OLD is not a field or NEW already is one."""
    if not rename or not records:
        return records
    first = records[0]
    for old, new in rename:
        if old not in first:
            raise DataError(f"--rename {old}={new}: there is no field {old!r} (the file has: "
                            f"{', '.join(map(str, first)) or 'no fields'})", source=description, field=old)
        if new in first and new not in dict(rename):
            raise DataError(f"--rename {old}={new}: the data already has a field {new!r}; choose another name",
                            source=description, field=new)
    mapping = dict(rename)
    return [{mapping.get(name, name): value for name, value in record.items()} for record in records]


def check_field_names(columns: Sequence[str], task: Task, description: str) -> None:
    """DataError naming the first user field that lsplits would overwrite (``ll_score``, ``length``, ...)."""
    for name in (*LSPLITS_FIELDS, *task.added_fields):
        if name in columns:
            raise DataError(f"lsplits writes its own {name!r} into every example and would overwrite yours; "
                            f"keep your values with --rename {name}={name}_orig", source=description, field=name)


@dataclass
class LoadedData:
    """Examples pooled from one or more sources, in source order, plus bookkeeping for reports."""

    examples: list[dict[str, Any]]
    columns: list[str]
    source: str
    dropped: dict[str, int]
    features: Any = None
    """The input's ``datasets.Features`` (fields renamed), when it came as a ``Dataset``: every output keeps them."""


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


DATA_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".parquet")


def read_records(path: Path) -> list[dict[str, Any]]:
    """Read one local file into a list of dicts; errors name the file and line (and byte offset)."""
    path = Path(path)
    if not path.exists():
        raise DataError("file not found", source=str(path))
    if path.is_dir():
        raise DataError("is a folder, not a data file (give the files inside it)", source=str(path))
    suffix = "".join(path.suffixes[-1:]).lower()
    try:
        if suffix in {".jsonl", ".ndjson"}:
            return _read_jsonl(path)
        if suffix == ".json":
            return _read_json(path)
        if suffix in {".csv", ".tsv"}:
            return _read_csv(path, sep="\t" if suffix == ".tsv" else ",")
        if suffix == ".parquet":
            return _read_parquet(path)
    except OSError as exc:  # permissions, a file vanishing, a device error: one line naming the file
        raise DataError(f"cannot read the file: {exc.strerror or exc}", source=str(path)) from exc
    raise DataError(f"unsupported file type {suffix or '(none)'}; use .jsonl, .json, .csv, .tsv or .parquet",
                    source=str(path))


def text_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every line of a UTF-8 file (a leading byte-order mark is dropped).

    Raises:
        DataError: bytes that are not UTF-8; names the line and the byte offset in the file.
    """
    offset = 0
    with Path(path).open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _not_utf8(path, raw[exc.start:exc.end], line_no, offset + exc.start, exc.start) from None
            if line_no == 1 and text.startswith("\ufeff"):
                text = text[1:]
            offset += len(raw)
            yield line_no, text


def _not_utf8(path: str | Path, bad: bytes, line: int, offset: int, column: int) -> DataError:
    shown = " ".join(f"0x{b:02x}" for b in bad[:4])
    return DataError(f"byte {shown} at byte offset {offset} (offset {column} in the line) is not UTF-8; "
                     "save the file as UTF-8", source=str(path), line=line)


def _decode_utf8(path: Path, raw: bytes) -> str:
    """``raw`` decoded as UTF-8 (byte-order mark dropped); DataError names line and byte offset otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        raise _not_utf8(path, raw[exc.start:exc.end], raw.count(b"\n", 0, exc.start) + 1, exc.start,
                        exc.start - line_start) from None
    return text[1:] if text.startswith("\ufeff") else text


def check_encodable(record: dict[str, Any], source: str, line: int | None = None) -> None:
    """Raise DataError naming the field of ``record`` whose text holds a lone surrogate.

    ``json`` turns an escape such as ``"\\ud800"`` (half of a UTF-16 pair) into a string that no
    UTF-8 file can hold; it would fail later, when the tokenizer or the parquet writer meets it.
    """
    for name, value in record.items():
        bad = _surrogate(value)
        if bad is not None:
            raise DataError(f"holds the lone surrogate \\u{ord(bad):04x} (half of a UTF-16 pair, e.g. from a "
                            "JSON escape), which is not text and cannot be saved as UTF-8", source=source,
                            line=line, field=str(name))


def _surrogate(value: Any) -> str | None:
    """The first lone surrogate in a string (or in the strings of a list / dict), else None."""
    if isinstance(value, str):
        if value.isascii():
            return None
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return value[exc.start]
        return None
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list):
        for item in value:
            bad = _surrogate(item)
            if bad is not None:
                return bad
    return None


def parse_json(text: str, source: str | Path, line: int | None = None) -> Any:
    """``json.loads(text)`` of text read from ``source`` (``line``: the line it is, for JSON Lines).

    Raises:
        DataError: naming ``source`` and the line, for invalid JSON and for JSON nested deeper than Python's
            reader goes (its RecursionError), so that neither ends in a traceback.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(_json_problem(exc, text), source=str(source),
                        line=exc.lineno if line is None else line) from exc
    except RecursionError:
        depth, deepest_line = _nesting(text)
        raise DataError(f"JSON nested {depth} levels deep, deeper than Python's JSON reader goes (about "
                        f"{sys.getrecursionlimit()} levels of [ and {{); flatten the data", source=str(source),
                        line=deepest_line if line is None else line) from None


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}\n]')


def _nesting(text: str) -> tuple[int, int]:
    """The deepest nesting of JSON arrays and objects in ``text`` and the line (from 1) where it is first reached
    (brackets inside strings do not count)."""
    depth = deepest = 0
    line = deepest_line = 1
    for token in _JSON_TOKEN.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest, deepest_line = depth, line
        elif char in "]}":
            depth -= 1
        elif char == "\n":
            line += 1
    return deepest, deepest_line


def read_json_file(path: str | Path) -> Any:
    """The JSON document in the UTF-8 file ``path``; DataError naming the file and line when it is not UTF-8,
    not JSON or nested too deeply (:func:`parse_json`). An OSError (a missing file) propagates."""
    path = Path(path)
    return parse_json(_decode_utf8(path, path.read_bytes()), path)


def read_jsonl(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-empty line of a JSON Lines file; errors name file and line."""
    rows = []
    for line_no, line in text_lines(path):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        record = parse_json(line, path, line_no)
        if not isinstance(record, dict):
            raise DataError("expected a JSON object", source=str(path), line=line_no)
        check_encodable(record, str(path), line_no)
        rows.append((line_no, record))
    return rows


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [record for _, record in read_jsonl(path)]


def _read_json(path: Path) -> list[dict[str, Any]]:
    """A JSON list of objects (or ``{"data": [...]}``); a file of one object per line is read as JSON Lines."""
    text = _decode_utf8(path, path.read_bytes())
    try:
        data = parse_json(text, path)
    except DataError:
        first = next((line for line in text.split("\n") if line.strip()), "")
        if _is_json_object(first):
            return _read_jsonl(path)
        raise
    if isinstance(data, dict) and "data" in data:
        data = data["data"]
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise DataError("expected a JSON list of objects (or JSON Lines)", source=str(path))
    for index, record in enumerate(data):
        check_encodable(record, f"{path}, record {index + 1}")
    return data


def _json_problem(exc: json.JSONDecodeError, text: str) -> str:
    """``invalid JSON: Expecting value at column 7``, with a hint when the text ends too early."""
    problem = f"invalid JSON: {exc.msg.removesuffix(' at')} at column {exc.colno}"
    if exc.msg.startswith("Unterminated") or exc.pos >= len(text.rstrip()):
        problem += " (it ends too early: truncated?)"
    return problem


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(parse_json(text, "a line"), dict)
    except DataError:
        return False


def _read_csv(path: Path, sep: str) -> list[dict[str, Any]]:
    import pandas as pd

    for _ in text_lines(path):  # pandas would name neither the line nor the offset of a non-UTF-8 byte
        pass
    try:
        frame = pd.read_csv(path, sep=sep, keep_default_na=False, encoding="utf-8-sig")
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        kind = "TSV" if sep == "\t" else "CSV"
        raise DataError(f"cannot read {kind}: {' '.join(str(exc).split())}", source=str(path)) from exc
    return frame.to_dict("records")


_PARQUET_MAGIC = b"PAR1"


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    size = path.stat().st_size
    with path.open("rb") as handle:
        head = handle.read(4)
        handle.seek(max(0, size - 4))
        tail = handle.read(4)
    if size < 12 or head != _PARQUET_MAGIC or tail != _PARQUET_MAGIC:
        what = "truncated" if head == _PARQUET_MAGIC else "another format under a .parquet name"
        raise DataError(f"not a parquet file: it does not start and end with the bytes PAR1 ({what}?)",
                        source=str(path))
    try:
        return pq.read_table(path).to_pylist()
    except (pa.ArrowException, ValueError) as exc:
        raise DataError(f"cannot read parquet: {_one_line(exc)}", source=str(path)) from exc


def _one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line (library errors often span several)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def looks_like_path(name: str) -> bool:
    """Whether ``name`` is meant as a local path (``./x``, ``/x``, ``~/x``, ``x.jsonl``), not a Hub id."""
    return name.startswith(("/", "./", "../", "~", ".\\")) or name.lower().endswith(DATA_SUFFIXES)


def load_sources(data: str | None = None, data_files: Sequence[str] | None = None,
                 splits: Sequence[str] | None = None) -> list[tuple[str, list[dict[str, Any]], str]]:
    """Load raw records per source: ``[(source name, records, description for errors)]``.

    ``data`` is a Hub dataset id (all its splits, or ``splits``); ``data_files`` are local files.
    """
    if data_files:
        return [(name, read_records(path), str(path)) for name, path in parse_data_files(data_files)]
    dataset_dict = hub_dataset(data)
    if dataset_dict is None:
        path = Path(str(data)).expanduser()
        return [(path.stem, read_records(path), str(path))]
    return dataset_sources(dataset_dict, str(data), splits)


def hub_dataset(data: str | None) -> Any:
    """The ``datasets.DatasetDict`` of a Hub dataset id or a local dataset folder, or None when ``data`` is a
    local file (read with :func:`read_records`); DataError in one line when there is none."""
    if not data:
        raise DataError("no data given: pass a Hub dataset id or --data-files")
    if Path(data).expanduser().is_file():
        return None
    if looks_like_path(data) and not Path(data).expanduser().exists():
        raise DataError("no such file or folder", source=data)
    check_no_dataset_script(data)
    import datasets

    try:
        return datasets.load_dataset(data)
    except hub_failures() as exc:  # offline, missing repo, ...: one readable line
        raise DataError(f"cannot load the dataset from the Hub or folder: {_one_line(exc)}", source=data) from exc


def check_no_dataset_script(name: str) -> None:
    """DataError naming the folder ``name`` and its script when it holds the loading script that ``datasets``
    refuses to run (``FOLDER/FOLDER.py``: a RuntimeError from ``load_dataset``, and no code is run), before loading."""
    parts = [part for part in name.replace(os.sep, "/").split("/") if part]
    folder = Path(name)
    if not parts or not folder.is_dir():
        return
    script = folder / (parts[-1] if parts[-1].endswith(".py") else parts[-1] + ".py")
    if script.is_file():
        raise DataError(f"holds the dataset script {script.name}, and the datasets library no longer runs dataset "
                        "scripts (none was run); give the data files it loads (JSONL, CSV or parquet) instead",
                        source=name)


def dataset_sources(dataset_dict: Any, data: str, splits: Sequence[str] | None = None
                    ) -> list[tuple[str, list[dict[str, Any]], str]]:
    """The records of each split (``splits``, default all) of a ``DatasetDict`` loaded from ``data``, as sources."""
    names = list(splits) if splits else list(dataset_dict)
    return [(name, dataset_dict[name].to_list(), f"{data}[{name}]") for name in names]


def prepare_examples(sources: list[tuple[str, list[dict[str, Any]], str]], task: Task,
                     options: LoadOptions | None = None, *, features: Any = None) -> LoadedData:
    """Check fields, assign stable ids, apply the task's filters; raises DataError on bad input.

    ``options`` (:class:`LoadOptions`) renames fields first and says what to do with examples without
    a label; a user field that lsplits writes is refused (:func:`check_field_names`). ``features``: the
    ``datasets.Features`` of the records (their ``ClassLabel`` ids already names), kept for the export.
    """
    options = options or LoadOptions()
    examples: list[dict[str, Any]] = []
    dropped: dict[str, int] = {}
    columns: list[str] = []
    seen_ids: dict[str, str] = {}
    unlabelled: list[tuple[str, str]] = []  # (example id, source) of examples without a label
    drop_labels = set(options.drop_labels)
    if drop_labels and not task.label_field:
        raise InvalidOption(name="drop_labels", problem="needs a label field (give {opt:label_field})",
                            value=sorted(drop_labels)[0])
    labels_seen: set[str] = set()
    not_text: dict[str, list[tuple[str, object]]] = {}  # kind -> (example id, query) of queries that are numbers or
    # booleans, scored as their text
    label_kinds: dict[str, tuple[str, object]] = {}  # kind of label value -> (example id, value) of its first example
    first_row: dict[str, Any] | None = None  # every field but the id of the first example kept
    all_same = True  # whether every example kept so far equals it
    total = 0
    for source_name, records, description in sources:
        if not records:
            continue
        records = _renamed(records, options.rename, description)
        first = list(records[0])
        check_field_names(first, task, description)
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
            total += 1
            if task.label_field and is_missing(record[task.label_field]):
                unlabelled.append((example_id, description))
                continue
            if task.label_field:
                _check_label_kind(record[task.label_field], example_id, label_kinds, task.label_field, description,
                                  index + 1)
            if drop_labels:
                label = str(record[task.label_field])
                labels_seen.add(label)
                if label in drop_labels:
                    reason = dropped_label_reason(label)
                    dropped[reason] = dropped.get(reason, 0) + 1
                    continue
            reason = task.keep(record)
            if reason is None and is_missing(record[task.query_field]):
                reason = EMPTY_QUERY  # every task: a null or blank query would be scored as "None" or nothing
            if reason is not None:
                dropped[reason] = dropped.get(reason, 0) + 1
                continue
            query = record[task.query_field]
            if not isinstance(query, str):
                kind = value_kind(query)
                if kind not in ("a number", "a boolean"):
                    raise DataError(f"the query is {kind} ({_clipped(query)}), not text: it would "
                                    "be scored as its Python repr; join its tokens into one string (or give "
                                    "--query-field the field that holds the text)", source=description,
                                    line=index + 1, example=example_id, field=task.query_field)
                not_text.setdefault(kind, []).append((example_id, query))
            example = {ID_FIELD: example_id, **{k: v for k, v in record.items() if k != ID_FIELD}}
            example.setdefault(SOURCE_FIELD, source_name)
            examples.append(example)
            if all_same:  # compared until the first row that differs
                row = {k: v for k, v in record.items() if k != ID_FIELD}
                first_row = row if first_row is None else first_row
                all_same = row == first_row
    description = ", ".join(d for _, _, d in sources)
    if unlabelled:
        if options.missing_labels == "error":
            first_id, first_source = unlabelled[0]
            raise DataError(f"{len(unlabelled)} of {total} examples have no label (null, NaN or empty), the first "
                            f"is {first_id!r}; fill them in, or pass --missing-labels drop to drop them",
                            source=first_source, field=task.label_field)
        dropped[MISSING_LABEL] = len(unlabelled)
    absent = sorted(drop_labels - labels_seen)
    if absent:
        raise InvalidOption(name="drop_labels", problem=f"must name labels of field {task.label_field!r} "
                            f"({', '.join(sorted(labels_seen)[:10])}); no example has that label", value=absent[0])
    if not examples:
        raise DataError("the dataset is empty after loading and filtering", source=description or None)
    for reason, count in dropped.items():  # an empty query is a fault in the data: said where a notebook shows it
        logger.log(logging.WARNING if reason == EMPTY_QUERY else logging.INFO, "dropped %d of %d examples: %s",
                   count, total, reason)
    if len(examples) > 1 and all_same:  # every score ties: which go to eval is arbitrary
        logger.warning("all %d examples are the same row (every field but the id is equal): their scores tie, so "
                       "a split of them says nothing about likelihood", len(examples))
    for kind, queries in not_text.items():
        logger.warning("%d of %d queries (field %r) are %s, not text, and are scored as %s; the first is example "
                       "%r: %r", len(queries), total, task.query_field, _PLURALS[kind],
                       "the words True and False" if kind == "a boolean" else "their digits", *queries[0])
    if ID_FIELD not in columns:
        columns.insert(0, ID_FIELD)
    if SOURCE_FIELD not in columns:
        columns.append(SOURCE_FIELD)
    if features is not None:
        mapping = dict(options.rename)
        features = {mapping.get(name, name): feature for name, feature in features.items()}
    return LoadedData(examples=examples, columns=columns, source=description, dropped=dropped, features=features)


_PLURALS = {"a number": "numbers", "a boolean": "booleans"}


def value_kind(value: object) -> str:
    """What ``value`` is, as a message says it: ``text``, ``a number``, ``a boolean`` (numpy's too) or ``a list``."""
    if isinstance(value, str):
        return "text"
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "a boolean"
    if isinstance(value, numbers.Number):
        return "a number"
    return f"a {type(value).__name__}"


def _check_label_kind(value: object, example_id: str, kinds: dict[str, tuple[str, object]], field: str,
                      source: str, line: int) -> None:
    """Record the kind of label ``value``; DataError naming both examples when labels of two kinds meet (``0`` and
    ``"0"``, ``1`` and ``True``: one class written two ways would count as two)."""
    kind = value_kind(value)
    if kind in kinds:
        return
    if kinds:
        other_kind, (other_id, other_value) = next(iter(kinds.items()))
        raise DataError(f"labels of two kinds: {_clipped(value)} (example {example_id!r}) is {kind} but "
                        f"{_clipped(other_value)} (example {other_id!r}) is {other_kind}; a class written both ways "
                        "would count as two classes, so give every label as text or every label as a number",
                        source=source, line=line, field=field)
    kinds[kind] = (example_id, value)


def _clipped(value: object, width: int = 60) -> str:
    """``repr(value)`` cut to ``width`` characters, for a message."""
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def load_examples(task: Task, data: str | None = None, data_files: Sequence[str] | None = None,
                  splits: Sequence[str] | None = None, options: LoadOptions | None = None) -> LoadedData:
    """Load, check and filter a dataset for ``task`` from the Hub or local files (see :class:`LoadOptions`)."""
    with bulk_loading():
        return prepare_examples(load_sources(data, data_files, splits), task, options)


@contextlib.contextmanager
def bulk_loading() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while records are read: it rescans every dict made so far
    again and again, which made loading grow faster than the data (CPU s of ``builders.snli.load`` at 10k,
    100k, 550k pairs: 0.12, 2.58, 14.2 with it, 0.11, 1.22, 7.28 without). Cycles made meanwhile are
    collected once it runs again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
