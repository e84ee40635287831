"""Reading beam candidates and gold outputs for ``lsplits ue``.

Beams come either as one JSONL file with ``{"id": ..., "candidates": [top-1, top-2, ...]}`` per line,
or as k PENMAN files, one per beam rank (what AMR parsers write: file r holds every sentence's
rank-r graph). Gold comes as a PENMAN file or JSONL with ``id`` and the graph in ``amr`` (or
``gold``, ``reference``). In PENMAN files graphs are separated by blank lines and an example's id is
read from its ``# ::id`` metadata line; files without ids are matched by position.

Bad input never passes silently: a line that is not JSON, a missing field or a duplicate id is a
DataError naming the file, line and field; a candidate that is not a string becomes "" (an invalid
candidate, counted later); examples present on only one side are listed in :class:`Inputs`.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..data import read_jsonl
from ..errors import DataError

logger = logging.getLogger(__name__)

GOLD_FIELDS = ("amr", "gold", "reference", "graph")
_ID_RE = re.compile(r"::id\s+(\S+)")


@dataclass(frozen=True)
class PenmanBlock:
    """One graph of a PENMAN file: its id (None without ``# ::id``), text and first line number."""

    id: str | None
    text: str
    line: int


@dataclass
class Inputs:
    """Examples present in both beams and gold, in beam order, and everything that was left out."""

    ids: list[str]
    candidates: list[list[str]]
    gold: list[str]
    only_in_beams: list[str] = field(default_factory=list)
    only_in_gold: list[str] = field(default_factory=list)
    without_candidates: list[str] = field(default_factory=list)


def read_penman_file(path: str | os.PathLike[str]) -> list[PenmanBlock]:
    """Split a PENMAN file into graphs at blank lines, keeping ``# ::id`` and the starting line."""
    blocks: list[PenmanBlock] = []
    current: list[str] = []
    current_id: str | None = None
    start = 0

    def flush() -> None:
        nonlocal current, current_id
        if current or current_id is not None:
            blocks.append(PenmanBlock(current_id, "\n".join(current), start))
        current, current_id = [], None

    with open(path, encoding="utf-8") as stream:
        for number, raw in enumerate(stream, start=1):
            line = raw.rstrip("\n")
            if not line.strip():
                flush()
                continue
            if not current and current_id is None:
                start = number
            if line.lstrip().startswith("#"):
                found = _ID_RE.search(line)
                if found:
                    current_id = found.group(1)
                continue
            current.append(line)
    flush()
    return blocks


def _require_id(row: dict, path: Path, number: int) -> str:
    if "id" not in row or row["id"] is None:
        raise DataError("missing id", source=str(path), line=number, field="id")
    return str(row["id"])


def _is_jsonl(path: Path) -> bool:
    return path.suffix.lower() in {".jsonl", ".json"}


def _add_unique(table: dict, key: str, value, path: Path, line: int) -> None:
    if key in table:
        raise DataError("duplicate id", source=str(path), line=line, example=key, field="id")
    table[key] = value


def read_beams(paths: Sequence[str | os.PathLike[str]]) -> tuple[dict[str, list[str]], bool]:
    """Candidates per example id, in input order; the flag says whether ids were given (else positions)."""
    paths = [Path(p) for p in paths]
    if len(paths) == 1 and _is_jsonl(paths[0]):
        beams: dict[str, list[str]] = {}
        for number, row in read_jsonl(paths[0]):
            example = _require_id(row, paths[0], number)
            candidates = row.get("candidates")
            if not isinstance(candidates, list):
                raise DataError("candidates must be a list of strings", source=str(paths[0]), line=number,
                                example=example, field="candidates")
            _add_unique(beams, example, [c if isinstance(c, str) else "" for c in candidates], paths[0], number)
        return beams, True
    if any(_is_jsonl(p) for p in paths):
        raise DataError("give either one JSONL file of beams or one PENMAN file per beam rank, not a mix",
                        source=", ".join(map(str, paths)))
    ranks = [read_penman_file(p) for p in paths]
    with_ids = all(block.id is not None for blocks in ranks for block in blocks)
    beams = {}
    if with_ids:
        for path, blocks in zip(paths, ranks, strict=True):
            seen: set[str] = set()
            for block in blocks:
                if block.id in seen:
                    raise DataError("duplicate id", source=str(path), line=block.line, example=block.id, field="id")
                seen.add(block.id)
                beams.setdefault(block.id, []).append(block.text)
        return beams, True
    counts = {str(p): len(blocks) for p, blocks in zip(paths, ranks, strict=True)}
    if len(set(counts.values())) > 1:
        raise DataError(f"beam files without '# ::id' lines must hold the same number of graphs, got {counts}")
    for position in range(len(ranks[0]) if ranks else 0):
        beams[str(position)] = [blocks[position].text for blocks in ranks]
    return beams, False


def read_gold(path: str | os.PathLike[str]) -> tuple[dict[str, str], bool]:
    """Gold output per example id; the flag says whether ids were given (else positions)."""
    path = Path(path)
    gold: dict[str, str] = {}
    if _is_jsonl(path):
        for number, row in read_jsonl(path):
            example = _require_id(row, path, number)
            name = next((f for f in GOLD_FIELDS if f in row), None)
            if name is None or not isinstance(row[name], str):
                raise DataError(f"needs the gold graph as a string in one of {', '.join(GOLD_FIELDS)}",
                                source=str(path), line=number, example=example, field=name or GOLD_FIELDS[0])
            _add_unique(gold, example, row[name], path, number)
        return gold, True
    blocks = read_penman_file(path)
    with_ids = all(block.id is not None for block in blocks)
    for position, block in enumerate(blocks):
        _add_unique(gold, block.id if with_ids else str(position), block.text, path, block.line)
    return gold, with_ids


def load_inputs(beam_paths: Sequence[str | os.PathLike[str]], gold_path: str | os.PathLike[str]) -> Inputs:
    """Read beams and gold and pair them by id (by position when either side has no ids)."""
    beams, beam_ids = read_beams(beam_paths)
    gold, gold_ids = read_gold(gold_path)
    if not (beam_ids and gold_ids):
        if len(beams) != len(gold):
            raise DataError(f"without ids on both sides beams and gold are paired by position, but there are "
                            f"{len(beams)} beam examples and {len(gold)} gold graphs", source=str(gold_path))
        names = list(gold) if gold_ids else list(beams)
        beams = dict(zip(names, beams.values(), strict=True))
        gold = dict(zip(names, gold.values(), strict=True))
    inputs = Inputs(ids=[], candidates=[], gold=[],
                    only_in_beams=[i for i in beams if i not in gold],
                    only_in_gold=[i for i in gold if i not in beams])
    for example, candidates in beams.items():
        if example not in gold:
            continue
        if not candidates:
            inputs.without_candidates.append(example)
            continue
        inputs.ids.append(example)
        inputs.candidates.append(candidates)
        inputs.gold.append(gold[example])
    for label, missing in (("only in the beams", inputs.only_in_beams), ("only in the gold", inputs.only_in_gold),
                           ("without candidates", inputs.without_candidates)):
        if missing:
            logger.warning("%d example id(s) %s, left out: %s", len(missing), label, ", ".join(missing[:10]))
    if not inputs.ids:
        raise DataError("no example is in both the beams and the gold (check that the ids match)",
                        source=str(gold_path))
    return inputs
