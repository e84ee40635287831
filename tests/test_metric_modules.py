"""The evaluate modules in metrics/: loading from the repo, real AMR graphs, combine, cards and apps."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import re
from pathlib import Path

import evaluate
import pytest
from amr_edits import build_beams, sample_gold

from lsplits.errors import InvalidOption
from lsplits.similarity.amr.smatchpp_metric import f1, prepare
from lsplits.similarity.lexical import ROUGE_L
from lsplits.uncertainty.estimators import degmat

ROOT = Path(__file__).resolve().parents[1]
MODULES = ("prr", "beam_uncertainty", "amr_similarity", "ue_metrics")


@pytest.fixture(autouse=True)
def from_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # evaluate.load("metrics/prr") is relative to the repository root


@pytest.fixture(scope="module")
def degraded():
    """Beams from the real gold graphs at levels 0, 1, 2, 4 (k = 5), with gold per example."""
    gold = dict(sample_gold())
    beams = build_beams(list(gold.items()), levels=[0, 1, 2, 4], k=5, seed=2)
    return [b["candidates"] for b in beams], [gold[b["id"].split("@")[0]] for b in beams]


def test_the_three_modules_find_the_degradation_order_on_real_graphs(degraded):
    candidates, references = degraded
    similarity = evaluate.load("metrics/amr_similarity", "smatchpp")
    uncertainty = evaluate.load("metrics/beam_uncertainty", "smatchpp")
    prr = evaluate.load("metrics/prr")
    top1 = [c[0] for c in candidates]
    quality = similarity.compute(predictions=top1, references=references)
    scores = quality["smatchpp_scores"]
    assert scores == pytest.approx([f1(prepare(p), prepare(r)) for p, r in zip(top1, references, strict=True)])
    assert quality["smatchpp_invalid_predictions"] == 0
    estimates = uncertainty.compute(candidates=candidates)
    assert set(estimates) == {"lexsim", "eigv", "ecc", "degmat", "invalid_candidates"}
    assert estimates["invalid_candidates"] == [0] * len(candidates)
    # DegMat by hand for the first example: 1 - mean of the symmetric Smatch++ matrix
    first = [prepare(c) for c in candidates[0]]
    k = len(first)
    total = sum(1.0 if i == j else f1(first[i], first[j]) for i in range(k) for j in range(k))
    assert estimates["degmat"][0] == pytest.approx(1 - total / k**2)
    for name in ("lexsim", "eigv", "ecc", "degmat"):
        result = prr.compute(uncertainties=estimates[name], qualities=scores, n_bootstrap=200)
        assert result["prr"] > 0.5, name
        assert result["prr_ci_low"] <= result["prr"] <= result["prr_ci_high"]


def test_beam_uncertainty_default_config_is_rouge_l():
    module = evaluate.load("metrics/beam_uncertainty")
    out = module.compute(candidates=[["a b c", "a b d"], ["x"]], estimators=["lexsim", "degmat"])
    expected = 1 - ROUGE_L.score(ROUGE_L.prepare("a b c"), ROUGE_L.prepare("a b d"))
    assert out["lexsim"] == pytest.approx([expected, 0.0])
    assert out["degmat"] == pytest.approx([degmat([[1, 1 - expected], [1 - expected, 1]]), 0.0])


def test_an_unknown_config_is_refused_at_load():
    with pytest.raises(ValueError, match="metric must be one of .*smatchpp.*, got 'nonexistent'"):
        evaluate.load("metrics/amr_similarity", "nonexistent")
    with pytest.raises(ValueError, match="similarity must be one of .*smatchpp.*, got 'smatchp'"):
        evaluate.load("metrics/beam_uncertainty", "smatchp")
    with pytest.raises(ValueError, match="prr has no configs, got config name 'smatchpp'; load it without one"):
        evaluate.load("metrics/prr", "smatchpp")
    with pytest.raises(ValueError, match="ue_metrics has no configs, got config name 'prr'; load it without one"):
        evaluate.load("metrics/ue_metrics", "prr")


def test_combine_two_metrics():
    combined = evaluate.combine([evaluate.load("metrics/amr_similarity", "smatchpp"),
                                 evaluate.load("metrics/amr_similarity", "rougel")])
    out = combined.compute(predictions=["(w / want-01 :ARG0 (b / boy))"],
                           references=["(w / want-01 :ARG1 (b / boy))"])
    assert out["smatchpp"] == pytest.approx(0.75)
    # tokens w want 01 arg0 b boy vs ... arg1 ...: LCS 5 of 6
    assert out["rougel"] == pytest.approx(5 / 6)
    assert out["smatchpp_invalid_predictions"] == out["rougel_invalid_predictions"] == 0


def test_prr_module_undefined_case_warns():
    module = evaluate.load("metrics/prr")
    with pytest.warns(RuntimeWarning, match="undefined"):
        out = module.compute(uncertainties=[0.1, 0.2], qualities=[0.5, 0.5], n_bootstrap=0)
    assert math.isnan(out["prr"])


def test_prr_module_refuses_options_out_of_range():
    module = evaluate.load("metrics/prr")
    for options, message in (({"confidence": 1.5}, r"confidence must be a number in \(0, 1\)"),
                             ({"confidence": float("nan")}, r"confidence must be a number in \(0, 1\)"),
                             ({"n_bootstrap": -10}, r"n_bootstrap must be a whole number >= 0"),
                             ({"max_rejection": 0.0}, r"max_rejection must be a number in \(0, 1\]")):
        with pytest.raises(InvalidOption, match=message):
            module.compute(uncertainties=[0.1, 0.5, 0.9], qualities=[0.9, 0.5, 0.1], **options)


def test_beam_uncertainty_module_refuses_a_bad_ecc_threshold():
    module = evaluate.load("metrics/beam_uncertainty", "rougel")
    for threshold in (float("nan"), 0.0, 3.0):
        with pytest.raises(InvalidOption, match=r"ecc_threshold must be a number in \(0, 2\]"):
            module.compute(candidates=[["a b", "a c"]], ecc_threshold=threshold)
    assert "error" in load_app("prr").compute("0.1 0.5", "0.9 0.1", -1)  # the Space's form says so too


def test_beam_uncertainty_module_takes_the_library_keywords():
    """The module's keywords and defaults are beam_uncertainty_outputs' (the EstimatorSettings fields' names)."""
    import inspect

    from lsplits.uncertainty.beam import beam_uncertainty_outputs

    module = evaluate.load("metrics/beam_uncertainty", "rougel")
    ours = {n: p.default for n, p in inspect.signature(type(module)._compute).parameters.items() if n != "self"}
    library = {n: p.default for n, p in inspect.signature(beam_uncertainty_outputs).parameters.items()
               if n != "config_name"}
    assert ours == {**library, "candidates": inspect.Parameter.empty}
    out = module.compute(candidates=[["a b", "a c"], ["a b", "a b"]], estimators=["kle"], kle_t=0.5, kle_scale=False)
    assert out["kle"] == beam_uncertainty_outputs([["a b", "a c"], ["a b", "a b"]], "rougel", estimators=["kle"],
                                                  kle_t=0.5, kle_scale=False)["kle"]


@pytest.mark.parametrize("name", MODULES)
def test_card_has_the_hub_header_and_runnable_examples(name):
    folder = ROOT / "metrics" / name
    assert {p.name for p in folder.iterdir() if p.is_file()} >= {f"{name}.py", "README.md", "app.py"}
    card = (folder / "README.md").read_text(encoding="utf-8")
    header = card.split("---")[1]
    for line in ("sdk: gradio", "app_file: app.py", "- evaluate", "- metric"):
        assert line in header
    for section in ("## Metric Description", "## How to Use", "### Inputs", "### Output Values",
                    "## Limitations and Bias", "## Citation"):
        assert section in card
    entries = re.findall(r"^@\w+\{.*?^\}$", evaluate.load(f"metrics/{name}").info.citation, flags=re.S | re.M)
    assert entries and all(entry in card for entry in entries)  # the card cites what the module cites
    for block in re.findall(r"```python\n(.*?)```", card, flags=re.S):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(block, f"{name}/README.md", "exec"), {})  # the card's example, as a reader runs it
        for expected in re.findall(r"print\(.*\)\s*# (\S.*)$", block, flags=re.M):
            shown = expected.split("  (")[0].split(":")[0].strip()
            assert shown in printed.getvalue(), (shown, printed.getvalue())


