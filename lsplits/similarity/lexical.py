"""Lexical similarities between output strings (ROUGE-1, ROUGE-2, ROUGE-L, BLEU), the similarities behind LexSim.

ROUGE reproduces ``rouge_score`` (``RougeScorer([...], use_stemmer=...)``): the same tokenisation
(lower-case, every run of characters outside ``[a-z0-9]`` is a separator; with stemming, tokens
longer than 3 characters go through NLTK's Porter stemmer, as rouge_score does) and the same
F-measures: of clipped n-gram counts for ROUGE-1/2, of the longest common subsequence for ROUGE-L
(computed with rapidfuzz's LCS, much faster than rouge_score's pure-Python table).

BLEU reproduces LM-Polygraph's ``LexicalSimilarity("BLEU")``: NLTK's ``sentence_bleu`` on whitespace
tokens (case kept), no smoothing, with the n-gram orders limited to the shorter string's length
(uniform weights 1/N, N = min(4, shortest length)). Two facts differ from it, on purpose: for
three-token strings LM-Polygraph writes the weights as 0.33 (they sum to 0.99), here they are 1/3;
and where an n-gram order has no match NLTK returns about 1e-77 instead of 0 (here 0). BLEU is not
symmetric (the brevity penalty and precisions use the hypothesis), so similarity matrices average
both directions (:mod:`lsplits.uncertainty.matrix`); LM-Polygraph scores each unordered pair once, the earlier candidate
as the reference.

Registered names: ``rouge1``, ``rouge2``, ``rougel``, ``bleu``, and ``rouge1_stem``,
``rouge2_stem``, ``rougel_stem`` with Porter stemming (LM-Polygraph's default; the paper's LexSim is
ROUGE-L and does not say whether it stemmed, so ``rougel`` without stemming stays the default). On
PENMAN strings the choice does not matter: on the real AMR sample with the controlled-edit beams of
``benchmarks/ue_report_demo.py`` no LexSim value (ROUGE-1, -2 or -L, k = 3 to 10) changes with
stemming, although 513 of the 4,559 gold-graph tokens are stemmed, because AMR concepts are already
lemmas and no two different tokens of a pair share a stem.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter

from rapidfuzz.distance import LCSseq

from lsplits.similarity.registry import Similarity

_SEPARATORS = re.compile(r"[^a-z0-9]+")
STEMMING_MIN_LENGTH = 4  # rouge_score stems only tokens of more than 3 characters


def rouge_tokens(text: str) -> tuple[str, ...]:
    """Tokenise like rouge_score's default tokenizer without stemming: ``"Hi, you!" -> ("hi", "you")``."""
    return tuple(token for token in _SEPARATORS.split(text.lower()) if token)


@functools.lru_cache(maxsize=1)
def _porter():
    from nltk.stem import porter  # the stemmer rouge_score uses; needs no NLTK data

    return porter.PorterStemmer()


@functools.lru_cache(maxsize=200_000)
def _stem(token: str) -> str:
    return _porter().stem(token) if len(token) >= STEMMING_MIN_LENGTH else token


def rouge_stemmed_tokens(text: str) -> tuple[str, ...]:
    """rouge_score's tokens with ``use_stemmer=True``: ``"Cats running" -> ("cat", "run")``."""
    return tuple(stem for stem in map(_stem, rouge_tokens(text)) if stem)


def rouge_l_fmeasure(prediction: tuple[str, ...], reference: tuple[str, ...]) -> float:
    """ROUGE-L F-measure of two token sequences; 0.0 when either is empty (as rouge_score)."""
    if not prediction or not reference:
        return 0.0
    common = LCSseq.similarity(prediction, reference)
    if common == 0:
        return 0.0
    precision = common / len(prediction)
    recall = common / len(reference)
    return 2 * precision * recall / (precision + recall)


def ngram_counts(tokens: tuple[str, ...], n: int) -> Counter:
    """Counts of the n-grams of a token sequence."""
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def rouge_n_fmeasure(prediction: Counter, reference: Counter) -> float:
    """ROUGE-N F-measure of two n-gram count tables (clipped overlap); 0.0 when either is empty."""
    overlap = sum(min(count, reference[gram]) for gram, count in prediction.items() if gram in reference)
    if overlap == 0:
        return 0.0
    precision = overlap / sum(prediction.values())
    recall = overlap / sum(reference.values())
    return 2 * precision * recall / (precision + recall)


