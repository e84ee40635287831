"""The rows of an uncertainty study (methods: estimator x similarity), their families and their values.

A method is an estimator over the matrices of one similarity (``EigV-Smatch++``; LexSim over a lexical one),
a gray-box estimator over the candidates' own scores alone (``MSP``), or a hybrid estimator over both
(``CocoaMSP-Smatch++``, one row per similarity, any registered one). :data:`FAMILIES` names the three kinds,
the report's family tables put them side by side (:mod:`.family_report`).

At beam size k every estimator sees the first k candidates: the top-left k x k block of each matrix and the
first k values of each score list (examples with fewer candidates use all they have).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from lsplits.similarity import registry as similarity_registry
from lsplits.uncertainty._format import MIN_CORRELATION_POINTS
from lsplits.uncertainty.beam import LEXICAL_SIMILARITY
from lsplits.uncertainty.estimators import (
    ALIASES,
    DISPLAY_NAMES,
    ESTIMATORS,
    HYBRID_ESTIMATORS,
    LEXICAL_ESTIMATORS,
    NEEDS_SCORES,
    SPECTRAL_ESTIMATORS,
    estimate_many,
    spectral_many,
)

if TYPE_CHECKING:
    from lsplits.uncertainty.estimators import EstimatorSettings
    from lsplits.uncertainty.matrix import SimilarityMatrix


class StudyGrid(Protocol):
    """What the rows are made from: a :class:`~lsplits.uncertainty.study.StudyConfig` (named by its fields here,
    since the study module builds on this one)."""

    estimators: tuple[str, ...]
    similarities: tuple[str, ...]
    lexical_similarities: tuple[str, ...]

    def estimator_settings(self) -> EstimatorSettings: ...

FAMILIES = ("black-box", "gray-box", "hybrid")
"""Black-box: the candidates' similarities alone; gray-box: the model's scores of its candidates alone; hybrid:
both (:data:`~lsplits.uncertainty.estimators.NEEDS_SCORES`)."""


def read_only(values: np.ndarray) -> np.ndarray:
    """``values`` as an array nobody can change (a study is immutable once computed)."""
    values = np.asarray(values)
    values.flags.writeable = False
    return values


def method_name(estimator: str, similarity: str | None) -> str:
    """Row label as in the paper: ``LexSim`` or ``EigV-Smatch++`` (gray-box: ``MSP``)."""
    label = DISPLAY_NAMES[estimator]
    return label if similarity is None else f"{label}-{similarity_registry.display(similarity)}"


def estimator_family(estimator: str) -> str:
    """``black-box``, ``gray-box`` or ``hybrid``: what the estimator reads (:data:`FAMILIES`)."""
    needs = NEEDS_SCORES.get(estimator)
    return FAMILIES[0] if needs is None else FAMILIES[2] if needs == "scores+matrix" else FAMILIES[1]


CONSTANT_AT_ONE_CANDIDATE = ("cocoa_msp", "cocoa_ppl", "cocoa_mte")
"""The scored estimators that give every example the same value when it has one candidate (CoCoA: d = 0,
:mod:`.graybox`'s edge cases); the other scored ones are then the top-1's own score and still rank examples."""


def needs_several_candidates(estimator: str) -> bool:
    """Whether ``estimator`` gives every example the same value when each has one candidate (the k = 1 edge cases:
    every matrix-only estimator, and CoCoA), so it cannot rank examples from fewer than 2 candidates."""
    key = ALIASES.get(estimator.lower(), estimator.lower())
    return key in ESTIMATORS or key in CONSTANT_AT_ONE_CANDIDATE


_BY_LABEL = {label: estimator for estimator, label in reversed(DISPLAY_NAMES.items())}


def label_family(method: str) -> str:
    """The family of a row label (``CocoaMSP-Smatch++`` -> ``hybrid``; a label lsplits did not make: black-box)."""
    return estimator_family(_BY_LABEL.get(method.split("-", 1)[0], ""))


def method_pairs(config: StudyGrid) -> list[tuple[str, str | None, str | None]]:
    """(estimator, similarity whose matrices it uses or None, similarity named in the row label) per report row."""
    pairs: list[tuple[str, str | None, str | None]] = []
    for estimator in config.estimators:
        if estimator in LEXICAL_ESTIMATORS:
            pairs += [(estimator, lexical, None if lexical == LEXICAL_SIMILARITY else lexical)
                      for lexical in config.lexical_similarities]
        elif estimator in NEEDS_SCORES and estimator not in HYBRID_ESTIMATORS:
            pairs.append((estimator, None, None))
        else:
            pairs += [(estimator, name, name) for name in config.similarities]
    return pairs


def scores_at(scores: Sequence[dict[str, list]] | None, k: int) -> list[dict[str, list]] | None:
    """Each example's score lists cut to its first k candidates."""
    return None if scores is None else [{name: values[:k] for name, values in entry.items()} for entry in scores]


def estimate_methods(matrices: dict[str, list[SimilarityMatrix]], k: int, config: StudyGrid,
                     scores: Sequence[dict[str, list]] | None = None) -> dict[str, np.ndarray]:
    """Every method's uncertainty per example at beam size k (each estimator vectorised over the examples).

    EigV and Ecc of one similarity share one Laplacian eigendecomposition per matrix stack; the gray-box and
    hybrid estimators read ``scores`` (one entry per example, :attr:`~lsplits.uncertainty.inputs.Inputs.scores`).
    """
    settings = config.estimator_settings()
    pairs = method_pairs(config)
    requested = {(estimator, name) for estimator, name, _ in pairs}
    spectral = {name: spectral_many([m.truncate(k).values for m in matrices[name]], settings.ecc_threshold)
                for name in config.similarities if all((e, name) in requested for e in SPECTRAL_ESTIMATORS)}
    cut = scores_at(scores, k)
    values = {}
    for estimator, name, label in pairs:
        if name in spectral and estimator in SPECTRAL_ESTIMATORS:
            values[method_name(estimator, label)] = read_only(spectral[name][estimator])
            continue
        found = None if name is None else [m.truncate(k).values for m in matrices[name]]
        extra = {"scores": cut} if estimator in NEEDS_SCORES else {}
        values[method_name(estimator, label)] = read_only(estimate_many(estimator, found, **extra,
                                                                        **settings.options(estimator)))
    return values


def spearman(values: dict[str, np.ndarray]) -> np.ndarray:
    """Spearman correlation matrix between methods over their values (NaN where a method is constant, and
    everywhere below :data:`~lsplits.uncertainty._format.MIN_CORRELATION_POINTS` values)."""
    from scipy.stats import rankdata

    size = len(values)
    if any(len(v) < MIN_CORRELATION_POINTS for v in values.values()):
        return np.full((size, size), np.nan)
    ranks = np.array([rankdata(v) for v in values.values()])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.corrcoef(ranks) if len(ranks) > 1 else np.ones((1, 1))
