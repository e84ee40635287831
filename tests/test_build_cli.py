"""End to end through the CLI: a user's own JSONL file -> scratch LM in k folds -> Hub-layout folder."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import datasets
import numpy as np
import pytest

from lsplits.building.demo import DEMO_CONFIGS, DemoSettings, run_demo
from lsplits.cli.parser import COMMANDS, main
from lsplits.lm.training import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
WORDS = ["red", "blue", "cat", "dog", "runs", "sleeps", "big", "small", "house", "tree"]


@pytest.fixture(scope="module")
def user_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "some.jsonl"
    rows = []
    for i in range(60):
        words = [WORDS[(i * k + k) % len(WORDS)] for k in range(1, 3 + i % 7)]
        rows.append({"text": " ".join(words), "topic": ["a", "b"][i % 2]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def built(user_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("out") / "my-split"
    cache = tmp_path_factory.mktemp("cache")
    code = main(["build", "--data-files", str(user_file), "--query-field", "text", "--label-field", "topic",
                 "--lm", "scratch", "--out", str(out), "--eval-size", "12", "--max-steps", "4",
                 "--cache-dir", str(cache), "--no-progress"])
    assert code == 0
    return out


def test_user_file_build_opens_with_load_dataset(built):
    assert set(datasets.get_dataset_config_names(str(built))) == {
        "ll_split", "ll_split_len", "ll_split_reverse", "ll_split_len_reverse", "random"}
    ds = datasets.load_dataset(str(built), "ll_split")
    ids = list(ds["train"]["id"]) + list(ds["validation"]["id"]) + list(ds["test"]["id"])
    assert sorted(ids) == sorted(f"some-{i}" for i in range(60))
    assert (ds["validation"].num_rows, ds["test"].num_rows) == (6, 6)
    assert {"text", "topic", "ll_score", "ll_tokens", "length", "source_split"} <= set(ds["train"].column_names)
    topic = ds["train"].features["topic"]  # a text label is a ClassLabel, names sorted
    assert topic == datasets.ClassLabel(names=["a", "b"])
    eval_topics = topic.int2str(list(ds["validation"]["topic"]) + list(ds["test"]["topic"]))
    assert eval_topics.count("a") == eval_topics.count("b") == 6


def test_eval_is_least_likely_within_each_label(built):
    ds = datasets.load_dataset(str(built), "ll_split")
    for topic in (0, 1):  # ClassLabel ids of "a", "b"
        train = [s for s, t in zip(list(ds["train"]["ll_score"]), list(ds["train"]["topic"])) if t == topic]
        evals = [s for split in ("validation", "test")
                 for s, t in zip(list(ds[split]["ll_score"]), list(ds[split]["topic"])) if t == topic]
        assert max(evals) <= min(train)


def test_card_and_metadata_written(built):
    card = (built / "README.md").read_text()
    assert "config_name: ll_split_len" in card and "## Statistics" in card
    assert "Not built: `ll_split_pt` (needs a pretrained LM" in card
    assert (built / "plots" / "ll_split_score_vs_length.png").stat().st_size > 1000
    meta = json.loads((built / "lsplits.json").read_text())
    assert meta["task"]["query_field"] == "text" and meta["skipped"]["ll_split_pt"].startswith("needs a pretrained LM")


def test_analyze_prints_statistics(built, capsys):
    assert main(["analyze", str(built), "--configs", "ll_split"]) == 0
    out = capsys.readouterr().out
    assert "== ll_split ==" in out and "train" in out


def test_same_seed_gives_identical_ids_and_the_build_logs_its_stages(user_file, built, tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="lsplits.runtime.stages")
    again = tmp_path / "again"
    assert main(["build", "--data-files", str(user_file), "--query-field", "text", "--label-field", "topic",
                 "--lm", "scratch", "--out", str(again), "--eval-size", "12", "--max-steps", "4",
                 "--cache-dir", str(tmp_path / "fresh-cache"), "--no-progress", "--configs", "ll_split"]) == 0
    for split in ("train", "validation", "test"):
        first = list(datasets.load_dataset(str(built), "ll_split")[split]["id"])
        second = list(datasets.load_dataset(str(again), "ll_split")[split]["id"])
        assert first == second
    stages = [r.stage_time for r in caplog.records if hasattr(r, "stage_time")]
    assert {t.name for t in stages} == {"load", "type unification", "tokenizer", "folds", "scoring", "split",
                                       "export", "card and plots"}  # what benchmarks/build_scale.py reports
    assert sum(t.name == "folds" for t in stages) == 3 and all(t.seconds >= 0 and t.peak_rss > 0 for t in stages)


@pytest.mark.process
def test_clear_errors_without_traceback(user_file, tmp_path):
    cases = [
        (["--query-field", "missing"], "field 'missing'"),
        (["--query-field", "text", "--eval-size", "60"], "eval size"),
    ]
    for extra, message in cases:
        result = subprocess.run([sys.executable, "-m", "lsplits", "build", "--data-files", str(user_file),
                                 "--lm", "scratch", "--out", str(tmp_path / "x"), *extra],
                                capture_output=True, text=True, env={"HF_HUB_OFFLINE": "1", "PATH": ""})
        assert result.returncode == 2
        assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.process
def test_help_lists_exactly_the_registered_commands_and_each_has_help(capsys):
    result = subprocess.run([sys.executable, "-m", "lsplits", "--help"], capture_output=True, text=True,
                            env={"HF_HUB_OFFLINE": "1", "PATH": "", "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0
    section = result.stdout.split("positional arguments:")[1].split("options:")[0]
    listed = re.findall(r"^    (\S+)", section, flags=re.MULTILINE)  # one command per line, then its help
    assert listed == [command.name for command in COMMANDS]
    for command in COMMANDS:
        with pytest.raises(SystemExit) as done:
            main([command.name, "--help"])
        assert done.value.code == 0, command.name
        assert capsys.readouterr().out.startswith(f"usage: lsplits {command.name}")


def test_small_demo_meets_the_acceptance_properties(tmp_path, capsys):
    summary = run_demo(tmp_path / "demo-likelihood", DemoSettings(n=240), cache_dir=tmp_path / "cache", progress=False,
                       train_config=TrainConfig.scratch(max_steps=20), scratch_steps=4)
    assert capsys.readouterr().out == ""  # the library returns the summary; `lsplits demo` prints it
    text = summary.render()
    assert set(summary.rare_ratio) == set(DEMO_CONFIGS) and str(summary.out) in text
    for name, ratio in summary.rare_ratio.items():
        assert f"{name}: planted rare words are {ratio:.2f}x as frequent in eval as in train" in text
    assert "rare-word share" in text.splitlines()[0] and len(text.splitlines()) > len(summary.table)
    ds = datasets.load_dataset(str(summary.out), "ll_split_len")
    ids = list(ds["train"]["id"]) + list(ds["validation"]["id"]) + list(ds["test"]["id"])
    assert sorted(ids) == [f"demo-{i:05d}" for i in range(240)]
    eval_scores = list(ds["validation"]["ll_score"]) + list(ds["test"]["ll_score"])
    assert np.mean(eval_scores) < np.mean(list(ds["train"]["ll_score"]))
    splits = [ds[name] for name in ("train", "validation", "test")]
    lengths = np.concatenate([np.array(list(part["length"])) for part in splits])
    labels = np.concatenate([np.array(list(part["label"])) for part in splits])
    in_eval = np.arange(len(lengths)) >= ds["train"].num_rows
    for label in np.unique(labels):  # label-balanced, then length-controlled inside each class
        in_class = labels == label
        class_quota = in_eval[in_class].sum()
        for length in np.unique(lengths[in_class]):
            bucket = in_class & (lengths == length)
            quota = class_quota * bucket.sum() / in_class.sum()
            assert abs(in_eval[bucket].sum() - quota) < 1
    assert set(summary.table["config"]) == {"ll_split", "ll_split_len", "ll_split_reverse", "random", "length"}
    meta = json.loads((summary.out / "lsplits.json").read_text())  # the demo's settings and the training it ran
    assert meta["demo"] == {"n": 240, "seed": 0, "eval_size": 0.2, "max_steps": None} and meta["settings"]["configs"] == list(DEMO_CONFIGS)
    assert meta["runs"]["ft"]["train_config"]["max_steps"] == 20
    # the demo Space's scratch LM, which push-space ships: trained on the demo's sentences, listed as lsplits'
    model = summary.out / "scratch-lm"
    assert meta["scratch_lm"] == {"folder": "scratch-lm", "max_steps": 4, "seed": 0}
    assert {"scratch-lm/config.json", "scratch-lm/tokenizer.json"} <= set(meta["lsplits_files"])
    from lsplits.lm.scoring import load_causal_lm, score_pairs

    lm, tokenizer = load_causal_lm(model)
    scores, tokens = score_pairs(lm, tokenizer, ["", ""], [ds["train"]["hypothesis"][0], "a man sleeps ."], progress=False)
    assert np.isfinite(scores).all() and (scores < 0).all() and (tokens > 0).all()


def test_prompted_configs_with_a_local_pretrained_folder(user_file, tmp_path):
    """The pt configs run with any local causal LM folder, and ll_score is that frozen LM's score."""
    from lsplits.lm.scoring import load_causal_lm, score_pairs
    from lsplits.lm.scratch import ScratchConfig, build_scratch_lm

    texts = [json.loads(line)["text"] for line in user_file.read_text().splitlines()]
    build_scratch_lm(texts, tmp_path / "lm", ScratchConfig(vocab_size=300, n_layer=1, n_head=2, n_embd=32))
    out = tmp_path / "pt"
    assert main(["build", "--data-files", str(user_file), "--query-field", "text", "--prompt-template", "Topic {topic}:",
                 "--lm", str(tmp_path / "lm" / "model"), "--configs", "ll_split_pt", "ll_split_pt_len", "--out", str(out),
                 "--eval-size", "0.25", "--cache-dir", str(tmp_path / "cache"), "--no-progress"]) == 0
    ds = datasets.load_dataset(str(out), "ll_split_pt")
    rows = sorted(ds["train"].to_list() + ds["validation"].to_list() + ds["test"].to_list(), key=lambda r: r["id"])
    model, tokenizer = load_causal_lm(tmp_path / "lm" / "model")
    expected, _ = score_pairs(model, tokenizer, [f"Topic {r['topic']}:" for r in rows], [" " + r["text"] for r in rows],
                              progress=False)
    np.testing.assert_allclose([r["ll_score"] for r in rows], expected, atol=1e-4)
    assert ds["validation"].num_rows + ds["test"].num_rows == 15
    assert set(datasets.get_dataset_config_names(str(out))) == {"ll_split_pt", "ll_split_pt_len"}


