"""Smatch as the official scorer (PyPI smatch 1.0.4) computes it: hand-checked edge cases.

Every expected count below is derived by hand from the official reading rules (its ``amr.py``):
one instance triple per variable, one TOP triple, attribute triples for constants, relation
triples between variables; a role ending in ``-of`` (except consist-of, prep-out-of,
prep-on-behalf-of) is turned around, ``:mod`` becomes an inverted ``:domain``, and either one
pointing at a constant is dropped; a quoted constant is read up to its first space; tokens are
compared lower-cased with quotes and trailing underscores dropped; repeated triples all count and
each copy matches each equal copy on the other side. F1 = 2 * matched / (triples(A) + triples(B)).
(The same numbers came out of smatch 1.0.4 itself when these cases were written;
benchmarks/smatch_official.py rechecks the agreement on real graphs.) ``corrected`` is the same
reading with the constants kept, quoted constants whole, repeated triples once, alignments dropped.
"""

from __future__ import annotations

import logging
import random

import pytest
from amr_helpers import brute_force_matches, sample_graphs

from lsplits.errors import InvalidOutput
from lsplits.similarity import registry as similarity
from lsplits.similarity.amr.align import (
    _Climber,
    _random_start,
    build_problem,
    exact_concept_match,
    mapping_score,
)
from lsplits.similarity.amr.graph import parse_amr, parse_smatch
from lsplits.similarity.amr.smatch import SMATCH, SMATCH_CORRECTED, corpus_smatch, smatch_counts

# (name, A, B, official (matched, triples A, triples B), corrected (matched, triples A, triples B))
CASES = [
    # instance + TOP; the :mod constant is dropped, so 7 and 8 cannot differ officially.
    ("mod to a number", "(c / chapter :mod 7)", "(c / chapter :mod 8)", (2, 2, 2), (2, 3, 3)),
    ("mod minus", "(g / good :mod -)", "(g / good)", (2, 2, 2), (2, 3, 2)),
    ("inverse role to a constant", "(p / person :ARG0-of 5)", "(p / person)", (2, 2, 2), (2, 3, 2)),
    # 2 instances + 1 relation + TOP each; the relation matches once turned around, TOP does not
    # (the roots are boy and want-01).
    ("inverse role", "(b / boy :ARG0-of (w / want-01))", "(w / want-01 :ARG0 (b / boy))", (3, 4, 4), (3, 4, 4)),
    # :mod is an inverted :domain: the relation matches, the roots differ.
    ("mod is inverted domain", "(b / boy :mod (t / tall))", "(t / tall :domain (b / boy))", (3, 4, 4), (3, 4, 4)),
    ("mod equals domain-of", "(b / boy :mod (t / tall))", "(b / boy :domain-of (t / tall))", (4, 4, 4), (4, 4, 4)),
    # consist-of is kept as written, so it never meets :consist; the two concepts match, TOP cannot
    # (its roots would need cloud -> water).
    ("consist-of is not inverted", "(c / cloud :consist-of (w / water))", "(w / water :consist (c / cloud))",
     (2, 4, 4), (2, 4, 4)),
    ("quoted constant equals unquoted", '(n / name :op1 "Paris")', "(n / name :op1 PARIS)", (3, 3, 3), (3, 3, 3)),
    # officially both constants read as "new".
    ("quoted constant with a space", '(n / name :op1 "New York")', '(n / name :op1 "New Jersey")',
     (3, 3, 3), (2, 3, 3)),
    # 2 instances + 2 copies of op1 + TOP = 5; the copies match each other: 2 + 2 * 2 + 1 = 7.
    ("repeated relation", "(a / and :op1 (b / boy) :op1 b)", "(a / and :op1 (b / boy) :op1 b)", (7, 5, 5), (4, 4, 4)),
    # A: instance + 2 polarities + TOP = 4, B: 3; both copies match B's one: 1 + 2 + 1 = 4.
    ("repeated attribute", "(g / go-02 :polarity - :polarity -)", "(g / go-02 :polarity -)", (4, 4, 3), (3, 3, 3)),
    # attributes right before ')' (nested and at the top): 2 instances, 1 relation, 2 attributes, TOP.
    ("attributes before a bracket", "(w / want-01 :ARG0 (b / boy :quant 2) :polarity -)",
     "(w / want-01 :ARG0 (b / boy :quant 2))", (5, 6, 5), (5, 6, 5)),
    ("attribute before a bracket on its own line", "(c / chapter\n   :quant 7\n)", "(c / chapter :quant 7)",
     (3, 3, 3), (3, 3, 3)),
    # b is an ARG0 of g, which is defined later: 3 instances + op1, op2, arg0 + TOP = 7 each.
    ("inverse role to a later variable", "(a / and :op1 (b / boy :ARG0-of g) :op2 (g / go-02))",
     "(a / and :op1 (b / boy) :op2 (g / go-02 :ARG0 b))", (7, 7, 7), (7, 7, 7)),
    # b unquoted is a reentrancy (relation), "b" quoted a constant (attribute): 5 triples each, 4 match.
    ("variable name vs quoted constant", "(a / and :op1 (b / boy) :op2 b)", '(a / and :op1 (b / boy) :op2 "b")',
     (4, 5, 5), (4, 5, 5)),
    # officially "boy~e.2" is not "boy"; TOP still matches.
    ("alignment marker", "(b / boy~e.2)", "(b / boy)", (1, 2, 2), (2, 2, 2)),
    ("case", "(W / Want-01 :ARG0 (B / Boy))", "(w / want-01 :ARG0 (b / boy))", (4, 4, 4), (4, 4, 4)),
]


