"""Word tokenisation shared by length control and the statistics (NLTK's Treebank-style tokenizer).

``nltk.word_tokenize`` needs the punkt models, which cannot be downloaded offline;
``NLTKWordTokenizer`` is the same word tokenizer without sentence splitting and needs no data.
"""

from __future__ import annotations

from functools import lru_cache

from nltk.tokenize import NLTKWordTokenizer

_TOKENIZER = NLTKWordTokenizer()


def word_tokens(text: str) -> list[str]:
    """NLTK word tokens of ``text``."""
    return _TOKENIZER.tokenize(text)


@lru_cache(maxsize=200_000)
def word_count(text: str) -> int:
    """Number of NLTK word tokens of ``text``: the example length used by length control."""
    return len(_TOKENIZER.tokenize(text))
