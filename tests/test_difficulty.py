"""``lsplits difficulty`` end to end on tiny built folders with tiny models, its resume, and its statistics.

The datasets come from the real ``lsplits build`` (scratch LM, 2 steps) and are read back through
``datasets.load_dataset``; the models are random tiny BERT / T5 configs built here. The tests assert
the pipeline (fields, alignment with the data, card, resume), not accuracy; the statistics are checked
against hand computations and the paper's Table 5.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import datasets
import numpy as np
import pandas as pd
import pytest
from difficulty_fixtures import (
    build_dataset,
    snli_rows,
    spider_rows,
    tiny_classifier,
    tiny_seq2seq,
)

from lsplits.building import additions
from lsplits.cli.parser import main
from lsplits.difficulty import evaluate
from lsplits.difficulty.tasks import canonical_sql

HERE = Path(__file__).resolve().parent
REQUIRED = {"model", "config", "metric", "accuracy", "ci_low", "ci_high", "n", "relative_error_increase"}
TINY = ["--max-steps", "4", "--batch-size", "8", "--evals-per-epoch", "2", "--n-bootstrap", "200", "--no-progress",
        "--dtype", "fp32"]


@pytest.fixture(scope="module")
def snli(tmp_path_factory) -> dict:
    """A built SNLI-format folder (random, ll_split), a tiny BERT, and one finished difficulty run."""
    root = tmp_path_factory.mktemp("difficulty")
    folder = build_dataset(root, "snli", snli_rows())
    model = tiny_classifier(root / "bert", [r["sentence1"] + " " + r["sentence2"] for r in snli_rows()])
    pristine = root / "pristine"
    shutil.copytree(folder, pristine)
    card_before = (folder / "README.md").read_text(encoding="utf-8")
    meta_before = json.loads((folder / "lsplits.json").read_text(encoding="utf-8"))
    report = root / "report"
    assert main(["difficulty", str(folder), "--model", str(model), "--out", str(report), *TINY]) == 0
    return {"root": root, "folder": folder, "model": model, "report": report, "pristine": pristine,
            "card_before": card_before, "meta_before": meta_before}


def result_files(report: Path) -> dict[str, tuple[int, int]]:
    """(inode, mtime) of every config's result.json under REPORT/runs (config name -> stamp)."""
    return {p.parent.name.rsplit("-", 1)[0]: (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in sorted((report / "runs").glob("*/*/result.json"))}


def test_every_option_reaches_the_recorded_settings(snli):
    """--dtype was once dropped on the way to DifficultySettings (every run was ``auto``): each option given is
    what settings.json records."""
    recorded = json.loads((snli["report"] / "settings.json").read_text())
    assert recorded["settings"]["dtype"] == recorded["train"]["dtype"] == "fp32"
    assert recorded["settings"]["n_bootstrap"] == recorded["bootstrap"] == 200
    assert recorded["settings"]["models"] == [str(snli["model"])]
    assert recorded["settings"]["max_steps"] == 4 and recorded["settings"]["batch_size"] == 8
    # issue 38 item 8: "lr": null under settings and 5e-05 at the top; now the rate used, written once
    from lsplits.difficulty.settings import CLASSIFIER_LR

    assert recorded["settings"]["lr"] == CLASSIFIER_LR and "lr" not in recorded and "lr" not in recorded["train"]


def test_report_has_one_object_per_config_with_the_issue_fields(snli):
    rows = json.loads((snli["report"] / "difficulty.json").read_text())
    assert [r["config"] for r in rows] == ["random", "ll_split"]
    for row in rows:
        assert REQUIRED <= set(row)
        assert row["model"] == str(snli["model"]) and row["metric"] == "accuracy"
        assert row["ci_low"] <= row["accuracy"] <= row["ci_high"]
    random, ll = rows
    assert random["relative_error_increase"] is None
    expected = ((1 - ll["accuracy"]) - (1 - random["accuracy"])) / (1 - random["accuracy"])
    assert ll["relative_error_increase"] == pytest.approx(expected)
    for name in ("difficulty.md", "difficulty.png", "buckets.json", "settings.json"):
        assert (snli["report"] / name).stat().st_size > 0
    assert (snli["report"] / "difficulty.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (snli["report"] / "difficulty.md").read_text()
    assert text.count("Each bucket cell reads `78.6 (0.437)`") == 1  # the cell format, explained once
    assert text.index("Each bucket cell reads") < text.index("### ")


def test_predictions_are_aligned_with_the_test_split_read_by_datasets(snli):
    """n and accuracy match the test split that load_dataset returns (ids and gold labels)."""
    rows = {r["config"]: r for r in json.loads((snli["report"] / "difficulty.json").read_text())}
    for config in ("random", "ll_split"):
        split = datasets.load_dataset(str(snli["pristine"]), config)["test"]
        test = split.to_pandas()
        [run] = (snli["report"] / "runs").glob(f"*/{config}-*")
        predictions = pd.read_parquet(run / "predictions.parquet")
        mine = predictions[predictions["split"] == "test"]
        assert rows[config]["n"] == len(test) == len(mine)
        names = split.features["label"].int2str  # the opener gives ClassLabel names, as every reader shows them
        gold = {i: names(int(label)) for i, label in zip(test["id"], test["label"])}
        assert sorted(mine["id"]) == sorted(gold)
        correct = [pred == gold[i] for i, pred in zip(mine["id"], mine["prediction"])]
        assert rows[config]["accuracy"] == pytest.approx(np.mean(correct))
        assert set(mine["prediction"]) <= {"entailment", "neutral", "contradiction"}
        assert not (run / "checkpoint").exists()  # checkpoints are removed once a config is finished


def test_card_gets_the_difficulty_section_and_keeps_the_rest(snli):
    folder = snli["folder"]
    after = (folder / "README.md").read_text(encoding="utf-8")
    section = additions.read_section(after)
    assert section is not None and section.startswith("## Difficulty")
    assert "`ll_split`" in section and "(plots/difficulty.png)" in section
    assert (folder / "plots" / "difficulty.png").is_file()
    before = snli["card_before"]
    assert after.replace(after[after.index(additions.SECTION_START):after.index(additions.SECTION_END)
                               + len(additions.SECTION_END) + 2], "") == before  # everything else byte for byte
    meta = json.loads((folder / "lsplits.json").read_text(encoding="utf-8"))
    changed = ("difficulty", "lsplits_files")
    assert {k: v for k, v in meta.items() if k not in changed} == \
        {k: v for k, v in snli["meta_before"].items() if k not in changed}
    assert meta["lsplits_files"] == sorted([*snli["meta_before"]["lsplits_files"], "plots/difficulty.png"])
    assert [r["config"] for r in meta["difficulty"]["results"]] == ["random", "ll_split"]
    assert datasets.load_dataset(str(folder), "ll_split")["test"].num_rows > 0


def test_rerun_reuses_finished_configs_and_replaces_the_section(snli):
    """Also with ``--dtype auto``: on a CPU, auto is fp32 for a model this small, and runs are keyed by the
    dtype they resolve to, so the fp32 results are reused."""
    before = result_files(snli["report"])
    assert len(before) == 2
    assert main(["difficulty", str(snli["folder"]), "--model", str(snli["model"]), "--out", str(snli["report"]),
                 *TINY, "--dtype", "auto"]) == 0
    assert result_files(snli["report"]) == before
    assert (snli["folder"] / "README.md").read_text(encoding="utf-8").count("## Difficulty") == 1
    recorded = json.loads((snli["report"] / "settings.json").read_text(encoding="utf-8"))
    assert recorded["settings"]["dtype"] == "auto" and list(recorded["dtypes_used"].values()) == ["fp32"]
    assert "Compute dtype: fp32." in (snli["report"] / "difficulty.md").read_text(encoding="utf-8")


def test_buckets_and_projection_are_consistent_with_the_table(snli):
    data = json.loads((snli["report"] / "buckets.json").read_text())
    rows = {r["config"]: r for r in json.loads((snli["report"] / "difficulty.json").read_text())}
    model = str(snli["model"])
    for bucketing in ("query length", "rare words"):
        per_config = data["buckets"][model][bucketing]
        for config, buckets in per_config.items():
            assert sum(b["n"] for b in buckets.values()) == rows[config]["n"]
            assert sum(b["share"] * b["accuracy"] for b in buckets.values()) == pytest.approx(rows[config]["accuracy"])
        projected = data["projections"][model][bucketing]["ll_split"]["projected"]
        reference = per_config["random"]
        if all(name in reference for name in per_config["ll_split"]):
            assert projected == pytest.approx(sum(b["share"] * reference[name]["accuracy"]
                                                  for name, b in per_config["ll_split"].items()))


def test_hub_dataset_gets_a_report_and_no_card_change(snli, tmp_path, monkeypatch, caplog):
    """A Hub repo id is downloaded (redirected here to a copy of the folder) and read as a folder; only REPORT
    is written, the download is not changed."""
    import huggingface_hub

    repo = "org/snli-likelihood"
    downloaded = tmp_path / "hub-snapshot"
    shutil.copytree(snli["pristine"], downloaded)
    asked = []
    monkeypatch.setattr(huggingface_hub, "snapshot_download",
                        lambda repo_id, repo_type, allow_patterns: asked.append((repo_id, repo_type)) or str(downloaded))
    before = {p.name: p.read_bytes() for p in downloaded.iterdir() if p.is_file()}
    finished = result_files(snli["report"])
    report = tmp_path / "report"
    with caplog.at_level("INFO"):
        assert main(["difficulty", repo, "--model", str(snli["model"]), "--out", str(report),
                     "--cache-dir", str(snli["report"] / "runs"), *TINY]) == 0
    assert "is a Hub repo" in caplog.text
    assert {p.name: p.read_bytes() for p in downloaded.iterdir() if p.is_file()} == before
    assert asked == [(repo, "dataset")]
    assert result_files(snli["report"]) == finished  # the same settings and data: nothing retrained
    rows = json.loads((report / "difficulty.json").read_text())
    assert [r["config"] for r in rows] == ["random", "ll_split"]
    assert "# Difficulty of `org/snli-likelihood`" in (report / "difficulty.md").read_text()

def _subprocess_env() -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}


def _run_until(argv: list[str], mode: str, done, timeout: float = 240) -> None:
    """Run ``lsplits ARGV`` in a fresh process that hangs at ``mode``; kill it once ``done()`` holds."""
    process = subprocess.Popen([sys.executable, str(HERE / "difficulty_fixtures.py"), mode, *argv],
                               env=_subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + timeout
        while not done():
            assert process.poll() is None, process.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the run did not reach the kill point"
            time.sleep(0.2)
        time.sleep(0.5)  # it now sleeps inside the hook
    finally:
        process.kill()
        process.wait()


@pytest.mark.slow  # a fresh process (imports torch, transformers, datasets)
@pytest.mark.process
def test_killed_after_the_first_config_resumes_without_retraining_it(snli, tmp_path):
    report = tmp_path / "report"
    argv = ["difficulty", str(snli["pristine"]), "--model", str(snli["model"]), "--out", str(report),
            "--no-card", *TINY]
    _run_until(argv, "after-config", lambda: len(result_files(report)) == 1)
    first = result_files(report)
    assert list(first) == ["random"] and not (report / "difficulty.json").exists()
    assert main(argv) == 0
    after = result_files(report)
    assert set(after) == {"random", "ll_split"}
    assert after["random"] == first["random"]
    rows = json.loads((report / "difficulty.json").read_text())
    assert [r["config"] for r in rows] == ["random", "ll_split"]
    assert additions.read_section((snli["pristine"] / "README.md").read_text(encoding="utf-8")) is None  # --no-card


@pytest.mark.slow  # a fresh process (imports torch, transformers, datasets)
@pytest.mark.process
def test_killed_mid_config_resumes_from_its_checkpoint(snli, tmp_path):
    report = tmp_path / "report"
    argv = ["difficulty", str(snli["pristine"]), "--model", str(snli["model"]), "--out", str(report), "--no-card",
            "--configs", "random", "--max-steps", "6", "--batch-size", "8", "--evals-per-epoch", "3",
            "--n-bootstrap", "0", "--no-progress"]
    _run_until(argv, "after-checkpoint", lambda: any((report / "runs").glob("*/*/checkpoint/state.json")))
    [state] = (report / "runs").glob("*/*/checkpoint/state.json")
    saved = json.loads(state.read_text())
    assert 0 < saved["step"] < 6
    assert main(argv) == 0
    [result] = (report / "runs").glob("*/*/result.json")
    summary = json.loads(result.read_text())
    assert summary["resumed_from"] == saved["step"]
    assert [h["step"] for h in summary["history"]][:len(saved["history"])] == [h["step"] for h in saved["history"]]
    assert summary["history"][-1]["step"] == 6


@pytest.mark.slow  # a fresh process (imports torch, transformers, datasets)
@pytest.mark.process
def test_two_processes_train_the_same_model_as_one(snli, tmp_path):
    """``accelerate launch`` with two gloo processes (CPU): same validation history and predictions."""
    model = tiny_classifier(tmp_path / "bert0", [r["sentence1"] + " " + r["sentence2"] for r in snli_rows()],
                            dropout=0.0)
    common = [str(snli["pristine"]), "--model", str(model), "--configs", "random", "--no-card", *TINY]
    assert main(["difficulty", *common, "--out", str(tmp_path / "one")]) == 0
    env = {**_subprocess_env(), "OMP_NUM_THREADS": "1"}
    launched = subprocess.run(
        [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
         "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
         "--main_process_port", str(29600 + os.getpid() % 1000), "-m", "lsplits", "difficulty", *common,
         "--out", str(tmp_path / "two")], env=env, capture_output=True, text=True, timeout=300)
    assert launched.returncode == 0, launched.stderr[-3000:]
    [one], [two] = ((tmp_path / name / "runs").glob("*/random-*") for name in ("one", "two"))
    summary_one, summary_two = (json.loads((run / "result.json").read_text()) for run in (one, two))
    assert (summary_one["processes"], summary_two["processes"]) == (1, 2)
    assert summary_two["history"] == summary_one["history"]
    columns = ["id", "split", "prediction"]
    pd.testing.assert_frame_equal(pd.read_parquet(two / "predictions.parquet")[columns],
                                  pd.read_parquet(one / "predictions.parquet")[columns])

def test_two_models_give_one_column_each_and_the_split_lm_check(tmp_path):
    """Table 2's shape: the LM that made the split is one of the models, so the gap to it is reported."""
    from lsplits.lm.scratch import ScratchConfig, build_scratch_lm

    texts = [r["sentence1"] + " " + r["sentence2"] for r in snli_rows()]
    build_scratch_lm(texts, tmp_path / "lm", ScratchConfig(vocab_size=300, n_layer=1, n_head=2, n_embd=32))
    split_lm = str(tmp_path / "lm" / "model")
    folder = build_dataset(tmp_path, "snli", snli_rows(), configs=("random", "ll_split_pt"), lm=split_lm)
    bert = str(tiny_classifier(tmp_path / "bert", texts))
    report = tmp_path / "report"
    assert main(["difficulty", str(folder), "--model", bert, "--model", split_lm, "--out", str(report), *TINY]) == 0
    rows = {(r["model"], r["config"]): r for r in json.loads((report / "difficulty.json").read_text())}
    assert set(rows) == {(m, c) for m in (bert, split_lm) for c in ("random", "ll_split_pt")}
    header = (report / "difficulty.md").read_text().split("\n| config |", 1)[1].split("\n", 1)[0]
    assert header.count("(95% CI)") == 4  # two columns per model
    check = json.loads((report / "buckets.json").read_text())["split_lm"]
    assert check["split_lm"] == split_lm and list(check["models"]) == [bert]
    gaps = {c: rows[(bert, c)]["accuracy"] - rows[(split_lm, c)]["accuracy"] for c in ("random", "ll_split_pt")}
    values = check["models"][bert]
    assert values["random"]["gap"] == pytest.approx(gaps["random"]) and values["random"]["change"] is None
    assert values["ll_split_pt"]["gap"] == pytest.approx(gaps["ll_split_pt"])
    assert values["ll_split_pt"]["change"] == pytest.approx(gaps["ll_split_pt"] - gaps["random"])
    assert "Split LM" in additions.read_section((folder / "README.md").read_text(encoding="utf-8"))

def test_spider_trains_a_seq2seq_model_with_exact_match_hardness_and_projection(tmp_path):
    folder = build_dataset(tmp_path, "spider", spider_rows())
    rows = spider_rows()
    model = tiny_seq2seq(tmp_path / "t5", [r["question"] + " | music" for r in rows]
                         + [canonical_sql(r["query"]) for r in rows])
    report = tmp_path / "report"
    assert main(["difficulty", str(folder), "--model", str(model), "--out", str(report), "--max-length", "32",
                 *TINY]) == 0
    result = {r["config"]: r for r in json.loads((report / "difficulty.json").read_text())}
    assert {r["metric"] for r in result.values()} == {"exact_match"}
    test = datasets.load_dataset(str(folder), "ll_split")["test"].to_pandas()
    assert result["ll_split"]["n"] == len(test)
    data = json.loads((report / "buckets.json").read_text())
    buckets = data["buckets"][str(model)]
    assert set(buckets) == {"query length", "rare words", "SQL hardness", "novel compounds"}
    hardness = buckets["SQL hardness"]["ll_split"]
    assert sum(b["n"] for b in hardness.values()) == len(test)
    assert {name: b["n"] for name, b in hardness.items()} == test["hardness"].value_counts().to_dict()
    assert "projected" in data["projections"][str(model)]["SQL hardness"]["ll_split"]
    assert additions.read_section((folder / "README.md").read_text(encoding="utf-8")).startswith("## Difficulty")


# --- statistics, by hand ------------------------------------------------------------------------------


def test_relative_error_increase_by_hand():
    random = [1] * 8 + [0] * 2  # error 0.2
    harder = [1] * 6 + [0] * 4  # error 0.4
    easier = [1] * 9 + [0] * 1  # error 0.1
    assert evaluate.relative_error_increase(harder, random, n_bootstrap=0).value == pytest.approx(1.0)
    assert evaluate.relative_error_increase(easier, random, n_bootstrap=0).value == pytest.approx(-0.5)
    interval = evaluate.relative_error_increase(harder * 50, random * 50, n_bootstrap=2000, seed=1)
    assert interval.low < 1.0 < interval.high and interval.low > 0
    assert evaluate.direction(interval) == evaluate.HARDER
    assert evaluate.direction(evaluate.relative_error_increase(easier * 50, random * 50)) == evaluate.EASIER
    assert evaluate.direction(evaluate.relative_error_increase(harder, random)) == evaluate.UNCLEAR
    assert evaluate.relative_error_increase(harder, [1] * 10).value is None


def test_bootstrap_accuracy_interval():
    assert evaluate.bootstrap_accuracy([1] * 20).to_dict() == {"value": 1.0, "low": 1.0, "high": 1.0, "n": 20}
    interval = evaluate.bootstrap_accuracy([1, 0] * 200, n_bootstrap=2000)
    # binomial standard error sqrt(.25/400) = .025: the 95% interval is about +-0.049 around 0.5
    assert interval.value == 0.5
    assert interval.low == pytest.approx(0.451, abs=0.012) and interval.high == pytest.approx(0.549, abs=0.012)


def test_projection_reproduces_table_5_of_the_paper():
    random = {"easy": 0.923, "medium": 0.823, "hard": 0.784, "extra": 0.629}
    ll_split_pt = {"easy": 0.077, "medium": 0.435, "hard": 0.233, "extra": 0.254}
    assert evaluate.projected_accuracy(random, ll_split_pt) == pytest.approx(0.7715, abs=1e-4)  # paper: 77.15%
    assert evaluate.projected_accuracy({"easy": 0.9}, {"easy": 0.5, "hard": 0.5}) is None


def test_buckets_and_projection_from_correctness_by_hand():
    correct = [1, 1, 0, 1, 0, 0]
    labels = ["easy", "easy", "hard", "easy", "hard", "hard"]
    stats = evaluate.bucket_accuracy(correct, labels, order=["easy", "medium", "hard"])
    assert list(stats) == ["easy", "hard"]
    assert stats["easy"].accuracy == 1.0 and stats["hard"].accuracy == 0.0 and stats["hard"].share == 0.5
    other = evaluate.bucket_accuracy([1, 0, 0, 0], ["easy", "hard", "hard", "hard"])
    assert evaluate.projected_accuracy(stats, other) == pytest.approx(0.25 * 1.0 + 0.75 * 0.0)


def test_gap_to_the_split_lm_by_hand():
    gap, change = evaluate.gap_change([1, 1, 0, 0], [1, 0, 0, 0], [1] * 8 + [0] * 2, [1] * 7 + [0] * 3,
                                      n_bootstrap=0)
    assert gap == pytest.approx(0.25) and change.value == pytest.approx(0.25 - 0.1)


def test_length_buckets():
    edges = evaluate.length_edges([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14])
    labels = evaluate.length_labels([3, 14, 6, 7], edges)
    assert edges == [3, 6, 9, 12]
    assert labels == ["3-5", "12+", "6-8", "6-8"]
    assert evaluate.length_order(edges) == ["3-5", "6-8", "9-11", "12+"]


def test_canonical_sql_ignores_case_spacing_and_semicolons():
    assert canonical_sql("SELECT count(*) FROM singer ;") == canonical_sql("select count ( * ) from  Singer")
    assert canonical_sql("SELECT name FROM singer") != canonical_sql("SELECT age FROM singer")
    assert canonical_sql("") == ""


def test_card_section_is_inserted_once_and_replaced_in_place():
    text = "---\nconfigs: []\n---\n\n# Data\n\n## How to load\n\ncode\n"
    once = additions.replace_section(text, "## Difficulty\n\nfirst")
    assert once.startswith("---\nconfigs: []\n---\n\n# Data\n\n" + additions.SECTION_START)
    assert once.endswith("## How to load\n\ncode\n")
    twice = additions.replace_section(once, "## Difficulty\n\nsecond")
    assert additions.read_section(twice) == "## Difficulty\n\nsecond" and twice.count(additions.SECTION_START) == 1
    assert twice.replace("second", "first") == once
    assert additions.read_section(text) is None


def test_a_model_that_answers_everything_the_same_is_flagged():
    """BoolQ with too little training gave 'True' for every example: the report must say it learnt nothing."""
    from lsplits.difficulty.report import direction_lines
    from lsplits.difficulty.summary import DifficultySummary, constant_prediction

    same = pd.DataFrame({"id": ["a", "b", "c"], "split": ["test"] * 3, "gold": [True, False, True],
                         "prediction": [True, True, True]})
    assert constant_prediction(same) is True
    assert constant_prediction(same.assign(prediction=[True, False, True])) is None
    assert constant_prediction(same.iloc[:1]) is None  # one example says nothing

    def row(config, constant, rei):
        return {"model": "m", "config": config, "metric": "accuracy", "accuracy": 0.5, "ci_low": 0.4, "ci_high": 0.6,
                "n": 3, "relative_error_increase": rei, "relative_error_increase_ci_low": None if rei is None else -0.1,
                "relative_error_increase_ci_high": None if rei is None else 0.1,
                "direction": None if rei is None else "not distinguishable", "constant_prediction": constant}
    summary = DifficultySummary(dataset="d", task="t", metric="accuracy", models=["m"], configs=["random", "ll_split"],
                                rows=[row("random", True, None), row("ll_split", None, 0.0)], buckets={},
                                bucket_orders={}, projections={}, split_lm=None)
    warnings = [line for line in direction_lines(summary) if "Warning" in line]
    assert len(warnings) == 1 and "(True)" in warnings[0] and "`random`" in warnings[0]
    assert "`ll_split`" not in warnings[0]


def _constant_prediction_warnings(test_predictions: list[str], validation_predictions: list[str], caplog) -> list[str]:
    """The warnings summarise logs for one model on ``random`` with these predictions (gold alternates)."""
    from lsplits.difficulty.summary import summarise
    from lsplits.difficulty.tasks import CLASSIFICATION, TaskKind
    from lsplits.difficulty.train import ConfigRun

    def split(name: str, n: int) -> pd.DataFrame:
        return pd.DataFrame({"id": [f"{name}{i}" for i in range(n)], "premise": ["A dog runs."] * n,
                             "hypothesis": ["An animal moves."] * n, "label": ["entailment", "neutral"] * (n // 2)})

    frames = {"random": {"train": split("train", 4), "validation": split("validation", len(validation_predictions)),
                         "test": split("test", len(test_predictions))}}
    predictions = pd.concat([frames["random"][name].assign(split=name, prediction=answers)
                             for name, answers in (("validation", validation_predictions), ("test", test_predictions))])
    predictions = predictions.assign(gold=predictions["label"], correct=predictions["label"] == predictions["prediction"])
    run = ConfigRun("m", "random", predictions[["id", "split", "gold", "prediction", "correct"]], {}, Path("."))
    kind = TaskKind(CLASSIFICATION, ("premise", "hypothesis"), "label", "hypothesis")
    with caplog.at_level("WARNING", logger="lsplits.difficulty.summary"):
        summary = summarise("d", kind, "snli", frames, {("m", "random"): run}, ["m"], ["random"], n_bootstrap=50)
    assert summary.rows[0]["n"] == len(test_predictions)
    return [r.getMessage() for r in caplog.records if "for every one of" in r.getMessage()]


def test_the_constant_prediction_warning_counts_the_test_examples_the_table_counts(caplog):
    """Issue 38 item 8: it said '79 eval examples' beside the table's n=39 (test); it looks at test only."""
    warned = _constant_prediction_warnings(["entailment"] * 6, ["entailment", "neutral", "neutral", "entailment"], caplog)
    assert len(warned) == 1 and "'entailment' for every one of the 6 test examples of random" in warned[0]
    caplog.clear()
    assert _constant_prediction_warnings(["entailment", "neutral"] * 3, ["neutral"] * 4, caplog) == []


def test_build_difficulty_rebuild_analyze_difficulty_push_chain(tmp_path, hub_api, online, monkeypatch, capsys):
    """Issue 18 item 1: every file a command writes into the folder is lsplits', so the whole chain runs."""
    import huggingface_hub

    folder = build_dataset(tmp_path, "snli", snli_rows())
    model = tiny_classifier(tmp_path / "bert", [r["sentence1"] + " " + r["sentence2"] for r in snli_rows()])
    difficulty = ["difficulty", str(folder), "--model", str(model), "--out", str(tmp_path / "report"), *TINY]
    assert main(difficulty) == 0
    assert (folder / "plots" / "difficulty.png").is_file()
    assert "plots/difficulty.png" in json.loads((folder / "lsplits.json").read_text())["lsplits_files"]
    def test_ids():
        return sorted(pd.concat(map(pd.read_parquet, folder.glob("ll_split/test*.parquet")))["id"])

    first_ids = test_ids()
    rebuild = ["build", "snli", "--data-files", str(tmp_path / "snli.jsonl"), "--lm", "scratch", "--max-steps", "2",
               "--configs", "random", "ll_split", "--eval-size", "16", "--out", str(folder),
               "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--seed", "7"]
    assert main(rebuild) == 0, capsys.readouterr().err
    assert test_ids() != first_ids  # really rebuilt, with another seed
    assert not (folder / "plots" / "difficulty.png").exists()  # the rebuild replaced the folder as a whole
    assert main(["analyze", str(folder)]) == 0
    assert main(difficulty) == 0  # the same report folder: lsplits' own, resumed and rewritten
    capsys.readouterr()
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: "hf_good")
    hub_api.valid_tokens = {"hf_good"}
    assert main(["push", str(folder), "org/snli-likelihood"]) == 0, capsys.readouterr().err
    _, repo, sent, _ = next(call for call in hub_api.calls if call[0] == "create_commit")
    on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert repo == "org/snli-likelihood" and set(sent) == on_disk and "plots/difficulty.png" in sent
    (folder / "notes.txt").write_text("mine")  # a file the user adds is still protected
    assert main(rebuild) == 2
    assert "files that lsplits did not write (notes.txt)" in capsys.readouterr().err


def test_difficulty_refuses_to_overwrite_a_figure_it_did_not_write(snli, tmp_path, capsys):
    """A plots/difficulty.png the user put into the folder is refused before any training."""
    folder = tmp_path / "built"
    shutil.copytree(snli["pristine"], folder)
    (folder / "plots" / "difficulty.png").write_bytes(b"the user's own figure")
    out = tmp_path / "report"
    assert main(["difficulty", str(folder), "--model", str(snli["model"]), "--out", str(out), *TINY]) == 2
    assert ("the dataset folder " + str(folder) + ": plots/difficulty.png exists and lsplits did not write it"
            ) in capsys.readouterr().err
    assert not out.exists() and (folder / "plots" / "difficulty.png").read_bytes() == b"the user's own figure"


def test_report_says_why_the_error_column_is_empty_and_flags_projections_on_thin_buckets():
    from lsplits.difficulty.evaluate import BucketStat
    from lsplits.difficulty.report import direction_lines, projection_lines
    from lsplits.difficulty.summary import DifficultySummary, _projections

    def row(config):
        return {"model": "m", "config": config, "metric": "accuracy", "accuracy": 0.8, "n": 50,
                "relative_error_increase": None, "direction": None, "constant_prediction": None}
    no_random = DifficultySummary(dataset="d", task="t", metric="accuracy", models=["m"], configs=["ll_split"],
                                  rows=[row("ll_split")], buckets={}, bucket_orders={}, projections={}, split_lm=None)
    [line] = direction_lines(no_random)
    assert "error-vs-random column is empty: no `random` config was evaluated" in line
    assert "--configs random ll_split" in line
    buckets = {"length": {"random": {"1-10": BucketStat(0.9, 46, 0.92), "41+": BucketStat(0.25, 4, 0.08)},
                          "ll_split": {"1-10": BucketStat(0.8, 30, 0.6), "41+": BucketStat(0.3, 20, 0.4)}}}
    projections = _projections(buckets, ["random", "ll_split"])
    assert projections["length"]["ll_split"]["thin_buckets"] == {"41+": 4}
    assert projections["length"]["ll_split"]["projected"] == pytest.approx(0.6 * 0.9 + 0.4 * 0.25)
    summary = DifficultySummary(dataset="d", task="t", metric="accuracy", models=["m"], configs=["random", "ll_split"],
                                rows=[row("random"), {**row("ll_split"), "accuracy": 0.6}], buckets=buckets,
                                bucket_orders={}, projections={"m": projections}, split_lm=None)
    [text] = projection_lines(summary, "m")
    assert text.endswith("Caveat: it rests on `random` buckets of fewer than 20 test examples (41+: 4), whose "
                         "accuracy is noisy.")


def test_rows_carry_the_chance_line_of_the_figure(snli):
    """difficulty.png draws each config's majority-label accuracy (chance) and `random` as the reference."""
    rows = json.loads((snli["report"] / "difficulty.json").read_text())
    for row in rows:
        test = datasets.load_dataset(str(snli["pristine"]), row["config"])["test"].to_pandas()
        assert row["majority_baseline"] == pytest.approx(test["label"].value_counts(normalize=True).max())
