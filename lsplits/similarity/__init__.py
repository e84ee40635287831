"""Pairwise similarity and quality functions: the registry, the lexical ones (ROUGE, BLEU) and the AMR graph metrics.

Short public names, imported on first use (importing this package stays cheap): every built-in similarity
under its registry name as an identifier (``from lsplits.similarity import smatch, smatchpp, rougel``: the
:class:`~lsplits.similarity.registry.Similarity` that ``registry.get("smatch")`` returns; ``smatch_corrected``,
``s2match_emb`` and ``rouge1_stem`` for the hyphenated or stemmed ones), and the registry's ``get``,
``available``, ``register`` and ``Similarity``.
"""

from functools import partial
from typing import Any

from lsplits.runtime.lazy import lazy_exports

_REGISTRY_NAMES = ("get", "available", "register", "Similarity")
_SIMILARITIES = ("smatch", "smatch_corrected", "smatchpp", "s2match", "s2match_emb", "sema", "wlk", "sembleu",
                 "rougel", "rouge1", "rouge2", "bleu", "rougel_stem", "rouge1_stem", "rouge2_stem")
"""The built-in similarities' registry names as identifiers (``-`` written ``_``)."""
__all__ = [*_REGISTRY_NAMES, *_SIMILARITIES]


def _similarity(name: str) -> Any:
    """The built-in similarity ``name`` (an identifier: ``smatch_corrected`` is ``smatch-corrected``), from the
    registry."""
    from lsplits.similarity import registry

    return registry.get(name if name in registry.available() else name.replace("_", "-"))


__getattr__, __dir__ = lazy_exports(__name__, {**dict.fromkeys(_REGISTRY_NAMES, "lsplits.similarity.registry"),
                                               **{name: partial(_similarity, name) for name in _SIMILARITIES}})
