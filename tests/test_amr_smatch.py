"""Tests for classic Smatch (lsplits.similarity.amr.smatch) and its hill-climbing alignment (lsplits.similarity.amr.align).

Expected values are hand-computed from Smatch's definition: triples = instances + attributes +
relations + TOP, F1 = 2 * matched / (triples(A) + triples(B)).
"""

from __future__ import annotations

import itertools
import random

import pytest
from amr_helpers import brute_force_matches, sample_graphs
from smatchpp import Smatchpp, interfaces, solvers

from lsplits.similarity import registry as similarity
from lsplits.similarity.amr.align import (
    _Climber,
    _random_start,
    best_mapping,
    build_problem,
    exact_concept_match,
    mapping_score,
    matched_upper_bound,
    triple_count,
)
from lsplits.similarity.amr.graph import parse_amr
from lsplits.similarity.amr.smatch import SMATCH, corpus_smatch, smatch_counts

WANT_BOY = "(w / want-01 :ARG0 (b / boy))"
WANT_GO = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"


def smatch(a: str, b: str) -> float:
    return SMATCH.score(SMATCH.prepare(a), SMATCH.prepare(b))


def test_registered_under_its_name():
    assert similarity.get("smatch") is SMATCH
    assert SMATCH.symmetric is False and SMATCH.corpus_score is not None


def test_disjoint_concepts_still_share_the_top_triple():
    # A: apple + TOP = 2 triples; B: 2 instances + 1 relation + TOP = 4; only TOP can match.
    counts = smatch_counts(parse_amr("(a / apple)"), parse_amr("(b / boy :ARG0 (c / cat))"))
    assert (counts.matched, counts.total_a, counts.total_b) == (1, 2, 4)
    assert counts.f1 == pytest.approx(2 / 6)


def test_sense_change_loses_one_instance_triple():
    # 4 triples each (2 instances, 1 relation, TOP); 3 match.
    assert smatch(WANT_BOY, "(w / want-02 :ARG0 (b / boy))") == pytest.approx(0.75)


def test_role_change_loses_one_relation_triple():
    assert smatch(WANT_BOY, "(w / want-01 :ARG1 (b / boy))") == pytest.approx(0.75)


def test_reentrancy_counts_the_shared_node_once():
    # A: 3 instances + 3 relations + TOP = 7; B: 4 + 3 + 1 = 8. The boy is both ARG0s in A; in B the
    # goer is a girl, so the best mapping matches 3 instances + TOP + 2 relations = 6.
    other = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 (g2 / girl)))"
    assert smatch(WANT_GO, other) == pytest.approx(2 * 6 / (7 + 8))


def test_constants_compare_without_quotes_and_case():
    paris = '(c / city :name (n / name :op1 "Paris"))'
    assert smatch(paris, "(c / city :name (n / name :op1 paris))") == 1.0
    # 5 triples each (2 instances, 1 relation, 1 attribute, TOP); the constant differs.
    assert smatch(paris, '(c / city :name (n / name :op1 "London"))') == pytest.approx(0.8)


def test_missing_polarity():
    # A: instance + attribute + TOP = 3; B: 2; match 2.
    assert smatch("(g / go-02 :polarity -)", "(g / go-02)") == pytest.approx(2 * 2 / 5)


def test_scores_do_not_depend_on_argument_order_when_the_optimum_is_found():
    pairs = [(WANT_GO, "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 (g2 / girl)))"),
             ("(b / boy :ARG0-of (w / want-01))", WANT_BOY)]
    for a, b in pairs:
        assert smatch(a, b) == smatch(b, a)


def test_corpus_score_is_micro_averaged():
    predictions = [SMATCH.prepare(WANT_BOY), SMATCH.prepare("(g / go-02 :polarity -)")]
    references = [SMATCH.prepare("(w / want-02 :ARG0 (b / boy))"), SMATCH.prepare("(g / go-02 :polarity -)")]
    # matched 3 + 3 over triples (4 + 4) + (3 + 3); the mean of the sentence F1s would be 0.875.
    assert SMATCH.corpus_score(predictions, references) == pytest.approx(2 * 6 / 14)
    with pytest.raises(ValueError):
        corpus_smatch(predictions, references[:1])


def test_the_early_stop_bound_is_never_below_the_optimum_and_tight_for_a_graph_against_itself():
    graphs = [WANT_BOY, WANT_GO, "(b / boy :ARG0-of (w / want-01))",
              "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 (g2 / girl)))",
              "(a / and :op1 (b / boy) :op2 (b2 / boy :mod (t / tall)))",
              "(a / and :op1 (b / boy :mod (t / tall)) :op2 (b2 / boy))", "(s / see-01 :ARG0 s :ARG1 (b / boy))"]
    bounds = []
    for a, b in itertools.product(graphs, repeat=2):
        graph_a, graph_b = parse_amr(a), parse_amr(b)
        bound = matched_upper_bound(build_problem(graph_a, graph_b, exact_concept_match), graph_a, graph_b)
        assert bound >= brute_force_matches(graph_a, graph_b), (a, b)
        bounds.append(bound < min(triple_count(graph_a), triple_count(graph_b)))
        if a == b:
            assert bound == triple_count(graph_a)
    assert any(bounds)  # tighter than the triple counts on some pairs, so the search stops earlier there


