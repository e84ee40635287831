"""Handlers of "Parse a sentence", the first part of the "Uncertainty & PRR" tab: sentences in; per sentence the
parser's k candidates with their log-probabilities, each estimator's uncertainty and where it falls among a test
set's out.

The work is :mod:`lsplits.uncertainty.live` (the parser loaded once per process, the parse with scores, the
estimators through ``lsplits ue``'s entry point, the reference set's uncertainties); this module reads the form,
checks the Space's limits (:class:`limits.SpaceLimits`) first and lays the result out.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

import pandas as pd
import uncertainty_tab
from matplotlib.figure import Figure
from ui_common import SpaceSettings, model_source

from lsplits.amr_parser.model import is_parser_folder
from lsplits.errors import ConfigError, InvalidOption
from lsplits.similarity.registry import display
from lsplits.uncertainty.estimators import EstimatorSettings
from lsplits.uncertainty.live import (
    ParsedSentence,
    UncertaintyReference,
    cached_parser,
    method_labels,
    parse_sentences,
    reference_uncertainties,
)
from lsplits.uncertainty.methods import estimator_family
from lsplits.uncertainty.plots import amr_graph_figure

logger = logging.getLogger(__name__)

SHIPPED = "shipped"
"""What the model field says for the Space's own parser (:attr:`ui_common.SpaceSettings.parser`)."""
PARSER_FIELD = "Parser"
"""How errors name the model field of "Parse a sentence"."""
NO_PERCENTILE = "-"
"""The percentile column where the reference cannot give one."""
REFERENCE_BEAMS = uncertainty_tab.EXAMPLES["parser"][0]
"""The beams (in the Space's ``examples/``) a parse's uncertainty is placed among: the shipped parser's own k = 5
beams, with their scores, of The Little Prince's 143 test sentences (the uncertainty example's)."""


def parser_status(settings: SpaceSettings) -> str:
    """One line for the section: which parser answers by default, or that the shipped one is missing."""
    if is_parser_folder(settings.parser):
        return f"Parser: '{SHIPPED}' is lsplits' own small AMR parser, shipped with this Space (offline)."
    return (f"The shipped parser is missing from this Space (no parser folder at {settings.parser.name}/): name a "
            "Hub seq2seq AMR parser instead.")


def parser_source(text: str | None, settings: SpaceSettings) -> str:
    """The folder or Hub id to load for the model field: the shipped parser for ``shipped`` (or nothing), else
    the Hub model (a hosted Space reads no folder a visitor names, :func:`ui_common.model_source`)."""
    name = (text or "").strip()
    if name in ("", SHIPPED):
        if not is_parser_folder(settings.parser):
            raise ConfigError(f"{PARSER_FIELD}: this Space has no shipped parser (no parser folder at "
                              f"{settings.parser.name}/); name a Hub seq2seq AMR parser")
        return str(settings.parser)
    return model_source(name, settings, PARSER_FIELD, "a Hub model id (a seq2seq AMR parser)"
                        + ("" if settings.open_local else f" or '{SHIPPED}'"))


def sentence_lines(text: str | None, settings: SpaceSettings) -> list[str]:
    """The typed sentences, one per non-empty line, within the Space's limits (refused in one line otherwise)."""
    limits = settings.limits
    limits.check_text(text, "sentences")
    sentences = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not sentences:
        raise ConfigError("type a sentence to parse (one per line)")
    limits.check_count(len(sentences), "parse_sentences", "sentences to parse")
    return sentences


def beam_size(k: float | int | None, settings: SpaceSettings) -> int:
    """The form's k as a whole number from 1 to the Space's candidate limit."""
    if k is None or int(k) != k or int(k) < 1:
        raise InvalidOption(f"beam size k must be a whole number of at least 1, got {k}")
    settings.limits.check_count(int(k), "candidates", "candidates per sentence (beam size k)")
    return int(k)


@functools.lru_cache(maxsize=8)
def _reference(path: str, modified: float, estimators: tuple[str, ...], k: int, similarity: str,
               cache: str) -> UncertaintyReference:
    """:func:`reference_uncertainties`, computed once per file version, estimators, k and similarity."""
    return reference_uncertainties(path, estimators, k=k, similarity=similarity, cache=cache)


def reference(beams_file: Path, estimators: tuple[str, ...], k: int, similarity: str,
              settings: SpaceSettings) -> UncertaintyReference | None:
    """The uncertainties of ``beams_file``'s examples (top ``k`` candidates) to place a parse among; None when the
    Space has no such file."""
    if not beams_file.is_file():
        logger.warning("no reference beams at %s: parses get no percentile", beams_file)
        return None
    return _reference(str(beams_file), beams_file.stat().st_mtime, estimators, k, similarity,
                      str(settings.work_dir / "matrices"))


