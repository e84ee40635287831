"""Semantic sets of beam candidates and the estimators built on them (NumSemSets, LabelProb, semantic entropy).

Two candidates are *equivalent* when their similarity is at least ``sets_threshold`` in both directions
(``S[j, l] >= sets_threshold`` and ``S[l, j] >= sets_threshold``; LM-Polygraph asks for NLI entailment >
contradiction both ways). The semantic sets are the connected components of that relation, so a
chain a ~ b ~ c puts all three in one set even when a and c are not equivalent. From the sets of one
example's k candidates:

- ``numsemsets``: the number of sets (Lin et al. 2024), from 1 to k;
- ``labelprob``: 1 - (size of the largest set) / k;
- ``semantic_entropy_counts``: the entropy (natural log) of the set frequencies n_c / k, the black-box
  "frequency" form of Kuhn et al. 2023 (LM-Polygraph's ``SemanticEntropy(class_probability_estimation=
  "frequency")``). ``semantic_entropy`` is its older name, still accepted. The form with the candidates'
  sequence probabilities is ``semantic_entropy_prob`` (:mod:`.graybox`), over the same sets.

Edge cases: k = 1 gives 1 set (0, 0 for the other two); identical candidates (A all ones) give
1, 0, 0; all candidates invalid (A = identity: similarity 0 with every other candidate, so never
equivalent for a positive threshold) give k, 1 - 1/k, log k, the maxima.

LM-Polygraph builds the sets for LabelProb and semantic entropy differently from its own
NumSemSets: greedily, each candidate joining the first set whose *first* member it is equivalent to.
That agrees with the connected components whenever equivalence is transitive, and can split a chain
a ~ b ~ c into two sets otherwise; lsplits uses the components for all three, so they are
consistent with each other and independent of the candidates' order.

Default threshold for graph similarities: 0.85 (:data:`DEFAULT_SETS_THRESHOLD`), measured on the 143
real gold graphs of the AMR sample by ``benchmarks/numsemsets_threshold.py`` (seed 0). An isomorphic
rewrite of a graph (variables renamed, triples shuffled) scores exactly 1 under Smatch, Smatch++,
S2match, SEMA and WLK, so any threshold <= 1 keeps the same meaning in one set. Above 0.85 lie 85-86%
of the one-edit pairs under the Smatch family, 64% under SEMA and 50% under WLK (two edits: 65-66%,
32%, 24%): at 0.85 a candidate within about one edit of another joins its set. On the simulated
parser beams of ``benchmarks/ue_report_demo.py`` the mean PRR (quality Smatch++, over the five
similarities x three set estimators x k = 3, 5, 10) is 0.684 / 0.712 / 0.660 / 0.499 / -0.281 at
thresholds 0.8 / 0.85 / 0.9 / 0.95 / 1.0 on the even-numbered sentences, and 0.699 at 0.85 on the
odd-numbered ones (best there 0.702 at 0.9). A threshold of 1 ("identical graphs only") makes
NumSemSets about k on beams of distinct graphs, worse than random. For lexical or NLI-like
similarities choose the threshold for that scale (``sets_threshold=``; ``lsplits ue --sets-threshold``).
"""

from __future__ import annotations

import numpy as np

from lsplits.params import check
from lsplits.uncertainty._stacks import as_stack, one_or_many

DEFAULT_SETS_THRESHOLD = 0.85


def set_labels(matrix: np.ndarray | list, sets_threshold: float = DEFAULT_SETS_THRESHOLD) -> np.ndarray:
    """The semantic set of each candidate, named by its smallest member's index: ``(k,)`` or ``(n, k)``.

    Example:
        >>> set_labels([[1, 1, 0], [1, 1, 0], [0, 0, 1]], sets_threshold=0.5).tolist()
        [0, 0, 2]
    """
    threshold = check("sets_threshold", sets_threshold)
    values, single = as_stack(matrix)
    k = values.shape[-1]
    equivalent = (values >= threshold) & (values.swapaxes(-1, -2) >= threshold)
    reach = (equivalent | np.eye(k, dtype=bool)).astype(np.float64)
    for _ in range(max(1, int(np.ceil(np.log2(k))))):  # transitive closure by repeated squaring
        reach = np.minimum(reach @ reach, 1.0)
    labels = np.argmax(reach > 0, axis=-1)  # reach is reflexive: the first reachable index is the smallest
    return labels[0] if single else labels


def _set_sizes(matrix: np.ndarray | list, sets_threshold: float) -> tuple[np.ndarray, bool, int]:
    """Size of the set named j for each j (0 where j names no set), per matrix; single flag; k."""
    labels = set_labels(matrix, sets_threshold)
    single = labels.ndim == 1
    labels = labels[None] if single else labels
    k = labels.shape[-1]
    sizes = (labels[..., :, None] == np.arange(k)).sum(axis=-2)
    return sizes, single, k


def numsemsets(matrix: np.ndarray | list, sets_threshold: float = DEFAULT_SETS_THRESHOLD) -> float | np.ndarray:
    """Number of semantic sets among the candidates (1 = all equivalent, k = all different)."""
    sizes, single, _ = _set_sizes(matrix, sets_threshold)
    return one_or_many((sizes > 0).sum(axis=-1).astype(float), single)


def labelprob(matrix: np.ndarray | list, sets_threshold: float = DEFAULT_SETS_THRESHOLD) -> float | np.ndarray:
    """1 - share of the candidates in the largest semantic set."""
    sizes, single, k = _set_sizes(matrix, sets_threshold)
    return one_or_many(1.0 - sizes.max(axis=-1) / k, single)


def semantic_entropy_counts(matrix: np.ndarray | list, sets_threshold: float = DEFAULT_SETS_THRESHOLD
                            ) -> float | np.ndarray:
    """Entropy (nats) of the semantic-set frequencies: 0 for one set, log k for k singletons."""
    sizes, single, k = _set_sizes(matrix, sets_threshold)
    shares = sizes / k
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(shares > 0, -shares * np.log(shares), 0.0)
    return one_or_many(terms.sum(axis=-1), single)


semantic_entropy = semantic_entropy_counts
"""The older name of :func:`semantic_entropy_counts` (count-based; see ``semantic_entropy_prob`` for probabilities)."""