def test_missing_labels_dropped_and_a_renamed_user_field_kept_are_counted_in_card_and_metadata(tmp_path):
    rows = []
    for i in range(48):
        words = [WORDS[(i * k + k) % len(WORDS)] for k in range(1, 3 + i % 7)]
        rows.append({"text": " ".join(words), "topic": ["a", "b"][i % 2], "length": 1000 + i})
    for i, missing in ((3, None), (8, ""), (13, float("nan"))):
        rows[i]["topic"] = missing
    rows[20]["text"] = None
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")  # NaN as JSON's NaN
    out = tmp_path / "out"
    code = main(["build", "--data-files", str(data), "--query-field", "text", "--label-field", "topic",
                 "--lm", "scratch", "--out", str(out), "--eval-size", "8", "--max-steps", "2",
                 "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--configs", "ll_split", "random",
                 "--missing-labels", "drop", "--rename", "length=length_orig"])
    assert code == 0
    meta = json.loads((out / "lsplits.json").read_text())
    assert meta["dropped"] == {"missing label": 3, "empty query": 1}
    assert "Dropped when loading: 1 example (empty query), 3 examples (missing label)." in \
        (out / "README.md").read_text()
    for config in ("ll_split", "random"):
        ds = datasets.load_dataset(str(out), config)
        rows_out = [row for split in ds.values() for row in split]
        assert len(rows_out) == 44 and {row["topic"] for row in rows_out} == {0, 1}
        assert ds["train"].features["topic"].names == ["a", "b"]
        ids = {row["id"] for row in rows_out}
        assert not ids & {"data-3", "data-8", "data-13", "data-20"}
        assert all(row["length_orig"] == 1000 + int(row["id"].split("-")[1]) for row in rows_out)
        assert all(row["length"] < 10 for row in rows_out)  # lsplits' own word count


