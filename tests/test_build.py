"""lsplits.building.pipeline without an LM: the build plan, splitting scored examples into index arrays, frames
materialised from the base table, and the export of a result in Hub layout (scores are given here,
so every expected split follows from them by hand)."""

from __future__ import annotations

import json

import datasets
import numpy as np
import pandas as pd
import pytest

from lsplits.building.card import CardInfo, method_text
from lsplits.building.configs import CONFIGS
from lsplits.building.export import card_data_files
from lsplits.building.pipeline import (
    DatasetSpec,
    build_record,
    checked_eval_size,
    export_dataset,
    plan_build,
    split_configs,
    split_inputs,
    split_scored,
)
from lsplits.building.settings import BuildSettings
from lsplits.data.loading import prepare_examples
from lsplits.data.tasks import generic_task
from lsplits.errors import ConfigError, InvalidOption
from lsplits.lm.training import TrainConfig

N = 24


def spec(**fields) -> DatasetSpec:
    return DatasetSpec(task=generic_task("text", label_field="topic"), card=CardInfo(pretty_name="Toy"), **fields)


def scored(configs=("ll_split", "ll_split_pt", "random", "length"), eval_size=8):
    """A result over N examples: ft score -i (the last ids least likely), pt score +i (the first ids least likely)."""
    rows = [{"text": " ".join(["word"] * (1 + i % 4)), "topic": "ab"[i % 2], "year": 2000 + i} for i in range(N)]
    loaded = prepare_examples([("toy", rows, "toy rows")], spec().task)
    toy = spec()
    inputs = split_inputs(toy, loaded.examples)
    scores = {"ft": (-np.arange(N, dtype=float), np.full(N, 3)), "pt": (np.arange(N, dtype=float), np.full(N, 4))}
    chosen = {name: CONFIGS[name] for name in configs}
    return toy, split_configs(toy.policy, chosen, pd.DataFrame(loaded.examples), inputs, scores,
                              eval_size=eval_size, seed=0, skipped={"ll_split_len": "not asked for"})


def test_eval_sizes_that_leave_a_split_empty_are_refused():
    assert [checked_eval_size(size, 40, default=8) for size in (2, 39, 0.5, None)] == [2, 39, 20, 8]
    refused = [(1, 40, "^eval_size 1 gives 1 eval example of 40, which leaves the test split empty"),
               (0.01, 40, "^eval_size 0.01 gives 1 eval example of 40"),
               (40, 40, "^eval_size 40: .*leaves train empty; give between 2 and 39 examples"),
               (0, 40, r"^eval_size 0: must be a count \(a whole number >= 1\).*give between 2 and 39"),
               (None, 2, "^eval_size \\(the default, 2\\): the dataset has 2 example\\(s\\)")]
    for size, n, message in refused:
        with pytest.raises(InvalidOption, match=message):
            checked_eval_size(size, n, default=2)


def test_plan_skips_prompted_configs_without_a_pretrained_lm():
    plan = plan_build(spec(), BuildSettings(lm="scratch", configs=["ll_split_pt", "random", "ll_split"]))
    assert list(plan.configs) == ["random", "ll_split"] and plan.settings == ["ft"]
    assert plan.skipped == {"ll_split_pt": "needs a pretrained LM for prompting; the scratch LM has none until it is trained on the data"}
    assert plan.runs["ft"].train_config == TrainConfig.scratch()  # the scratch LM's own defaults
    with pytest.raises(ConfigError, match="no config left to build: ll_split_pt needs a pretrained LM"):
        plan_build(spec(), BuildSettings(lm="scratch", configs=["ll_split_pt"]))
    pretrained = plan_build(spec(max_steps=123), BuildSettings(lm="gpt2", configs=["ll_split_pt_len", "length", "ll_split"], seed=4))
    assert pretrained.settings == ["pt", "ft"] and not pretrained.skipped
    ft = pretrained.runs["ft"].train_config
    assert (ft.max_steps, ft.seed) == (123, 4) and pretrained.runs["pt"].train_config is None
    assert plan_build(spec(max_steps=123), BuildSettings(lm="gpt2", configs=["ll_split"], max_steps=9)).runs["ft"].train_config \
        == TrainConfig(max_steps=9)  # --max-steps over the paper's steps
    with pytest.raises(ConfigError, match="unknown config\\(s\\) tmcd"):
        plan_build(spec(), BuildSettings(lm="scratch", configs=["tmcd"]))  # only Spider's policy provides its inputs


