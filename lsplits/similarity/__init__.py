"""Pairwise similarity and quality functions: the registry, the lexical ones (ROUGE, BLEU) and the AMR graph metrics.

Short public names, imported on first use (importing this package stays cheap): every built-in similarity
under its registry name as an identifier (``from lsplits.similarity import smatch, smatchpp, rougel``: the
:class:`~lsplits.similarity.registry.Similarity` that ``registry.get("smatch")`` returns; ``smatch_corrected``,
``s2match_emb`` and ``rouge1_stem`` for the hyphenated or stemmed ones), and the registry's ``get``,
``available``, ``register`` and ``Similarity``.
"""

from typing import Any

_REGISTRY_NAMES = ("get", "available", "register", "Similarity")
_SIMILARITIES = ("smatch", "smatch_corrected", "smatchpp", "s2match", "s2match_emb", "sema", "wlk", "sembleu",
                 "rougel", "rouge1", "rouge2", "bleu", "rougel_stem", "rouge1_stem", "rouge2_stem")
"""The built-in similarities' registry names as identifiers (``-`` written ``_``)."""
__all__ = [*_REGISTRY_NAMES, *_SIMILARITIES]


def __getattr__(name: str) -> Any:
    """A built-in similarity (``registry.get``, by its name) or a registry function, imported when first used."""
    if name in _REGISTRY_NAMES or name in _SIMILARITIES:
        from lsplits.similarity import registry

        if name in _REGISTRY_NAMES:
            return getattr(registry, name)
        return registry.get(name if name in registry.available() else name.replace("_", "-"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
