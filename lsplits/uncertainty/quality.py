"""Prediction quality against references with any registered similarity (PRR's q_i).

An invalid prediction (one the metric cannot prepare) is scored as ``placeholder`` when one is
given, for AMR ``(a / amr-empty)``, the stand-in graph that AMR parser evaluations conventionally
use for unparseable output, so it scores (about) 0 and still counts in a micro-averaged corpus
score with all its reference triples missed; without a placeholder it scores 0 and is left out of
the corpus score. An invalid reference is an error naming its position (or id) and the reason.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lsplits.errors import DataError, InvalidOutput, SimilarityFailure
from lsplits.runtime.cancel import check_stop
from lsplits.similarity import registry as similarity_registry
from lsplits.similarity.amr.graph import EMPTY_AMR
from lsplits.similarity.registry import Similarity, prepare_output, score_outputs

logger = logging.getLogger(__name__)

AMR_PLACEHOLDER = EMPTY_AMR


def placeholder_for(similarity: Similarity) -> str | None:
    """The stand-in for invalid predictions that the metric declares (the empty graph for AMR metrics)."""
    return similarity.invalid_stand_in


@dataclass(frozen=True)
class QualityScores:
    """Per-example scores, the corpus score and which predictions were invalid."""

    scores: list[float]
    corpus: float
    invalid_predictions: list[int]


def similarity_outputs(config_name: str, predictions: Sequence[str], references: Sequence[str], *,
                       default: str) -> dict[str, Any]:
    """The ``amr_similarity`` evaluate module's result: corpus score, per-example scores and the number of invalid
    predictions (scored as the metric's stand-in), under keys that start with the metric the config names."""
    name = similarity_registry.from_config_name(config_name, default, what="metric")
    result = score_predictions(name, predictions, references,
                               placeholder=placeholder_for(similarity_registry.get(name)))
    return {name: result.corpus, f"{name}_scores": result.scores,
            f"{name}_invalid_predictions": len(result.invalid_predictions)}


def prepare_references(similarity: Similarity, references: Sequence[str], *,
                       ids: Sequence[str] | None = None, source: str | None = None) -> list[Any]:
    """Prepare every reference; one DataError lists each reference that does not parse."""
    prepared: list[Any] = []
    problems: list[str] = []
    for position, text in enumerate(references):
        name = ids[position] if ids is not None else f"#{position}"
        try:
            prepared.append(prepare_output(similarity, text))
        except InvalidOutput as exc:
            problems.append(f"{name}: {exc}")
            prepared.append(None)
        except SimilarityFailure as exc:  # re-raised with the example
            raise SimilarityFailure(f"example {name}, reference: {exc}") from exc
    if problems:
        shown = "; ".join(problems[:10]) + (f"; ... and {len(problems) - 10} more" if len(problems) > 10 else "")
        raise DataError(f"{len(problems)} reference(s) cannot be read by {similarity.name!r}: {shown}",
                        source=source, field="gold")
    return prepared


def score_predictions(similarity: Similarity | str, predictions: Sequence[str], references: Sequence[str], *,
                      placeholder: str | None = None, ids: Sequence[str] | None = None,
                      source: str | None = None) -> QualityScores:
    """Score each prediction against its reference, and the whole corpus.

    The corpus score is ``similarity.corpus_score`` when the metric has one (micro averages such as
    Smatch's), else the mean of the per-example scores.
    """
    if isinstance(similarity, str):
        similarity = similarity_registry.get(similarity)
    if len(predictions) != len(references):
        raise DataError(f"{len(predictions)} predictions but {len(references)} references", source=source)
    gold = prepare_references(similarity, references, ids=ids, source=source)
    stand_in = None
    if placeholder is not None:
        try:
            stand_in = prepare_output(similarity, placeholder)
        except InvalidOutput:
            logger.warning("placeholder %r is not valid for %s; invalid predictions score 0", placeholder,
                           similarity.name)
    scores: list[float] = []
    invalid: list[int] = []
    pairs: list[tuple[Any, Any]] = []
    for position, (text, reference) in enumerate(zip(predictions, gold, strict=True)):
        check_stop()  # a caller's time budget (lsplits.runtime.cancel) is checked between examples
        try:
            try:
                prediction = prepare_output(similarity, text)
            except InvalidOutput:
                invalid.append(position)
                prediction = stand_in
            if prediction is None:
                scores.append(0.0)
                continue
            scores.append(score_outputs(similarity, prediction, reference, (text, references[position])))
        except SimilarityFailure as exc:  # re-raised with the example
            name = ids[position] if ids is not None else f"#{position}"
            raise SimilarityFailure(f"example {name}: {exc}") from exc
        pairs.append((prediction, reference))
    if not scores:
        corpus = math.nan
    elif similarity.corpus_score is not None:
        corpus = float(similarity.corpus_score([p for p, _ in pairs], [r for _, r in pairs])) if pairs else 0.0
    else:
        corpus = sum(scores) / len(scores)
    if invalid:
        logger.info("%s: %d of %d predictions invalid", similarity.name, len(invalid), len(predictions))
    return QualityScores(scores, corpus, invalid)
