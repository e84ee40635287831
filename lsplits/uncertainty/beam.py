"""Per-example uncertainty of beam candidates: the core of the ``beam_uncertainty`` evaluate module.

LexSim is always computed on a lexical similarity between the candidate strings (ROUGE-L by
default; any of :data:`lsplits.similarity.lexical.LEXICAL_SIMILARITIES`); every other estimator
uses the similarity function chosen by the caller. Given the candidates' own scores (``logprobs``,
``n_tokens``, ``token_entropies``: per example one value per candidate, as ``lsplits beams`` writes them), the
gray-box estimators read them alone and the hybrid ones with the similarity matrix; without an estimator list,
every estimator the given scores allow is computed beside the paper's four.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lsplits.errors import InvalidInput, shown
from lsplits.params import check_choice
from lsplits.similarity.registry import Similarity, from_config_name
from lsplits.uncertainty.estimators import (
    DEFAULT_ECC_THRESHOLD,
    DEFAULT_KLE_NORMALIZE,
    DEFAULT_KLE_SCALE,
    DEFAULT_KLE_T,
    DEFAULT_SAR_T,
    DEFAULT_SETS_THRESHOLD,
    LEXICAL_ESTIMATORS,
    NEEDS_SCORES,
    PAPER_ESTIMATORS,
    SCORED_ESTIMATORS,
    EstimatorSettings,
    check_estimators,
    estimate_many,
)
from lsplits.uncertainty.matrix import MatrixCache, build_matrices

LEXICAL_SIMILARITY = "rougel"


@dataclass(frozen=True)
class BeamUncertainties:
    """Uncertainty per estimator (one value per example) and invalid candidates per example."""

    values: dict[str, list[float]]
    invalid_candidates: list[int]


def beam_uncertainty_outputs(candidates: Sequence[Sequence[str]], config_name: str, *,
                             estimators: Sequence[str] | None = None,
                             ecc_threshold: float = DEFAULT_ECC_THRESHOLD,
                             sets_threshold: float = DEFAULT_SETS_THRESHOLD, kle_t: float = DEFAULT_KLE_T,
                             kle_normalize: bool = DEFAULT_KLE_NORMALIZE, kle_scale: bool = DEFAULT_KLE_SCALE,
                             lexical_similarity: str = LEXICAL_SIMILARITY,
                             workers: int = 1, logprobs: Sequence[Sequence[float]] | None = None,
                             n_tokens: Sequence[Sequence[int]] | None = None,
                             token_entropies: Sequence[Sequence[float]] | None = None,
                             sar_t: float = DEFAULT_SAR_T) -> dict[str, list]:
    """The ``beam_uncertainty`` evaluate module's result: one list per estimator and ``invalid_candidates``, under
    the similarity the config names. The estimators' options are the fields of
    :class:`~lsplits.uncertainty.estimators.EstimatorSettings`, as ``lsplits ue`` names them. ``logprobs``,
    ``n_tokens``, ``token_entropies``: per example one value per candidate (:func:`scores_rows`); ``estimators``
    None: the paper's four and every estimator the given scores allow."""
    settings = EstimatorSettings(ecc_threshold=ecc_threshold, sets_threshold=sets_threshold, kle_t=kle_t,
                                 kle_normalize=kle_normalize, kle_scale=kle_scale, sar_t=sar_t)
    scores = scores_rows(candidates, logprobs=logprobs, n_tokens=n_tokens, token_entropies=token_entropies)
    result = beam_uncertainties(candidates, from_config_name(config_name, LEXICAL_SIMILARITY),
                                default_estimators(scores) if estimators is None else estimators,
                                settings=settings, lexical_similarity=lexical_similarity, workers=workers,
                                scores=scores)
    return {**result.values, "invalid_candidates": result.invalid_candidates}


def scores_rows(candidates: Sequence[Sequence[str]], **fields: Sequence[Sequence[float]] | None
                ) -> list[dict[str, list]] | None:
    """The given score lists (``logprobs=``, ``n_tokens=``, ``token_entropies=``, each one list per example) as one
    row per example (None when none is given); InvalidInput naming the field and example when one has not one value
    per candidate. The values themselves are checked by the estimators."""
    given = {name: values for name, values in fields.items() if values is not None}
    if not given:
        return None
    rows: list[dict[str, list]] = [{} for _ in candidates]
    for name, values in given.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)) or \
                len(values) != len(candidates):
            size = len(values) if isinstance(values, (Sequence, np.ndarray)) else type(values).__name__
            raise InvalidInput(f"{name} must hold one list per example ({len(candidates)}), got {size}")
        for number, (row, listed, texts) in enumerate(zip(rows, values, candidates, strict=True)):
            if isinstance(listed, (str, bytes)) or not isinstance(listed, (Sequence, np.ndarray)) or \
                    len(listed) != len(texts):
                raise InvalidInput(f"{name} of example {number} must hold one value per candidate ({len(texts)}), "
                                   f"got {shown(listed, 40)}")
            row[name] = list(listed)
    return rows