def load_app(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_app", ROOT / "metrics" / name / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_app_handlers():
    prr_app = load_app("prr")
    assert prr_app.parse_numbers("0.1, 0.5\n0.9") == [0.1, 0.5, 0.9]
    assert prr_app.compute("0.1 0.5 0.9", "0.9 0.5 0.1", 0)["prr"] == pytest.approx(1.0)
    assert "error" in prr_app.compute("1 2", "1", 0)
    beam_app = load_app("beam_uncertainty")
    assert beam_app.compute('[["a b", "a b"], ["a", "b"]]', "rougel")["degmat"] == pytest.approx([0.0, 0.5])
    assert "error" in beam_app.compute("[[1", "rougel")
    amr_app = load_app("amr_similarity")
    assert amr_app.split_graphs("(a / b)\n\n  \n(c / d\n :x e)\n") == ["(a / b)", "(c / d\n :x e)"]
    assert amr_app.compute("(a / b)\n\n(c / d)", "(a / b)\n\n(c / e)", "smatchpp")["smatchpp_scores"] == [1.0, 0.0]
    assert "error" in amr_app.compute("(a / b)", "(x", "smatchpp")


def test_apps_build_their_gradio_pages():
    import gradio as gr

    for name in MODULES:
        assert isinstance(load_app(name).build_demo(), gr.Blocks)


def test_ue_metrics_module_and_app():
    module = evaluate.load("metrics/ue_metrics")
    # no bad_below: every metric but roc_auc and pr_auc; u orders q perfectly
    out = module.compute(uncertainties=[0.1, 0.5, 0.9], qualities=[0.9, 0.5, 0.1])
    assert set(out) == {"prr", "aurc", "e_aurc", "rpp", "spearman", "kendall", "ece"}
    assert out["prr"] == pytest.approx(1.0) and out["e_aurc"] == pytest.approx(0.0) and out["rpp"] == 0.0
    calibrated = module.compute(uncertainties=[0.1, 0.5, 0.9], qualities=[0.9, 0.5, 0.1], metrics=["ece"],
                                calibration_uncertainties=[0.0, 1.0], calibration_qualities=[1.0, 0.0])
    assert calibrated["ece"] == pytest.approx(0.0)  # min-max over [0, 1]: confidences 0.9, 0.5, 0.1 = the qualities
    with pytest.raises(ValueError, match="roc_auc needs bad_below"):
        module.compute(uncertainties=[0.1, 0.5], qualities=[0.9, 0.5], metrics=["roc_auc"])
    app = load_app("ue_metrics")
    shown = app.compute("0.1 0.5 0.9", "0.9 0.5 0.1", ["roc_auc", "kendall"], "0.6", "minmax")
    assert shown == {"roc_auc": 1.0, "kendall": pytest.approx(1.0)}
    assert "error" in app.compute("0.1 0.5", "0.9", ["prr"], "", "minmax")


def test_ue_metrics_selective_threshold_is_the_library_rule():
    from lsplits.uncertainty.selective import calibrate_threshold

    u, q = [0.1, 0.2, 0.3, 0.4] * 50, [1.0, 0.9, 0.5, 0.0] * 50  # selective risks 0, 0.05, 0.2, 0.4
    module = evaluate.load("metrics/ue_metrics")
    out = module.compute(uncertainties=u, qualities=q, metrics=["selective_threshold"], target_risk=0.25, delta=0.1)
    rule = calibrate_threshold(u, q, target_risk=0.25, delta=0.1)
    assert out == {"selective_threshold": 0.3, "selective_bound": pytest.approx(rule.bound),
                   "selective_coverage": 0.75}
    assert 0.2 < out["selective_bound"] <= 0.25
    strict = module.compute(uncertainties=u, qualities=q, metrics=["prr", "selective_threshold"], target_risk=0.01)
    assert strict["selective_threshold"] == -math.inf and strict["selective_coverage"] == 0.0  # nothing certified
    assert "prr" in strict
    with pytest.raises(ValueError, match="selective_threshold needs target_risk"):
        module.compute(uncertainties=u, qualities=q, metrics=["selective_threshold"])
    with pytest.raises(ValueError, match=r"^target_risk must be a number in \(0, 1\)"):
        module.compute(uncertainties=u, qualities=q, metrics=["selective_threshold"], target_risk=1.5)
    shown = load_app("ue_metrics").compute(" ".join(map(str, u)), " ".join(map(str, q)), ["prr"], "", "minmax", "0.25")
    assert shown["selective_threshold"] == 0.3 and shown["selective_coverage"] == 0.75
