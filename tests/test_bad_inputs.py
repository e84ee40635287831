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


def _data_lines(folder: Path, name: str = "data.jsonl", line: int = 3, old: bytes = b"", new: bytes = b"") -> Path:
    """The valid text dataset as JSON Lines with ``old`` replaced by ``new`` on 1-based ``line``."""
    lines = [json.dumps(row).encode() + b"\n" for row in text_rows()]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path = folder / name
    path.write_bytes(b"".join(lines))
    return path


def _bytes_file(name: str, content: bytes) -> Callable[[Path], list[str]]:
    """A case whose data file ``name`` holds ``content``."""
    def setup(folder: Path) -> list[str]:
        (folder / name).write_bytes(content)
        return build_argv(folder / name, folder / "out")
    return setup


def _build_with(*extra: str, rows: Callable[[], list[dict]] = text_rows) -> Callable[[Path], list[str]]:
    """A case building the valid dataset (or ``rows()``) with ``extra`` options."""
    def setup(folder: Path) -> list[str]:
        return build_argv(write_jsonl(folder / "data.jsonl", rows()), folder / "out", *extra)
    return setup


def _score_with(*extra: str) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        data = write_jsonl(folder / "data.jsonl", text_rows())
        return ["score", "--data-files", str(data), "--query-field", "text", "--out", str(folder / "out"),
                "--cache-dir", str(folder / "cache"), "--no-progress", *extra]
    return setup


def _with_model(make: Callable[[Path, Path], Path], rows: Callable[[], list[dict]] = text_rows
                ) -> Callable[[Path], list[str]]:
    """A case building with ``--lm`` a broken copy ``make(tiny model folder, destination)`` of a tiny GPT-2."""
    def setup(folder: Path) -> list[str]:
        from lm_fixtures import tiny_model_folder

        broken = make(tiny_model_folder(folder / "tiny"), folder / "broken-lm")
        data = write_jsonl(folder / "data.jsonl", rows())
        argv = build_argv(data, folder / "out")
        argv[argv.index("--lm") + 1] = str(broken)
        return argv
    return setup


def _one_class_short() -> list[dict]:
    """40 rows, 39 of topic 'a' and 1 of topic 'b': an eval of 8 needs 4 of each."""
    return [{**row, "topic": "b" if i == 0 else "a"} for i, row in enumerate(text_rows())]


def _lone_accent_query() -> list[dict]:
    rows = text_rows()
    rows[5]["text"] = "\u0301"
    return rows


def _copy_without_tokenizer(model: Path, dest: Path) -> Path:
    from lm_fixtures import copy_without_tokenizer

    return copy_without_tokenizer(model, dest)


def _copy_with_truncated_weights(model: Path, dest: Path) -> Path:
    from lm_fixtures import copy_with_truncated_weights

    return copy_with_truncated_weights(model, dest)


def _copy_with_accent_stripping_tokenizer(model: Path, dest: Path) -> Path:
    from lm_fixtures import copy_with_accent_stripping_tokenizer

    return copy_with_accent_stripping_tokenizer(model, dest)


def _relative_lm(name: str) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        argv = build_argv(write_jsonl(folder / "data.jsonl", text_rows()), folder / "out")
        argv[argv.index("--lm") + 1] = name
        return argv
    return setup


def _missing_positional_data(folder: Path) -> list[str]:
    argv = build_argv(folder / "unused.jsonl", folder / "out")
    return ["build", "./data/train.jsonl", *argv[3:]]


def _folder_as_data_file(folder: Path) -> list[str]:
    (folder / "data.jsonl").mkdir()
    return build_argv(folder / "data.jsonl", folder / "out")


def _truncated_parquet(folder: Path) -> list[str]:
    import pandas as pd

    path = folder / "data.parquet"
    pd.DataFrame(text_rows()).to_parquet(path)
    path.write_bytes(path.read_bytes()[:-40])
    return build_argv(path, folder / "out")


_GOOD_LINES = "".join(json.dumps(row) + "\n" for row in text_rows()).encode()