def _rouge_n_prepare(n: int, stem: bool, text: str) -> Counter:
    return ngram_counts(rouge_stemmed_tokens(text) if stem else rouge_tokens(text), n)


def bleu_tokens(text: str) -> tuple[str, ...]:
    """Whitespace tokens, case kept (``str.split()``), as LM-Polygraph feeds NLTK's BLEU."""
    return tuple(text.split())


BLEU_ORDERS = 4


def bleu_counts(tokens: tuple[str, ...]) -> tuple[int, tuple[Counter, ...]]:
    """Tokens prepared for BLEU: their count and n-gram counts for n = 1..4 (computed once per candidate)."""
    return len(tokens), tuple(ngram_counts(tokens, n) for n in range(1, BLEU_ORDERS + 1))


def _prepare_bleu(text: str) -> tuple[int, tuple[Counter, ...]]:
    return bleu_counts(bleu_tokens(text))


def _bleu(hypothesis: tuple[int, tuple[Counter, ...]], reference: tuple[int, tuple[Counter, ...]]) -> float:
    """BLEU of prepared strings (:func:`bleu_counts`)."""
    c, hyp_counts = hypothesis
    r, ref_counts = reference
    orders = min(BLEU_ORDERS, c, r)
    if orders == 0:
        return 0.0
    log_precision = 0.0
    for n in range(orders):
        hyp, ref = hyp_counts[n], ref_counts[n]
        matches = sum(min(count, ref[gram]) for gram, count in hyp.items() if gram in ref)
        if matches == 0:
            return 0.0
        log_precision += math.log(matches / (c - n)) / orders  # a string of c tokens has c - n (n+1)-grams
    penalty = 1.0 if c > r else math.exp(1 - r / c)
    return penalty * math.exp(log_precision)


def sentence_bleu(hypothesis: tuple[str, ...], reference: tuple[str, ...]) -> float:
    """BLEU of one hypothesis against one reference, orders 1..min(4, shortest length), no smoothing.

    Example: hypothesis "a b c d" against reference "a b c e": precisions 3/4, 2/3, 1/2 and 0 for
    4-grams, so 0 (no smoothing); "a b" against "a b c": weights 1/2, 1/2, precisions 1, 1,
    brevity penalty exp(1 - 3/2).
    """
    return _bleu(bleu_counts(tuple(hypothesis)), bleu_counts(tuple(reference)))


def _rouge_n(n: int, stem: bool) -> Similarity:
    suffix = "_stem" if stem else ""
    return Similarity(
        name=f"rouge{n}{suffix}",
        display_name=f"ROUGE-{n}{'+stem' if stem else ''}",
        prepare=functools.partial(_rouge_n_prepare, n, stem),
        score=rouge_n_fmeasure,
        symmetric=True,
        description=f"ROUGE-{n} F-measure on lower-cased alphanumeric tokens (as rouge_score, "
                    f"{'Porter stemming' if stem else 'no stemming'})",
    )


def _rouge_l(stem: bool) -> Similarity:
    return Similarity(
        name=f"rougel{'_stem' if stem else ''}",
        display_name=f"ROUGE-L{'+stem' if stem else ''}",
        prepare=rouge_stemmed_tokens if stem else rouge_tokens,
        score=rouge_l_fmeasure,
        symmetric=True,
        description="ROUGE-L F-measure on lower-cased alphanumeric tokens (as rouge_score, "
                    f"{'Porter stemming' if stem else 'no stemming'})",
    )


ROUGE_L, ROUGE_L_STEM = _rouge_l(False), _rouge_l(True)
ROUGE_1, ROUGE_2 = _rouge_n(1, False), _rouge_n(2, False)
ROUGE_1_STEM, ROUGE_2_STEM = _rouge_n(1, True), _rouge_n(2, True)
BLEU = Similarity(
    name="bleu",
    display_name="BLEU",
    prepare=_prepare_bleu,
    score=_bleu,
    symmetric=False,
    description="sentence BLEU on whitespace tokens, orders up to the shorter length, no smoothing "
                "(as LM-Polygraph's LexSim-BLEU)",
)
LEXICAL_SIMILARITIES: dict[str, Similarity] = {s.name: s for s in (
    ROUGE_1, ROUGE_2, ROUGE_L, BLEU, ROUGE_1_STEM, ROUGE_2_STEM, ROUGE_L_STEM)}
