"""Registry of pairwise similarity / quality functions (ROUGE-L, Smatch, Smatch++, S2Match, ...).

A function is a :class:`Similarity`: ``prepare`` turns one output string into a reusable object
(parsed once per candidate, raising :class:`InvalidOutput` if it does not parse) and ``score``
compares two prepared objects, returning a value in [0, 1]. The same object serves as a
similarity for uncertainty estimators (candidate vs candidate) and as a quality metric
(prediction vs reference: ``score(prepare(pred), prepare(ref))``).

Adding a function is one registration: write a module that defines a ``Similarity`` and add one
``name -> "module:attribute"`` line to ``_BUILTINS`` (loaded lazily, so importing this module is
cheap), or call :func:`register` at run time for a user-defined one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lsplits.errors import ConfigError, InvalidOutput, SimilarityFailure, Stopped
from lsplits.params import check_choice
from lsplits.runtime.cancel import check_stop


@dataclass(frozen=True)
class Similarity:
    """A pairwise similarity between two outputs, also usable as a quality metric.

    Attributes:
        name: registry name (also the evaluate config name).
        prepare: output string -> prepared object; raises InvalidOutput when it does not parse.
        score: (prepared a, prepared b) -> similarity in [0, 1]. For a quality metric a is the
            prediction and b the reference.
        symmetric: whether score(a, b) == score(b, a) always (lets engines compute half the pairs).
        description: one line for help texts and metric cards.
        corpus_score: optional (list of prepared predictions, list of prepared references) -> float,
            for metrics whose corpus score is not the mean of sentence scores (Smatch, SemBLEU).
        version: bump when scores change, so content-keyed caches are invalidated.
        invalid_stand_in: output scored in place of a prediction that does not parse, when the
            metric has a conventional one (AMR: the empty graph); None scores such predictions 0.
        display_name: the paper-style name in reports and the Space (``Smatch++``); empty = ``name``.
    """

    name: str
    prepare: Callable[[str], Any]
    score: Callable[[Any, Any], float]
    symmetric: bool
    description: str = ""
    corpus_score: Callable[[Sequence[Any], Sequence[Any]], float] | None = None
    version: str = "1"
    invalid_stand_in: str | None = None
    display_name: str = ""
    options: dict[str, Any] = field(default_factory=dict)


DEFAULT_SIMILARITY = "smatchpp"
"""The similarity (and quality metric) chosen where one is and none is named: Smatch++, the paper's main AMR
metric (the amr_similarity metric's default config, the Space's similarity and quality)."""

# name -> "module:attribute" of a Similarity; imported on first use.
_BUILTINS: dict[str, str] = {
    "rougel": "lsplits.similarity.lexical:ROUGE_L",
    "rouge1": "lsplits.similarity.lexical:ROUGE_1",
    "rouge2": "lsplits.similarity.lexical:ROUGE_2",
    "bleu": "lsplits.similarity.lexical:BLEU",
    "rouge1_stem": "lsplits.similarity.lexical:ROUGE_1_STEM",
    "rouge2_stem": "lsplits.similarity.lexical:ROUGE_2_STEM",
    "rougel_stem": "lsplits.similarity.lexical:ROUGE_L_STEM",
    "smatch": "lsplits.similarity.amr.smatch:SMATCH",
    "smatch-corrected": "lsplits.similarity.amr.smatch:SMATCH_CORRECTED",
    "smatchpp": "lsplits.similarity.amr.smatchpp_metric:SMATCHPP",
    "s2match": "lsplits.similarity.amr.s2match:S2MATCH",
    "s2match-emb": "lsplits.similarity.amr.s2match:S2MATCH_EMB",
    "sema": "lsplits.similarity.amr.sema:SEMA",
    "wlk": "lsplits.similarity.amr.wlk:WLK",
    "sembleu": "lsplits.similarity.amr.sembleu:SEMBLEU",
}
_REGISTERED: dict[str, Similarity] = {}


def register(similarity: Similarity, *, overwrite: bool = False) -> Similarity:
    """Register a user-defined similarity under its name; returns it (usable as a decorator result)."""
    if not overwrite and (similarity.name in _REGISTERED or similarity.name in _BUILTINS):
        raise ConfigError(f"a similarity named {similarity.name!r} is already registered")
    _REGISTERED[similarity.name] = similarity
    return similarity


def available() -> list[str]:
    """Names of every registered or built-in similarity function."""
    return sorted(set(_BUILTINS) | set(_REGISTERED))


def from_config_name(config_name: str, default: str, what: str = "similarity") -> str:
    """The registered name an evaluate module's config name chooses (``default`` for evaluate's ``"default"``);
    InvalidOption listing the choices when nothing is registered under it."""
    name = default if config_name == "default" else config_name
    return check_choice(what, name, available())


def display(name: str) -> str:
    """The display name of the similarity registered as ``name`` (``name`` itself if it has none or is unknown)."""
    try:
        return get(name).display_name or name
    except ConfigError:
        return name


def get(name: str) -> Similarity:
    """Return the similarity registered as ``name``; raises InvalidOption listing the choices."""
    key = check_choice("similarity", name, available(), fold_case=True)
    if key in _REGISTERED:
        return _REGISTERED[key]
    module_name, attribute = _BUILTINS[key].split(":")
    try:
        # relative to this package when flattened into a metric Space (lsplits.hub.flatten): ".x:NAME"
        module = importlib.import_module(module_name, __package__)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"similarity {name!r} is not available: {exc}") from exc
    similarity = getattr(module, attribute)
    _REGISTERED[key] = similarity
    return similarity


def prepare_output(similarity: Similarity, text: str) -> Any:
    """``similarity.prepare(text)``: the one call site rule of every engine (matrices, quality).

    Raises:
        InvalidOutput: the similarity's own "this output is invalid" (the caller counts it invalid).
        SimilarityFailure: any other exception (a bug), naming the similarity and the output.
    """
    try:
        return similarity.prepare(text)
    except InvalidOutput:
        raise
    except Exception as exc:  # re-raised: a bug must not become an invalid output
        raise SimilarityFailure(f"similarity {similarity.name!r} failed to prepare the output {_short(text)}: "
                                f"{type(exc).__name__}: {exc}") from exc


def score_outputs(similarity: Similarity, a: Any, b: Any, texts: tuple[str, str]) -> float:
    """``similarity.score(a, b)`` of two prepared outputs (``texts``: their strings, for the message).

    The caller's stop condition (:func:`lsplits.runtime.cancel.check_stop`: a time budget) is checked before
    each pair, so that a stop takes effect between two pairs of one example's candidates, not at its end.

    Raises:
        Stopped: the caller's stop condition says to stop (before the pair, or from inside a long solve).
        SimilarityFailure: any other exception (a bug), naming the similarity and both outputs.
    """
    check_stop()
    try:
        return float(similarity.score(a, b))
    except Stopped:
        raise
    except Exception as exc:  # re-raised: a bug must not become a similarity of 0
        raise SimilarityFailure(f"similarity {similarity.name!r} failed to score the outputs {_short(texts[0])} "
                                f"and {_short(texts[1])}: {type(exc).__name__}: {exc}") from exc


def _short(text: object, limit: int = 60) -> str:
    """``text`` quoted, cut to ``limit`` characters for an error message (any other value: its repr, cut)."""
    if not isinstance(text, str):
        shown = repr(text)
        return shown if len(shown) <= limit else shown[:limit] + "..."
    return repr(text if len(text) <= limit else text[:limit] + "...")
