"""Per-example uncertainty of beam candidates: the core of the ``beam_uncertainty`` evaluate module.

LexSim is always computed on ROUGE-L between the candidate strings (it is a lexical estimator);
EigV, Ecc and DegMat use the similarity function chosen by the caller.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InvalidInput, InvalidOption
from ..similarity import Similarity
from .estimators import DEFAULT_ECC_THRESHOLD, ESTIMATORS, estimate
from .matrix import MatrixCache, build_matrices
from .options import check_ecc_threshold

LEXICAL_SIMILARITY = "rougel"


@dataclass(frozen=True)
class BeamUncertainties:
    """Uncertainty per estimator (one value per example) and invalid candidates per example."""

    values: dict[str, list[float]]
    invalid_candidates: list[int]


def beam_uncertainties(examples: Sequence[Sequence[str]], similarity: Similarity | str = LEXICAL_SIMILARITY,
                       estimators: Sequence[str] = tuple(ESTIMATORS), *,
                       ecc_threshold: float = DEFAULT_ECC_THRESHOLD, workers: int = 1,
                       cache: MatrixCache | str | os.PathLike[str] | None = None,
                       progress: bool = False) -> BeamUncertainties:
    """Uncertainty of each example's candidate list under each requested estimator.

    Example:
        >>> beam_uncertainties([["a b", "a b"], ["a b", "c d"]], estimators=["degmat"]).values
        {'degmat': [0.0, 0.5]}
    """
    check_ecc_threshold(ecc_threshold)  # before any similarity matrix is computed
    names = [name.lower() for name in estimators]
    for name in names:
        if name not in ESTIMATORS:
            raise InvalidOption(f"unknown estimator {name!r}; choose one of {', '.join(ESTIMATORS)}")
    if any(len(candidates) == 0 for candidates in examples):
        raise InvalidInput("every example needs at least one candidate")
    graph_matrices = build_matrices(examples, similarity, workers=workers, cache=cache, progress=progress)
    lexical_matrices = None
    if "lexsim" in names:
        lexical_matrices = build_matrices(examples, LEXICAL_SIMILARITY, workers=workers, cache=cache,
                                          progress=progress)
    values: dict[str, list[float]] = {}
    for name in names:
        matrices = lexical_matrices if name == "lexsim" else graph_matrices
        values[name] = [estimate(name, m.values, ecc_threshold=ecc_threshold) for m in matrices]
    return BeamUncertainties(values, [m.invalid_count for m in graph_matrices])
