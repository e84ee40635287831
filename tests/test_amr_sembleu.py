"""Tests for SemBLEU (lsplits.similarity.amr.sembleu), with n-grams and BLEU computed by hand.

Size of a graph = nodes (variables + constants) + edges. Weights (0.34, 0.33, 0.34), uniform over
the orders the hypothesis has when it lacks trigrams; the k-th unmatched order gets 1 / (2^k * count).
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

from lsplits.similarity import registry as similarity
from lsplits.similarity.amr.graph import parse_amr
from lsplits.similarity.amr.sembleu import SEMBLEU, brevity_penalty, corpus_sembleu, graph_ngrams

WANT_BOY = "(w / want-01 :ARG0 (b / boy))"
WANT_BOY_GO = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02))"


def sembleu(hypothesis: str, reference: str) -> float:
    return SEMBLEU.score(SEMBLEU.prepare(hypothesis), SEMBLEU.prepare(reference))


def test_registered_under_its_name():
    assert similarity.get("sembleu") is SEMBLEU
    assert SEMBLEU.symmetric is False and SEMBLEU.corpus_score is not None


def test_ngrams_follow_edges_from_every_node():
    graph = graph_ngrams(parse_amr("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b :polarity -))"))
    assert graph.ngrams[0] == Counter({("want-01",): 1, ("boy",): 1, ("go-02",): 1, ("-",): 1})
    assert graph.ngrams[1] == Counter({("want-01", ":arg0", "boy"): 1, ("want-01", ":arg1", "go-02"): 1,
                                       ("go-02", ":arg0", "boy"): 1, ("go-02", ":polarity", "-"): 1})
    assert graph.ngrams[2] == Counter({("want-01", ":arg1", "go-02", ":arg0", "boy"): 1,
                                       ("want-01", ":arg1", "go-02", ":polarity", "-"): 1})
    assert graph.size == 4 + 4


def test_a_path_does_not_use_an_edge_twice():
    graph = graph_ngrams(parse_amr("(a / amr :mod a)"))
    assert graph.ngrams[1] == Counter({("amr", ":mod", "amr"): 1})
    assert graph.ngrams[2] == Counter()


def test_missing_edge_brevity_penalty_and_asymmetry():
    # Hypothesis want-boy: unigrams 2/2, bigrams 1/1, no trigram -> weights (1/2, 1/2), precision 1;
    # sizes 3 vs 5 -> BP exp(1 - 5/3).
    assert sembleu(WANT_BOY, WANT_BOY_GO) == pytest.approx(math.exp(1 - 5 / 3))
    # Reversed: unigrams 2/3, bigrams 1/2, no trigram; larger than the reference -> BP 1.
    assert sembleu(WANT_BOY_GO, WANT_BOY) == pytest.approx(math.sqrt(2 / 3 * 1 / 2))


def test_unmatched_trigram_is_smoothed():
    # Unigrams 2/3, bigrams 1/2, trigrams 0/1 -> 1/2; sizes 5 and 5.
    hypothesis = "(w / want-01 :ARG1 (g / go-02 :ARG0 (b / boy)))"
    reference = "(w / want-01 :ARG1 (g / go-02 :ARG0 (g2 / girl)))"
    expected = math.exp(0.34 * math.log(2 / 3) + 0.33 * math.log(1 / 2) + 0.34 * math.log(1 / 2))
    assert sembleu(hypothesis, reference) == pytest.approx(expected)


def test_sense_change():
    # Unigrams 1/2 (boy), bigrams 0/1 -> 1/(2 * 1); weights (1/2, 1/2); equal sizes.
    assert sembleu(WANT_BOY, "(w / want-02 :ARG0 (b / boy))") == pytest.approx(0.5)


def test_role_change():
    # Unigrams 2/2, bigrams 0/1 -> 1/2; weights (1/2, 1/2).
    assert sembleu(WANT_BOY, "(w / want-01 :ARG1 (b / boy))") == pytest.approx(math.sqrt(1 / 2))


def test_reentrancy_and_clipped_counts():
    # a: boy shared (unigrams want, boy, go; 3 bigrams; 1 trigram; size 3 + 3).
    # b: two boy nodes (unigrams want, boy x2, go; the same 3 bigrams and trigram; size 4 + 3).
    a = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"
    b = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 (b2 / boy)))"
    assert sembleu(a, b) == pytest.approx(math.exp(1 - 7 / 6))  # all precisions 1, BP
    assert sembleu(b, a) == pytest.approx(math.exp(0.34 * math.log(3 / 4)))  # 2nd boy clipped


def test_constants():
    paris = '(c / city :name (n / name :op1 "Paris"))'
    assert sembleu(paris, "(c / city :name (n / name :op1 paris))") == 1.0
    # Unigrams 2/3, bigrams 1/2, trigram 0/1 -> 1/2; equal sizes (3 nodes + 2 edges).
    expected = math.exp(0.34 * math.log(2 / 3) + 0.33 * math.log(1 / 2) + 0.34 * math.log(1 / 2))
    assert sembleu(paris, '(c / city :name (n / name :op1 "London"))') == pytest.approx(expected)


def test_brevity_penalty():
    assert brevity_penalty(6, 5) == 1.0
    assert brevity_penalty(5, 5) == 1.0
    assert brevity_penalty(4, 5) == pytest.approx(math.exp(1 - 5 / 4))
    assert brevity_penalty(0, 5) == 0.0


def test_corpus_score_sums_counts_before_combining():
    predictions = [SEMBLEU.prepare(WANT_BOY), SEMBLEU.prepare("(g / go-02 :polarity -)")]
    references = [SEMBLEU.prepare(WANT_BOY_GO), SEMBLEU.prepare("(g / go-02 :polarity -)")]
    # Unigrams 4/4, bigrams 2/2, no trigram -> 1; sizes 3 + 3 against 5 + 3.
    assert SEMBLEU.corpus_score(predictions, references) == pytest.approx(math.exp(1 - 8 / 6))
    with pytest.raises(ValueError):
        corpus_sembleu(predictions, references[:1])
