"""Parse sentences now and say how uncertain each parse is: the Space's "Parse a sentence", usable anywhere.

:func:`parse_sentences` runs beam search with scores (:func:`lsplits.generation.generate_beams`,
``return_scores=True``) on a parser loaded once (:func:`cached_parser`: lsplits' own AMR parser folder, whose
postprocess turns its output into PENMAN, or any seq2seq model), then rates every sentence with each estimator
through :func:`lsplits.uncertainty.beam.beam_uncertainties`, the entry point of ``lsplits ue``'s per-example
values: black-box ones over the chosen similarity, gray-box and hybrid ones from the candidates' scores.
:func:`reference_uncertainties` computes the same estimators on a beams file (a test set's beams, top ``k`` of
each) so that a new sentence's uncertainty can be placed among them (:meth:`UncertaintyReference.percentile`).
Work stops between sentences and inside the search when the caller's stop condition says so
(:mod:`lsplits.runtime.cancel`: the Space's request budget).
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from lsplits.errors import ConfigError
from lsplits.generation.postprocess import Postprocess, load_postprocess, postprocess_beams, postprocess_spec
from lsplits.generation.scores import Scored
from lsplits.generation.search import DEFAULT_MAX_NEW_TOKENS, check_texts
from lsplits.params import check
from lsplits.runtime.cancel import check_stop
from lsplits.similarity.registry import DEFAULT_SIMILARITY
from lsplits.uncertainty.beam import LEXICAL_SIMILARITY, beam_uncertainties, default_estimators
from lsplits.uncertainty.estimators import (
    NEEDS_SCORES,
    SCORED_ESTIMATORS,
    EstimatorSettings,
    check_estimators,
)
from lsplits.uncertainty.matrix import MatrixCache
from lsplits.uncertainty.methods import method_name, method_pairs, scores_at

logger = logging.getLogger(__name__)

DEFAULT_PARSE_K = 5
"""Candidates per sentence of a live parse unless told otherwise (the Space's default)."""
CACHED_PARSERS = 2
"""Parsers :func:`cached_parser` keeps loaded at once (the shipped one and one other, typically)."""


def method_labels(estimators: Sequence[str], similarity: str) -> dict[str, str]:
    """Each estimator's row label in a report (``EigV-Smatch++``, ``LexSim``, ``MSP``), as the study names it."""
    grid = SimpleNamespace(estimators=tuple(estimators), similarities=(similarity,),
                           lexical_similarities=(LEXICAL_SIMILARITY,))
    return {estimator: method_name(estimator, label) for estimator, _, label in method_pairs(grid)}


@dataclass(frozen=True)
class LiveParser:
    """A loaded seq2seq parser, its tokenizer and what turns its output into PENMAN (None: output as it is)."""

    name: str
    model: Any
    tokenizer: Any
    postprocess: Postprocess | None = None
    postprocess_spec: str | None = None


def load_live_parser(name: str | os.PathLike[str], *, postprocess: str | None = None) -> LiveParser:
    """The seq2seq parser ``name`` (a folder or a Hub id) loaded for :func:`parse_sentences`; ``postprocess``
    (a ``--postprocess`` spec) defaults to what an lsplits parser folder names, else none.

    Raises:
        ConfigError: not loadable, or a causal LM (a parser takes the sentence alone, with no prompt).
        InvalidOption: a bad ``postprocess`` spec (before the model is read).
    """
    from lsplits.generation.models import check_model, load_generator

    name = str(name)
    spec = postprocess_spec(name, postprocess)
    function = load_postprocess(spec) if spec else None
    kind = check_model(name)
    if kind != "seq2seq":
        raise ConfigError(f"model {name!r} is a causal LM; parsing a sentence takes a seq2seq parser "
                          "(e.g. a BART/T5 AMR parser or an lsplits parser folder)")
    model, tokenizer = load_generator(name, kind)
    logger.info("loaded parser %s (postprocess: %s)", name, spec or "none")
    return LiveParser(name, model, tokenizer, function, spec)


_PARSERS: OrderedDict[tuple[str, str | None], LiveParser] = OrderedDict()
_PARSERS_LOCK = threading.Lock()


def cached_parser(name: str | os.PathLike[str], *, postprocess: str | None = None) -> LiveParser:
    """:func:`load_live_parser`, loaded once per process and kept (the :data:`CACHED_PARSERS` latest used): a
    served app pays the load on its first request only."""
    key = (str(name), postprocess)
    with _PARSERS_LOCK:  # one load at a time: two first requests do not load the same parser twice
        if key in _PARSERS:
            _PARSERS.move_to_end(key)
            return _PARSERS[key]
        parser = load_live_parser(name, postprocess=postprocess)
        _PARSERS[key] = parser
        while len(_PARSERS) > CACHED_PARSERS:
            _PARSERS.popitem(last=False)
        return parser


@dataclass
class ParsedSentence:
    """One sentence's candidates (PENMAN where the parser has a postprocess) with their scores, each estimator's
    uncertainty and how many candidates the similarity could not read."""

    sentence: str
    scored: Scored
    uncertainties: dict[str, float]
    invalid: int


def _stop_criteria():
    """A ``model.generate`` stopping criterion that raises :class:`~lsplits.errors.Stopped` when the caller's stop
    condition says so (a request's time budget), so a long search ends at its next token, not at its last."""
    from transformers import StoppingCriteria, StoppingCriteriaList

    class _StopWhenAsked(StoppingCriteria):
        def __call__(self, input_ids, scores, **kwargs):
            import torch

            check_stop()
            return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)

    return StoppingCriteriaList([_StopWhenAsked()])


