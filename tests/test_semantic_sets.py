"""Semantic sets (connected components of mutual similarity >= threshold) and NumSemSets, LabelProb, entropy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lsplits.uncertainty.semantic_sets import labelprob, numsemsets, semantic_entropy, set_labels

CHAIN = np.array([  # a ~ b and b ~ c at 0.95, a and c not; d apart
    [1.00, 0.96, 0.50, 0.10],
    [0.96, 1.00, 0.97, 0.20],
    [0.50, 0.97, 1.00, 0.00],
    [0.10, 0.20, 0.00, 1.00],
])


def test_a_chain_is_one_set_by_hand():
    assert set_labels(CHAIN, sets_threshold=0.95).tolist() == [0, 0, 0, 3]
    assert numsemsets(CHAIN, sets_threshold=0.95) == 2.0
    assert labelprob(CHAIN, sets_threshold=0.95) == pytest.approx(1 - 3 / 4)
    assert semantic_entropy(CHAIN, sets_threshold=0.95) == pytest.approx(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))
    # a higher threshold breaks the chain: {a}, {b, c}, {d}
    assert set_labels(CHAIN, sets_threshold=0.965).tolist() == [0, 1, 1, 3]
    assert numsemsets(CHAIN, sets_threshold=0.965) == 3.0
    assert labelprob(CHAIN, sets_threshold=0.965) == pytest.approx(0.5)


def test_both_directions_and_the_boundary():
    one_way = np.array([[1.0, 0.99], [0.5, 1.0]])  # 0.99 forward, 0.5 backward: not equivalent
    assert numsemsets(one_way, sets_threshold=0.9) == 2.0
    exactly = np.array([[1.0, 0.95], [0.95, 1.0]])  # similarity equal to the threshold counts
    assert numsemsets(exactly, sets_threshold=0.95) == 1.0


def test_a_long_chain_needs_the_full_closure():
    k = 10
    a = np.eye(k)
    for i in range(k - 1):  # only neighbours are similar: 0 ~ 1 ~ ... ~ 9
        a[i, i + 1] = a[i + 1, i] = 0.99
    order = np.random.default_rng(0).permutation(k)
    shuffled = a[np.ix_(order, order)]
    assert numsemsets(shuffled) == 1.0 and labelprob(shuffled) == 0.0 and semantic_entropy(shuffled) == 0.0


@pytest.mark.parametrize("k", [1, 2, 5])
def test_edge_cases(k):
    ones, identity = np.ones((k, k)), np.eye(k)
    assert (numsemsets(ones), labelprob(ones), semantic_entropy(ones)) == (1.0, 0.0, 0.0)
    assert numsemsets(identity) == k  # all invalid: similarity 0 to every other candidate
    assert labelprob(identity) == pytest.approx(1 - 1 / k)
    assert semantic_entropy(identity) == pytest.approx(math.log(k))


def test_independent_of_candidate_order_and_stacked():
    rng = np.random.default_rng(4)
    stack = rng.random((30, 6, 6))
    stack = (stack + stack.swapaxes(1, 2)) / 2
    for function in (numsemsets, labelprob, semantic_entropy):
        together = function(stack, sets_threshold=0.7)
        order = rng.permutation(6)
        assert together == pytest.approx([function(m[np.ix_(order, order)], sets_threshold=0.7) for m in stack])


def test_threshold_must_be_positive_and_at_most_one():
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"\(0, 1\]"):
            numsemsets(np.eye(2), sets_threshold=bad)
