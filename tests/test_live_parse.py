"""Parsing sentences live and rating them (lsplits.uncertainty.live) and the Space's "Parse a sentence" handlers.

Two parsers: the tiny BART of beams_fixtures (the conftest ``parser_folder``: a seq2seq model that writes PENMAN,
standing in for "another parser from the Hub") and an untrained lsplits parser folder built here (build_parser +
save_parser, no training: its graphs are random, which is all these tests need of it). Expected values are
worked out by hand from the estimators' definitions and the percentile's (share less uncertain, ties half).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import penman
import pytest
from space_helpers import SPACE_DIR, load_app_module

from lsplits.errors import ConfigError, InvalidOption, Stopped
from lsplits.runtime.cancel import stop_when
from lsplits.uncertainty.estimators import PAPER_ESTIMATORS, SCORED_ESTIMATORS
from lsplits.uncertainty.live import (
    UncertaintyReference,
    cached_parser,
    load_live_parser,
    parse_sentences,
    reference_uncertainties,
)

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_thread")]

ALL_ESTIMATORS = {*PAPER_ESTIMATORS, *SCORED_ESTIMATORS}


@pytest.fixture(scope="module")
def lsplits_parser(tmp_path_factory) -> Path:
    """An untrained lsplits AMR parser folder (decoder + target vocabulary + manifest)."""
    from lsplits.amr_parser.model import SPECIAL_TOKENS, DecoderShape, build_parser, save_parser

    folder = tmp_path_factory.mktemp("lsplits-parser")
    vocab = [*SPECIAL_TOKENS, "(", ")", "thing", "boy", "dog", "run-01", "want-01", ":ARG0", ":ARG1", "-", ":polarity"]
    model, tokenizer = build_parser(vocab, DecoderShape(layers=1, heads=2, feed_forward=64, max_length=64))
    save_parser(model, tokenizer, folder, card={})
    return folder


def write_beams(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


# --- the reference set and its percentiles -------------------------------------------------------------


def test_percentile_is_the_share_less_uncertain_with_ties_counted_half():
    reference = UncertaintyReference("ref.jsonl", 4, 5, {"degmat": np.array([0.0, 0.5, 0.5, 1.0])})
    assert reference.percentile("degmat", 0.5) == 50.0  # 1 below, 2 tied: (1 + 1) / 4
    assert reference.percentile("degmat", 0.0) == 12.5  # none below, 1 tied: 0.5 / 4
    assert reference.percentile("degmat", 2.0) == 100.0
    assert reference.percentile("degmat", -1.0) == 0.0
    assert reference.percentile("msp", 3.0) is None  # an estimator the reference lacks
    assert reference.percentile("degmat", float("nan")) is None


def test_reference_uses_each_examples_top_k_and_its_scores(tmp_path):
    beams = write_beams(tmp_path / "ref.jsonl", [
        {"id": "a", "candidates": ["x y", "x y", "p q"], "logprobs": [-1.0, -2.0, -3.0], "n_tokens": [2, 2, 2],
         "token_entropies": [0.1, 0.2, 0.3]},
        {"id": "b", "candidates": ["x y", "p q", "p q"], "logprobs": [-4.0, -5.0, -6.0], "n_tokens": [4, 2, 2],
         "token_entropies": [0.4, 0.5, 0.6]},
    ])
    at_two = reference_uncertainties(beams, ["degmat", "msp", "mc_sequence_entropy"], k=2, similarity="rougel")
    # ROUGE-L of "x y" and "p q" is 0: DegMat = 1 - (sum of the 2x2 matrix) / 4 -> a: 0, b: 0.5
    assert at_two.values["degmat"].tolist() == [0.0, 0.5]
    assert at_two.values["msp"].tolist() == [1.0, 4.0]  # -logprob of the top-1
    assert at_two.values["mc_sequence_entropy"].tolist() == [1.5, 4.5]  # -mean of the first two logprobs
    assert (at_two.examples, at_two.k, at_two.missing, at_two.source) == (2, 2, (), "ref.jsonl")
    at_three = reference_uncertainties(beams, ["degmat"], k=3, similarity="rougel")
    # a: 1 - (1+1+0 + 1+1+0 + 0+0+1) / 9 = 4/9; b: 1 - (1+0+0 + 0+1+1 + 0+1+1) / 9 = 4/9
    assert np.allclose(at_three.values["degmat"], [4 / 9, 4 / 9])
    assert reference_uncertainties(beams, ["degmat"], k=10, similarity="rougel").k == 3  # the widest beam


def test_reference_without_scores_names_the_estimators_it_cannot_give(tmp_path):
    beams = write_beams(tmp_path / "ref.jsonl", [{"id": "a", "candidates": ["x y", "x y"]}])
    found = reference_uncertainties(beams, ["degmat", "msp", "cocoa_msp"], k=2, similarity="rougel")
    assert list(found.values) == ["degmat"] and found.missing == ("msp", "cocoa_msp")
    assert found.percentile("msp", 1.0) is None


# --- parsing -----------------------------------------------------------------------------------------


def test_another_seq2seq_parser_gives_k_scored_candidates_and_every_estimator(parser_folder):
    parser = load_live_parser(parser_folder)
    assert parser.postprocess is None  # not an lsplits parser folder: its output is taken as it is
    [first, second] = parse_sentences(parser, ["the dog runs", "the boy wants to go"], k=3, similarity="rougel")
    for parsed in (first, second):
        scored = parsed.scored
        assert len(scored.candidates) == len(scored.logprobs) == len(scored.n_tokens) == 3
        assert set(parsed.uncertainties) == ALL_ESTIMATORS
        assert parsed.uncertainties["msp"] == pytest.approx(-scored.logprobs[0])
        assert parsed.uncertainties["perplexity"] == pytest.approx(-scored.logprobs[0] / scored.n_tokens[0])
    assert first.sentence == "the dog runs" and penman.decode(first.scored.candidates[0]).top == "r"  # the memorised graph, word-spaced
    only = parse_sentences(parser, ["the dog runs"], k=2, similarity="rougel", estimators=["degmat", "msp"])[0]
    assert list(only.uncertainties) == ["degmat", "msp"]


def test_bad_input_is_refused_before_any_search(parser_folder):
    parser = load_live_parser(parser_folder)
    with pytest.raises(InvalidOption, match="k must be"):
        parse_sentences(parser, ["the dog runs"], k=0)
    with pytest.raises(InvalidOption, match="no_such_estimator"):
        parse_sentences(parser, ["the dog runs"], estimators=["no_such_estimator"])
    with pytest.raises(Exception, match=r"sentences\[1\] is an empty string"):
        parse_sentences(parser, ["the dog runs", " "])


def test_an_lsplits_parser_is_loaded_once_and_its_output_made_penman(lsplits_parser):
    parser = cached_parser(lsplits_parser)
    assert cached_parser(lsplits_parser) is parser  # the second request reuses the loaded model
    assert parser.postprocess_spec == "lsplits.amr_parser.linearize:to_penman"
    [parsed] = parse_sentences(parser, ["The dog runs."], k=2, similarity="rougel", max_new_tokens=8)
    for candidate in parsed.scored.candidates:  # the postprocess's PENMAN, or "" where it found no graph
        assert candidate == "" or penman.decode(candidate).instances()


def test_a_stop_ends_the_search_between_tokens(lsplits_parser):
    parser = cached_parser(lsplits_parser)
    calls = []

    def reason():
        calls.append(1)
        return "the budget ran out" if len(calls) > 2 else None

    with stop_when(reason), pytest.raises(Stopped, match="the budget ran out") as stopped:
        parse_sentences(parser, ["The dog runs."], k=2, similarity="rougel", max_new_tokens=60)
    # raised by the search's stopping criterion, not after the search had run its 60 tokens
    assert any(entry.name == "__call__" and entry.path.name == "live.py" for entry in stopped.traceback)
    assert len(calls) == 3


# --- the Space's handlers ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def parse_tab():
    load_app_module()  # the Space's folder on sys.path
    import parse_tab

    return parse_tab


def settings_for(tmp_path: Path, parser: Path, **changes):
    from limits import SpaceLimits
    from ui_common import SpaceSettings

    fields = dict(demo_data=tmp_path / "data", scratch_lm=tmp_path / "lm", example_dir=SPACE_DIR / "examples",
                  work_dir=tmp_path / "work", parser=parser)
    fields.update(changes, limits=SpaceLimits(parse_tokens=20, **changes.get("limits", {})))
    return SpaceSettings(**fields)


def test_missing_shipped_parser_is_said_in_one_line(parse_tab, tmp_path):
    settings = settings_for(tmp_path, tmp_path / "parser")
    assert parse_tab.parser_status(settings) == ("The shipped parser is missing from this Space (no parser folder "
                                                 "at parser/): name a Hub seq2seq AMR parser instead.")
    with pytest.raises(ConfigError, match=r"^Parser: this Space has no shipped parser \(no parser folder at parser/\)"):
        parse_tab.parse("The dog runs.", "shipped", 5, "rougel", settings)


def test_limits_are_checked_before_the_parser_is_read(parse_tab, tmp_path):
    settings = settings_for(tmp_path, tmp_path / "no-parser", limits={"parse_sentences": 2})
    with pytest.raises(InvalidOption, match="3 sentences to parse; this Space takes at most 2"):
        parse_tab.parse("One.\nTwo.\n\nThree.", "shipped", 5, "rougel", settings)
    with pytest.raises(InvalidOption, match="11 candidates per sentence .*at most 10"):
        parse_tab.parse("One.", "shipped", 11, "rougel", settings)
    with pytest.raises(ConfigError, match="type a sentence to parse"):
        parse_tab.parse(" \n ", "shipped", 5, "rougel", settings)


def test_a_hosted_space_takes_hub_ids_only_and_offline_says_so(parse_tab, parser_folder, tmp_path, monkeypatch):
    hosted = settings_for(tmp_path, tmp_path / "no-parser", open_local=False)
    with pytest.raises(ConfigError, match="Parser: this Space takes a Hub model id .* not folders of its machine"):
        parse_tab.parse("The dog runs.", str(parser_folder), 3, "rougel", hosted)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    local = settings_for(tmp_path, tmp_path / "no-parser")
    with pytest.raises(ConfigError, match="Parser: HF_HUB_OFFLINE is set, so 'someone/amr-parser' cannot be"):
        parse_tab.parse("The dog runs.", "someone/amr-parser", 3, "rougel", local)


def test_parse_shows_candidates_scores_uncertainties_and_percentiles(parse_tab, parser_folder, tmp_path,
                                                                     monkeypatch):
    examples = tmp_path / "examples"
    examples.mkdir()
    write_beams(examples / parse_tab.REFERENCE_BEAMS, [
        {"id": f"r{i}", "candidates": ["(r / run-01)", "(d / dog)", "(r / run-01)"], "logprobs": [lp, -50.0, -60.0],
         "n_tokens": [3, 3, 3], "token_entropies": [0.1, 0.1, 0.1]} for i, lp in enumerate([-0.001, -0.002, -1e4])])
    settings = settings_for(tmp_path, tmp_path / "no-parser", example_dir=examples)
    summary, shown, scores, table, drawing = parse_tab.parse("the dog runs\nthe girl sleeps", str(parser_folder), 3,
                                                             "rougel", settings)
    assert "2 sentence(s), 3 candidates each" in summary
    assert f"the 3 test sentences of {parse_tab.REFERENCE_BEAMS} (their top 3 candidates)" in summary
    assert "#### 1. the dog runs" in shown and "( r / run-01 :ARG0 ( d / dog ) )" in shown
    assert scores["sentence"].tolist() == [1, 1, 1, 2, 2, 2] and scores["rank"].tolist() == [1, 2, 3] * 2
    assert (scores["log-probability"] < 0).all()
    assert list(table.columns) == ["UE method", "family", "s1 uncertainty", "s1 percentile", "s2 uncertainty",
                                   "s2 percentile"]
    assert len(table) == len(ALL_ESTIMATORS)
    rows = {row["UE method"]: row for row in table.to_dict("records")}
    assert {row["family"] for row in rows.values()} == {"black-box", "gray-box", "hybrid"}
    # MSP of the references: 0.001, 0.002, 10000; a parse's top-1 is less likely than e^-0.002 and far more
    # than e^-10000, so two of the three are less uncertain
    assert rows["MSP"]["s1 percentile"] == "66.7" and rows["MSP"]["s2 percentile"] == "66.7"
    assert rows["MSP"]["s1 uncertainty"] == pytest.approx(-scores["log-probability"][0], abs=1e-3)
    assert rows["DegMat-ROUGE-L"]["s1 percentile"] != parse_tab.NO_PERCENTILE
    assert drawing is not None  # the tiny parser's top graph of "the dog runs" is a graph


def test_reference_without_scores_gives_black_box_percentiles_only(parse_tab, parser_folder, tmp_path):
    examples = tmp_path / "examples"  # a reference of beams that carry no scores (another parser's file)
    examples.mkdir()
    write_beams(examples / parse_tab.REFERENCE_BEAMS, [
        {"id": f"r{i}", "candidates": ["(r / run-01)", "(d / dog)"]} for i in range(3)])
    settings = settings_for(tmp_path, tmp_path / "no-parser", example_dir=examples)
    summary, _, _, table, _ = parse_tab.parse("the dog runs", str(parser_folder), 2, "rougel", settings)
    by_family = {}
    for row in table.to_dict("records"):
        by_family.setdefault(row["family"], set()).add(row["s1 percentile"] == parse_tab.NO_PERCENTILE)
    assert by_family == {"black-box": {False}, "gray-box": {True}, "hybrid": {True}}
    assert "carries no scores of its candidates" in summary


def test_the_shipped_parser_answers_by_default(parse_tab, lsplits_parser, tmp_path):
    settings = settings_for(tmp_path, lsplits_parser)
    assert parse_tab.parser_status(settings).startswith("Parser: 'shipped' is lsplits' own")
    settings = dataclasses.replace(settings, example_dir=tmp_path / "none")
    summary, shown, scores, table, _ = parse_tab.parse("The dog runs.", "shipped", 2, "rougel", settings)
    assert len(scores) == 2 and "Candidate 2: log-probability" in shown
    assert "No reference beams in this Space: no percentiles." in summary
    assert set(table["s1 percentile"]) == {parse_tab.NO_PERCENTILE}


def test_a_parser_that_never_stops_is_cut_at_its_decoders_window(lsplits_parser):
    """The decoder has 64 positions (its start token takes one); the EncoderDecoderModel's own config and the
    encoder's tokenizer state 512, which let the search run past the decoder's positions and fail."""
    import torch

    from lsplits.amr_parser.model import load_parser
    from lsplits.generation.search import generate_beams

    model, tokenizer = load_parser(lsplits_parser)
    with torch.no_grad():
        model.decoder.cls.predictions.bias[tokenizer.eos_token_id] = -1e4  # never ends a candidate
    [scored] = generate_beams(model, tokenizer, ["The dog runs."], k=2, max_new_tokens=100, progress=False,
                              return_scores=True)
    assert scored.n_tokens == [63, 63]
