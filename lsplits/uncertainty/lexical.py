"""ROUGE-L between output strings, the similarity behind the LexSim estimator.

Reproduces ``rouge_score``'s ROUGE-L F-measure (``RougeScorer(["rougeL"], use_stemmer=False)``):
the same tokenisation (lower-case, every run of characters outside ``[a-z0-9]`` is a separator)
and the same F-measure of the longest common subsequence of tokens, computed with rapidfuzz's
LCS, which is much faster than ``rouge_score``'s pure-Python table.
"""

from __future__ import annotations

import re

from rapidfuzz.distance import LCSseq

from ..similarity import Similarity

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def rouge_tokens(text: str) -> tuple[str, ...]:
    """Tokenise like rouge_score's default tokenizer without stemming: ``"Hi, you!" -> ("hi", "you")``."""
    return tuple(token for token in _SEPARATORS.split(text.lower()) if token)


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


ROUGE_L = Similarity(
    name="rougel",
    prepare=rouge_tokens,
    score=rouge_l_fmeasure,
    symmetric=True,
    description="ROUGE-L F-measure on lower-cased alphanumeric tokens (as rouge_score, no stemming)",
)
