"""``lsplits ue`` on inputs that cannot make a finding (issue 38, items 1, 5 and 8): one candidate per example is
refused before any similarity, estimator correlations need enough examples, and an undefined PRR is one line.

Beams are built from the real gold graphs of tests/fixtures/amr_sample.jsonl; which estimators are blind with one
candidate is checked against the estimators themselves, not against the list the study uses.
"""

from __future__ import annotations

import json
import logging
import random
import warnings
from pathlib import Path

import numpy as np
import pytest
from amr_edits import degrade, sample_gold
from amr_helpers import CALLS, COUNTING

from lsplits.cli.parser import parse_args
from lsplits.cli.ue import run as run_ue
from lsplits.errors import ConfigError, DataError
from lsplits.similarity import registry
from lsplits.uncertainty.estimators import estimate_many, estimator_names
from lsplits.uncertainty.methods import needs_several_candidates
from lsplits.uncertainty.prr import UndefinedPRRWarning
from lsplits.uncertainty.report import write_report
from lsplits.uncertainty.study import run_study
from lsplits.uncertainty.study_config import StudyConfig


@pytest.fixture(autouse=True)
def counting_similarity(monkeypatch):
    CALLS.clear()
    monkeypatch.setitem(registry._REGISTERED, COUNTING.name, COUNTING)


def write_beams(folder: Path, k: int, examples: int | None = None, scores: bool = False) -> tuple[Path, Path]:
    """Beams JSONL (k candidates per example: the gold degraded, then further edits; with scores, distinct
    log-probabilities per example) and the gold JSONL of the first ``examples`` real gold graphs."""
    rng = random.Random(7)
    gold = sample_gold()[:examples]
    rows = []
    for i, (example, text) in enumerate(gold):
        top = degrade(text, 1 + i % 3, rng)
        row = {"id": example, "candidates": [top] + [degrade(top, 1 + j, rng) for j in range(k - 1)]}
        if scores:
            row["logprobs"] = [-0.3 * (i + 1) - j for j in range(k)]
        rows.append(row)
    beams, gold_path = folder / "beams.jsonl", folder / "gold.jsonl"
    beams.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    gold_path.write_text("".join(json.dumps({"id": i, "amr": g}) + "\n" for i, g in gold), encoding="utf-8")
    return beams, gold_path


def config(**changes) -> StudyConfig:
    settings = dict(similarities=(COUNTING.name,), qualities=("smatchpp",), beam_sizes=(3, 5), n_bootstrap=20,
                    workers=1, progress=False, cache_dir=None)
    settings.update(changes)
    return StudyConfig(**settings)


def test_estimators_blind_to_one_candidate_are_exactly_those_said():
    """Every estimator evaluated at k = 1 on examples whose own scores differ: constant exactly when
    needs_several_candidates says so (the matrix-only ones and CoCoA), so the refusal below never drops one
    that can still rank examples (MSP and the other gray-box estimators are the top-1's own score)."""
    n = 6
    matrices = [np.ones((1, 1)) for _ in range(n)]
    scores = [{"logprobs": [-0.4 * (i + 1)], "n_tokens": [2 + (i * 5) % 7], "token_entropies": [0.1 + 0.3 * i]}
              for i in range(n)]
    for name in estimator_names():
        values = estimate_many(name, matrices, scores=scores)
        assert (len(set(np.round(values, 12))) == 1) == needs_several_candidates(name), name


def test_one_candidate_per_example_is_refused_before_any_similarity(tmp_path):
    """Today's k = 1 study wrote a report of PRR 0 for every estimator after computing every matrix."""
    beams, gold = write_beams(tmp_path, k=1)
    with pytest.raises(DataError) as error:
        run_study([beams], gold, config())
    message = str(error.value)
    assert message.startswith(f"{beams}: one candidate per example (k = 1)")
    assert "needs at least 2 of them: LexSim, EigV, DegMat, Ecc would give every example the same value" in message
    assert "\n" not in message
    assert CALLS["score"] == 0
    out = tmp_path / "out"
    args = parse_args(["ue", str(beams), "--gold", str(gold), "--out", str(out), "--similarities", COUNTING.name,
                       "--qualities", "smatchpp", "--no-cache", "--no-progress"])
    with pytest.raises(DataError, match="one candidate per example"):
        run_ue(args)
    assert not out.exists() and CALLS["score"] == 0


