"""``lsplits ue``: the whole study on beams built from real gold graphs, its report files and bad input."""

from __future__ import annotations

import csv
import json
import math
from collections import Counter

import numpy as np
import pytest
from amr_edits import build_beams, sample_gold

from lsplits.cli.parser import in_cli_words, parse_args
from lsplits.cli.ue import run as run_ue
from lsplits.errors import ConfigError, DataError, InvalidOption, SimilarityFailure
from lsplits.similarity import registry
from lsplits.similarity.amr.smatchpp_metric import f1, prepare
from lsplits.similarity.registry import Similarity
from lsplits.uncertainty.report import main_table_markdown, write_report
from lsplits.uncertainty.study import choose_beam_sizes, run_study
from lsplits.uncertainty.study_config import StudyConfig

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
    assert study.beam_sizes == (3, 5)  # 8 needs more candidates than the beams hold
    assert study.short_examples == {3: 1, 5: 1}
    assert study.uncertainties[5]["LexSim"].shape == (n,)
    assert study.methods == ("LexSim", "EigV-Smatch++", "DegMat-Smatch++", "Ecc-Smatch++")
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
    argv = ["ue", str(files / "beams.jsonl"), "--gold", str(files / "gold.jsonl"), "--out", str(tmp_path / "out"),
            "--similarities", "test-counting-smatchpp", "--qualities", "smatchpp", "--beam-sizes", "3,5",
            "--n-bootstrap", "50", "--workers", "1", "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    assert run_ue(parse_args(argv)) == 0
    assert "| UE method | PRR (Smatch++) |" in capsys.readouterr().out
    assert CALLS["score"] > 0
    CALLS.clear()
    argv[argv.index("3,5")] = "3"  # another beam size and quality metric: no similarity is recomputed
    argv[argv.index("smatchpp")] = "rougel"
    assert run_ue(parse_args(argv)) == 0
    assert CALLS["score"] == 0
    assert (tmp_path / "out" / "report.md").exists()
    recorded = json.loads((tmp_path / "out" / "settings.json").read_text(encoding="utf-8"))  # the StudyConfig as run
    assert (recorded["beam_sizes"], recorded["qualities"], recorded["n_bootstrap"]) == ([3], ["rougel"], 50)
    assert recorded["confidence"] == StudyConfig.confidence and recorded["estimators"] == list(StudyConfig.estimators)


def test_nan_qualities_are_dropped_with_a_count(files):
    study = run_study([files / "beams.jsonl"], files / "gold.jsonl",
                      small_config(qualities=("test-nan-quality",), n_bootstrap=0, beam_sizes=(3,)))
    top1 = [c[0] for c in study.inputs.candidates]
    negated = sum(":polarity" in text for text in top1)
    assert 0 < negated < len(top1)
    assert study.nan_dropped["test-nan-quality"] == negated
    assert all(row.result.n == len(top1) - negated for row in study.prr)


def test_all_nan_qualities_are_an_error_not_a_traceback(files, monkeypatch):
    always_nan = Similarity("test-all-nan", lambda text: text, lambda a, b: math.nan, symmetric=False)
    monkeypatch.setitem(registry._REGISTERED, always_nan.name, always_nan)
    with pytest.raises(DataError, match="every example's test-all-nan quality is NaN"):
        run_study([files / "beams.jsonl"], files / "gold.jsonl",
                  small_config(qualities=("test-all-nan",), n_bootstrap=0, beam_sizes=(3,)))


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

    with pytest.raises(ConfigError, match="similarities item 0 must be one of .*, got 'nope'"):
        run_study([tmp_path / "none.jsonl"], tmp_path / "none.jsonl", small_config(similarities=("nope",)))


def test_choose_beam_sizes():
    assert choose_beam_sizes((3, 5, 8, 10), 10) == (3, 5, 8, 10)
    assert choose_beam_sizes((3, 5, 8, 10), 6) == (3, 5)
    assert choose_beam_sizes((3, 5, 8, 10), 2) == (2,)


def _write_beams(folder, beams, gold):
    """Beams JSONL and gold JSONL from ``{id: candidates}`` and ``{id: gold graph}``."""
    (folder / "beams.jsonl").write_text("".join(json.dumps({"id": i, "candidates": c}) + "\n"
                                                for i, c in beams.items()), encoding="utf-8")
    (folder / "gold.jsonl").write_text("".join(json.dumps({"id": i, "amr": g}) + "\n" for i, g in gold.items()),
                                       encoding="utf-8")
    return folder / "beams.jsonl", folder / "gold.jsonl"


def _degraded_copies(copies: int):
    """Per real gold graph at levels 0, 1, 3: ``copies`` identical candidates (the degraded graph), and the gold."""
    gold = dict(sample_gold())
    beams = build_beams(list(gold.items()), levels=[0, 1, 3], k=1, seed=3)
    return ({b["id"]: b["candidates"][:1] * copies for b in beams},
            {b["id"]: gold[b["id"].split("@")[0]] for b in beams})


@pytest.mark.parametrize("copies", [3])  # k = 1 is refused before any work (test_ue_degenerate)
def test_estimators_that_cannot_distinguish_examples_are_said_not_bold(copies, tmp_path):
    """Identical candidates everywhere: every estimator is constant, PRR 0 is not 'the best'."""
    beams, gold = _write_beams(tmp_path, *_degraded_copies(copies))
    study = run_study([beams], gold, small_config(beam_sizes=(copies,), n_bootstrap=20))
    assert len(set(study.qualities["smatchpp"])) > 1  # the qualities differ: only the estimators are blind
    rows = [row for row in study.prr if row.k == copies]
    assert len(rows) == 4 and all(row.constant_uncertainty for row in rows)
    assert all(row.result.prr == pytest.approx(0.0, abs=1e-12) for row in rows)
    table = main_table_markdown(study)
    assert "no best marked" in table and "**0.000" not in table
    assert (f"**Note:** at k = {copies} every estimator gives every example the same uncertainty (one candidate "
            "per example, or identical candidates in every example): the estimators cannot distinguish examples"
            ) in table
    assert "| LexSim | 0.000 [0.000, 0.000]† |" in table
    report = write_report(study, tmp_path / "report").read_text(encoding="utf-8")
    assert table in report
    with open(tmp_path / "report" / "prr.csv", encoding="utf-8") as stream:
        assert {row["constant_uncertainty"] for row in csv.DictReader(stream)} == {"True"}


def test_one_constant_estimator_is_marked_and_never_best(tmp_path, monkeypatch):
    # two candidates of different lengths under a length similarity (at most 1/2): the Laplacian's second
    # eigenvalue 2s/(1+s) is below Ecc's threshold 0.9, so Ecc keeps both eigenvectors and is sqrt(k-1) = 1
    # for every example, while DegMat = (1 - s)/2 varies with s
    lengths = Similarity("test-length", lambda text: text, lambda a, b: 1 / (1 + abs(len(a) - len(b))), symmetric=True)
    monkeypatch.setitem(registry._REGISTERED, lengths.name, lengths)
    beams, gold = _degraded_copies(1)
    beams = {example: [c[0], c[0] + " x" * (1 + i % 4)] for i, (example, c) in enumerate(beams.items())}
    files = _write_beams(tmp_path, beams, gold)
    study = run_study([files[0]], files[1], small_config(similarities=("test-length",), beam_sizes=(2,)))
    assert set(study.uncertainties[2]["Ecc-test-length"]) == {1.0}
    constant = {row.method for row in study.prr if row.constant_uncertainty}
    assert constant == {"Ecc-test-length"}
    table = main_table_markdown(study)
    ecc_row = next(line for line in table.splitlines() if line.startswith("| Ecc-test-length |"))
    assert ecc_row.endswith("]† |") and "**" not in ecc_row
    assert "best per column in bold" in table and table.count("**") == 2  # one best among the others
    assert "† constant uncertainty at k = 2: Ecc-test-length give(s) every example the same value" in table


def test_examples_without_a_valid_candidate_get_a_note(tmp_path):
    beams, gold = _degraded_copies(3)
    broken = "(w / want-01 :ARG0 (b / boy)"  # unbalanced: invalid for every graph metric
    first, second = list(beams)[:2]
    beams[first] = [broken] * 3  # identical strings: LexSim says certain, the graph estimators most uncertain
    beams[second] = [broken, broken + " ", broken + "  x"]
    study = run_study(list(_write_beams(tmp_path, beams, gold))[:1], tmp_path / "gold.jsonl",
                      small_config(beam_sizes=(3,), n_bootstrap=0))
    ids = study.inputs.ids
    assert [ids[i] for i in study.all_invalid[3]["smatchpp"]] == [first, second]
    u = study.uncertainties[3]
    assert u["LexSim"][ids.index(first)] == 0.0
    assert u["EigV-Smatch++"][ids.index(first)] == max(u["EigV-Smatch++"]) == 3.0
    table = main_table_markdown(study)
    assert (f"**Note:** 2 example(s) have no valid candidate for Smatch++ at k = 3 (`{first}`, `{second}`): "
            "EigV-Smatch++, DegMat-Smatch++, Ecc-Smatch++ give them the largest uncertainty possible for their "
            "number of candidates (every candidate its own cluster), while LexSim compares the strings and rates "
            "1 of them as certain (identical strings).") in table
    report = write_report(study, tmp_path / "report").read_text(encoding="utf-8")
    assert f"- k=3: 2 example(s) without any valid candidate for Smatch++: `{first}`, `{second}`" in report


def test_examples_invalid_for_every_similarity_get_one_note_not_one_each(tmp_path):
    beams, gold = _degraded_copies(3)
    first = list(beams)[0]
    beams[first] = ["(w / want-01 :ARG0 (b / boy)"] * 3  # invalid for every graph metric
    study = run_study(list(_write_beams(tmp_path, beams, gold))[:1], tmp_path / "gold.jsonl",
                      small_config(similarities=("smatchpp", "sema", "wlk"), beam_sizes=(3,), n_bootstrap=0))
    table = main_table_markdown(study)
    assert table.count("have no valid candidate") == 1
    assert (f"**Note:** 1 example(s) have no valid candidate for Smatch++, SEMA, WLK at k = 3 (`{first}`): EigV, "
            "DegMat, Ecc over those similarities give them the largest uncertainty") in table


def test_positional_pairing_is_said_in_the_report(tmp_path):
    gold = sample_gold()[:3]
    (tmp_path / "beam1.amr").write_text("\n\n".join(g for _, g in reversed(gold)) + "\n", encoding="utf-8")
    (tmp_path / "beam2.amr").write_text("\n\n".join(g for _, g in gold) + "\n", encoding="utf-8")
    (tmp_path / "gold.amr").write_text("\n\n".join(g for _, g in gold) + "\n", encoding="utf-8")
    study = run_study([tmp_path / "beam1.amr", tmp_path / "beam2.amr"], tmp_path / "gold.amr",
                      small_config(beam_sizes=(2,), n_bootstrap=0))
    assert study.inputs.paired_by == "position" and study.inputs.ids == ["0", "1", "2"]
    assert study.inputs.gold == [g for _, g in gold] and study.qualities["smatchpp"][1] == 1.0
    report = write_report(study, tmp_path / "report").read_text(encoding="utf-8")
    assert "- beams and gold paired **by position**: no input has `# ::id` lines" in report


def _ue_args(files, tmp_path, *extra):
    return parse_args(["ue", str(files / "beams.jsonl"), "--gold", str(files / "gold.jsonl"),
                       "--out", str(tmp_path / "out"), "--similarities", "smatchpp", "--qualities", "smatchpp",
                       "--cache-dir", str(tmp_path / "cache"), "--no-progress", *extra])


@pytest.mark.parametrize("extra, message", [
    (["--ecc-threshold", "nan"], "--ecc-threshold must be a number in (0, 2] (eigenvalues of the normalised Laplacian lie in "
                                 "[0, 2]), got nan"),
    (["--max-rejection", "1.5"], "--max-rejection must be a number in (0, 1] (a rejection rate; 1 = the whole curve), got 1.5"),
    (["--max-rejection", "0"], "--max-rejection must be a number in (0, 1] (a rejection rate; 1 = the whole curve), got 0.0"),
    (["--n-bootstrap", "-5"], "--n-bootstrap must be a whole number >= 0 (bootstrap resamples; 0 = no interval), got -5"),
    (["--confidence", "1"], "--confidence must be a number in (0, 1) (for example 0.95), got 1.0"),
    (["--seed", "-1"], "--seed must be a whole number >= 0 (a random seed), got -1"),
])
def test_cli_options_out_of_range_are_refused_before_any_matrix(files, tmp_path, extra, message):
    with pytest.raises(InvalidOption) as error:
        run_ue(_ue_args(files, tmp_path, *extra))
    assert str(in_cli_words(error.value, "ue")) == message  # the command line's words, as main prints them
    assert str(error.value).startswith(extra[0][2:].replace("-", "_") + " must be")  # the library's: the field
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()


def test_missing_input_files_are_refused_before_any_matrix(files, tmp_path):
    args = _ue_args(files, tmp_path)
    args.gold = str(tmp_path / "nope.amr")
    with pytest.raises(DataError, match=r"nope.amr: gold file not found"):
        run_ue(args)
    args = _ue_args(files, tmp_path)
    (tmp_path / "beams-folder").mkdir()
    args.beams = [str(tmp_path / "beams-folder")]
    with pytest.raises(DataError, match=r"the beams must be a file, this is a folder"):
        run_ue(args)
    assert not (tmp_path / "cache").exists()


def test_every_estimator_and_metric_in_the_report(files, tmp_path):
    from lsplits.uncertainty.estimators import ESTIMATORS
    from lsplits.uncertainty.ue_metrics import METRICS, compute_metrics

    config = small_config(estimators=tuple(ESTIMATORS), metrics=METRICS, bad_below=0.8, beam_sizes=(3, 5),
                          lexical_similarities=("rougel", "rouge1_stem", "bleu"), n_bootstrap=50)
    study = run_study([files / "beams.jsonl"], files / "gold.jsonl", config)
    lexical = ["LexSim", "LexSim-ROUGE-1+stem", "LexSim-BLEU"]
    graph = ["EigV", "Ecc", "DegMat", "NumSemSets", "LabelProb", "SemEnt", "LUQ", "KLE"]
    assert list(study.methods) == lexical + [f"{name}-Smatch++" for name in graph]
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


def test_study_arrays_are_read_only(files, tmp_path):
    study = run_study([files / "beams.jsonl"], files / "gold.jsonl",
                      small_config(beam_sizes=(3,), n_bootstrap=0, cache_dir=tmp_path / "cache"))
    arrays = [*study.qualities.values(), *study.invalid_candidates.values(), *study.spearman.values(),
              *(u for per_k in study.uncertainties.values() for u in per_k.values())]
    assert arrays and not any(a.flags.writeable for a in arrays)
    with pytest.raises(ValueError, match="read-only"):
        study.qualities["smatchpp"][0] = 0.0


def _calibration_files(folder, copies: int = 6):
    """A larger calibration set: the fixture's gold graphs at levels 0, 1, 3, ``copies`` times under distinct ids."""
    gold = sample_gold()
    rows = [{"id": f"{b['id']}#{r}", "candidates": b["candidates"], "gold": dict(gold)[b["id"].split("@")[0]]}
            for r in range(copies) for b in build_beams(gold, levels=[0, 1, 3], k=5, seed=10 + r)]
    (folder / "cal_beams.jsonl").write_text("".join(json.dumps({"id": r["id"], "candidates": r["candidates"]})
                                                    + "\n" for r in rows), encoding="utf-8")
    (folder / "cal_gold.jsonl").write_text("".join(json.dumps({"id": r["id"], "amr": r["gold"]}) + "\n"
                                                   for r in rows), encoding="utf-8")
    return folder / "cal_beams.jsonl", folder / "cal_gold.jsonl"


@pytest.mark.slow  # over 10 s in-process: make check leaves it to make test
def test_target_risk_writes_the_selective_table_csv_and_marked_plot(files, tmp_path, capsys):
    from lsplits.uncertainty.selective import calibrate_threshold, selective_risk

    cal_beams, cal_gold = _calibration_files(tmp_path)
    out = tmp_path / "out"
    args = _ue_args(files, tmp_path, "--beam-sizes", "3,5", "--n-bootstrap", "0", "--target-risk", "0.3",
                    "--delta", "0.2", "--calibration", str(cal_beams), "--calibration-gold", str(cal_gold))
    assert run_ue(args) == 0
    printed = capsys.readouterr().out
    assert "Risk-controlled selective prediction" in printed and "held-out coverage" in printed
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Risk-controlled selective prediction" in report and "at most **0.3**" in report
    with open(out / "selective.csv", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    assert [r["method"] for r in rows] == ["LexSim", "EigV-Smatch++", "DegMat-Smatch++", "Ecc-Smatch++"]
    assert {r["k"] for r in rows} == {"5"} and {r["target_risk"] for r in rows} == {"0.3"}
    certified = [r for r in rows if r["certified"] == "True"]
    assert certified  # the simulated beams rank well enough to certify something
    # the CSV holds what the library computes from the study's own arrays
    study = run_study([files / "beams.jsonl"], files / "gold.jsonl",
                      small_config(beam_sizes=(3, 5), n_bootstrap=0, target_risk=0.3, delta=0.2),
                      calibration=([cal_beams], cal_gold))
    calibration = run_study([cal_beams], cal_gold, small_config(beam_sizes=(5,), n_bootstrap=0))
    for row in study.selective:
        q = calibration.qualities["smatchpp"]
        rule = calibrate_threshold(calibration.uncertainties[5][row.method][~np.isnan(q)], q[~np.isnan(q)],
                                   target_risk=0.3, delta=0.2)
        assert (row.rule.threshold, row.rule.certified, row.rule.accepted, row.rule.n) == (
            rule.threshold, rule.certified, rule.accepted, rule.n)
        keep = ~np.isnan(study.qualities["smatchpp"])
        assert (row.coverage, row.risk) == pytest.approx(selective_risk(
            rule, study.uncertainties[5][row.method][keep], study.qualities["smatchpp"][keep]), nan_ok=True)
        assert row.held_out == int(keep.sum())
    for row in rows:
        assert row["certified"] == "False" or float(row["risk_bound"]) <= 0.3
    assert (out / "curves" / "rejection_smatchpp_k5.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow  # over 10 s in-process: make check leaves it to make test
def test_operating_points_are_drawn_on_the_curves(files):
    from lsplits.uncertainty.plots import rejection_figure
    from lsplits.uncertainty.report import _operating_points

    study = run_study([files / "beams.jsonl"], files / "gold.jsonl",
                      small_config(beam_sizes=(5,), n_bootstrap=0, target_risk=0.6, calibration_fraction=0.5))
    rows = [r for r in study.selective if r.quality == "smatchpp"]
    figure = rejection_figure(study.curves[5, "smatchpp"], "Smatch++", "t", decorate=_operating_points(rows))
    axes = figure.axes[0]
    dots = [line for line in axes.get_lines() if line.get_marker() == "o"]
    certified = [r for r in rows if r.rule.certified and not math.isnan(r.risk)]
    assert len(dots) == len(certified)
    for line, row in zip(dots, certified, strict=True):
        assert (line.get_xdata()[0], line.get_ydata()[0]) == pytest.approx((1 - row.coverage, 1 - row.risk))
    # the target quality 1 - 0.6 lies below every curve: said in a corner, not drawn (it would squash them)
    assert not [line for line in axes.get_lines() if list(line.get_ydata()) == [0.4, 0.4]]
    assert any("below the axis" in text.get_text() for text in axes.texts)
    inside = 1 - float(np.mean(study.qualities["smatchpp"])) - 0.01  # between the random line and the oracle's 1
    study = run_study([files / "beams.jsonl"], files / "gold.jsonl",
                      small_config(beam_sizes=(5,), n_bootstrap=0, target_risk=inside, calibration_fraction=0.5))
    rows = [r for r in study.selective if r.quality == "smatchpp"]
    axes = rejection_figure(study.curves[5, "smatchpp"], "Smatch++", "t", decorate=_operating_points(rows)).axes[0]
    assert [line for line in axes.get_lines() if list(line.get_ydata()) == [pytest.approx(1 - inside)] * 2]


def test_calibration_split_is_by_id_and_stated(files):
    study = run_study([files / "beams.jsonl"], files / "gold.jsonl",
                      small_config(beam_sizes=(5,), n_bootstrap=0, target_risk=0.5, calibration_fraction=0.5))
    n = len(study.inputs.ids)
    for row in study.selective:
        assert row.rule.n + row.held_out == n  # no NaN quality here: every example on one side
        assert abs(row.rule.n - n / 2) <= 1
    assert f"a random 0.5 of the {n} examples (seed 0)" in study.selective_source


@pytest.mark.parametrize("extra, error, message", [
    (["--target-risk", "1.2"], InvalidOption, "--target-risk must be a number in (0, 1)"),
    (["--target-risk", "0.2", "--delta", "0"], InvalidOption, "--delta must be a number in (0, 1)"),
    (["--target-risk", "0.2", "--calibration-fraction", "1"], InvalidOption, "--calibration-fraction must be a number in (0, 1)"),
    (["--calibration-fraction", "0.3"], ConfigError, "--calibration-fraction calibrates a selective threshold: give "
                                                     "--target-risk too"),
    (["--target-risk", "0.2", "--calibration", "x.jsonl"], ConfigError, "give the calibration beams and their gold "
                                                                        "together"),
    (["--target-risk", "0.2", "--calibration", "x.jsonl", "--calibration-gold", "g", "--calibration-fraction", "0.3"],
     ConfigError, "use one or the other"),
    (["--target-risk", "0.2", "--calibration", "x.jsonl", "--calibration-gold", "g.jsonl"], DataError,
     "x.jsonl: calibration beams file not found"),
])
def test_selective_options_are_refused_before_any_matrix(files, tmp_path, extra, error, message):
    with pytest.raises(error) as caught:
        run_ue(_ue_args(files, tmp_path, *extra))
    assert message in str(in_cli_words(caught.value, "ue")) and "\n" not in str(caught.value)
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()


def test_a_similarity_that_raises_a_bug_fails_the_study(tmp_path, monkeypatch):
    """A bug in a similarity function is neither an invalid candidate nor a 0: the study stops, naming both."""
    def buggy(a, b):
        return len(a) / (len(b) - len(b))  # ZeroDivisionError for every pair

    broken = Similarity("test-buggy", lambda text: text, buggy, symmetric=True)
    monkeypatch.setitem(registry._REGISTERED, broken.name, broken)
    beams, gold = _degraded_copies(1)
    beams = {example: [c[0], c[0] + " x"] for example, c in beams.items()}  # two distinct candidates each
    files = _write_beams(tmp_path, beams, gold)
    first = next(iter(beams))
    with pytest.raises(SimilarityFailure, match=rf"^example {first}: similarity 'test-buggy' failed to score the "
                                                r"outputs .*: ZeroDivisionError"):
        run_study([files[0]], files[1], small_config(similarities=("test-buggy",), beam_sizes=(2,)))
