"""The contract every AMR graph similarity in the registry keeps (lsplits.similarity.registry), one test per clause.

An AMR metric is a registry entry whose invalid-output stand-in is the empty graph. Each must: score
identical graphs 1 whatever their variable names; score disjoint graphs low (0, or only the TOP
triple, which names no concept in Smatch and S2match: 1 match of 2 and 4 triples, F1 = 2/6; Smatch++'s
root triple names the root concept, so it scores 0); read an inverse role as its normal form (so only
the root can differ: metrics with a root triple lose it, 3 of 4, F1 = 0.75; root-free ones score 1); stay in [0, 1] and score a graph 1 against itself on real graphs
(symmetric where declared); and raise InvalidOutput for text that is not one AMR graph. Each metric's
own hand-computed tests stay in tests/test_amr_NAME.py.
"""

from __future__ import annotations

import pytest
from amr_helpers import sample_graphs

from lsplits.errors import InvalidOutput
from lsplits.similarity import registry as similarity
from lsplits.similarity.amr.graph import EMPTY_AMR

AMR_METRICS = [name for name in similarity.available() if similarity.get(name).invalid_stand_in == EMPTY_AMR]
ROOTED = {"smatch", "smatch-corrected", "smatchpp", "s2match", "s2match-emb"}  # score a TOP / root triple
TOP_WITHOUT_CONCEPT = {"smatch", "smatch-corrected", "s2match", "s2match-emb"}  # (TOP, variable): any two roots match

WANT_BOY = "(w / want-01 :ARG0 (b / boy))"
BOY_WANTED = "(b / boy :ARG0-of (w / want-01))"  # the same relation, written from the other end
WANT_GO = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b :polarity -))"
WANT_GO_RENAMED = "(x / want-01 :ARG1 (y / go-02 :polarity - :ARG0 (z / boy)) :ARG0 z)"


def score(name: str, a: str, b: str) -> float:
    metric = similarity.get(name)
    return metric.score(metric.prepare(a), metric.prepare(b))


def test_the_registry_has_every_amr_metric():
    assert set(AMR_METRICS) == {"smatch", "smatch-corrected", "smatchpp", "s2match", "s2match-emb", "sema", "wlk",
                                "sembleu"}
    assert all(similarity.get(name).name == name for name in AMR_METRICS)


@pytest.mark.parametrize("name", AMR_METRICS)
def test_identical_graphs_score_one_whatever_the_variable_names(name):
    assert score(name, WANT_GO, WANT_GO) == 1.0
    assert score(name, WANT_GO, WANT_GO_RENAMED) == 1.0


@pytest.mark.parametrize("name", AMR_METRICS)
def test_disjoint_graphs_score_low(name):
    expected = 2 / 6 if name in TOP_WITHOUT_CONCEPT else 0.0
    assert score(name, "(a / apple)", "(b / boy :ARG0 (c / cat))") == pytest.approx(expected)


@pytest.mark.parametrize("name", AMR_METRICS)
def test_inverse_role_equals_its_normal_form(name):
    expected = 0.75 if name in ROOTED else 1.0
    assert score(name, BOY_WANTED, WANT_BOY) == pytest.approx(expected)


@pytest.mark.parametrize("name", AMR_METRICS)
def test_in_range_and_one_on_real_graphs(name):
    metric = similarity.get(name)
    graphs = [metric.prepare(text) for text in sample_graphs()]
    for a in graphs:
        assert metric.score(a, a) == 1.0
        for b in graphs:
            value = metric.score(a, b)
            assert 0.0 <= value <= 1.0
            if metric.symmetric:
                assert value == metric.score(b, a)


@pytest.mark.parametrize("name", AMR_METRICS)
@pytest.mark.parametrize("text", ["", "(a / b", "(a / b) (c / d)", "not an amr", "(w / want-01 :ARG0 (b / boy)"])
def test_invalid_input_raises_invalid_output(name, text):
    with pytest.raises(InvalidOutput):
        similarity.get(name).prepare(text)


@pytest.mark.parametrize("name", ["smatchpp", "smatch", "wlk"])
def test_a_graph_nested_thousands_of_levels_deep_is_an_invalid_output(name):
    from lsplits.similarity.registry import get
    from lsplits.uncertainty.matrix import build_matrix

    deep = "(a / b" + "".join(f" :ARG0 (x{i} / c" for i in range(3000)) + ")" * 3001
    matrix = build_matrix([deep, "(a / b)"], get(name))
    assert matrix.invalid.tolist() == [True, False]
    assert matrix.errors[0].startswith("not a usable AMR graph: nested too deep to read (past Python's recursion "
                                       "limit of ")


def test_a_candidate_that_is_not_a_string_is_named_in_one_line():
    from lsplits.errors import InvalidInput
    from lsplits.uncertainty.beam import beam_uncertainty_outputs

    with pytest.raises(InvalidInput, match=r"^candidate 1 of example 1 is NoneType \(None\), not a string"):
        beam_uncertainty_outputs([["(a / b)", "(a / c)"], ["(a / b)", None]], "smatchpp")
