"""ROUGE-L similarity: identical to rouge_score's ROUGE-L F-measure (no stemming), tokenisation included."""

from __future__ import annotations

import random

import pytest
from rouge_score import rouge_scorer

from lsplits.similarity import get
from lsplits.uncertainty.lexical import ROUGE_L, rouge_l_fmeasure, rouge_tokens

REFERENCE = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


def reference_f(prediction: str, target: str) -> float:
    return REFERENCE.score(target, prediction)["rougeL"].fmeasure


def ours(prediction: str, target: str) -> float:
    return ROUGE_L.score(ROUGE_L.prepare(prediction), ROUGE_L.prepare(target))


@pytest.mark.parametrize("text, tokens", [
    ("Hello, World!", ("hello", "world")),
    ("(w / want-01 :ARG0 (b / boy))", ("w", "want", "01", "arg0", "b", "boy")),
    ("naïve café", ("na", "ve", "caf")),
    ("don't  stop\tnow\n", ("don", "t", "stop", "now")),
    ("a_b", ("a", "b")),
    ("", ()),
    ("!!!", ()),
])
def test_tokenisation_matches_rouge_score(text, tokens):
    from rouge_score import tokenize

    assert rouge_tokens(text) == tokens
    assert list(tokens) == tokenize.tokenize(text, None)


def test_hand_computed_f_measure():
    # LCS of "the cat sat" and "the cat on the mat" is "the cat": P = 2/3, R = 2/5, F = 2PR/(P+R) = 0.5
    assert rouge_l_fmeasure(("the", "cat", "sat"), ("the", "cat", "on", "the", "mat")) == pytest.approx(0.5)
    assert rouge_l_fmeasure((), ("a",)) == 0.0
    assert rouge_l_fmeasure(("a",), ("b",)) == 0.0


def test_equal_to_rouge_score_on_varied_strings():
    rng = random.Random(7)
    pieces = ["the", "The", "cat", "(c / cat", ":ARG0", "dog-01", "É", "naïve", "x2", "don't", "", " ",
              "İstanbul", "ß", "２", "_", "Ⅻ", "\t", '"Asteroid', "325", ")", "-"]
    for _ in range(1500):
        a = " ".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        b = "".join(rng.choice(pieces) + rng.choice([" ", "", ")"]) for _ in range(rng.randint(0, 14)))
        assert ours(a, b) == pytest.approx(reference_f(a, b), abs=1e-12), (a, b)


def test_registered_and_symmetric():
    similarity = get("rougel")
    assert similarity is ROUGE_L and similarity.symmetric
    a, b = "(w / want-01 :ARG0 (b / boy))", "(w / want-01 :ARG1 (g / girl))"
    assert ours(a, b) == ours(b, a) == pytest.approx(reference_f(a, b))