def test_only_beam_size_one_is_refused_naming_the_option(tmp_path):
    beams, gold = write_beams(tmp_path, k=3)
    with pytest.raises(ConfigError, match=r"beam_sizes.*only k = 1 would be compared.*the beams hold up to 3"):
        run_study([beams], gold, config(beam_sizes=(1,)))
    assert CALLS["score"] == 0


def test_a_gray_box_estimator_still_studies_one_candidate(tmp_path):
    """MSP ranks examples by the top-1's own score, so k = 1 with scores is a study; LexSim beside it is constant."""
    beams, gold = write_beams(tmp_path, k=1, scores=True)
    study = run_study([beams], gold, config(estimators=("lexsim", "msp")))
    constant = {row.method: row.constant_uncertainty for row in study.prr}
    assert constant == {"LexSim": True, "MSP": False}


def test_a_similarity_no_requested_estimator_reads_is_only_checked_not_compared(tmp_path):
    """``--estimators msp`` scores no pair of candidates, and counts the same invalid ones as a full study."""
    beams, gold = write_beams(tmp_path, k=4, examples=6, scores=True)
    rows = [json.loads(line) for line in beams.read_text(encoding="utf-8").splitlines()]
    rows[2]["candidates"][1] = "(x / broken"  # one invalid candidate, so the counts are not all zero
    beams.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    graybox = run_study([beams], gold, config(estimators=("msp",), beam_sizes=(4,)))
    assert CALLS["score"] == 0
    full = run_study([beams], gold, config(estimators=("msp", "eigv"), beam_sizes=(4,)))
    assert CALLS["score"] > 0
    counted = graybox.invalid_candidates[COUNTING.name]
    assert counted.tolist() == full.invalid_candidates[COUNTING.name].tolist() and counted[2] == 1
    assert graybox.all_invalid == full.all_invalid


def test_estimator_correlations_need_five_examples(tmp_path):
    """On 4 examples a Spearman matrix between estimators takes a handful of values; it is not computed."""
    beams, gold = write_beams(tmp_path, k=3, examples=4)
    study = run_study([beams], gold, config(beam_sizes=(3,)))
    assert np.isnan(study.spearman[3]).all()
    report = write_report(study, tmp_path / "report").read_text(encoding="utf-8")
    section = report.split("## Spearman correlation between estimators (k = 3)")[1].split("##")[0]
    assert section.strip() == ("Not computed: 4 example(s), and a rank correlation needs at least 5 points (below "
                               "that even a perfect one is not significant, and rho takes only a few values).")
    beams, gold = write_beams(tmp_path, k=3, examples=5)
    study = run_study([beams], gold, config(beam_sizes=(3,)))
    assert not np.isnan(study.spearman[3][0, 1])


def test_an_undefined_prr_is_one_log_line_not_a_python_warning(tmp_path, caplog):
    """Every top-1 invalid: every quality is 0 and PRR is undefined; said once, without a source line."""
    beams, gold = write_beams(tmp_path, k=3)
    rows = [json.loads(line) for line in beams.read_text(encoding="utf-8").splitlines()]
    beams.write_text("".join(json.dumps({**row, "candidates": ["(w / want-01 :ARG0 (b / boy)"] * 3}) + "\n"
                             for row in rows), encoding="utf-8")
    with warnings.catch_warnings(), caplog.at_level(logging.WARNING, logger="lsplits.uncertainty.study"):
        warnings.simplefilter("error", UndefinedPRRWarning)
        study = run_study([beams], gold, config(beam_sizes=(3,)))
    assert all(np.isnan(row.result.prr) for row in study.prr)
    said = [record.getMessage() for record in caplog.records if "PRR is undefined" in record.getMessage()]
    assert said == [f"smatchpp: PRR is undefined (n/a in the report) for 4 of 4 estimator x beam-size rows: the "
                    f"oracle rejects no better than random (all {len(rows)} examples have the same smatchpp quality, "
                    "0)"]