def test_every_config_is_index_arrays_over_one_base_table():
    _, result = scored()
    assert list(result.configs) == ["ll_split", "ll_split_pt", "random", "length"]
    for name, built in result.configs.items():
        rows = built.indices
        together = np.concatenate([rows["train"], rows["validation"], rows["test"]])
        assert sorted(together.tolist()) == list(range(N)), name
        assert rows["train"].tolist() == sorted(rows["train"].tolist())  # train in dataset order
        assert (rows["validation"].size, rows["test"].size) == (4, 4)
        assert sorted(np.concatenate([rows["validation"], rows["test"]]).tolist()) == sorted(built.partition.eval.tolist())
    eval_ids = lambda name: {N - 1 - i for i in range(8)} if name == "ll_split" else set(range(8))  # noqa: E731
    for name in ("ll_split", "ll_split_pt"):  # label-balanced: 4 of each topic, the least likely of each
        assert set(result.partitions[name].eval.tolist()) == eval_ids(name)
    assert (result.configs["ll_split"].setting, result.configs["ll_split_pt"].setting,
            result.configs["random"].setting) == ("ft", "pt", "ft")
    assert result.skipped == {"ll_split_len": "not asked for"} and result.eval_size == 8


def test_frames_are_materialised_from_the_table_with_the_configs_scores():
    _, result = scored()
    frames = result.frames()
    assert list(frames) == list(result.configs) and len(frames) == 4
    pt = frames["ll_split_pt"]
    assert list(pt) == ["train", "validation", "test"]
    assert list(pt["train"].columns) == ["id", "text", "topic", "year", "source_split", "ll_score", "ll_tokens",
                                         "length"]
    for split, frame in pt.items():
        positions = result.configs["ll_split_pt"].indices[split]
        assert frame["id"].tolist() == [f"toy-{i}" for i in positions]
        assert frame["ll_score"].tolist() == positions.astype(float).tolist()  # the pt score of example i is +i
        assert set(frame["ll_tokens"]) == {4}
    ft_test = frames["ll_split"]["test"]
    assert ft_test["ll_score"].tolist() == [-float(i) for i in result.configs["ll_split"].indices["test"]]
    assert frames["length"]["train"]["length"].tolist() == [1 + i % 4 for i in result.configs["length"].indices["train"]]
    assert "ll_score" not in result.table.columns  # the base table stays as loaded


def test_export_writes_the_indexed_result_in_hub_layout(tmp_path):
    toy, result = scored(configs=("ll_split", "random"))
    out = export_dataset(toy, result, tmp_path / "toy", BuildSettings(lm="scratch"), repo_hint="org/toy")
    for name, built in result.configs.items():
        loaded = datasets.load_dataset(str(out), name, cache_dir=str(tmp_path / "hf"))
        for split, rows in built.indices.items():
            assert loaded[split]["id"] == [f"toy-{i}" for i in rows], (name, split)
    assert set(card_data_files((out / "README.md").read_text())) == {"ll_split", "random"}
    meta = json.loads((out / "lsplits.json").read_text())
    assert meta["strategies"] == {"ll_split": {"strategy": "LikelihoodSplit", "params": {
        "setting": "ft", "length_control": False, "reverse": False}}, "random": {"strategy": "RandomSplit", "params": {}}}
    assert meta["split_policy"] == "plain" and list(meta["splits"]) == ["ll_split", "random"]
    assert meta["skipped"] == {"ll_split_len": "not asked for"} and meta["eval_examples"] == 8
    card = (out / "README.md").read_text()
    assert "- `ll_split`: `LikelihoodSplit(setting='ft', length_control=False, reverse=False)`" in card
    assert "| `random` | 16 | 4 | 4 | a seeded random split with the same sizes (and label balance) |" in card
    assert "Not built: `ll_split_len` (not asked for)." in card