def default_estimators(scores: Sequence[dict[str, list]] | None) -> tuple[str, ...]:
    """The paper's four and, with scores, every gray-box and hybrid estimator whose fields they hold."""
    fields = set(scores[0]) if scores else set()
    return (*PAPER_ESTIMATORS, *(name for name, estimator in SCORED_ESTIMATORS.items()
                                 if set(estimator.fields) <= fields))


def check_candidates(examples: object, first: int = 0) -> None:
    """InvalidInput naming the example (numbered from ``first``) and the candidate unless ``examples`` is a list of
    examples, each a non-empty list of candidate strings. None is no candidate: an output the model did not give is
    ``""`` (counted invalid, as any text the similarity cannot parse)."""
    if isinstance(examples, (str, bytes)) or not isinstance(examples, (Sequence, np.ndarray)):
        raise InvalidInput(f"candidates must be a list of examples, each a list of candidate strings, got "
                           f"{type(examples).__name__} ({shown(examples, 40)})")
    for number, candidates in enumerate(examples, start=first):
        if isinstance(candidates, (str, bytes)) or not isinstance(candidates, (Sequence, np.ndarray)):
            raise InvalidInput(f"candidates of example {number} is {type(candidates).__name__} "
                               f"({shown(candidates, 40)}), not a list of candidate strings")
        if len(candidates) == 0:
            raise InvalidInput(f"every example needs at least one candidate; example {number} has none")
        for rank, text in enumerate(candidates):
            if not isinstance(text, str):
                raise InvalidInput(f"candidate {rank} of example {number} is {type(text).__name__} "
                                   f"({shown(text, 40)}), not a string: give every candidate as text ('' for none)")


def beam_uncertainties(examples: Sequence[Sequence[str]], similarity: Similarity | str = LEXICAL_SIMILARITY,
                       estimators: Sequence[str] = PAPER_ESTIMATORS, *, settings: EstimatorSettings | None = None,
                       lexical_similarity: str = LEXICAL_SIMILARITY, workers: int = 1,
                       cache: MatrixCache | str | os.PathLike[str] | None = None,
                       progress: bool = False, scores: Sequence[object] | None = None) -> BeamUncertainties:
    """Uncertainty of each example's candidate list under each requested estimator.

    ``settings`` holds every estimator's options (None: their defaults). ``scores``:
    one entry per example with its candidates' ``logprobs`` / ``n_tokens`` / ``token_entropies`` (a beams-file
    row, :func:`scores_rows`), which the gray-box and hybrid estimators need.

    Example:
        >>> beam_uncertainties([["a b", "a b"], ["a b", "c d"]], estimators=["degmat"]).values
        {'degmat': [0.0, 0.5]}
    """
    from lsplits.similarity.lexical import LEXICAL_SIMILARITIES

    names = check_estimators(estimators, with_scores=scores is not None)
    if scores is not None and len(scores) != len(examples):
        raise InvalidInput(f"scores must hold one entry per example ({len(examples)}), got {len(scores)}")
    settings = settings or EstimatorSettings()
    if any(name in LEXICAL_ESTIMATORS for name in names):
        check_choice("lexical_similarity", lexical_similarity, tuple(LEXICAL_SIMILARITIES))
    check_candidates(examples)
    graph_matrices = build_matrices(examples, similarity, workers=workers, cache=cache, progress=progress)
    lexical_matrices = None
    if any(name in LEXICAL_ESTIMATORS for name in names):
        lexical_matrices = build_matrices(examples, lexical_similarity, workers=workers, cache=cache,
                                          progress=progress)
    values: dict[str, list[float]] = {}
    for name in names:
        matrices = lexical_matrices if name in LEXICAL_ESTIMATORS else graph_matrices
        extra = {"scores": scores} if name in NEEDS_SCORES else {}
        values[name] = estimate_many(name, [m.values for m in matrices], **extra, **settings.options(name)).tolist()
    return BeamUncertainties(values, [m.invalid_count for m in graph_matrices])
