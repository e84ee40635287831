"""Reading beam candidates and gold outputs for ``lsplits ue``.

Beams come either as one JSONL file with ``{"id": ..., "candidates": [top-1, top-2, ...]}`` per line,
or as k PENMAN files, one per beam rank (what AMR parsers write: file r holds every sentence's
rank-r graph). Gold comes as a PENMAN file or JSONL with ``id`` and the graph in ``amr`` (or
``gold``, ``reference``). In PENMAN files graphs are separated by blank lines and an example's id is
read from its ``# ::id`` metadata line. Beams may carry the candidates' own scores (JSONL ``logprobs``,
``n_tokens``, ``token_entropies``; PENMAN ``# ::logprob``, ``# ::n_tokens``, ``# ::token_entropy`` lines), for
every example or for none (:mod:`.beam_scores`).

Pairing: by id whenever any input has ids (JSONL rows always do). Then every graph of every file
needs one: a PENMAN graph without ``# ::id`` while other graphs have ids is a DataError naming its
file and line, rather than an example quietly left out or, worse, a gold graph quietly paired with
the wrong beam (a left-out gold graph would still shift what the report measures; adding the id is
the one-line fix). Only when no graph anywhere has an id are beams and gold paired by position, if
their counts match (else a DataError naming both files and counts), with a warning saying so. Beams whose
ids are not the gold's (``lsplits beams`` on a text file numbers its lines 0, 1, ...) are paired by order
only when asked (``pair_by_position=True``, ``lsplits ue --pair-by-position``) and the counts match; the
report then names each example by its gold id.

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

from lsplits.data.files import read_jsonl, text_lines
from lsplits.errors import DataError
from lsplits.generation.cache import BeamsRecord, read_beams_record
from lsplits.uncertainty.beam_scores import (
    ScoreTable,
    check_example_scores,
    check_row_scores,
    penman_scores,
)

logger = logging.getLogger(__name__)

GOLD_FIELDS = ("amr", "gold", "reference", "graph")
_ID_RE = re.compile(r"::id\s+(\S+)")


@dataclass(frozen=True)
class PenmanBlock:
    """One graph of a PENMAN file: its id (None without ``# ::id``), text, first line number and the scores of
    its ``# ::logprob`` / ``# ::n_tokens`` / ``# ::token_entropy`` lines (score field -> value)."""

    id: str | None
    text: str
    line: int
    scores: dict[str, float] = field(default_factory=dict)


@dataclass
class Inputs:
    """Examples present in both beams and gold, in beam order, and everything that was left out."""

    ids: list[str]
    candidates: list[list[str]]
    gold: list[str]
    only_in_beams: list[str] = field(default_factory=list)
    only_in_gold: list[str] = field(default_factory=list)
    without_candidates: list[str] = field(default_factory=list)
    paired_by: str = "id"  # "position": no input had ids (ids are the 0-based positions); "order": asked for
    # (--pair-by-position) whatever the ids, which are then the gold's
    made_by: BeamsRecord | None = None  # how `lsplits beams` made the beams file, when it did
    scores: list[dict[str, list]] | None = None  # per example (aligned with ids) its score lists; None: no scores
    score_fields: tuple[str, ...] = ()  # the score fields every example carries (SCORE_FIELDS order)


def read_penman_file(path: str | os.PathLike[str]) -> list[PenmanBlock]:
    """Split a PENMAN file into graphs at blank lines, keeping ``# ::id`` and the starting line."""
    blocks: list[PenmanBlock] = []
    current: list[str] = []
    current_id: str | None = None
    scores: dict[str, float] = {}
    start = 0

    def flush() -> None:
        nonlocal current, current_id, scores
        if current or current_id is not None or scores:
            blocks.append(PenmanBlock(current_id, "\n".join(current), start, scores))
        current, current_id, scores = [], None, {}

    for number, raw in text_lines(path):  # a byte that is not UTF-8: DataError naming the file and line
        line = raw.rstrip("\r\n")
        if not line.strip():
            flush()
            continue
        if not current and current_id is None and not scores:
            start = number
        if line.lstrip().startswith("#"):
            found = _ID_RE.search(line)
            if found:
                current_id = found.group(1)
            scores.update(penman_scores(line, Path(path), number))
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


@dataclass
class _Side:
    """One side (beams or gold) as read: entries by id (or position), and where ids were and were not seen."""

    entries: dict
    with_id: tuple[Path, int] | None = None  # the first graph (file, line) that has an id
    without_id: tuple[Path, int] | None = None  # the first graph that has none
    counts: dict[str, int] = field(default_factory=dict)  # graphs per file
    scores: ScoreTable = field(default_factory=ScoreTable)  # beams only: the candidates' scores, per entry

    @property
    def has_ids(self) -> bool:
        return self.with_id is not None


def _missing_id_error(where: tuple[Path, int], problem: str) -> DataError:
    return DataError(f"{problem}: beams and gold are paired by id whenever any input has ids, so every graph "
                     "needs a '# ::id' line (pairing by position is only for inputs without any id)",
                     source=str(where[0]), line=where[1], field="# ::id")


def _locate_ids(side: _Side, path: Path, blocks: Sequence[PenmanBlock]) -> None:
    """Record where ``blocks`` of ``path`` have ids and where not; a mix is an error at the first graph without."""
    side.counts[str(path)] = len(blocks)
    for block in blocks:
        if block.id is not None and side.with_id is None:
            side.with_id = (path, block.line)
        if block.id is None and side.without_id is None:
            side.without_id = (path, block.line)
    if side.with_id and side.without_id:
        other = side.with_id
        raise _missing_id_error(side.without_id, f"this graph has no id, but {other[0].name} line {other[1]} has one")


def _read_beam_side(paths: Sequence[Path]) -> _Side:
    if len(paths) == 1 and _is_jsonl(paths[0]):
        side = _Side({})
        rows = read_jsonl(paths[0])
        for number, row in rows:
            example = _require_id(row, paths[0], number)
            candidates = row.get("candidates")
            if not isinstance(candidates, list):
                raise DataError("candidates must be a list of strings", source=str(paths[0]), line=number,
                                example=example, field="candidates")
            _add_unique(side.entries, example, [c if isinstance(c, str) else "" for c in candidates], paths[0], number)
            side.scores.add(example, check_row_scores(row, candidates, paths[0], number, example),
                            (paths[0], number, example))
        side.with_id = (paths[0], rows[0][0]) if rows else None
        side.counts[str(paths[0])] = len(rows)
        side.scores.check_complete()
        return side
    if any(_is_jsonl(p) for p in paths):
        raise DataError("give either one JSONL file of beams or one PENMAN file per beam rank, not a mix",
                        source=", ".join(map(str, paths)))
    side = _Side({})
    ranks = [read_penman_file(p) for p in paths]
    for path, blocks in zip(paths, ranks, strict=True):
        _locate_ids(side, path, blocks)
    if side.has_ids:
        for path, blocks in zip(paths, ranks, strict=True):
            seen: set[str] = set()
            for block in blocks:
                if block.id in seen:
                    raise DataError("duplicate id", source=str(path), line=block.line, example=block.id, field="id")
                seen.add(block.id)
                side.entries.setdefault(block.id, []).append(block.text)
                side.scores.add(block.id, block.scores, (path, block.line, block.id))
        return _checked_scores(side, paths, ranks)
    if len(set(side.counts.values())) > 1:
        listed = ", ".join(f"{name} holds {count}" for name, count in side.counts.items())
        raise DataError(f"beam files without '# ::id' lines are paired by position and must hold the same number "
                        f"of graphs, but {listed}")
    for position in range(len(ranks[0]) if ranks else 0):
        side.entries[str(position)] = [blocks[position].text for blocks in ranks]
        for path, blocks in zip(paths, ranks, strict=True):
            side.scores.add(str(position), blocks[position].scores, (path, blocks[position].line, str(position)))
    return _checked_scores(side, paths, ranks)


def _checked_scores(side: _Side, paths: Sequence[Path], ranks: Sequence[Sequence[PenmanBlock]]) -> _Side:
    """The PENMAN beams' ``# ::logprob`` (and kin) lines checked: on every graph or none, usable values."""
    if side.scores.check_complete():
        first = {}
        for path, blocks in zip(paths, ranks, strict=True):
            for block in blocks:
                first.setdefault(block.id, (path, block.line, block.id))
        for position, (example, candidates) in enumerate(side.entries.items()):
            check_example_scores(side.scores, example, len(candidates),
                                 first.get(example) or (paths[0], ranks[0][position].line, example))
    return side


def _read_gold_side(path: Path) -> _Side:
    side = _Side({})
    if _is_jsonl(path):
        rows = read_jsonl(path)
        for number, row in rows:
            example = _require_id(row, path, number)
            name = next((f for f in GOLD_FIELDS if f in row), None)
            if name is None or not isinstance(row[name], str):
                raise DataError(f"needs the gold graph as a string in one of {', '.join(GOLD_FIELDS)}",
                                source=str(path), line=number, example=example, field=name or GOLD_FIELDS[0])
            _add_unique(side.entries, example, row[name], path, number)
        side.with_id = (path, rows[0][0]) if rows else None
        side.counts[str(path)] = len(rows)
        return side
    blocks = read_penman_file(path)
    _locate_ids(side, path, blocks)
    for position, block in enumerate(blocks):
        _add_unique(side.entries, block.id if side.has_ids else str(position), block.text, path, block.line)
    return side


def read_beams(paths: Sequence[str | os.PathLike[str]]) -> tuple[dict[str, list[str]], bool]:
    """Candidates per example id, in input order; the flag says whether ids were given (else positions).

    Raises DataError for a PENMAN graph without ``# ::id`` when other graphs have one.
    """
    side = _read_beam_side([Path(p) for p in paths])
    return side.entries, side.has_ids


def read_score_fields(paths: Sequence[str | os.PathLike[str]]) -> tuple[str, ...]:
    """The score fields (:data:`~lsplits.generation.scores.SCORE_FIELDS`) every example of these beams carries;
    a DataError as :func:`load_inputs` raises it (a field on some examples only, a bad value)."""
    return _read_beam_side([Path(p) for p in paths]).scores.check_complete()


def read_scored_beams(paths: Sequence[str | os.PathLike[str]]
                      ) -> tuple[dict[str, list[str]], list[dict[str, list]] | None]:
    """Candidates per example id (as :func:`read_beams`) and, aligned with them, each example's score lists (None
    when the beams carry none): beams without gold, e.g. a reference set of uncertainties."""
    side = _read_beam_side([Path(p) for p in paths])
    if not side.scores.check_complete():
        return side.entries, None
    return side.entries, [side.scores.values[example] for example in side.entries]


def read_gold(path: str | os.PathLike[str]) -> tuple[dict[str, str], bool]:
    """Gold output per example id; the flag says whether ids were given (else positions).

    Raises DataError for a PENMAN graph without ``# ::id`` when other graphs have one.
    """
    side = _read_gold_side(Path(path))
    return side.entries, side.has_ids


def _check_pairing(beams: _Side, gold: _Side, gold_path: Path) -> str:
    """"id" or "position"; a DataError when one side has ids and the other none, or counts differ by position."""
    for side, what in ((beams, "beam example"), (gold, "gold graph")):
        if not side.entries:
            raise DataError(f"no {what} in the file", source=", ".join(side.counts))
    if beams.has_ids and gold.has_ids:
        return "id"
    if beams.has_ids and gold.without_id:
        raise _missing_id_error(gold.without_id, f"no gold graph has an id, but the beams do "
                                                 f"({beams.with_id[0].name} line {beams.with_id[1]})")
    if gold.has_ids and beams.without_id:
        raise _missing_id_error(beams.without_id, f"no beam graph has an id, but the gold does "
                                                  f"({gold.with_id[0].name} line {gold.with_id[1]})")
    if len(beams.entries) != len(gold.entries):
        beam_files = ", ".join(beams.counts)
        raise DataError(f"without '# ::id' lines beams and gold are paired by position, but the beams "
                        f"({beam_files}) hold {len(beams.entries)} examples and the gold ({gold_path}) holds "
                        f"{len(gold.entries)} graphs")
    return "position"


def _by_order(beams: _Side, gold: _Side, gold_path: Path) -> dict[str, list[str]]:
    """The beams keyed by the gold's ids, in order (``--pair-by-position``); DataError unless the counts match."""
    for side, what in ((beams, "beam example"), (gold, "gold graph")):
        if not side.entries:
            raise DataError(f"no {what} in the file", source=", ".join(side.counts))
    if len(beams.entries) != len(gold.entries):
        raise DataError(f"{{opt:pair_by_position}} pairs the beams with the gold by order, but the beams "
                        f"({', '.join(beams.counts)}) hold {len(beams.entries)} examples and the gold holds "
                        f"{len(gold.entries)} graphs", source=str(gold_path))
    ordered = dict(zip(gold.entries, beams.entries.values(), strict=True))
    beams.scores.values = dict(zip(gold.entries, (beams.scores.values.get(key, {}) for key in beams.entries),
                                   strict=True))
    return ordered


def load_inputs(beam_paths: Sequence[str | os.PathLike[str]], gold_path: str | os.PathLike[str], *,
                pair_by_position: bool = False) -> Inputs:
    """Read beams and gold and pair them by id (by position only when no input has any id, or when
    ``pair_by_position`` asks for it, whatever the ids; a warning says so)."""
    gold_path = Path(gold_path)
    beam_side = _read_beam_side([Path(p) for p in beam_paths])
    gold_side = _read_gold_side(gold_path)
    if pair_by_position:
        paired_by, beams, gold = "order", _by_order(beam_side, gold_side, gold_path), gold_side.entries
        logger.warning("paired by position: the %d beam examples are paired with the %d gold graphs of %s by order, "
                       "whatever their ids (the report names them by the gold's)", len(beams), len(gold), gold_path)
    else:
        paired_by = _check_pairing(beam_side, gold_side, gold_path)
        beams, gold = beam_side.entries, gold_side.entries
    if paired_by == "position":
        logger.warning("no input has '# ::id' lines: the %d beam examples are paired with the %d gold graphs of %s "
                       "by position (ids in the report are 0-based positions)", len(beams), len(gold), gold_path)
    inputs = Inputs(ids=[], candidates=[], gold=[],
                    only_in_beams=[i for i in beams if i not in gold],
                    only_in_gold=[i for i in gold if i not in beams], paired_by=paired_by,
                    made_by=read_beams_record(beam_paths[0]) if len(beam_paths) == 1 else None,
                    score_fields=beam_side.scores.check_complete())
    for example, candidates in beams.items():
        if example not in gold:
            continue
        if not candidates:
            inputs.without_candidates.append(example)
            continue
        inputs.ids.append(example)
        inputs.candidates.append(candidates)
        inputs.gold.append(gold[example])
    if inputs.score_fields:
        inputs.scores = [beam_side.scores.values[example] for example in inputs.ids]
    for label, missing in (("only in the beams", inputs.only_in_beams), ("only in the gold", inputs.only_in_gold),
                           ("without candidates", inputs.without_candidates)):
        if missing:
            logger.warning("%d example id(s) %s, left out: %s", len(missing), label, ", ".join(missing[:10]))
    if not inputs.ids:
        raise DataError(f"no example is in both the beams and the gold: their ids differ (beams "
                        f"{', '.join(list(beams)[:3])}, ...; gold {', '.join(list(gold)[:3])}, ...). Beams of a text "
                        "file are numbered by line: give `lsplits beams` JSONL inputs with the gold's ids, "
                        "or pass {opt:pair_by_position} to pair them by order", source=str(gold_path))
    return inputs
