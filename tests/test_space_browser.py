"""End to end in a real browser: the Space app on localhost, driven by Playwright in headless system Chromium.

Opens the page (the fixture dataset is preloaded), scores a few lines, loads the uncertainty example,
runs it, checks the PRR table and the plots, saves screenshots, and checks that bad input shows a
readable message. The steps are those of ``spaces/lsplits-demo/capture_screenshots.py``, which makes
the README's screenshots.
"""

from __future__ import annotations

import struct

import pytest
from space_helpers import build_fixture_dataset, load_app_module, running_app, space_settings

pytestmark = [pytest.mark.slow, pytest.mark.browser]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TABLE_LAYOUT = """selector => { const el = document.querySelector(selector); const viewport = el.querySelector('.virtual-table-viewport');
  return {wrapped: [...el.querySelectorAll('th .header')].filter(h => h.offsetHeight > 1.5 * parseFloat(getComputedStyle(h).lineHeight))
                                                     .map(h => h.innerText),
          overflow: viewport.scrollWidth - viewport.clientWidth}; }"""
"""A table's header names on more than one line ("ll_scor" over "e") and how far it runs past its box (px)."""
SPLIT_TABLES = ("#split-statistics", "#least-likely", "#most-likely", "#own-table")


def png_size(path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    return struct.unpack(">II", data[16:24])


def test_browser_end_to_end(tmp_path):
    load_app_module()  # puts the Space folder on sys.path
    import capture_screenshots as steps

    settings = space_settings(tmp_path, build_fixture_dataset(tmp_path / "dataset"))
    with running_app(settings) as url, steps.chromium_page() as page:
        steps.show_splits_tab(page, url, timeout=90_000)
        statistics = page.locator("#split-statistics").inner_text()
        for split, size in (("train", "32"), ("validation", "4"), ("test", "4"), ("eval", "8")):
            assert split in statistics and size in statistics
        own = page.locator("#own-table").inner_text()
        assert own.count("eval") == 2 and own.count("train") == 8  # 10 lines, eval share 20%
        for table in SPLIT_TABLES:
            assert page.evaluate(TABLE_LAYOUT, table)["wrapped"] == [], table
        page.set_viewport_size({"width": 900, "height": 1000})  # one column per split: fits a narrow window too
        page.wait_for_timeout(500)
        assert page.evaluate(TABLE_LAYOUT, "#split-statistics")["overflow"] <= 0
        page.set_viewport_size({"width": 1400, "height": 1000})
        splits_png = steps.screenshot(page, tmp_path / "likelihood_splits.png")

        steps.run_uncertainty_example(page, timeout=90_000)
        bad_below = page.locator("#bad-below input, #bad-below textarea").first
        assert bad_below.input_value() == "" and "e.g." in bad_below.get_attribute("placeholder")  # not 0
        prr = page.locator("#prr-table").inner_text()
        for method in ("LexSim", "EigV-Smatch++", "Ecc-Smatch++", "DegMat-Smatch++"):
            assert method in prr
        assert page.locator("#rejection-curves img").first.is_visible()
        assert page.locator("#heatmap img").first.is_visible()
        assert "143 examples, beam size 5" in page.locator("#ue-summary").inner_text()  # the parser's real beams
        assert page.locator(".toast-body").count() == 0
        steps.certify_threshold_example(page, timeout=90_000)
        assert "certified" in page.locator("#selective-summary").inner_text()
        assert "share kept" in page.locator("#selective-table").inner_text()
        steps.compare_systems_example(page, timeout=90_000)
        table1 = page.locator("#systems-table1").inner_text()
        assert all(name in table1 for name in ("strong", "middle", "weak"))
        assert "3 systems on the same 12 examples" in page.locator("#systems-summary").inner_text()
        assert page.locator(".toast-body").count() == 0
        uncertainty_png = steps.screenshot(page, tmp_path / "uncertainty_prr.png")

        page.locator("#beams-text textarea").fill('{"id": "x", "candidates": ["a"]}\n{oops')
        page.locator("#run-ue").click()
        toast = page.locator(".toast-body.error")
        toast.first.wait_for(timeout=30_000)
        message = toast.first.inner_text()
        assert "pasted-beams.jsonl, line 2: invalid JSON" in message
        assert "Traceback" not in message and str(tmp_path) not in message

    for path in (splits_png, uncertainty_png):
        width, height = png_size(path)
        assert width == 1400 and height > 1000