def parse(text: str | None, model: str | None, k: float | int | None, similarity: str,
          settings: SpaceSettings) -> tuple[str, str, pd.DataFrame, pd.DataFrame, Figure | None]:
    """Parse the typed sentences; returns a summary, the candidates (PENMAN, as Markdown), the candidates' scores,
    the uncertainty table (every estimator, its family, value and percentile) and a drawing of the first
    sentence's top graph (None when it is no graph)."""
    sentences = sentence_lines(text, settings)
    k = beam_size(k, settings)
    source = parser_source(model, settings)
    settings.work_dir.mkdir(parents=True, exist_ok=True)
    parser = cached_parser(source)
    parsed = parse_sentences(parser, sentences, k=k, similarity=similarity, settings=EstimatorSettings(),
                             max_new_tokens=settings.limits.parse_tokens, cache=settings.work_dir / "matrices")
    estimators = tuple(parsed[0].uncertainties)
    found = reference(settings.example_dir / REFERENCE_BEAMS, estimators, k, similarity, settings)
    first = parsed[0]
    drawing = amr_graph_figure(first.scored.candidates[0], f"Top graph of sentence 1: {first.sentence}")
    return (_summary(parsed, similarity, found), candidates_markdown(parsed), scores_table(parsed),
            uncertainty_table(parsed, similarity, found), drawing)


def candidates_markdown(parsed: list[ParsedSentence]) -> str:
    """Each sentence and its candidates, best first, in PENMAN with their log-probabilities."""
    blocks = []
    for number, sentence in enumerate(parsed, start=1):
        blocks.append(f"#### {number}. {sentence.sentence}")
        scored = sentence.scored
        for rank, candidate in enumerate(scored.candidates):
            blocks.append(f"Candidate {rank + 1}: log-probability {scored.logprobs[rank]:.2f} "
                          f"({scored.n_tokens[rank]} tokens)\n```\n{candidate or '(no graph)'}\n```")
    return "\n\n".join(blocks)


def scores_table(parsed: list[ParsedSentence]) -> pd.DataFrame:
    """One row per candidate: its sentence, rank, log-probability, tokens, mean token entropy and PENMAN."""
    return pd.DataFrame([{"sentence": number, "rank": rank + 1, "log-probability": round(s.scored.logprobs[rank], 3),
                          "tokens": s.scored.n_tokens[rank],
                          "mean token entropy": round(s.scored.token_entropies[rank], 3),
                          "PENMAN": " ".join(candidate.split())}
                         for number, s in enumerate(parsed, start=1) for rank, candidate in enumerate(s.scored.candidates)])


def uncertainty_table(parsed: list[ParsedSentence], similarity: str,
                      found: UncertaintyReference | None) -> pd.DataFrame:
    """One row per estimator (its label and family), and for sentence n its uncertainty (``s<n> uncertainty``) and
    percentile among the reference (``s<n> percentile``; :data:`NO_PERCENTILE` where the reference has none)."""
    labels = method_labels(list(parsed[0].uncertainties), similarity)
    table = pd.DataFrame({"UE method": list(labels.values()),
                          "family": [estimator_family(estimator) for estimator in labels]})
    for number, sentence in enumerate(parsed, start=1):
        values = [sentence.uncertainties[estimator] for estimator in labels]
        shares = [found.percentile(estimator, value) if found is not None else None
                  for estimator, value in zip(labels, values, strict=True)]
        table[uncertainty_column(number)] = [round(value, 4) for value in values]
        table[percentile_column(number)] = [NO_PERCENTILE if share is None else f"{share:.1f}" for share in shares]
    return table


def uncertainty_column(number: int) -> str:
    """The uncertainty table's column of sentence ``number``'s values."""
    return f"s{number} uncertainty"


def percentile_column(number: int) -> str:
    """The uncertainty table's column of sentence ``number``'s percentiles."""
    return f"s{number} percentile"


def _summary(parsed: list[ParsedSentence], similarity: str, found: UncertaintyReference | None) -> str:
    k = max(len(s.scored.candidates) for s in parsed)
    invalid = sum(s.invalid for s in parsed)
    lines = [f"{len(parsed)} sentence(s), {k} candidates each; {invalid} candidate(s) are not graphs "
             f"{display(similarity)} can read (similarity 0 with the others). Uncertainty: higher = less sure."]
    if found is None:
        lines.append("No reference beams in this Space: no percentiles.")
    else:
        lines.append(f"Percentile: the share of the {found.examples} test sentences of {found.source} (their top "
                     f"{found.k} candidates) that are less uncertain; 90 means more uncertain than 90% of them.")
        if found.missing:
            names = ", ".join(method_labels(list(found.missing), similarity).values())
            lines.append(f"No percentile for {names}: {found.source} carries no scores of its candidates.")
    return "\n\n".join(lines)
