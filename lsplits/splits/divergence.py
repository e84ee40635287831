"""Atom and compound divergence between train and eval (Keysers et al. 2020), for Spider splits.

The divergence of two frequency distributions P (train) and Q (eval) is ``1 - C_a(P||Q)``
with the Chernoff coefficient ``C_a(P||Q) = sum_k p_k^a q_k^(1-a)`` (Godbole & Jia 2023, appendix A.4):
``a = 0.5`` for atoms (symmetric) and ``a = 0.1`` for compounds (a compound's presence in train
matters more than matching frequencies). 0 means identical distributions, 1 disjoint supports.

Distributions are normalised counts over a split side: an atom counts once per example that
contains it (atoms are per-example sets); a compound counts as often as it occurs (compounds are
per-example :class:`collections.Counter`), as in Shaw et al.'s ``mcd_utils``.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

import numpy as np

from lsplits.errors import InvalidOption

__all__ = [
    "ATOM_ALPHA",
    "COMPOUND_ALPHA",
    "atom_divergence",
    "chernoff_coefficient",
    "chernoff_divergence",
    "compound_divergence",
]

logger = logging.getLogger(__name__)

#: Chernoff alpha of the atom divergence (symmetric).
ATOM_ALPHA = 0.5
#: Chernoff alpha of the compound divergence (Keysers et al. 2020).
COMPOUND_ALPHA = 0.1

Key = TypeVar("Key")


def chernoff_coefficient(train_counts: Mapping[Key, float], eval_counts: Mapping[Key, float],
                         alpha: float) -> float:
    """``sum_k p_k^alpha q_k^(1-alpha)`` of the normalised counts (p: train, q: eval).

    Returns NaN, with a warning, when either side has no counts at all (no distribution).

    >>> round(chernoff_coefficient({"a": 1, "b": 1}, {"a": 1}, 0.5), 4)   # sqrt(1/2 * 1)
    0.7071
    """
    if not 0.0 <= alpha <= 1.0:
        raise InvalidOption(f"alpha must lie in [0, 1], got {alpha}")
    train_total = sum(train_counts.values())
    eval_total = sum(eval_counts.values())
    if train_total <= 0 or eval_total <= 0:
        logger.warning("Chernoff coefficient undefined: train holds %s and eval %s counts",
                       train_total, eval_total)
        return math.nan
    coefficient = 0.0
    for key, train_count in train_counts.items():
        eval_count = eval_counts.get(key, 0)
        if train_count > 0 and eval_count > 0:
            coefficient += (train_count / train_total) ** alpha * (eval_count / eval_total) ** (1.0 - alpha)
    return coefficient


def chernoff_divergence(train_counts: Mapping[Key, float], eval_counts: Mapping[Key, float],
                        alpha: float) -> float:
    """``1 - C_alpha(P||Q)``: 0 for identical distributions, 1 for disjoint ones (NaN if a side is empty)."""
    return 1.0 - chernoff_coefficient(train_counts, eval_counts, alpha)


def _pooled(indices: Iterable[int], per_example: Sequence[Iterable[Key]]) -> Counter[Key]:
    """Sum the per-example atoms (sets: one each) or compounds (Counters: their counts)."""
    pooled: Counter[Key] = Counter()
    for index in np.asarray(indices, dtype=np.int64).tolist():
        pooled.update(per_example[index])
    return pooled


def atom_divergence(train_idx: Iterable[int], eval_idx: Iterable[int],
                    atoms: Sequence[Iterable[str]], alpha: float = ATOM_ALPHA) -> float:
    """Atom divergence of a split; ``atoms[i]`` is the atom set of example ``i``."""
    return chernoff_divergence(_pooled(train_idx, atoms), _pooled(eval_idx, atoms), alpha)


def compound_divergence(train_idx: Iterable[int], eval_idx: Iterable[int],
                        compounds: Sequence[Mapping[str, int]], alpha: float = COMPOUND_ALPHA) -> float:
    """Compound divergence of a split; ``compounds[i]`` counts the compounds of example ``i``."""
    return chernoff_divergence(_pooled(train_idx, compounds), _pooled(eval_idx, compounds), alpha)