CASES_DATA: list[Case] = [
    Case("non_utf8_jsonl", lambda f: build_argv(_data_lines(f, old=b'"text": "', new=b'"text": "\xff'), f / "out"),
         ("data.jsonl", "line 3", "byte 0xff at byte offset", "not UTF-8")),
    Case("non_utf8_csv", _bytes_file("data.csv", b"text,topic\nred cat,a\nbl\xe9 dog,b\n"),
         ("data.csv", "line 3", "byte 0xe9 at byte offset 23", "not UTF-8")),
    Case("non_utf8_json", _bytes_file("data.json", b'[{"text": "red", "topic": "a"},\n {"text": "\xc3(", "topic": "b"}]'),
         ("data.json", "line 2", "byte 0xc3 at byte offset", "not UTF-8")),
    Case("lone_surrogate_jsonl",
         lambda f: build_argv(_data_lines(f, line=4, old=b'"text": "', new=b'"text": "\\ud800'), f / "out"),
         ("data.jsonl", "line 4", "field 'text'", "lone surrogate \\ud800")),
    Case("lone_surrogate_json", _bytes_file("data.json", b'[{"text": "red", "topic": "a"}, {"text": "\\udc80", "topic": "b"}]'),
         ("data.json", "record 2", "field 'text'", "lone surrogate \\udc80")),
    Case("jsonl_named_parquet", _bytes_file("data.parquet", _GOOD_LINES),
         ("data.parquet", "not a parquet file", "another format")),
    Case("truncated_parquet", _truncated_parquet, ("data.parquet", "not a parquet file", "truncated")),
    Case("truncated_json", _bytes_file("data.json", b'[{"text": "red", "topic": "a"},\n {"text": "blu'),
         ("data.json", "line 2", "invalid JSON", "truncated")),
    Case("truncated_jsonl", _bytes_file("data.jsonl", _GOOD_LINES[:-9]),
         ("data.jsonl", "line 40", "invalid JSON", "truncated")),
    Case("csv_open_quote", _bytes_file("data.csv", b'text,topic\n"red cat,a\nblue dog,b\n'),
         ("data.csv", "cannot read CSV", "EOF inside string")),
    Case("csv_ragged_row", _bytes_file("data.csv", b"text,topic\nred cat,a\nblue,dog,b\n"),
         ("data.csv", "cannot read CSV", "Expected 2 fields in line 3, saw 3")),
    Case("folder_as_data_file", _folder_as_data_file, ("data.jsonl", "is a folder, not a data file")),
    Case("missing_positional_data", _missing_positional_data, ("./data/train.jsonl", "no such file or folder")),
    Case("label_quota_cannot_be_met", _build_with(rows=_one_class_short),
         ("label field 'topic'", "label class 'b' has 1 example", "eval quota of 4", "at most 3 fits")),
    Case("lm_without_tokenizer", _with_model(_copy_without_tokenizer),
         ("broken-lm", "has no tokenizer files", "tokenizer.json", "0 tokens")),
    Case("lm_truncated_weights", _with_model(_copy_with_truncated_weights),
         ("broken-lm/model.safetensors", "the weights file is truncated")),
    Case("lm_query_of_zero_tokens", _with_model(_copy_with_accent_stripping_tokenizer, rows=_lone_accent_query),
         ("example 'data-5'", "field 'query'", "the query '\\u0301' gives 0 tokens")),
    Case("lm_relative_folder_missing", _relative_lm("./models/x"), ("no such folder ./models/x",)),
    Case("lm_hub_id_not_cached_offline", _relative_lm("no-such-org-xyz/tiny-lm"),
         ("'no-such-org-xyz/tiny-lm'", "not in the local Hugging Face cache", "HF_HUB_OFFLINE")),
    Case("max_steps_zero", _build_with("--max-steps", "0"), ("argument --max-steps", "at least 1, got 0")),
    Case("max_steps_negative_score", _score_with("--max-steps", "-3"), ("argument --max-steps", "at least 1, got -3")),
    Case("max_steps_not_a_number", _build_with("--max-steps", "ten"), ("argument --max-steps", "whole number", "'ten'")),
    Case("folds_one", _build_with("--folds", "1"), ("argument --folds", "at least 2, got 1")),
    Case("seed_negative", _score_with("--seed", "-1"), ("argument --seed", "at least 0, got -1")),
    Case("eval_size_zero", _build_with("--eval-size", "0"), ("argument --eval-size", "at least 1, got 0")),
    Case("eval_size_nan", _build_with("--eval-size", "nan"), ("argument --eval-size", "(0, 1)", "nan")),
    Case("demo_n_zero", lambda f: ["demo", "--n", "0", "--out", str(f / "out")], ("argument --n", "at least 1, got 0")),
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
