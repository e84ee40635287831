"""Word tokenisation shared by length control and the statistics (NLTK's Treebank-style tokenizer).

``nltk.word_tokenize`` needs the punkt models, which cannot be downloaded offline;
``NLTKWordTokenizer`` is the same word tokenizer without sentence splitting and needs no data.
"""

from __future__ import annotations

from functools import cache, lru_cache


@cache
def _tokenizer():
    """The tokenizer, made on first use: importing nltk takes seconds, which every command would pay."""
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


def word_tokens(text: str) -> list[str]:
    """NLTK word tokens of ``text``."""
    return _tokenizer().tokenize(text)


@lru_cache(maxsize=200_000)
def word_count(text: str) -> int:
    """Number of NLTK word tokens of ``text``: the example length used by length control."""
    return len(_tokenizer().tokenize(text))
