"""Tests for SEMA (lsplits.similarity.amr.sema), with hand-computed counts.

SEMA triples: instances + relations + attributes (no TOP). F1 = 2 m / (|A| + |B|).
"""

from __future__ import annotations

import pytest
from amr_helpers import sample_graphs

from lsplits.similarity import registry as similarity
from lsplits.similarity.amr.sema import SEMA, corpus_sema, sema_matches

WANT_BOY = "(w / want-01 :ARG0 (b / boy))"


def sema(a: str, b: str) -> float:
    return SEMA.score(SEMA.prepare(a), SEMA.prepare(b))


def test_registered_under_its_name():
    assert similarity.get("sema") is SEMA
    assert SEMA.symmetric is True and SEMA.corpus_score is not None


def test_wrong_root_sense_invalidates_the_dependent_relation_and_child():
    # Root concepts differ and the relation's parent concept differs: nothing matches.
    assert sema(WANT_BOY, "(w / want-02 :ARG0 (b / boy))") == 0.0


def test_role_change_keeps_only_the_root():
    # 3 triples each; the root (want-01) matches, the relation does not, so boy is not credited.
    assert sema(WANT_BOY, "(w / want-01 :ARG1 (b / boy))") == pytest.approx(2 * 1 / 6)


def test_child_concept_change_keeps_only_the_root():
    assert sema(WANT_BOY, "(w / want-01 :ARG0 (g / girl))") == pytest.approx(2 * 1 / 6)


def test_reentrancy():
    # A: 3 instances + 3 relations = 6; B: 4 + 3 = 7. Relations want-ARG0-boy and want-ARG1-go match
    # (2); credited nodes: want, boy, go in both graphs (3); go-ARG0-boy vs go-ARG0-girl fails.
    a = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"
    b = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 (g2 / girl)))"
    assert sema_matches(SEMA.prepare(a), SEMA.prepare(b)) == 5
    assert sema(a, b) == pytest.approx(2 * 5 / 13)


def test_constants():
    paris = '(c / city :name (n / name :op1 "Paris"))'
    assert sema(paris, "(c / city :name (n / name :op1 paris))") == 1.0
    # 4 triples each: relation + 2 nodes match, the attribute does not.
    assert sema(paris, '(c / city :name (n / name :op1 "London"))') == pytest.approx(2 * 3 / 8)
    # An attribute needs the right parent concept.
    assert sema("(g / go-02 :polarity -)", "(g / come-01 :polarity -)") == 0.0


def test_one_test_triple_is_not_credited_twice():
    # The reference script would credit the single want-ARG0-boy relation against both gold copies
    # (6 matches for 3 test triples, precision 2). Here: 1 relation + want + boy = 3 of 3 and 9.
    gold = "(a / and :op1 (w / want-01 :ARG0 (b / boy)) :op2 (w2 / want-01 :ARG0 (b2 / boy)))"
    assert sema_matches(SEMA.prepare(WANT_BOY), SEMA.prepare(gold)) == 3
    assert sema(WANT_BOY, gold) == pytest.approx(2 * 3 / 12)


def test_symmetric_and_in_range_on_real_graphs():
    graphs = [SEMA.prepare(text) for text in sample_graphs()]
    for a in graphs:
        assert SEMA.score(a, a) == 1.0
        for b in graphs:
            assert 0.0 <= SEMA.score(a, b) <= 1.0
            assert SEMA.score(a, b) == SEMA.score(b, a)
            assert sema_matches(a, b) <= min(a.triples, b.triples)


def test_corpus_score_sums_counts():
    predictions = [SEMA.prepare(WANT_BOY), SEMA.prepare("(c / cat)")]
    references = [SEMA.prepare("(w / want-01 :ARG1 (b / boy))"), SEMA.prepare("(c / cat)")]
    assert SEMA.corpus_score(predictions, references) == pytest.approx(2 * (1 + 1) / (6 + 2))
    with pytest.raises(ValueError):
        corpus_sema(predictions, references[:1])
