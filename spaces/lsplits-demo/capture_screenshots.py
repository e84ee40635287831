"""Drive the app in headless Chromium with Playwright and save a screenshot of each tab.

The browser test (``tests/test_space_browser.py``) runs these steps against a small fixture; the
README's screenshots come from the same steps on the real demo dataset::

    python spaces/lsplits-demo/capture_screenshots.py --demo-data out/demo-likelihood --out docs/screenshots

Chromium is the system one when there is one (``$LSPLITS_CHROMIUM``, else ``chromium`` or
``chromium-browser`` on PATH, as Debian and Ubuntu install it), otherwise Playwright's own build
(``make test`` provides one of the two). Every wait has a timeout, so a step whose output never
appears fails instead of hanging.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsplits.runtime.extras import missing_extra  # noqa: E402

try:
    from playwright.sync_api import Page, sync_playwright
except ImportError:
    sys.exit(missing_extra("playwright", "the screenshot script (spaces/lsplits-demo/capture_screenshots.py)"))



def system_chromium() -> str | None:
    """The system Chromium to drive (``$LSPLITS_CHROMIUM`` or the first on PATH), or None for Playwright's."""
    explicit = os.environ.get("LSPLITS_CHROMIUM")
    if explicit:
        return explicit
    return next((found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None)


CHROMIUM_ARGS = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
                 "--no-default-browser-check", "--disable-extensions"]
OWN_LINES = ("A man is playing a guitar on the street.", "A dog is sleeping in the park.",
             "A xylophonist juggles kumquats on a zeppelin.", "Two women are eating lunch.",
             "The child is running in the garden.", "A woman is reading a book.", "Two boys play football.",
             "A quokka photographs a lighthouse at dawn.", "A girl is walking to school.", "The man is cooking.")
"""Ten lines: the default eval share 0.2 gives 2 eval examples, one each for validation and test."""


@contextlib.contextmanager
def chromium_page(width: int = 1400, height: int = 1000) -> Iterator[Page]:
    """A page of a fresh headless Chromium (the system one if installed, else Playwright's)."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=system_chromium(), headless=True,
                                             args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


def wait_for_text(page: Page, selector: str, text: str, timeout: float) -> None:
    """Wait until the element ``selector`` contains ``text``."""
    page.locator(selector).filter(has_text=text).first.wait_for(timeout=timeout)


def wait_for_plot(page: Page, selector: str, timeout: float) -> None:
    """Wait until the plot component ``selector`` shows an image."""
    page.locator(f"{selector} img").first.wait_for(state="visible", timeout=timeout)


def show_splits_tab(page: Page, url: str, *, timeout: float = 60_000, score_own: bool = True) -> None:
    """Open the app; the preloaded dataset's statistics and plots appear; optionally score a few lines."""
    page.goto(url)
    wait_for_text(page, "#split-statistics", "eval", timeout)
    for plot in ("#score-vs-length", "#length-histograms", "#rare-words"):
        wait_for_plot(page, plot, timeout)
    if score_own:
        page.locator("#own-lines textarea").fill("\n".join(OWN_LINES))
        page.locator("#score-own").click()
        wait_for_text(page, "#own-table", "eval", timeout)
        wait_for_plot(page, "#own-plot", timeout)
    page.locator("#dataset-source").scroll_into_view_if_needed()


def run_uncertainty_example(page: Page, *, timeout: float = 60_000) -> None:
    """Switch to the uncertainty tab, load the built-in example (the shipped parser's real beams), run it, wait for
    the table and plots."""
    page.get_by_role("tab", name="Uncertainty & PRR").click()
    page.locator("#load-example").click()
    page.wait_for_function("document.querySelector('#beams-text textarea').value.length > 0", timeout=timeout)
    page.locator("#run-ue").click()
    wait_for_text(page, "#prr-table", "DegMat", timeout)
    for plot in ("#rejection-curves", "#heatmap"):
        wait_for_plot(page, plot, timeout)


def parse_sentence(page: Page, sentences: str, *, timeout: float = 60_000) -> None:
    """Switch to the uncertainty tab, type ``sentences`` into "Parse a sentence", parse, wait for the candidates
    and the uncertainty table."""
    page.get_by_role("tab", name="Uncertainty & PRR").click()
    page.locator("#parse-sentences textarea").fill(sentences)
    page.locator("#parse-run").click()
    wait_for_text(page, "#parse-uncertainty", "DegMat", timeout)
    wait_for_text(page, "#parse-candidates", "Candidate 1", timeout)


def certify_threshold_example(page: Page, target_risk: float = 0.3, *, timeout: float = 60_000) -> None:
    """After :func:`run_uncertainty_example`: set the target risk, certify, wait for the threshold table."""
    page.locator("#target-risk input").fill(str(target_risk))
    page.locator("#certify").click()
    wait_for_text(page, "#selective-summary", "Keep an output", timeout)
    wait_for_text(page, "#selective-table", "DegMat", timeout)


def compare_systems_example(page: Page, *, timeout: float = 60_000) -> None:
    """On the uncertainty tab, load the 3-system example and compare: Table 1, both figures, the pairwise table."""
    page.locator("#load-systems-example").click()
    page.wait_for_function("document.querySelector('#system-names textarea').value.length > 0", timeout=timeout)
    page.locator("#compare-systems").click()
    wait_for_text(page, "#systems-table1", "strong", timeout)
    wait_for_text(page, "#systems-pairwise", "weak", timeout)
    for plot in ("#systems-figure1", "#systems-figure2"):
        wait_for_plot(page, plot, timeout)


def screenshot(page: Page, path: Path) -> Path:
    """Save the whole page as a PNG."""
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description="Save a screenshot of each tab of the demo app.")
    parser.add_argument("--demo-data", type=Path, default=None, help="built dataset to open (default: the app's)")
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    args = parser.parse_args()
    from lsplits.runtime.logs import configure_logging

    configure_logging()
    import app
    from ui_common import SpaceSettings

    settings = SpaceSettings.from_environment()
    if args.demo_data is not None:
        settings = SpaceSettings(**{**settings.__dict__, "demo_data": args.demo_data})
    demo = app.build_demo(settings).queue()
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", quiet=True, css=app.CSS)
    try:
        with chromium_page() as page:
            show_splits_tab(page, url, timeout=600_000)
            print(screenshot(page, args.out / "likelihood_splits.png"))
            run_uncertainty_example(page, timeout=300_000)
            certify_threshold_example(page, timeout=300_000)
            compare_systems_example(page, timeout=300_000)
            print(screenshot(page, args.out / "uncertainty_prr.png"))
    finally:
        demo.close()


if __name__ == "__main__":
    main()
