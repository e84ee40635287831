"""The candidates' own scores in beams files, as ``lsplits ue`` reads them, and which estimators they allow.

A beams JSONL row may carry, beside ``candidates`` and aligned with it, the lists ``logprobs``, ``n_tokens``
and ``token_entropies`` (:data:`lsplits.generation.scores.SCORE_FIELDS`, what ``lsplits beams`` writes). In
PENMAN files per beam rank each graph may carry them as metadata lines: ``# ::logprob -3.25`` (the sequence
log-probability), ``# ::n_tokens 12`` and ``# ::token_entropy 0.41`` (the mean next-token entropy); most parsers
can print only the first, and then only the estimators that need log-probabilities alone run.

A field is given for every example or for none: a file with scores for some examples and not others is a
DataError naming the first example without them (a study over the scored half only would compare estimators on
different examples). A list whose length is not the candidates', or a value the estimators cannot use (a
log-probability > 0, a token count of 0), is a DataError naming the file, line, example and field.

Estimators whose fields the beams do not carry (:data:`~lsplits.uncertainty.estimators.NEEDS_SCORES`) are
skipped with one line in the log and the report (:func:`usable_estimators`), unless every requested estimator
needs them: then nothing could be computed, and that is a ConfigError before any similarity matrix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsplits.errors import ConfigError, DataError
from lsplits.generation.scores import SCORE_FIELDS
from lsplits.uncertainty.graybox import GRAYBOX_ESTIMATORS, SCORED_ESTIMATORS, score_problem

PENMAN_FIELDS = {"logprob": "logprobs", "n_tokens": "n_tokens", "token_entropy": "token_entropies"}
"""PENMAN metadata key -> the score field it gives (one value per graph)."""
_METADATA_RE = re.compile(r"::(logprob|n_tokens|token_entropy)\b(?:\s+(\S+))?")

Where = tuple[Path, int, str]  # file, line, example


def penman_scores(line: str, path: Path, number: int) -> dict[str, float]:
    """The score fields one PENMAN comment line gives (``# ::logprob -3.2``); DataError for a value that is no
    number, naming the file, line and metadata key."""
    found = {}
    for key, text in _METADATA_RE.findall(line):
        try:
            found[PENMAN_FIELDS[key]] = float(text)
        except ValueError:
            raise DataError(f"'# ::{key}' needs a number, got {text or 'nothing'!r}", source=str(path),
                            line=number, field=f"# ::{key}") from None
    return found


@dataclass
class ScoreTable:
    """The score lists of each example as read (example -> field -> list), and where the first example with and
    the first without each field are, so :meth:`check_complete` can name them."""

    values: dict[str, dict[str, list]] = field(default_factory=dict)
    first_with: dict[str, Where] = field(default_factory=dict)
    first_without: dict[str, Where] = field(default_factory=dict)

    def add(self, example: str, scores: dict[str, object], where: Where) -> None:
        """One graph's (PENMAN) or row's (JSONL) scores: JSONL lists replace, PENMAN values append."""
        entry = self.values.setdefault(example, {})
        for name in SCORE_FIELDS:
            if name in scores:
                self.first_with.setdefault(name, where)
                value = scores[name]
                if isinstance(value, list):
                    entry[name] = value
                else:
                    entry.setdefault(name, []).append(value)
            else:
                self.first_without.setdefault(name, where)

    def check_complete(self) -> tuple[str, ...]:
        """The fields every example carries; DataError naming the first example without a field others carry."""
        for name in SCORE_FIELDS:
            if name in self.first_with and name in self.first_without:
                path, line, example = self.first_without[name]
                other = self.first_with[name]
                raise DataError(f"no {name}, but example {other[2]!r} ({other[0].name} line {other[1]}) has them: "
                                "the beams carry scores for every example or for none",
                                source=str(path), line=line, example=example, field=name)
        return tuple(name for name in SCORE_FIELDS if name in self.first_with)


def check_row_scores(row: dict, candidates: Sequence[object], path: Path, number: int, example: str
                     ) -> dict[str, list]:
    """The score lists of one JSONL beams row, checked: one value per candidate, each usable (DataError naming
    the file, line, example and field otherwise)."""
    found = {}
    for name in SCORE_FIELDS:
        values = row.get(name)
        if values is None:
            continue
        problem = score_problem(name, values) if isinstance(values, list) else (
            f"must be a list of numbers, one per candidate, got {type(values).__name__}")
        if problem is None and len(values) != len(candidates):
            problem = f"has {len(values)} values but there are {len(candidates)} candidates: give one per candidate"
        if problem is not None:
            raise DataError(problem, source=str(path), line=number, example=example, field=name)
        found[name] = values
    return found


def check_example_scores(table: ScoreTable, example: str, candidates: int, where: Where) -> None:
    """DataError unless each score field of a PENMAN example holds one usable value per candidate."""
    for name, values in table.values.get(example, {}).items():
        problem = score_problem(name, values)
        if problem is None and len(values) != candidates:
            problem = f"{len(values)} graphs carry it but the example has {candidates} candidates"
        if problem is not None:
            raise DataError(problem, source=str(where[0]), line=where[1], example=example, field=name)


def missing_fields(estimator: str, fields: Sequence[str]) -> tuple[str, ...]:
    """The score fields ``estimator`` needs that ``fields`` lacks (none for a matrix-only estimator)."""
    needed = SCORED_ESTIMATORS[estimator].fields if estimator in SCORED_ESTIMATORS else ()
    return tuple(name for name in needed if name not in fields)


def usable_estimators(estimators: Sequence[str], fields: Sequence[str], option: str = "{opt:estimators}"
                      ) -> tuple[tuple[str, ...], str | None]:
    """The estimators the beams' score ``fields`` allow, and the line saying which were skipped (None if none).

    ConfigError when every estimator needs scores the beams lack: nothing would be left to compute.
    """
    skipped = {name: missing_fields(name, fields) for name in estimators}
    skipped = {name: missing for name, missing in skipped.items() if missing}
    kept = tuple(name for name in estimators if name not in skipped)
    if not skipped:
        return kept, None
    line = skipped_line(skipped, fields)
    if not kept:
        raise ConfigError(f"{option}: {line}; name a black-box estimator too, or give beams with scores "
                          "(lsplits beams writes them)")
    return kept, line


def skipped_line(skipped: dict[str, tuple[str, ...]], fields: Sequence[str]) -> str:
    """``gray-box rows skipped: the beams carry no scores (msp, cocoa_msp)`` or, when they carry some, which."""
    graybox = [name in GRAYBOX_ESTIMATORS for name in skipped]
    label = " and ".join(family for family, present in (("gray-box", any(graybox)), ("hybrid", not all(graybox)))
                         if present)
    if not fields:
        return f"{label} rows skipped: the beams carry no scores ({', '.join(skipped)})"
    lacking = sorted({name for missing in skipped.values() for name in missing}, key=SCORE_FIELDS.index)
    return (f"{label} rows skipped: the beams carry {', '.join(fields)} but no {', '.join(lacking)} "
            f"({', '.join(skipped)})")
