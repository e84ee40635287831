"""ROUGE-L similarity: identical to rouge_score's ROUGE-L F-measure (no stemming), tokenisation included."""

from __future__ import annotations

import random
import warnings

import pytest
from rouge_score import rouge_scorer

from lsplits.similarity.lexical import ROUGE_L, rouge_l_fmeasure, rouge_tokens
from lsplits.similarity.registry import get

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


# --- ROUGE-1 / ROUGE-2, stemming, BLEU (the LexSim variants of LM-Polygraph) -------------------------------

import math  # noqa: E402

from nltk.translate.bleu_score import sentence_bleu as nltk_bleu  # noqa: E402

from lsplits.similarity.lexical import LEXICAL_SIMILARITIES, rouge_stemmed_tokens, sentence_bleu  # noqa: E402

PIECES = ["the", "The", "cats", "running", "(c / cat", ":ARG0", "believe-01", "possible", "x2", "don't", "",
          "happily", "İstanbul", "organization", "_", "\t", "325", ")", "-", "generalizations"]


def random_pairs(seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        yield (" ".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12))),
               " ".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12))))


@pytest.mark.parametrize("name, rouge_type, stem", [
    ("rouge1", "rouge1", False), ("rouge2", "rouge2", False), ("rouge1_stem", "rouge1", True),
    ("rouge2_stem", "rouge2", True), ("rougel_stem", "rougeL", True)])
def test_rouge_variants_equal_rouge_score(name, rouge_type, stem):
    reference = rouge_scorer.RougeScorer([rouge_type], use_stemmer=stem)
    similarity = LEXICAL_SIMILARITIES[name]
    assert get(name) is similarity and similarity.symmetric
    for a, b in random_pairs(11, 400):
        expected = reference.score(b, a)[rouge_type].fmeasure
        assert similarity.score(similarity.prepare(a), similarity.prepare(b)) == pytest.approx(expected, abs=1e-12)


def test_stemming_by_hand():
    assert rouge_stemmed_tokens("Cats running happily, the organization") == ("cat", "run", "happili", "the",
                                                                              "organ")
    # ROUGE-1 of "cats run" vs "cat running": no common unigram unstemmed, both stemmed -> F = 1
    assert LEXICAL_SIMILARITIES["rouge1"].score(*map(LEXICAL_SIMILARITIES["rouge1"].prepare,
                                                     ("cats run", "cat running"))) == 0.0
    stem = LEXICAL_SIMILARITIES["rouge1_stem"]
    assert stem.score(stem.prepare("cats run"), stem.prepare("cat running")) == 1.0


def lm_polygraph_weights(hypothesis: list[str], reference: list[str]) -> list[float]:
    shortest = min(len(hypothesis), len(reference))
    return {1: [1.0, 0, 0, 0], 2: [0.5, 0.5, 0, 0], 3: [0.33, 0.33, 0.33, 0]}.get(shortest, [0.25] * 4)


def test_bleu_by_hand():
    # "a b" against "a b c": orders 1 and 2 with weights 1/2, precisions 1 and 1, brevity penalty exp(1 - 3/2)
    assert sentence_bleu(("a", "b"), ("a", "b", "c")) == pytest.approx(math.exp(-0.5))
    # longer hypothesis: no penalty; precisions 2/3 and 1/2 -> their geometric mean
    assert sentence_bleu(("a", "b", "c"), ("a", "b")) == pytest.approx(math.sqrt(2 / 3 * 1 / 2))
    # "a b c d" vs "a b c e": precisions 3/4, 2/3, 1/2 and no 4-gram match -> 0 (NLTK: ~1e-77)
    assert sentence_bleu(("a", "b", "c", "d"), ("a", "b", "c", "e")) == 0.0
    # three tokens: weights 1/3 each (LM-Polygraph's 0.33 differs from it only where a precision is below 1)
    assert sentence_bleu(("a", "b", "c"), ("a", "b", "c")) == pytest.approx(1.0)
    assert sentence_bleu(("a", "b", "c"), ("a", "b", "d")) == 0.0  # no trigram match
    assert sentence_bleu((), ("a",)) == 0.0 and sentence_bleu(("a",), ()) == 0.0
    assert not get("bleu").symmetric


def test_bleu_equals_nltk_with_lm_polygraphs_weights():
    compared = 0
    for a, b in random_pairs(5, 600):
        hypothesis, reference = a.split(), b.split()
        if min(len(hypothesis), len(reference)) == 3:
            continue  # 0.33 vs 1/3: the one documented difference
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NLTK warns about zero n-gram overlaps
            expected = nltk_bleu([reference], hypothesis, weights=lm_polygraph_weights(hypothesis, reference))
        assert sentence_bleu(tuple(hypothesis), tuple(reference)) == pytest.approx(expected, abs=1e-12), (a, b)
        compared += 1
    assert compared > 400
