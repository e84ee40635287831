"""End to end in a real browser: a sentence typed into "Parse a sentence" comes back as candidates with their
log-probabilities and every estimator's uncertainty (the Space on localhost, headless system Chromium).

The shipped parser is stood in for by an untrained lsplits parser folder built here (its graphs are random; the
test reads what the page shows, not how good the graphs are), its candidates cut at 12 tokens."""

from __future__ import annotations

import dataclasses

import pytest
from space_helpers import build_fixture_dataset, load_app_module, running_app, space_settings

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_a_typed_sentence_shows_candidates_and_uncertainties(tmp_path):
    from lsplits.amr_parser.model import SPECIAL_TOKENS, DecoderShape, build_parser, save_parser

    load_app_module()  # puts the Space folder on sys.path
    import capture_screenshots as steps
    from limits import SpaceLimits

    vocab = [*SPECIAL_TOKENS, "(", ")", "prince", "star", "look-01", ":ARG0", ":ARG1"]
    model, tokenizer = build_parser(vocab, DecoderShape(layers=1, heads=2, feed_forward=64, max_length=32))
    save_parser(model, tokenizer, tmp_path / "parser", card={})
    settings = dataclasses.replace(space_settings(tmp_path, build_fixture_dataset(tmp_path / "dataset")),
                                   parser=tmp_path / "parser", limits=SpaceLimits(parse_tokens=12))
    with running_app(settings) as url, steps.chromium_page() as page:
        page.goto(url)
        steps.parse_sentence(page, "The little prince looked at the stars.", timeout=120_000)
        assert "shipped' is lsplits' own small AMR parser" in page.locator("#parse-parser-status").inner_text()
        shown = page.locator("#parse-candidates").inner_text()
        assert "The little prince looked at the stars." in shown
        assert all(f"Candidate {rank}: log-probability" in shown for rank in range(1, 6))  # k = 5 by default
        table = page.locator("#parse-uncertainty").inner_text()
        for method in ("LexSim", "EigV-Smatch++", "DegMat-Smatch++", "MSP", "CocoaMSP-Smatch++"):
            assert method in table
        for family in ("black-box", "gray-box", "hybrid"):
            assert family in table
        assert "1 sentence(s), 5 candidates each" in page.locator("#parse-summary").inner_text()
        assert page.locator(".toast-body").count() == 0

        page.locator("#parse-sentences textarea").fill("\n".join(f"Sentence {i}." for i in range(6)))
        page.locator("#parse-run").click()
        toast = page.locator(".toast-body.error")
        toast.first.wait_for(timeout=30_000)
        assert "6 sentences to parse; this Space takes at most 5" in toast.first.inner_text()
