"""``lsplits ue`` through :func:`lsplits.cli.parser.main`: a bad option is refused in one line before anything is
computed or written (the similarity-matrix functions are replaced by ones that fail if called)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from lsplits.cli.parser import main
from lsplits.uncertainty import matrix, study

GOLD = ["(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))", "(r / run-01 :ARG0 (d / dog))",
        "(s / sleep-01 :ARG0 (c / cat))", "(e / eat-01 :ARG0 (g / girl) :ARG1 (a / apple))"]


class MatrixComputed(Exception):
    """Raised by the spies: a similarity matrix was about to be computed."""


@pytest.fixture
def no_matrices(monkeypatch):
    """Every way the study computes similarities raises instead; returns the calls seen."""
    calls: list[str] = []

    def refuse(name):
        def spy(*args, **kwargs):
            calls.append(name)
            raise MatrixComputed(name)
        return spy

    monkeypatch.setattr(study, "build_matrices", refuse("build_matrices"))
    monkeypatch.setattr(matrix, "build_matrix", refuse("build_matrix"))
    return calls


def write_inputs(folder: Path) -> tuple[Path, Path]:
    beams = folder / "beams.jsonl"
    beams.write_text("".join(json.dumps({"id": f"ex{i}", "candidates": [g, g, GOLD[(i + 1) % len(GOLD)]]}) + "\n"
                             for i, g in enumerate(GOLD)), encoding="utf-8")
    gold = folder / "gold.jsonl"
    gold.write_text("".join(json.dumps({"id": f"ex{i}", "amr": g}) + "\n" for i, g in enumerate(GOLD)),
                    encoding="utf-8")
    return beams, gold


def run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's own refusals exit from inside main
        return int(exc.code)


def ue_argv(folder: Path, *extra: str, systems: bool = False) -> list[str]:
    beams, gold = write_inputs(folder)
    given = ["--system", f"a={beams}", "--system", f"b={beams}"] if systems else [str(beams)]
    return ["ue", *given, "--gold", str(gold), "--out", str(folder / "out"), "--cache-dir", str(folder / "cache"),
            "--similarities", "smatchpp", "--qualities", "smatchpp", "--beam-sizes", "2,3", "--n-bootstrap", "10",
            "--workers", "1", "--no-progress", *extra]


def test_a_good_command_does_reach_the_matrices(tmp_path, no_matrices):
    """The control: with valid options the spies are hit, so the refusals below prove something."""
    with pytest.raises(MatrixComputed):
        main(ue_argv(tmp_path))
    assert no_matrices


@pytest.mark.parametrize("extra, systems, fragments", [
    (["--ecc-threshold", "nan"], False, ["--ecc-threshold must be a number in (0, 2]", "got nan"]),
    (["--confidence", "1"], True, ["--confidence must be a number in (0, 1)", "got 1.0"]),
    (["--estimators", "eigv,nonsense"], False, ["nonsense"]),
    (["--metrics", "roc_auc"], False, ["--metrics: roc_auc needs --bad-below: the quality under which"]),
    (["--normalizer", "platt"], False, ["platt"]),
    (["--lexical-similarities", "smatch"], False, ["--lexical-similarities", "'smatch'"]),
    (["--kle-t", "-1"], True, ["--kle-t must be a number > 0", "got -1.0"]),
    (["--beam-sizes", "0"], False, ["--beam-sizes", "beam sizes must be positive"]),
    (["--metrics", "roc_auc", "--bad-below", "2"], False, ["--bad-below must be a number in (0, 1]", "got 2.0"]),
])
def test_a_bad_option_is_one_line_before_any_matrix_or_file(tmp_path, capsys, no_matrices, extra, systems, fragments):
    argv = ue_argv(tmp_path, *extra, systems=systems)
    capsys.readouterr()
    start = time.perf_counter()
    code = run(argv)
    elapsed = time.perf_counter() - start
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    assert all(fragment in lines[0] for fragment in fragments), lines[0]
    assert no_matrices == []  # nothing was computed ...
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()  # ... or written
    assert elapsed < 5, elapsed  # a refusal, not a study (whose matrices alone take longer)
