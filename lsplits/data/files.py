"""Reading local data files into records: JSON Lines, JSON, CSV, TSV and parquet.

Every problem is one :class:`~lsplits.errors.DataError` naming the file and, where there is one, the line (and
byte offset): bytes that are not UTF-8, invalid JSON or JSON nested deeper than Python's reader goes, a lone
surrogate that no UTF-8 file can hold, a truncated parquet file. :mod:`lsplits.data.loading` turns the records
into examples; the beams and gold readers (:mod:`lsplits.generation.inputs`, :mod:`lsplits.uncertainty.inputs`)
and the recorded settings read their files here too.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lsplits.errors import DataError

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
        raise DataError(f"cannot read parquet: {one_line(exc)}", source=str(path)) from exc


def one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line (library errors often span several)."""
    return " ".join(str(exc).split()) or type(exc).__name__
