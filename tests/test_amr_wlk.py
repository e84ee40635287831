"""Tests for WLK (lsplits.similarity.amr.wlk), with cosines computed by hand.

Feature blocks: iteration 0 (node labels, weight 1), 1 (weight 1/2), 2 (weight 1/3); a label shared
by both graphs adds weight^2 * count_a * count_b to the dot product.
"""

from __future__ import annotations

import math

import pytest

from lsplits.similarity import registry as similarity
from lsplits.similarity.amr.graph import parse_amr
from lsplits.similarity.amr.wlk import WLK, wl_features, wlk_similarity

WANT_BOY = "(w / want-01 :ARG0 (b / boy))"
W1, W2 = 1 / 4, 1 / 9  # squared weights of iterations 1 and 2


def wlk(a: str, b: str) -> float:
    return WLK.score(WLK.prepare(a), WLK.prepare(b))


def test_registered_under_its_name():
    assert similarity.get("wlk") is WLK
    assert WLK.symmetric is True


def test_added_modifier():
    # A: apple at iterations 0, 1, 2 (one label each). B: apple, red and their two refined labels at
    # iterations 1 and 2. Only iteration 0's "apple" is shared.
    norm_a = 1 + W1 + W2
    norm_b = 2 * (1 + W1 + W2)
    assert wlk("(a / apple)", "(a / apple :mod (r / red))") == pytest.approx(1 / math.sqrt(norm_a * norm_b))


def test_role_change_keeps_only_iteration_zero():
    # Two nodes per graph: squared norm 2 (1 + W1 + W2); dot 2 (want-01, boy at iteration 0).
    assert wlk(WANT_BOY, "(w / want-01 :ARG1 (b / boy))") == pytest.approx(2 / (2 * (1 + W1 + W2)))


def test_sense_change_keeps_only_the_other_node_at_iteration_zero():
    assert wlk(WANT_BOY, "(w / want-02 :ARG0 (b / boy))") == pytest.approx(1 / (2 * (1 + W1 + W2)))


def test_reversed_edge_is_seen_only_when_directed():
    reversed_edge = "(b / boy :ARG0 (w / want-01))"
    assert wlk(WANT_BOY, reversed_edge) == pytest.approx(2 / (2 * (1 + W1 + W2)))
    undirected = [wl_features(parse_amr(text), directed=False) for text in (WANT_BOY, reversed_edge)]
    assert wlk_similarity(*undirected) == pytest.approx(1.0)


def test_constants_are_nodes():
    # A has go-02 and "-" (two nodes with distinct labels at every iteration), B has go-02 alone;
    # only iteration 0's go-02 is shared.
    norm_a, norm_b = 2 * (1 + W1 + W2), 1 + W1 + W2
    assert wlk("(g / go-02 :polarity -)", "(g / go-02)") == pytest.approx(1 / math.sqrt(norm_a * norm_b))
    assert wlk('(n / name :op1 "Paris")', "(n / name :op1 paris)") == 1.0


def test_reentrancy():
    # A: want, boy, go with boy shared; B: the goer is a second boy node.
    # Iteration 0: A {want, boy, go}, B {want, boy x2, go}: dot 1 + 2 + 1 = 4; norms 3 and 6.
    # Iteration 1: want and go have the same neighbourhoods in both (dot 2); boy differs; A has 3
    #   labels, B 4 (its two boys differ): norms 3 and 4.
    # Iteration 2: want and go now see different boy labels: dot 0; norms 3 and 4.
    a = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"
    b = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 (b2 / boy)))"
    dot = 4 + 2 * W1
    norm_a, norm_b = 3 + 3 * W1 + 3 * W2, 6 + 4 * W1 + 4 * W2
    assert wlk(a, b) == pytest.approx(dot / math.sqrt(norm_a * norm_b))


def test_iteration_count_changes_the_blocks():
    features = wl_features(parse_amr(WANT_BOY), iterations=0)
    assert features.weights == {(0, "want-01"): 1.0, (0, "boy"): 1.0}
    assert len(wl_features(parse_amr(WANT_BOY), iterations=3).weights) == 8
