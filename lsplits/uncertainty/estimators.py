"""Black-box uncertainty estimators over a similarity matrix of k candidates.

Each estimator maps a matrix ``A`` (values in [0, 1], diagonal 1, as built by
:mod:`lsplits.uncertainty.matrix`) to one number; higher means more uncertain. Every estimator also
takes a stack of matrices of one size, shape ``(n, k, k)``, and returns one value per matrix
(computed in one vectorised pass, which is what makes long reports fast); :func:`estimate_many`
takes a list of matrices whose sizes differ.

- ``lexsim``: 1 - mean of the off-diagonal entries (with ROUGE-L similarities this is LexSim of
  Kuhn et al. 2023; the paper's eq. 4 negates the mean instead, which ranks identically).
- ``eigv``: sum_j max(0, 1 - lambda_j) over the eigenvalues of the normalised Laplacian
  ``L = I - D^-1/2 A D^-1/2`` (Lin et al. 2024, eq. 7); roughly the number of clusters.
- ``ecc``: eccentricity; rows of the eigenvectors of L with eigenvalue below ``ecc_threshold`` embed
  the candidates, and the value is the Frobenius norm of the embeddings minus their mean (eq. 8).
  With every eigenvector kept the value is always sqrt(k - 1) (the embedding is an orthogonal
  matrix), which is why the threshold exists.
- ``degmat``: 1 - sum(A) / k^2 (eq. 9).
- ``luq``, ``kle`` and the semantic-set estimators (``numsemsets``, ``labelprob``,
  ``semantic_entropy_counts``, in :mod:`.semantic_sets`) are defined at the end of this module.
- The gray-box and hybrid estimators (the candidates' log-probabilities, token counts and token entropies,
  with or without the matrix: ``msp``, ``perplexity``, ``mean_token_entropy``, ``mc_sequence_entropy``,
  ``semantic_entropy_prob``, ``sentence_sar``, ``cocoa_msp``, ``cocoa_ppl``, ``cocoa_mte``) are in
  :mod:`.graybox`; :func:`estimate` and :func:`estimate_many` apply them by name with ``scores=``, and
  :data:`ESTIMATORS` (the matrix-only ones) does not list them.

Edge cases (all tested):

- k = 1: lexsim 0, eigv 1, ecc 0, degmat 0 (no disagreement is observable; each is its minimum).
- all candidates identical (A all ones): lexsim 0, eigv 1, ecc 0, degmat 0.
- all candidates invalid (A = identity): k separate clusters; eigv k, ecc sqrt(k - 1),
  degmat 1 - 1/k (the maxima); lexsim works on strings and is unaffected by validity.
- a zero-degree candidate (a row of zeros, only possible for matrices built elsewhere, since the
  diagonal is 1 here): treated as an isolated node, ``L = D^-1/2 (D - A) D^-1/2`` with
  ``0^-1/2 := 0``, so it adds a zero eigenvalue (its own component), as an invalid candidate does.
- k = 0 raises ValueError: there is nothing to estimate.

In a report these cases are said, not hidden (:mod:`lsplits.uncertainty.study`): an estimator that
gives every example the same value (k = 1, or identical candidates everywhere) cannot rank them and
gets no "best" mark, and examples without a valid candidate are counted, since the graph estimators
rate them maximally uncertain while LexSim, on strings, may rate them certain.

``ecc_threshold`` outside (0, 2] (or NaN) raises :class:`~lsplits.errors.InvalidOption`.

Every value is rounded to 12 decimals: eigen solvers leave noise of about 1e-16 (EigV of identical
candidates is 1.0000000000000002 at k = 3 but 1.0 at k = 5), and PRR must see mathematically equal
uncertainties as the exact ties it averages over, not as an order made of rounding noise.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from lsplits.errors import InvalidInput, InvalidOption
from lsplits.params import Checked, Each, Flag, Options, Param, check, check_choice, rule_of
from lsplits.uncertainty._stacks import as_stack, one_or_many, symmetric_stack
from lsplits.uncertainty._stacks import rounded as _rounded

DEFAULT_ECC_THRESHOLD = 0.9


def _normalized_laplacians(adjacency: np.ndarray) -> np.ndarray:
    """``D^-1/2 (D - A) D^-1/2`` of a symmetric stack, with ``0^-1/2 := 0`` for zero-degree rows."""
    degree = adjacency.sum(axis=-1)
    scale = np.zeros_like(degree)
    positive = degree > 0
    scale[positive] = 1.0 / np.sqrt(degree[positive])
    laplacian = -adjacency.copy()
    diagonal = np.einsum("nii->ni", laplacian)
    diagonal += degree
    return scale[..., :, None] * laplacian * scale[..., None, :]


def normalized_laplacian(matrix: np.ndarray | list) -> np.ndarray:
    """``I - D^-1/2 A D^-1/2`` (written as ``D^-1/2 (D - A) D^-1/2`` so zero-degree rows are defined)."""
    adjacency, single = symmetric_stack(matrix)
    laplacians = _normalized_laplacians(adjacency)
    return laplacians[0] if single else laplacians


def _off_diagonal_mean(values: np.ndarray) -> np.ndarray:
    """Mean of the off-diagonal entries of each matrix (1.0 for k = 1: nothing disagrees)."""
    k = values.shape[-1]
    if k == 1:
        return np.ones(values.shape[0])
    total = values.sum(axis=(-1, -2)) - np.einsum("nii->n", values)
    return total / (k * (k - 1))


def lexsim(matrix: np.ndarray | list) -> float | np.ndarray:
    """1 - mean pairwise similarity between distinct candidates (0 for a single candidate)."""
    values, single = symmetric_stack(matrix)
    return one_or_many(_rounded(1.0 - _off_diagonal_mean(values)), single)


def _eigv_from(eigenvalues: np.ndarray) -> np.ndarray:
    """EigV of each matrix from its Laplacian eigenvalues (last axis)."""
    return _rounded(np.clip(1.0 - eigenvalues, 0.0, None).sum(axis=-1))


def _ecc_from(eigenvalues: np.ndarray, eigenvectors: np.ndarray, threshold: float) -> np.ndarray:
    """Ecc of each matrix from its Laplacian eigendecomposition, keeping eigenvalues below ``threshold``."""
    centred = eigenvectors - eigenvectors.mean(axis=-2, keepdims=True)
    spread = (centred**2).sum(axis=-2)  # per eigenvector: squared norm of its centred entries
    return _rounded(np.sqrt((spread * (eigenvalues < threshold)).sum(axis=-1)))


def eigv(matrix: np.ndarray | list) -> float | np.ndarray:
    """Sum over Laplacian eigenvalues of max(0, 1 - lambda)."""
    adjacency, single = symmetric_stack(matrix)
    return one_or_many(_eigv_from(np.linalg.eigvalsh(_normalized_laplacians(adjacency))), single)


def ecc(matrix: np.ndarray | list, ecc_threshold: float = DEFAULT_ECC_THRESHOLD) -> float | np.ndarray:
    """Frobenius norm of the centred spectral embeddings (eigenvectors with eigenvalue < ``ecc_threshold``).

    Eigenvectors of a repeated eigenvalue are only defined up to rotation, but the value depends
    only on the space they span, so it is deterministic as long as the threshold does not cut
    through a repeated eigenvalue.
    """
    threshold = check("ecc_threshold", ecc_threshold)
    adjacency, single = symmetric_stack(matrix)
    eigenvalues, eigenvectors = np.linalg.eigh(_normalized_laplacians(adjacency))
    return one_or_many(_ecc_from(eigenvalues, eigenvectors, threshold), single)


def eigv_and_ecc(matrix: np.ndarray | list, ecc_threshold: float = DEFAULT_ECC_THRESHOLD
                 ) -> tuple[float | np.ndarray, float | np.ndarray]:
    """EigV and Ecc of one matrix (or a stack) from ONE Laplacian eigendecomposition, for callers that need both."""
    threshold = check("ecc_threshold", ecc_threshold)
    adjacency, single = symmetric_stack(matrix)
    eigenvalues, eigenvectors = np.linalg.eigh(_normalized_laplacians(adjacency))
    return (one_or_many(_eigv_from(eigenvalues), single),
            one_or_many(_ecc_from(eigenvalues, eigenvectors, threshold), single))


def degmat(matrix: np.ndarray | list) -> float | np.ndarray:
    """1 - mean of all entries of the (symmetrised) matrix, diagonal included."""
    values, single = as_stack(matrix)  # the sum of all entries does not change when symmetrised
    return one_or_many(_rounded(1.0 - values.sum(axis=(-1, -2)) / values.shape[-1] ** 2), single)


# ------------------------------------------------------------------------------------------------------
# Estimators beyond the paper's four (LM-Polygraph's black-box set), the registry and the entry point.

DEFAULT_KLE_T = 0.3
DEFAULT_KLE_NORMALIZE = True
"""KLE's kernel is divided by its trace (unit trace), as LM-Polygraph's."""
DEFAULT_KLE_SCALE = True
"""KLE's entropy is divided by log k (its maximum), as LM-Polygraph's."""


def luq(matrix: np.ndarray | list) -> float | np.ndarray:
    """LUQ (Zhang et al. 2024) as LM-Polygraph defines it: 1 - mean similarity of each candidate to the others.

    The mean over candidates of their mean similarity to the other k - 1 is the mean over ordered
    pairs, so on a similarity matrix this equals ``lexsim`` (LexSim is the same formula on lexical
    similarities); with the diagonal 1 it is also ``degmat * k / (k - 1)``, so at a fixed k LUQ and
    DegMat rank examples identically. k = 1 gives 0 (LM-Polygraph divides by k - 1 = 0: NaN).
    """
    values, single = as_stack(matrix)
    return one_or_many(_rounded(1.0 - _off_diagonal_mean(values)), single)


def kle(matrix: np.ndarray | list, kle_t: float = DEFAULT_KLE_T, kle_normalize: bool = DEFAULT_KLE_NORMALIZE,
        kle_scale: bool = DEFAULT_KLE_SCALE) -> float | np.ndarray:
    """Kernel Language Entropy (Nikitin et al. 2024), black-box form: von Neumann entropy of a heat kernel.

    The graph weights are ``W = S + S^T``, a similarity counted once per direction as the paper and
    LM-Polygraph sum the two NLI directions; ``L = diag(W 1) - W`` (the diagonal of W cancels);
    ``K = expm(-t L)`` with t = ``kle_t``, computed from the eigendecomposition of L. With ``kle_normalize`` the kernel is
    made unit-trace, ``K_jl / sqrt(K_jj K_ll) / k``; the entropy is ``-sum_i e_i log e_i`` over the
    eigenvalues of that kernel (0 log 0 = 0), divided by log k (its maximum) with ``kle_scale``.

    Edge cases: k = 1 gives 0 (LM-Polygraph divides by log 1 = 0); all candidates invalid
    (A = I, so K = I) gives log k, 1 when scaled; identical candidates give a small positive value
    that tends to 0 as t grows (the heat kernel is never exactly rank one).
    """
    t = check("kle_t", kle_t)
    values, single = as_stack(matrix)
    k = values.shape[-1]
    weights = values + values.swapaxes(-1, -2)
    laplacian = -weights
    diagonal = np.einsum("nii->ni", laplacian)
    diagonal += weights.sum(axis=-1)
    eigenvalues, eigenvectors = np.linalg.eigh(laplacian)
    decay = np.exp(-t * eigenvalues)
    if kle_normalize:
        kernel = (eigenvectors * decay[..., None, :]) @ eigenvectors.swapaxes(-1, -2)
        root = np.sqrt(np.einsum("nii->ni", kernel))
        kernel = kernel / (root[..., :, None] * root[..., None, :]) / k
        spectrum = np.linalg.eigvalsh(kernel)
    else:
        spectrum = decay
    spectrum = np.clip(spectrum, 0.0, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(spectrum > 0, -spectrum * np.log(spectrum), 0.0)
    entropy = terms.sum(axis=-1)
    if kle_scale:
        entropy = entropy / np.log(k) if k > 1 else np.zeros_like(entropy)
    return one_or_many(_rounded(entropy), single)


from lsplits.uncertainty.graybox import (  # noqa: E402
    DEFAULT_SAR_T,
    GRAYBOX_ESTIMATORS,
    HYBRID_ESTIMATORS,
    SCORED_DISPLAY_NAMES,
    SCORED_ESTIMATORS,
    estimate_scored,
    scored_many,
)
from lsplits.uncertainty.semantic_sets import (  # noqa: E402
    DEFAULT_SETS_THRESHOLD,
    labelprob,
    numsemsets,
    semantic_entropy_counts,
)

ESTIMATORS: dict[str, Callable[..., float | np.ndarray]] = {
    "lexsim": lexsim, "eigv": eigv, "ecc": ecc, "degmat": degmat,
    "numsemsets": numsemsets, "labelprob": labelprob, "semantic_entropy_counts": semantic_entropy_counts,
    "luq": luq, "kle": kle,
}
"""The black-box estimators: one similarity matrix (or a stack) in, nothing else."""
ALIASES = {"semantic_entropy": "semantic_entropy_counts"}
"""Older names still accepted; results stay under the name the caller used."""
DISPLAY_NAMES = {"lexsim": "LexSim", "eigv": "EigV", "ecc": "Ecc", "degmat": "DegMat",
                 "numsemsets": "NumSemSets", "labelprob": "LabelProb", "semantic_entropy_counts": "SemEnt",
                 "semantic_entropy": "SemEnt", "luq": "LUQ", "kle": "KLE", **SCORED_DISPLAY_NAMES}
NEEDS_SCORES = {**dict.fromkeys(GRAYBOX_ESTIMATORS, "scores"), **dict.fromkeys(HYBRID_ESTIMATORS, "scores+matrix")}
"""What each gray-box ("scores": the candidates' log-probabilities, token counts or token entropies) and hybrid
("scores+matrix") estimator reads beyond a similarity matrix; an estimator not listed reads the matrix alone."""
LEXICAL_ESTIMATORS = ("lexsim",)  # computed on lexical similarities of the candidate strings
PAPER_ESTIMATORS = (*LEXICAL_ESTIMATORS, "eigv", "degmat", "ecc")
"""The paper's four estimators, in the order its tables list them."""
GRAPH_ESTIMATORS = tuple(name for name in PAPER_ESTIMATORS if name not in LEXICAL_ESTIMATORS)
"""The paper's estimators over graph similarities (one per similarity function)."""


def estimator_names() -> tuple[str, ...]:
    """Every estimator name :func:`get_estimator` accepts (matrix-only, gray-box and hybrid, aliases)."""
    return (*ESTIMATORS, *SCORED_ESTIMATORS, *ALIASES)


ESTIMATOR_NAME = Options(estimator_names, fold_case=True)
"""The rule of one estimator name (case-insensitive), for settings that list estimators."""


def get_estimator(name: str) -> Callable[..., float | np.ndarray]:
    """The estimator function named ``name`` (case-insensitive; gray-box and hybrid ones too); InvalidOption
    (a ValueError) listing the choices."""
    key = check("estimator", name, Param(ESTIMATOR_NAME))
    key = ALIASES.get(key, key)
    if key in SCORED_ESTIMATORS:
        return SCORED_ESTIMATORS[key].function
    return ESTIMATORS[key]


def estimator_options(name: str) -> dict[str, object]:
    """The options an estimator takes, with their defaults (``{"ecc_threshold": 0.9}`` for ecc), named as the
    fields of :class:`EstimatorSettings`."""
    function = get_estimator(name)
    key = name.lower()
    if key in SCORED_ESTIMATORS:
        return SCORED_ESTIMATORS[key].options()
    parameters = list(inspect.signature(function).parameters.values())[1:]
    return {p.name: p.default for p in parameters}


def _is_strings(candidates) -> bool:
    """Whether ``candidates`` is a list of candidate strings (InvalidInput when it mixes strings with other values)."""
    if not (isinstance(candidates, Sequence) and not isinstance(candidates, str) and len(candidates) > 0
            and any(isinstance(c, str) for c in candidates)):
        return False
    for position, candidate in enumerate(candidates):
        if not isinstance(candidate, str):
            raise InvalidInput(f"candidates must all be strings, candidate #{position} is {candidate!r} "
                               f"({type(candidate).__name__})")
    return True


def estimate(name: str, matrix=None, *, scores=None, **options) -> float | np.ndarray:
    """The uncertainty named ``name`` of one similarity matrix (or a stack ``(n, k, k)``), by name.

    ``options`` are the estimator's own, named as the fields of :class:`EstimatorSettings` (``ecc_threshold`` of
    ecc, ``sets_threshold`` of the semantic-set estimators, ``kle_t``, ``kle_normalize``, ``kle_scale`` of kle,
    ``sar_t`` of sentence_sar); an option it does not take is an InvalidOption.
    ``lexsim`` also takes the candidate strings themselves, with option ``similarity`` naming the
    lexical similarity (``rougel`` by default; ``rouge1``, ``rouge2``, ``bleu``, and ``*_stem`` for
    Porter stemming, see :mod:`.lexical`): ``estimate("lexsim", ["a b c", "a b d"], similarity="rouge1")``.
    The gray-box and hybrid estimators (:data:`NEEDS_SCORES`) read ``scores``: a mapping or object with the
    candidates' ``logprobs``, ``n_tokens``, ``token_entropies`` (a beams-file row, a
    :class:`~lsplits.generation.scores.Scored`), each ``(k,)`` or ``(n, k)`` beside ``matrix``; the gray-box
    ones need no matrix (``estimate("msp", scores=row)``), and the matrix-only estimators ignore ``scores``.

    Example:
        >>> estimate("numsemsets", [[1.0, 0.9, 0.1], [0.9, 1.0, 0.2], [0.1, 0.2, 1.0]], sets_threshold=0.5)
        2.0
    """
    function = get_estimator(name)
    key = ALIASES.get(name.lower(), name.lower())
    if key == "lexsim" and _is_strings(matrix):
        from lsplits.similarity.lexical import LEXICAL_SIMILARITIES
        from lsplits.uncertainty.matrix import build_matrix

        similarity = check_choice("similarity", options.pop("similarity", "rougel"), tuple(LEXICAL_SIMILARITIES))
        matrix = build_matrix(list(matrix), LEXICAL_SIMILARITIES[similarity]).values
    options = _checked_options(key, options)
    if key in SCORED_ESTIMATORS:
        return estimate_scored(key, matrix, scores, **options)
    if matrix is None:
        raise InvalidInput(f"estimator {key!r} needs a similarity matrix of the candidates")
    return function(matrix, **options)


def _checked_options(key: str, options: dict[str, object]) -> dict[str, object]:
    """The options of estimator ``key`` checked: each by its rule as a field of :class:`EstimatorSettings`."""
    accepted = estimator_options(key)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        takes = ", ".join(accepted) or "no options"
        raise InvalidOption(f"estimator {key!r} does not take option(s) {', '.join(unknown)} "
                                     f"(it takes: {takes})")
    for option, value in options.items():
        check(option, value, rule_of(EstimatorSettings, option))
    return options


def _stacks_by_size(matrices: Sequence[np.ndarray]):
    """(positions, stack) for each matrix size in ``matrices``, so estimators run vectorised per size."""
    by_size: dict[int, list[int]] = {}
    for index, matrix in enumerate(matrices):
        by_size.setdefault(np.shape(matrix)[0], []).append(index)
    for positions in by_size.values():
        yield positions, np.stack([np.asarray(matrices[i], dtype=float) for i in positions])


def estimate_many(name: str, matrices: Sequence[np.ndarray] | None = None, *, scores: Sequence | None = None,
                  **options) -> np.ndarray:
    """One uncertainty per matrix of a list whose sizes may differ (each size computed as one stack).

    The gray-box and hybrid estimators read ``scores``, one entry per example (see :func:`estimate`), with
    ``matrices`` for the hybrid ones; gray-box ones need none.
    """
    get_estimator(name)
    key = ALIASES.get(name.lower(), name.lower())
    if key in SCORED_ESTIMATORS:
        return scored_many(key, scores, matrices, **_checked_options(key, dict(options)))
    if matrices is None:
        raise InvalidInput(f"estimator {key!r} needs one similarity matrix per example")
    values = np.empty(len(matrices))
    for positions, stack in _stacks_by_size(matrices):
        values[positions] = estimate(name, stack, **dict(options))
    return values


SPECTRAL_ESTIMATORS = ("eigv", "ecc")  # both from the Laplacian's eigendecomposition: see spectral_many


def spectral_many(matrices: Sequence[np.ndarray], ecc_threshold: float = DEFAULT_ECC_THRESHOLD
                  ) -> dict[str, np.ndarray]:
    """``{"eigv": ..., "ecc": ...}`` per matrix of a list, one eigendecomposition per matrix (sizes may differ)."""
    values = {name: np.empty(len(matrices)) for name in SPECTRAL_ESTIMATORS}
    for positions, stack in _stacks_by_size(matrices):
        values["eigv"][positions], values["ecc"][positions] = eigv_and_ecc(stack, ecc_threshold)
    return values


@dataclass(frozen=True)
class EstimatorSettings(Checked):
    """The options of every estimator in one place (what ``lsplits ue`` and the metric module expose); checked
    when built (:class:`lsplits.params.Checked`), before any long computation."""

    RULES = {"kle_normalize": Param(Flag()), "kle_scale": Param(Flag())}

    ecc_threshold: float = DEFAULT_ECC_THRESHOLD
    sets_threshold: float = DEFAULT_SETS_THRESHOLD
    kle_t: float = DEFAULT_KLE_T
    kle_normalize: bool = DEFAULT_KLE_NORMALIZE
    kle_scale: bool = DEFAULT_KLE_SCALE
    sar_t: float = DEFAULT_SAR_T

    def options(self, name: str) -> dict[str, object]:
        """The keyword options of the estimator ``name`` under these settings (its keywords are these fields)."""
        return {option: getattr(self, option) for option in estimator_options(name)}


def check_estimators(names: Sequence[str], *, with_scores: bool = False) -> tuple[str, ...]:
    """The estimator names, lower-cased; InvalidOption for an unknown one or an empty list.

    Unless the caller has the candidates' scores (``with_scores``), a gray-box or hybrid estimator is refused
    too: it could not be computed from similarity matrices alone.
    """
    keys = check("estimators", names, Param(Each(ESTIMATOR_NAME)))
    for key in keys:
        if key in NEEDS_SCORES and not with_scores:
            raise InvalidOption(name="estimators", problem=f": estimator {key!r} needs the candidates' "
                                f"log-probabilities or token entropies ({NEEDS_SCORES[key]}), which this input does "
                                f"not give; choose among {', '.join(ESTIMATORS)}")
    return keys