@pytest.mark.parametrize("dialect", ["official", "corrected"])
@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_hand_checked_triple_counts_and_scores(case, dialect):
    _, a, b, official, corrected = case
    matched, total_a, total_b = official if dialect == "official" else corrected
    counts = smatch_counts(parse_smatch(a, dialect=dialect), parse_smatch(b, dialect=dialect))
    assert (counts.matched, counts.total_a, counts.total_b) == (matched, total_a, total_b)
    assert counts.f1 == pytest.approx(2 * matched / (total_a + total_b))


def test_registered_metrics_use_the_two_readings():
    assert similarity.get("smatch") is SMATCH and similarity.get("smatch-corrected") is SMATCH_CORRECTED
    assert SMATCH.options["dialect"] == "official" and SMATCH_CORRECTED.options["dialect"] == "corrected"
    assert SMATCH.score(SMATCH.prepare("(c / chapter :mod 7)"), SMATCH.prepare("(c / chapter :mod 8)")) == 1.0
    assert SMATCH_CORRECTED.score(SMATCH_CORRECTED.prepare("(c / chapter :mod 7)"),
                                  SMATCH_CORRECTED.prepare("(c / chapter :mod 8)")) == pytest.approx(2 / 3)


def test_official_triples_in_detail():
    graph = parse_smatch('(w / Want-01 :ARG0 (b / boy :mod (t / tall)) :ARG1-of (l / like-01 :mod -) '
                         ':name (n / name :op1 "New York") :consist-of b)')
    assert graph.concepts == ("want-01", "boy", "tall", "like-01", "name") and graph.top == 0
    assert sorted(graph.relations) == sorted([(":arg0", 0, 1), (":domain", 2, 1), (":arg1", 3, 0),
                                              (":name", 0, 4), (":consist-of", 0, 1)])
    assert graph.attributes == ((":op1", 4, "new"),)
    corrected = parse_smatch('(l / like-01 :mod - :op1 "New York")', dialect="corrected")
    assert set(corrected.attributes) == {(":mod", 0, "-"), (":op1", 0, "new york")}


def test_corpus_score_sums_the_official_counts_and_warns_about_repeats(caplog):
    pairs = [(case[1], case[2], case[3]) for case in CASES]
    predictions = [SMATCH.prepare(a) for a, _, _ in pairs]
    references = [SMATCH.prepare(b) for _, b, _ in pairs]
    matched = sum(m for _, _, (m, _, _) in pairs)
    total = sum(ta + tb for _, _, (_, ta, tb) in pairs)
    with caplog.at_level(logging.WARNING):
        assert corpus_smatch(predictions, references) == pytest.approx(2 * matched / total)
    assert "2 of 17 pairs hold a repeated triple" in caplog.text


