"""Every class of bad input, through the real CLI (``python -m lsplits``, a fresh process).

Each case builds its inputs in a fresh folder, runs one command and asserts what a user must see:
exit code 2, exactly one line on stderr that names the file / line / field / option at fault, no
traceback, and no file changed outside the output folder (the user's files survive). The cases are
grouped by the part of lsplits that checks them; the cheap checks run before any model is trained.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

GOLD_AMR = [
    "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))",
    "(r / run-01 :ARG0 (d / dog))",
    "(s / sleep-01 :ARG0 (c / cat) :manner (q / quiet))",
    "(e / eat-01 :ARG0 (g / girl) :ARG1 (a / apple))",
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    """Write ``rows`` as JSON Lines (UTF-8) and return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def text_rows(n: int = 40) -> list[dict]:
    """A small valid generic dataset: a text field and a two-class label."""
    words = ["red", "blue", "cat", "dog", "runs", "sleeps", "big", "small", "house", "tree"]
    return [{"text": " ".join(words[(i * k + k) % len(words)] for k in range(1, 3 + i % 5)),
             "topic": ["a", "b"][i % 2]} for i in range(n)]


def beams_and_gold(folder: Path) -> tuple[Path, Path]:
    """A valid ``lsplits ue`` input pair: beams JSONL (k=3) and gold JSONL, ids ex0..ex3."""
    beams = write_jsonl(folder / "beams.jsonl", [
        {"id": f"ex{i}", "candidates": [g, g, GOLD_AMR[(i + 1) % len(GOLD_AMR)]]} for i, g in enumerate(GOLD_AMR)])
    gold = write_jsonl(folder / "gold.jsonl", [{"id": f"ex{i}", "amr": g} for i, g in enumerate(GOLD_AMR)])
    return beams, gold


def build_argv(data: Path, out: Path, *extra: str) -> list[str]:
    """``lsplits build`` of a generic JSONL file with the scratch LM and a tiny training budget."""
    return ["build", "--data-files", str(data), "--query-field", "text", "--label-field", "topic",
            "--lm", "scratch", "--out", str(out), "--eval-size", "8", "--max-steps", "2",
            "--cache-dir", str(out.parent / "cache"), "--no-progress", *extra]


@dataclass(frozen=True)
class Case:
    """One bad input: ``setup(folder)`` writes the inputs and returns the argv (without ``lsplits``);
    every string of ``expect`` must appear in the single stderr line. ``out`` names the output path
    (relative to the folder) that the command may create; everything else must stay as it was."""

    name: str
    setup: Callable[[Path], list[str]]
    expect: tuple[str, ...]
    out: str = "out"


# --- outputs and exports: folders lsplits did not write, stale loads, column types, split sizes -----------


CASES_OUTPUTS: list[Case] = [
]


# ----------------------------------------------------------------------------------------------------------
# --- Spider SQL ----------------------------------------------------------------------------------------------


CASES_SPIDER: list[Case] = [
]


# ----------------------------------------------------------------------------------------------------------
# --- uncertainty: beams, gold pairing, options of ue and the metric modules -------------------------------


def ue_option(*options: str) -> Callable[[Path], list[str]]:
    """``lsplits ue`` on valid beams and gold with the given (bad) options."""
    def setup(folder: Path) -> list[str]:
        beams, gold = beams_and_gold(folder)
        return ["ue", str(beams), "--gold", str(gold), "--out", str(folder / "out"), "--no-cache", *options]
    return setup


CASES_UE: list[Case] = [
    Case("ue-unknown-estimator", ue_option("--estimators", "eigv,entropy"),
         ("--estimators", "unknown estimator 'entropy'", "numsemsets")),
    Case("ue-unknown-metric", ue_option("--metrics", "prr,auroc"), ("--metrics", "unknown uncertainty metric", "'auroc'")),
    Case("ue-roc-auc-without-bad-below", ue_option("--metrics", "roc_auc"), ("--metrics", "roc_auc needs bad_below",
                                                                            "--bad-below")),
    Case("ue-sets-threshold-out-of-range", ue_option("--estimators", "numsemsets", "--sets-threshold", "1.5"),
         ("--sets-threshold", "(0, 1]", "1.5")),
    Case("ue-kle-t-not-positive", ue_option("--estimators", "kle", "--kle-t", "0"), ("--kle-t", "must be positive")),
    Case("ue-unknown-normalizer", ue_option("--metrics", "ece", "--normalizer", "platt"),
         ("--normalizer", "unknown normaliser 'platt'")),
    Case("ue-lexsim-on-a-graph-similarity", ue_option("--lexsim-similarities", "smatchpp"),
         ("--lexsim-similarities", "'smatchpp' is not one of", "rouge1")),
]


# ----------------------------------------------------------------------------------------------------------
# --- data files, models and training options ----------------------------------------------------------------


CASES_DATA: list[Case] = [
]


# ----------------------------------------------------------------------------------------------------------

ALL_CASES = CASES_OUTPUTS + CASES_SPIDER + CASES_UE + CASES_DATA


def _snapshot(folder: Path, skip: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under ``folder`` outside ``skip`` (and caches), with size, mtime and content."""
    state = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and skip not in path.parents and path != skip and "cache" not in path.parts:
            stat = path.stat()
            state[str(path.relative_to(folder))] = (stat.st_size, stat.st_mtime_ns, path.read_bytes())
    return state


def run_cli(argv: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -m lsplits ARGV`` offline in a fresh process."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "lsplits", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("case", ALL_CASES, ids=[case.name for case in ALL_CASES])
def test_bad_input_gives_one_line(case: Case, tmp_path: Path) -> None:
    argv = case.setup(tmp_path)
    out = tmp_path / case.out
    before = _snapshot(tmp_path, out)
    result = run_cli(argv, tmp_path)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, (result.returncode, result.stderr[-3000:])
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert len(lines) == 1, result.stderr[-3000:]
    for fragment in case.expect:
        assert fragment in lines[0], (fragment, lines[0])
    assert _snapshot(tmp_path, out) == before
