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


CASES_UE: list[Case] = [
]


# ----------------------------------------------------------------------------------------------------------
# --- data files, models and training options ----------------------------------------------------------------


def difficulty_folder(folder: Path, *, task: str = "generic", label_field: str | None = "topic",
                      missing_label: bool = False) -> Path:
    """A tiny dataset in Hub layout (configs random, ll_split) with an ``lsplits.json``, written by hand."""
    import pandas as pd

    rows = [{"id": f"ex{i}", **row, "length": len(row["text"].split())} for i, row in enumerate(text_rows(24))]
    if missing_label:
        rows[-1]["topic"] = None
    entries = []
    for config in ("random", "ll_split"):
        ordered = rows if config == "random" else rows[::-1]
        parts = {"train": ordered[:16], "validation": ordered[16:20], "test": ordered[20:]}
        for split, part in parts.items():
            (folder / config).mkdir(parents=True, exist_ok=True)
            pd.DataFrame(part).to_parquet(folder / config / f"{split}.parquet")
        entries.append(f"- config_name: {config}\n  data_files:\n"
                       + "".join(f"  - split: {split}\n    path: {config}/{split}.parquet\n" for split in parts))
    (folder / "README.md").write_text("---\nconfigs:\n" + "".join(entries) + "---\n# tiny\n", encoding="utf-8")
    meta = {"task": task, "query_field": "text", "label_field": label_field, "configs": ["random", "ll_split"],
            "lm": "scratch"}
    (folder / "lsplits.json").write_text(json.dumps(meta), encoding="utf-8")
    return folder


def difficulty_argv(folder: Path, *extra: str) -> list[str]:
    return ["difficulty", str(folder), "--out", str(folder.parent / "out"), "--no-progress", *extra]


CASES_DIFFICULTY: list[Case] = [
    Case("difficulty: folder without lsplits.json",
         lambda d: ((d / "data").mkdir(), difficulty_argv(d / "data"))[1], ("data", "no lsplits.json")),
    Case("difficulty: unknown config", lambda d: difficulty_argv(difficulty_folder(d / "data"), "--configs", "nope"),
         ("--configs", "'nope'", "random, ll_split")),
    Case("difficulty: dataset without labels",
         lambda d: difficulty_argv(difficulty_folder(d / "data", label_field=None)), ("no label field", "lsplits.json")),
    Case("difficulty: Spider with the default encoder",
         lambda d: difficulty_argv(difficulty_folder(d / "data", task="spider")),
         ("Spider", "sequence-to-sequence", "--model")),
    Case("difficulty: model folder missing",
         lambda d: difficulty_argv(difficulty_folder(d / "data"), "--model", str(d / "no-model")),
         ("--model", "no-model", "no model folder")),
    Case("difficulty: example without a label",
         lambda d: difficulty_argv(difficulty_folder(d / "data", missing_label=True)),
         ("config 'random'", "example 'ex23'", "field 'topic'", "missing label")),
    Case("difficulty: --epochs 0", lambda d: difficulty_argv(difficulty_folder(d / "data"), "--epochs", "0"),
         ("--epochs 0", "positive")),
    Case("difficulty: --out holds files lsplits did not write",
         lambda d: ((d / "out").mkdir(), (d / "out" / "notes.txt").write_text("mine"),
                    difficulty_argv(difficulty_folder(d / "data")))[2], ("--out", "did not write")),
]


CASES_DATA: list[Case] = [
    *CASES_DIFFICULTY,
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