def test_metadata_and_method_text_carry_the_policy_notes():
    from lsplits.splits.strategy import SplitPolicy

    noted = spec(policy=SplitPolicy(name="noted", notes=lambda inputs: {"odd ids": ["toy-1", "toy-3"], "n": 2}),
                 method_note="Toy note.")
    _, result = scored(configs=("random",))
    record = build_record(noted, result, BuildSettings(lm="gpt2", folds=2, seed=5), extra_statistics={})
    assert record.notes == {"odd ids": ["toy-1", "toy-3"], "n": 2} and record.split_policy == "noted"
    assert (record.settings.lm, record.settings.folds, record.settings.seed, record.task.query_field,
            record.task.label_field) == ("gpt2", 2, 5, "text", "topic")
    text = method_text(noted, result, BuildSettings(lm="gpt2", folds=2, seed=5))
    assert "- odd ids: 2 (toy-1, toy-3)" in text and "- n: 2" in text and "Toy note." in text
    assert "`gpt2`" in text and "cut into 2 folds" in text and "Eval size: 8 examples" in text


def test_split_scored_is_the_build_path_for_examples_scored_elsewhere():
    """The Space's "score your own": ll_split sends the lowest scores to eval (label-balanced when the task
    has labels), ll_split_len does so within each length, and a fraction resolves as the build's does."""
    rows = [{"text": " ".join(["word"] * (1 + i % 3)), "topic": "ab"[i % 2]} for i in range(12)]
    task = generic_task("text", label_field="topic")
    examples = prepare_examples([("toy", rows, "toy rows")], task).examples
    ll = np.array([5.0, 1, 4, 0, 9, 8, 7, 6, 3, 2, 11, 10]) * -1  # least likely: ids 10, 11, 4, 5
    result = split_scored(task, examples, {"ft": (ll, np.full(12, 2))}, configs=["ll_split", "ll_split_len"],
                          eval_size=0.34)
    assert result.eval_size == 4 and list(result.inputs.lengths) == [1 + i % 3 for i in range(12)]
    plain = result.configs["ll_split"]
    assert plain.strategy is CONFIGS["ll_split"] and sorted(plain.partition.eval) == [4, 5, 10, 11]
    assert sorted(np.concatenate([plain.indices["validation"], plain.indices["test"]])) == [4, 5, 10, 11]
    by_length = set(result.configs["ll_split_len"].partition.eval)
    assert len(by_length) == 4  # within each (topic, length) bucket, {i, i + 6}: at most the less likely one
    for i in range(6):
        assert max((i, i + 6), key=lambda j: ll[j]) not in by_length
    unlabeled = generic_task("text")
    alone = split_scored(unlabeled, prepare_examples([("toy", rows, "toy rows")], unlabeled).examples,
                         {"ft": (ll, np.full(12, 2))}, configs=["ll_split"], eval_size=2)
    assert sorted(alone.configs["ll_split"].partition.eval) == [10, 11]
    with pytest.raises(ConfigError, match="eval_size 1 gives 1 eval example of 12, which leaves the test split empty"):
        split_scored(task, examples, {"ft": (ll, np.full(12, 2))}, configs=["ll_split"], eval_size=1)
    with pytest.raises(ConfigError, match="unknown config"):
        split_scored(task, examples, {"ft": (ll, np.full(12, 2))}, configs=["template"], eval_size=2)


def test_validation_and_test_are_each_label_balanced():
    """Issue 38 item 8: eval was label-balanced but its halves were not (SNLI random: validation 42.5% one class)."""
    rows = [{"text": " ".join(["word"] * (1 + i % 4)), "topic": "ab"[i % 2]} for i in range(N)]
    toy = spec()
    loaded = prepare_examples([("toy", rows, "toy rows")], toy.task)
    scores = {"ft": (-np.arange(N, dtype=float), np.full(N, 3))}
    for seed in range(6):
        result = split_configs(toy.policy, {name: CONFIGS[name] for name in ("ll_split", "random")},
                               pd.DataFrame(loaded.examples), split_inputs(toy, loaded.examples), scores,
                               eval_size=12, seed=seed)
        for name, built in result.configs.items():
            for split in ("validation", "test"):
                topics = sorted(result.table["topic"].to_numpy()[built.indices[split]].tolist())
                assert topics == ["a"] * 3 + ["b"] * 3, (seed, name, split)
    assert "each label class is halved" in method_text(toy, result, BuildSettings(lm="scratch"))
