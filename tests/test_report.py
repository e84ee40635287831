"""``lsplits ue``: the whole study on beams built from real gold graphs, its report files and bad input."""

from __future__ import annotations

import argparse
import csv
import json
import math
from collections import Counter

import numpy as np
import pytest
from amr_edits import build_beams, sample_gold

from lsplits import similarity as registry
from lsplits.amr.smatchpp_metric import f1, prepare
from lsplits.errors import DataError
from lsplits.similarity import Similarity
from lsplits.uncertainty.render import write_report
from lsplits.uncertainty.report import StudyConfig, add_ue_arguments, choose_beam_sizes, run_study, run_ue

CALLS: Counter = Counter()


def _counted_f1(a, b):
    CALLS["score"] += 1
    return f1(a, b)


def _nan_for_negation(prediction, reference):
    if ":polarity" in prediction:
        return math.nan
    return 1.0 if prediction == reference else 0.5


COUNTING = Similarity("test-counting-smatchpp", prepare, _counted_f1, symmetric=True)
NAN_QUALITY = Similarity("test-nan-quality", lambda text: text, _nan_for_negation, symmetric=False)


@pytest.fixture(autouse=True)
def test_similarities(monkeypatch):
    CALLS.clear()
    for similarity in (COUNTING, NAN_QUALITY):
        monkeypatch.setitem(registry._REGISTERED, similarity.name, similarity)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Beams (JSONL, k = 5, one example with 2) for each real gold graph at levels 0, 1, 3; one broken candidate."""
    folder = tmp_path_factory.mktemp("ue")
    gold = sample_gold()
    beams = build_beams(gold, levels=[0, 1, 3], k=5, seed=1)
    beams[-1]["candidates"][2] = "(w / want-01 :ARG0 (b / boy)"  # unbalanced: invalid for graph metrics
    beams[0]["candidates"] = beams[0]["candidates"][:2]  # k varies between examples
    beams.append({"id": "no-gold", "candidates": ["(a / b)"]})
    (folder / "beams.jsonl").write_text("".join(json.dumps({"id": b["id"], "candidates": b["candidates"]}) + "\n"
                                                for b in beams), encoding="utf-8")
    gold_text = dict(gold)
    (folder / "gold.jsonl").write_text("".join(json.dumps({"id": b["id"], "amr": gold_text[b["id"].split("@")[0]]})
                                               + "\n" for b in beams if b["id"] != "no-gold"), encoding="utf-8")
    return folder


def small_config(**changes) -> StudyConfig:
    settings = dict(similarities=("smatchpp",), qualities=("smatchpp",), beam_sizes=(3, 5, 8), n_bootstrap=100,
                    workers=1, progress=False)
    settings.update(changes)
    return StudyConfig(**settings)


def test_study_on_real_graphs(files):
    study = run_study([files / "beams.jsonl"], files / "gold.jsonl", small_config())
    n = len(sample_gold()) * 3
    assert len(study.inputs.ids) == n and study.inputs.only_in_beams == ["no-gold"]
    assert study.beam_sizes == [3, 5]  # 8 needs more candidates than the beams hold
    assert study.short_examples == {3: 1, 5: 1}
    assert study.uncertainties[5]["LexSim"].shape == (n,)
    assert study.methods == ["LexSim", "EigV-Smatch++", "DegMat-Smatch++", "Ecc-Smatch++"]
    assert int(study.invalid_candidates["smatchpp"].sum()) == 1
    assert study.invalid_candidates["smatchpp"][-1] == 1
    rows = {(r.k, r.method): r.result for r in study.prr}
    assert len(rows) == 2 * 4
    for (_k, method), result in rows.items():
        assert result.prr > 0.5, method  # the known degradation order is found
        assert result.ci_low <= result.prr <= result.ci_high
        assert result.n == n
    assert study.spearman[5].shape == (4, 4)
    assert study.spearman[5][1, 1] == pytest.approx(1.0)


def test_report_files(files, tmp_path):
    study = run_study([files / "beams.jsonl"], files / "gold.jsonl", small_config(qualities=("smatchpp", "rougel")))
    report = write_report(study, tmp_path / "report")
    text = report.read_text(encoding="utf-8")
    assert "| UE method | PRR (Smatch++) | PRR (ROUGE-L) |" in text
    assert "| EigV-Smatch++ |" in text and "### Quality: ROUGE-L" in text
    assert "left out, only in the beams (no gold): 1: `no-gold`" in text
    assert "k=3: 1 example(s) have fewer candidates" in text
    assert "invalid candidates for Smatch++: 1 of 117 (0.85%)" in text
    pngs = sorted(p.name for p in (tmp_path / "report" / "curves").iterdir())
    assert pngs == ["rejection_rougel_k3.png", "rejection_rougel_k5.png",
                    "rejection_smatchpp_k3.png", "rejection_smatchpp_k5.png"]
    assert (tmp_path / "report" / "curves" / pngs[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(tmp_path / "report" / "prr.csv", encoding="utf-8") as stream:
        assert len(list(csv.DictReader(stream))) == 2 * 4 * 2
    with open(tmp_path / "report" / "uncertainties.csv", encoding="utf-8") as stream:
        assert len(list(csv.DictReader(stream))) == 2 * len(study.inputs.ids)


def test_cli_entry_point_and_cache(files, tmp_path, capsys):
    parser = argparse.ArgumentParser()
    add_ue_arguments(parser)
    argv = [str(files / "beams.jsonl"), "--gold", str(files / "gold.jsonl"), "--out", str(tmp_path / "out"),
            "--similarities", "test-counting-smatchpp", "--qualities", "smatchpp", "--beam-sizes", "3,5",
            "--bootstrap", "50", "--workers", "1", "--cache", str(tmp_path / "cache"), "--no-progress"]
    assert run_ue(parser.parse_args(argv)) == 0
    assert "| UE method | PRR (Smatch++) |" in capsys.readouterr().out
    assert CALLS["score"] > 0
    CALLS.clear()
    argv[argv.index("3,5")] = "3"  # another beam size and quality metric: no similarity is recomputed
    argv[argv.index("smatchpp")] = "rougel"
    assert run_ue(parser.parse_args(argv)) == 0
    assert CALLS["score"] == 0
    assert (tmp_path / "out" / "report.md").exists()


def test_nan_qualities_are_dropped_with_a_count(files):
    study = run_study([files / "beams.jsonl"], files / "gold.jsonl",
                      small_config(qualities=("test-nan-quality",), n_bootstrap=0, beam_sizes=(3,)))
    top1 = [c[0] for c in study.inputs.candidates]
    negated = sum(":polarity" in text for text in top1)
    assert 0 < negated < len(top1)
    assert study.nan_dropped["test-nan-quality"] == negated
    assert all(row.result.n == len(top1) - negated for row in study.prr)


def test_malformed_gold_names_the_id_and_the_error(files, tmp_path):
    lines = (files / "gold.jsonl").read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[4])
    broken["amr"] = broken["amr"] + ")"
    lines[4] = json.dumps(broken)
    (tmp_path / "gold.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as error:
        run_study([files / "beams.jsonl"], tmp_path / "gold.jsonl", small_config())
    assert f"{broken['id']}: unexpected ')' after the end of the AMR graph" in str(error.value)


def test_unknown_similarity_fails_before_reading(tmp_path):
    from lsplits.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown similarity"):
        run_study([tmp_path / "none.jsonl"], tmp_path / "none.jsonl", small_config(similarities=("nope",)))


def test_choose_beam_sizes():
    assert choose_beam_sizes((3, 5, 8, 10), 10) == [3, 5, 8, 10]
    assert choose_beam_sizes((3, 5, 8, 10), 6) == [3, 5]
    assert choose_beam_sizes((3, 5, 8, 10), 2) == [2]


def test_every_estimator_and_metric_in_the_report(files, tmp_path):
    from lsplits.uncertainty.estimators import ESTIMATORS
    from lsplits.uncertainty.ue_metrics import METRICS, compute_metrics

    config = small_config(estimators=tuple(ESTIMATORS), metrics=METRICS, bad_below=0.8, beam_sizes=(3, 5),
                          lexical_similarities=("rougel", "rouge1_stem", "bleu"), n_bootstrap=50)
    study = run_study([files / "beams.jsonl"], files / "gold.jsonl", config)
    lexical = ["LexSim", "LexSim-ROUGE-1+stem", "LexSim-BLEU"]
    graph = ["EigV", "Ecc", "DegMat", "NumSemSets", "LabelProb", "SemEnt", "LUQ", "KLE"]
    assert study.methods == lexical + [f"{name}-Smatch++" for name in graph]
    extra = [m for m in METRICS if m != "prr"]
    assert len(study.metrics) == 2 * len(study.methods) * len(extra)
    q = study.qualities["smatchpp"]
    u = study.uncertainties[5]["KLE-Smatch++"]
    values = {row.metric: row.value for row in study.metrics if row.k == 5 and row.method == "KLE-Smatch++"}
    assert values == pytest.approx(compute_metrics(u, q, extra, bad_below=0.8))
    assert values["roc_auc"] > 0.7 and values["kendall"] > 0.3  # the known degradation order, seen by KLE
    # LUQ = DegMat * k / (k - 1) per example (k = its own number of candidates, at most 5)
    sizes = np.array([min(len(c), 5) for c in study.inputs.candidates])
    assert study.uncertainties[5]["LUQ-Smatch++"] == pytest.approx(
        study.uncertainties[5]["DegMat-Smatch++"] * sizes / (sizes - 1))
    report = write_report(study, tmp_path / "report").read_text(encoding="utf-8")
    assert "## Uncertainty-evaluation metrics (k = 5)" in report
    assert "| UE method | PRR ↑ | ROC-AUC ↑ | PR-AUC ↑ | AURC ↓ | E-AURC ↓ | RPP ↓ | Spearman ↑ | Kendall ↑ | ECE ↓ |" in report
    assert "| NumSemSets-Smatch++ |" in report and "quality < 0.8" in report
    with open(tmp_path / "report" / "ue_metrics.csv", encoding="utf-8") as stream:
        assert len(list(csv.DictReader(stream))) == len(study.metrics)