def test_hill_climbing_finds_the_brute_force_optimum_on_small_graphs():
    graphs = [WANT_BOY, WANT_GO, "(b / boy :ARG0-of (w / want-01))",
              "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 (g2 / girl)))",
              "(a / and :op1 (b / boy) :op2 (b2 / boy :mod (t / tall)))",
              "(a / and :op1 (b / boy :mod (t / tall)) :op2 (b2 / boy))"]
    for a, b in itertools.product(graphs, repeat=2):
        graph_a, graph_b = parse_amr(a), parse_amr(b)
        assert smatch_counts(graph_a, graph_b).matched == brute_force_matches(graph_a, graph_b), (a, b)


def test_seeded_search_is_reproducible():
    graphs = [parse_amr(text) for text in sample_graphs()]
    first = [smatch_counts(a, b, seed=7).matched for a, b in zip(graphs, graphs[1:])]
    second = [smatch_counts(a, b, seed=7).matched for a, b in zip(graphs, graphs[1:])]
    assert first == second


def test_reported_match_count_is_the_value_of_a_real_mapping():
    graphs = [parse_amr(text) for text in sample_graphs()]
    for a, b in zip(graphs, graphs[1:]):
        problem = build_problem(a, b, exact_concept_match)
        score, mapping = best_mapping(problem, seed=3)
        assert score == mapping_score(problem, mapping)
        targets = [j for j in mapping if j is not None]
        assert len(targets) == len(set(targets))  # one-to-one


class _NormalisedTriples(interfaces.GraphReader):
    """Gives smatchpp exactly the triples Smatch scores here (inverse roles turned, quotes dropped)."""

    def _string2graph(self, string):
        graph = parse_amr(string)
        names = graph.variables
        triples = [("ROOT_OF_GRAPH", ":root", names[graph.top])]
        triples += [(names[i], ":instance", concept) for i, concept in enumerate(graph.concepts)]
        triples += [(names[s], role, names[t]) for role, s, t in graph.relations]
        triples += [(names[s], role, f'"{value}"') for role, s, value in graph.attributes]
        return triples


def test_hill_climbing_never_beats_smatchpp_ilp_and_matches_it_on_identical_graphs():
    """smatchpp without standardisation, with its optimal ILP solver, on the same triples."""
    ilp = Smatchpp(graph_reader=_NormalisedTriples(), alignmentsolver=solvers.get_solver("ilp"))
    texts = sample_graphs()
    for a, b in [(text, text) for text in texts] + list(zip(texts, texts[1:])):
        matched, _, total_a, total_b = ilp.process_pair(a, b)[0]["main"]
        ours = smatch_counts(parse_amr(a), parse_amr(b))
        assert (ours.total_a, ours.total_b) == (total_a, total_b)
        assert ours.matched <= matched
        if a == b:
            assert ours.matched == matched == total_a and ours.f1 == 1.0


def _free_moves(mapping: list, size_b: int):
    """Every mapping one move or one swap away (a node to a free target, or two nodes' targets exchanged)."""
    free = set(range(size_b)) - {j for j in mapping if j is not None}
    for i in range(len(mapping)):
        for j in free:
            yield mapping[:i] + [j] + mapping[i + 1:]
        for k in range(i + 1, len(mapping)):
            swapped = list(mapping)
            swapped[i], swapped[k] = mapping[k], mapping[i]
            yield swapped


def test_climbing_stops_only_at_a_local_optimum_and_tracks_gains_exactly():
    """From random starts on real pairs: no single move or swap improves the end mapping (checked from
    scratch), and the incremental gain table equals recomputed gains."""
    graphs = [parse_amr(text) for text in sample_graphs()]
    rng = random.Random(1)
    for a, b in zip(graphs, graphs[1:]):
        problem = build_problem(a, b, exact_concept_match)
        candidates = problem.candidates()
        climber = _Climber(problem, candidates, _random_start(problem, candidates, rng))
        climber.climb()
        end = climber.mapping
        end_score = mapping_score(problem, end)
        for neighbour in _free_moves(end, b.size):
            assert mapping_score(problem, neighbour) <= end_score + 1e-9
        for i in range(a.size):
            without = end[:i] + [None] + end[i + 1:]
            for j in candidates[i]:
                if j not in end:
                    with_j = end[:i] + [j] + end[i + 1:]
                    expected = mapping_score(problem, with_j) - mapping_score(problem, without)
                    assert climber.gain[i][j] == pytest.approx(expected)


def test_swap_gain_equals_the_recomputed_score_difference():
    graphs = [parse_amr(text) for text in sample_graphs()]
    rng = random.Random(2)
    for a, b in zip(graphs, graphs[1:]):
        problem = build_problem(a, b, exact_concept_match)
        candidates = problem.candidates()
        for _ in range(3):
            climber = _Climber(problem, candidates, _random_start(problem, candidates, rng))
            start = list(climber.mapping)
            base = mapping_score(problem, start)
            for i in range(a.size):
                for k in range(i + 1, a.size):
                    swapped = list(start)
                    swapped[i], swapped[k] = start[k], start[i]
                    assert climber._swap_gain(i, k) == pytest.approx(mapping_score(problem, swapped) - base)