def test_invalid_graphs_are_invalid_in_both_readings():
    for text in ["", "(a / b", "(a / b) (c / d)", "(a :ARG0 (b / c))", "(a / b :ARG0 (a / c))"]:
        for dialect in ("official", "corrected"):
            with pytest.raises(InvalidOutput):
                parse_smatch(text, dialect=dialect)
    with pytest.raises(ValueError, match="unknown Smatch dialect"):
        parse_smatch("(a / b)", dialect="smatchpp")


def test_corrected_reading_counts_real_graphs_like_the_penman_model_reading():
    """On real graphs (no quirks) both readings find the same concepts and as many relations and attributes
    (they differ only in how :mod is turned around)."""
    for text in sample_graphs():
        ours, theirs = parse_smatch(text, dialect="corrected"), parse_amr(text)
        assert ours.concepts == theirs.concepts
        assert len(ours.relations) == len(theirs.relations) and len(ours.attributes) == len(theirs.attributes)


def test_hill_climbing_finds_the_brute_force_optimum_with_repeated_triples():
    graphs = ["(a / and :op1 (b / boy) :op1 b)", "(a / and :op1 (b / boy) :op2 (b2 / boy))",
              "(g / go-02 :polarity - :polarity - :ARG0 (b / boy))", "(g / go-02 :ARG0 (b / boy :polarity -))"]
    for a in graphs:
        for b in graphs:
            graph_a, graph_b = parse_smatch(a), parse_smatch(b)
            # the brute force counts set matches; with repeats each copy pairs with each copy
            if len(set(graph_a.relations + graph_a.attributes)) == len(graph_a.relations + graph_a.attributes) and \
                    len(set(graph_b.relations + graph_b.attributes)) == len(graph_b.relations + graph_b.attributes):
                assert smatch_counts(graph_a, graph_b).matched == brute_force_matches(graph_a, graph_b), (a, b)
    # (a :op1 b :op1 b) against (a :op1 b :op2 b2): the two op1 copies meet one op1: 2 + 2 + TOP.
    assert smatch_counts(parse_smatch(graphs[0]), parse_smatch(graphs[1])).matched == 5


def test_two_node_move_gain_equals_the_recomputed_score_difference():
    graphs = [parse_smatch(text) for text in sample_graphs()]
    rng = random.Random(4)
    checked = 0
    for a, b in zip(graphs, graphs[1:]):
        problem = build_problem(a, b, exact_concept_match)
        candidates = problem.candidates()
        for _ in range(4):
            climber = _Climber(problem, candidates, _random_start(problem, candidates, rng))
            base = mapping_score(problem, climber.mapping)
            for (first, target), partners in problem.neighbours.items():
                for second, second_target, _ in partners:
                    if climber.owner[target] not in (None, first, second) or \
                            climber.owner[second_target] not in (None, first, second):
                        continue
                    moved = list(climber.mapping)
                    moved[first], moved[second] = target, second_target
                    assert climber._pair_gain(first, target, second, second_target) == pytest.approx(
                        mapping_score(problem, moved) - base)
                    checked += 1
    assert checked > 100


def test_two_node_move_escapes_where_single_moves_cannot():
    # The best mapping needs s2 -> w2 and y -> w together (one ARG1 relation); from s2 -> w, y -> none
    # neither single move nor swap gains.
    a = parse_smatch("(s / seem-01 :ARG1 (s2 / surprise-01 :ARG1 (y / you)))")
    b = parse_smatch("(o / obligate-01 :ARG2 (w2 / wait-01 :ARG1 (w / we)))")
    problem = build_problem(a, b, exact_concept_match)
    climber = _Climber(problem, problem.candidates(), [0, 2, None])
    assert not climber._single_step()
    climber.climb()
    assert climber.mapping == [0, 1, 2] and mapping_score(problem, climber.mapping) == 2  # TOP + ARG1
