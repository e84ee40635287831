"""``lsplits ue --target-risk`` with the procedures and the 0/1 loss, and what the report says when nothing is
certified: how many calibration examples the target would need, or that the calibration part is too small."""

from __future__ import annotations

import csv
import json
import logging

import pytest
from amr_edits import build_beams, sample_gold

from lsplits.cli.parser import parse_args
from lsplits.cli.ue import run as run_ue
from lsplits.errors import InvalidOption
from lsplits.uncertainty.bounds import smallest_certifiable
from lsplits.uncertainty.report import write_report
from lsplits.uncertainty.study import run_study
from lsplits.uncertainty.study_config import StudyConfig


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """144 examples: the 8 real gold graphs at edit levels 0, 1, 3, six times under distinct ids (k = 5)."""
    folder = tmp_path_factory.mktemp("selective_ue")
    gold = dict(sample_gold())
    rows = [{"id": f"{b['id']}#{r}", "candidates": b["candidates"], "amr": gold[b["id"].split("@")[0]]}
            for r in range(6) for b in build_beams(sample_gold(), levels=[0, 1, 3], k=5, seed=20 + r)]
    (folder / "beams.jsonl").write_text("".join(json.dumps({"id": r["id"], "candidates": r["candidates"]}) + "\n"
                                                for r in rows), encoding="utf-8")
    (folder / "gold.jsonl").write_text("".join(json.dumps({"id": r["id"], "amr": r["amr"]}) + "\n" for r in rows),
                                       encoding="utf-8")
    return folder


def _config(**changes) -> StudyConfig:
    settings = dict(similarities=("smatchpp",), qualities=("smatchpp",), beam_sizes=(5,), n_bootstrap=0, workers=1,
                    progress=False, estimators=("degmat", "eigv"))
    settings.update(changes)
    return StudyConfig(**settings)


def test_nothing_certified_says_how_many_calibration_examples_the_target_needs(files, tmp_path):
    # target 0.05: one test needs 48 all-correct examples, so the sequence starts at 96 kept, more than the 72
    study = run_study([files / "beams.jsonl"], files / "gold.jsonl", _config(target_risk=0.05))
    assert study.selective and not any(row.rule.certified for row in study.selective)
    for row in study.selective:
        assert row.needed is None or row.needed > row.rule.n
    write_report(study, tmp_path / "out")
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    line = next(text for text in report.splitlines() if "rows certify nothing" in text)
    sizes = [row.needed for row in study.selective if row.needed is not None]
    assert sizes and f"**{len(study.selective)} of {len(study.selective)} rows certify nothing**" in line
    assert f"would need about {min(sizes):,} calibration examples like these (you have {study.selective[0].rule.n}" \
        in line
    assert "| calib. n needed |" in report
    with open(tmp_path / "out" / "selective.csv", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    assert [r["calibration_n_needed"] for r in rows] == ["" if r.needed is None else str(r.needed)
                                                         for r in study.selective]


def test_a_tiny_calibration_part_is_said_before_the_matrices_and_in_the_report(files, tmp_path, caplog):
    config = _config(target_risk=0.1, calibration_fraction=0.01)  # 1 of 144 examples calibrates
    with caplog.at_level(logging.WARNING, logger="lsplits"):
        study = run_study([files / "beams.jsonl"], files / "gold.jsonl", config)
    need = smallest_certifiable("ltt-wsr", 0.1, 0.1, 10_000)
    expected = (f"the calibration part has 1 example(s), and at delta 0.1 certifying a selective risk of 0.1 takes at "
                f"least {need} (ltt-wsr, every kept output right): nothing can be certified")
    warned = [r.getMessage() for r in caplog.records if "calibration part" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith(expected)
    write_report(study, tmp_path / "out")
    assert f"**Nothing can be certified:** {expected}" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")


def test_ue_takes_the_procedure_and_the_bad_rate_loss(files, tmp_path):
    args = parse_args(["ue", str(files / "beams.jsonl"), "--gold", str(files / "gold.jsonl"), "--out",
                       str(tmp_path / "out"), "--similarities", "smatchpp", "--qualities", "smatchpp",
                       "--estimators", "degmat", "--beam-sizes", "5", "--no-progress", "--cache-dir",
                       str(tmp_path / "cache"), "--n-bootstrap", "0", "--target-risk", "0.3", "--multiple-testing",
                       "holm", "--selective-loss", "bad", "--bad-below", "0.9"])
    assert run_ue(args) == 0
    with open(tmp_path / "out" / "selective.csv", encoding="utf-8") as stream:
        [row] = list(csv.DictReader(stream))
    assert (row["multiple_testing"], row["bound_method"]) == ("holm", "ltt-binomial")  # 0/1 losses: exact test
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "the rate of bad outputs, quality < 0.9" in report and "Holm's step-down" in report


def test_the_bad_rate_loss_needs_bad_below(files, tmp_path):
    args = parse_args(["ue", str(files / "beams.jsonl"), "--gold", str(files / "gold.jsonl"), "--out",
                       str(tmp_path / "out"), "--similarities", "smatchpp", "--qualities", "smatchpp", "--no-progress",
                       "--cache-dir", str(tmp_path / "cache"), "--target-risk", "0.3", "--selective-loss", "bad"])
    with pytest.raises(InvalidOption) as caught:
        run_ue(args)
    assert "needs bad_below" in str(caught.value) or "needs --bad-below" in str(caught.value)
    assert "\n" not in str(caught.value) and not (tmp_path / "cache").exists()