def test_a_builder_named_after_data_files_is_taken_as_data_not_read_as_a_file(tmp_path, capsys):
    """``--data-files f.jsonl snli`` (nargs='+' swallowed `snli` as a second file) builds with the snli builder."""
    rows = [{"sentence1": f"A {w} is here.", "sentence2": f"The {w} {v}.", "gold_label": g}
            for w, v, g in zip(WORDS * 6, ["runs", "sleeps", "sits"] * 20,
                               ["entailment", "neutral", "contradiction"] * 20)]
    data = tmp_path / "snli_dev.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv = ["build", "--data-files", str(data), "snli", "--lm", "scratch", "--max-steps", "2", "--eval-size", "12",
            "--configs", "random", "--out", str(tmp_path / "out"), "--no-progress"]
    assert main(argv) == 0
    meta = json.loads((tmp_path / "out" / "lsplits.json").read_text(encoding="utf-8"))
    assert meta["settings"]["data"] == "snli" and meta["settings"]["data_files"] == [str(data)]
    assert datasets.load_dataset(str(tmp_path / "out"), "random")["test"].features["label"].names == [
        "entailment", "neutral", "contradiction"]  # the builder's labels, not a generic task's
    capsys.readouterr()
    assert main(["build", "boolq", *argv[1:]]) != 0  # DATA twice: refused in one line, before any work
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "--data-files snli: 'snli' is a builder, not a file; give one DATA before the options" in line


def test_cli_help_of_analyze_folder_and_one_stage_option_for_both_pushes():
    from lsplits.cli.parser import build_parser, parse_args

    commands = build_parser()._subparsers._group_actions[0].choices
    [folder] = [a for a in commands["analyze"]._actions if a.dest == "folder"]
    assert folder.help and "lsplits build" in folder.help
    metrics = parse_args(["push-metrics", "--stage", "staged"])
    space = parse_args(["push-space", "me/demo", "--stage", "staged"])
    assert metrics.stage == space.stage == Path("staged")
    space_help = commands["push-space"].format_help()
    assert "of this checkout" not in space_help and "shipped with lsplits" in space_help


def test_the_card_of_your_own_data_states_its_origin_and_steps_that_agree(built):
    card = (built / "README.md").read_text(encoding="utf-8")
    header = card.split("---")[1]
    assert "source_datasets" not in header  # a local file: not "original", and no Hub source to name
    assert "(offline demo setting)" not in card
    flat = " ".join(card.split())
    assert ("trains for at most 4 steps (AdamW, lr 0.002, rising linearly for all 4 steps (a warm-up of 30), never at the "
            "peak, batch 32") in flat
    assert "measured before the first step and after the last" in flat and "measured every 64 steps" not in flat