def parse_sentences(parser: LiveParser, sentences: Sequence[str], *, k: int = DEFAULT_PARSE_K,
                    similarity: str = DEFAULT_SIMILARITY, estimators: Sequence[str] | None = None,
                    settings: EstimatorSettings | None = None, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
                    cache: MatrixCache | str | os.PathLike[str] | None = None) -> list[ParsedSentence]:
    """Each sentence's ``k`` best parses with their scores and uncertainty under each estimator (``estimators``
    None: the paper's four and every gray-box and hybrid one), one sentence at a time.

    Raises:
        InvalidInput: ``sentences`` not a list of non-empty strings.
        InvalidOption: a bad ``k``, ``max_new_tokens`` or estimator name (before any search).
        Stopped: the caller's stop condition (:mod:`lsplits.runtime.cancel`) said so.
    """
    from lsplits.generation.search import generate_beams

    sentences = check_texts(sentences, "sentences")
    k = check("k", k)
    names = check_estimators(estimators, with_scores=True) if estimators is not None else None
    results = []
    for number, sentence in enumerate(sentences, start=1):
        check_stop()
        scored = generate_beams(parser.model, parser.tokenizer, [sentence], k=k, max_new_tokens=max_new_tokens,
                                progress=False, ids=[f"sentence {number}"], return_scores=True,
                                stopping_criteria=_stop_criteria())[0]
        if parser.postprocess is not None:
            [scored], _ = postprocess_beams([scored], [f"sentence {number}"], parser.postprocess,
                                            parser.postprocess_spec or "postprocess")
        chosen = names if names is not None else default_estimators([scored.row()])
        rated = beam_uncertainties([scored.candidates], similarity, chosen, settings=settings, cache=cache,
                                   scores=[scored])
        results.append(ParsedSentence(sentence, scored, {name: values[0] for name, values in rated.values.items()},
                                      rated.invalid_candidates[0]))
    return results


@dataclass(frozen=True)
class UncertaintyReference:
    """Each estimator's uncertainties over a reference set of beams (sorted), to place a new value among them."""

    source: str
    examples: int
    k: int
    values: dict[str, np.ndarray] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    """Estimators the reference cannot give (gray-box and hybrid ones where its beams carry no scores)."""

    def percentile(self, estimator: str, value: float) -> float | None:
        """The share (in %) of reference examples less uncertain than ``value``, ties counted half: 0 = more
        certain than all of them, 100 = less certain; None where the reference lacks the estimator or the value
        is NaN."""
        reference = self.values.get(estimator)
        if reference is None or reference.size == 0 or np.isnan(value):
            return None
        below = np.searchsorted(reference, value, side="left")
        at_or_below = np.searchsorted(reference, value, side="right")
        return float(100.0 * (below + (at_or_below - below) / 2) / reference.size)


def reference_uncertainties(beams_file: str | os.PathLike[str], estimators: Sequence[str], *, k: int,
                            similarity: str = DEFAULT_SIMILARITY, settings: EstimatorSettings | None = None,
                            cache: MatrixCache | str | os.PathLike[str] | None = None) -> UncertaintyReference:
    """The uncertainty of every example of ``beams_file`` (its top ``k`` candidates and their scores, so a beam
    of another width compares at the same k) under each of ``estimators`` it allows.

    Raises:
        DataError: the file cannot be read as beams (naming its line).
    """
    from lsplits.uncertainty.inputs import read_scored_beams

    names = check_estimators(estimators, with_scores=True)
    k = check("k", k)
    entries, scores = read_scored_beams([beams_file])
    candidates = [texts[:k] for texts in entries.values() if texts]
    fields = set(scores[0]) if scores else set()
    allowed = [name for name in names if name not in SCORED_ESTIMATORS or set(SCORED_ESTIMATORS[name].fields) <= fields]
    top = None
    if scores and any(name in NEEDS_SCORES for name in allowed):
        top = scores_at([row for texts, row in zip(entries.values(), scores, strict=True) if texts], k)
    values: dict[str, np.ndarray] = {}
    if candidates and allowed:
        rated = beam_uncertainties(candidates, similarity, allowed, settings=settings, cache=cache, scores=top)
        values = {name: np.sort(found[~np.isnan(found)]) for name, found in
                  ((name, np.asarray(found, dtype=float)) for name, found in rated.values.items())}
    widest = max((len(texts) for texts in candidates), default=0)
    return UncertaintyReference(Path(beams_file).name, len(candidates), min(k, widest), values,
                                tuple(name for name in names if name not in allowed))
