"""The Python API (``lsplits.likelihood_splits``, ``lsplits.score``) on real scratch-LM runs, and its equality
with ``lsplits build`` / ``lsplits score``, which run the same engine."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import datasets
import pandas as pd
import pytest

import lsplits
from lsplits.building.dataset import open_dataset
from lsplits.cli.parser import main
from lsplits.errors import ConfigError, DataError

STEPS = 4
ANIMALS = ["cat", "dog", "bird", "fish", "horse", "mouse", "zebra", "otter"]


def rows(n: int = 200) -> list[dict]:
    """``n`` sentences of varied length and vocabulary, two balanced labels."""
    out = []
    for i in range(n):
        animal = ANIMALS[i % len(ANIMALS)]
        extra = " very" * (i % 5) + (" quickly" if i % 7 == 0 else "")
        out.append({"text": f"the {animal} ran{extra} home number {i % 13}", "label": "ab"[i % 2], "n": i})
    return out


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("scores")


@pytest.fixture(scope="module")
def built(cache):
    data = datasets.Dataset.from_list(rows())
    return lsplits.likelihood_splits(data, query_field="text", label_field="label", lm="scratch", eval_size=40,
                                     max_steps=STEPS, cache_dir=cache)


@pytest.mark.process
def test_import_lsplits_loads_no_heavy_library():
    code = ("import sys, lsplits; heavy = [m for m in ('torch', 'transformers', 'datasets', 'pandas') "
            "if m in sys.modules]; print(heavy, callable(lsplits.likelihood_splits))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("]")[0] == "[" and out.strip().endswith("True")


def test_a_200_row_dataset_becomes_splits(built):
    assert list(built) == ["ll_split", "ll_split_len", "ll_split_reverse", "ll_split_len_reverse", "random"]
    assert set(built.skipped) == {"ll_split_pt", "ll_split_pt_len"}  # every config asked for, as lsplits build
    everything = set(f"data-{i}" for i in range(200))
    for name, splits in built.items():
        assert isinstance(splits, datasets.DatasetDict) and list(splits) == ["train", "validation", "test"]
        assert {split: len(part) for split, part in splits.items()} == {"train": 160, "validation": 20, "test": 20}
        assert splits["train"].column_names == ["id", "text", "label", "n", "source_split", "ll_score", "ll_tokens",
                                                "length"]
        ids = [set(part["id"]) for part in splits.values()]
        assert ids[0] | ids[1] | ids[2] == everything and sum(map(len, ids)) == 200  # a partition
        eval_labels = Counter([*splits["validation"]["label"], *splits["test"]["label"]])
        assert eval_labels == {"a": 20, "b": 20}, name  # label-balanced eval
        assert splits["train"].features["ll_score"].dtype == "float64"
        assert splits["train"].features["ll_tokens"].dtype == "int32"
        assert splits["train"].features["length"].dtype == "int32"
        for example in splits["test"].select(range(3)):  # every field kept, as given
            i = int(example["id"].split("-")[1])
            assert {k: example[k] for k in ("text", "label", "n")} == rows()[i]
            assert example["length"] == len(example["text"].split())
    # ll_split puts the least likely in eval, its reverse the most likely
    table = pd.concat([built["ll_split"][s].to_pandas() for s in ("train", "validation", "test")])
    eval_ids = set(built["ll_split"]["validation"]["id"]) | set(built["ll_split"]["test"]["id"])
    in_eval = table["id"].isin(eval_ids)
    assert table.loc[in_eval, "ll_score"].mean() < table.loc[~in_eval, "ll_score"].mean()
    reverse_eval = set(built["ll_split_reverse"]["validation"]["id"]) | set(built["ll_split_reverse"]["test"]["id"])
    assert table.loc[table["id"].isin(reverse_eval), "ll_score"].mean() > table.loc[~in_eval, "ll_score"].mean()


def test_write_gives_what_lsplits_build_gives(built, cache, tmp_path, capsys):
    data = tmp_path / "data.jsonl"  # the CLI names these examples data-0, data-1, ... as the API does
    data.write_text("".join(json.dumps(row) + "\n" for row in rows()), encoding="utf-8")
    assert main(["build", "--data-files", str(data), "--query-field", "text", "--label-field", "label",
                 "--lm", "scratch", "--eval-size", "40", "--max-steps", str(STEPS), "--cache-dir", str(cache),
                 "--out", str(tmp_path / "cli"), "--no-progress"]) == 0  # the same configs by default
    written = built.write(tmp_path / "api")
    api, cli = open_dataset(written), open_dataset(tmp_path / "cli")
    api_frames, api_meta, cli_frames, cli_meta = api.frames(), api.record.to_dict(), cli.frames(), cli.record.to_dict()
    assert list(api_frames) == list(cli_frames) == list(built)
    for name in built:
        for split in ("train", "validation", "test"):
            assert list(api_frames[name][split]["id"]) == list(cli_frames[name][split]["id"]), (name, split)
            assert list(api_frames[name][split]["id"]) == list(built[name][split]["id"])
            assert list(api_frames[name][split]["ll_score"]) == list(cli_frames[name][split]["ll_score"])
    api_settings, cli_settings = api_meta.pop("settings"), cli_meta.pop("settings")
    api_read, cli_read = api_meta.pop("read"), cli_meta.pop("read")  # the same rows, from a Dataset and a file
    assert [read.pop("source") for read in (*api_read, *cli_read)] == ["the Dataset", data.name]  # an absolute path: its name
    assert api_read == cli_read
    assert {k: v for k, v in api_meta.items() if k != "files"} == {k: v for k, v in cli_meta.items() if k != "files"}
    assert list(cli_settings.pop("data_files")) == [str(data)] and api_settings.pop("data_files") is None  # in memory
    assert api_settings == cli_settings  # every other setting the same, recorded the same
    assert (written / "README.md").read_text(encoding="utf-8").startswith("---")
    with pytest.raises(ConfigError, match="lsplits did not write"):  # the output guard, as for --out
        (tmp_path / "mine").mkdir()
        (tmp_path / "mine" / "notes.txt").write_text("mine")
        built.write(tmp_path / "mine")


def test_input_features_are_kept_through_splits_write_load_dataset_and_score(cache, tmp_path):
    """A ClassLabel label, a float32 column, a sequence and a nested column come back with their features and
    values unchanged, in every config and split, from ``.write()`` + ``load_dataset``, in the card, and from score."""
    import yaml

    features = datasets.Features({
        "text": datasets.Value("string"), "label": datasets.ClassLabel(names=["no", "yes", "maybe"]),
        "weight": datasets.Value("float32"), "tags": datasets.Sequence(datasets.Value("int16")),
        "meta": {"rank": datasets.Value("int8"), "note": datasets.Value("string")}})
    data = datasets.Dataset.from_list(
        [{"text": row["text"], "label": i % 3, "weight": i / 3, "tags": list(range(i % 4)),
          "meta": {"rank": i % 100, "note": f"n{i}"}} for i, row in enumerate(rows(60))], features=features)
    by_id = {f"data-{i}": example for i, example in enumerate(data)}
    added = {"id": "string", "source_split": "string", "ll_score": "float64", "ll_tokens": "int32", "length": "int32"}

    def check(part: datasets.Dataset, where: str, columns: dict[str, str] = added) -> None:
        assert {name: part.features[name] for name in features} == dict(features), where
        assert {name: part.features[name].dtype for name in columns} == columns, where
        for example in part:
            assert {name: example[name] for name in features} == by_id[example["id"]], (where, example["id"])

    splits = lsplits.likelihood_splits(data, query_field="text", label_field="label", lm="scratch", eval_size=12,
                                       max_steps=2, folds=2, cache_dir=cache)
    assert len(splits) == 5
    for name, parts in splits.items():
        for split, part in parts.items():
            check(part, f"{name}/{split}")
        eval_labels = Counter([*parts["validation"]["label"], *parts["test"]["label"]])
        assert eval_labels == {0: 4, 1: 4, 2: 4}, name  # balanced over the ClassLabel's classes
    folder = splits.write(tmp_path / "written")
    card = yaml.safe_load((folder / "README.md").read_text(encoding="utf-8").split("---")[1])
    for name in splits:
        loaded = datasets.load_dataset(str(folder), name)
        for split, part in loaded.items():
            check(part, f"written {name}/{split}")
            assert list(part["id"]) == list(splits[name][split]["id"])
        info = next(entry for entry in card["dataset_info"] if entry["config_name"] == name)
        assert datasets.Features._from_yaml_list(info["features"]) == loaded["train"].features
    scored = lsplits.score(data, query_field="text", lm="scratch", setting="ft", max_steps=2, folds=2,
                           cache_dir=cache)
    assert list(scored["id"]) == list(by_id)
    check(scored, "score", {name: kind for name, kind in added.items() if name != "length"})
    (tmp_path / "folder").mkdir()  # a dataset folder (or Hub id) is loaded with its features too
    data.to_parquet(str(tmp_path / "folder" / "train.parquet"))
    by_id = {f"train-{i}": example for i, example in enumerate(data)}
    from_folder = lsplits.score(str(tmp_path / "folder"), query_field="text", lm="scratch", setting="ft", max_steps=2,
                                folds=2, cache_dir=cache)
    check(from_folder, "score of a folder", {name: kind for name, kind in added.items() if name != "length"})
    assert list(from_folder["ll_score"]) == list(scored["ll_score"])


def test_push_to_hub_is_one_commit_of_the_written_folder(built, hub_api, online, tmp_path):
    hub_api.valid_tokens = {"hf_good"}
    url = built.push_to_hub("org/my-likelihood", token="hf_good", private=True)
    assert url.endswith("/commit/1")
    assert [call[0] for call in hub_api.calls] == ["whoami", "create_repo", "create_commit"]
    assert hub_api.calls[1][2]["private"] is True
    sent = hub_api.calls[2][2]
    local = built.write(tmp_path / "local")
    files = {p.relative_to(local).as_posix() for p in local.rglob("*") if p.is_file()}
    assert set(sent) == files
    assert "org/my-likelihood" in sent["README.md"].decode()  # the card's load example names the repo


def test_score_keeps_input_order_for_every_input_kind(cache, tmp_path):
    data = rows(60)[::-1]  # lengths vary, so the scorer's length-sorted batches reorder internally
    by_list = lsplits.score(data, query_field="text", lm="scratch", setting="ft", max_steps=STEPS, cache_dir=cache)
    assert isinstance(by_list, datasets.Dataset) and list(by_list["n"]) == [row["n"] for row in data]
    assert by_list.column_names == ["id", "text", "label", "n", "source_split", "ll_score", "ll_tokens"]
    assert len(set(by_list["ll_score"])) > 30 and min(by_list["ll_tokens"]) > 0
    by_frame = lsplits.score(pd.DataFrame(data), query_field="text", lm="scratch", setting="ft", max_steps=STEPS,
                             cache_dir=cache)
    assert list(by_frame["ll_score"]) == list(by_list["ll_score"])
    assert list(by_frame["id"]) == [f"data-{i}" for i in range(60)]
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in data), encoding="utf-8")
    assert main(["score", "--data-files", str(path), "--query-field", "text", "--lm", "scratch", "--max-steps",
                 str(STEPS), "--cache-dir", str(cache), "--out", str(tmp_path / "s.parquet"), "--no-progress"]) == 0
    cli = pd.read_parquet(tmp_path / "s.parquet").set_index("id")
    assert list(cli.loc[list(by_list["id"]), "ll_score"]) == list(by_list["ll_score"])  # the CLI scores the same


def test_score_with_the_frozen_pretrained_lm(tmp_path):
    """``lsplits.score(ds, lm=MODEL, setting="pt")``: each score is the model's own log-probability of the query,
    with no training; the scratch LM, which must be trained, asks for setting='ft' in API words."""
    from lm_fixtures import naive_score, tiny_model_folder

    from lsplits.api import resolve_data
    from lsplits.lm import load_causal_lm

    model_dir = tiny_model_folder(tmp_path / "lm")
    data = rows(8)
    scored = lsplits.score(data, query_field="text", lm=str(model_dir), setting="pt", dtype="fp32",
                           cache_dir=tmp_path / "cache")
    spec, loaded = resolve_data(data, query_field="text")
    model, tokenizer = load_causal_lm(model_dir, device="cpu")
    expected = [naive_score(model, tokenizer, spec.task.prompt_text(ex, "pt"), spec.task.query_text(ex, "pt"))
                for ex in loaded.examples]
    assert list(scored["ll_score"]) == pytest.approx([score for score, _ in expected], abs=1e-4)
    assert list(scored["ll_tokens"]) == [count for _, count in expected]
    with pytest.raises(ConfigError, match=r"^setting 'pt' needs a pretrained LM.*a pretrained lm .*or setting 'ft'"):
        lsplits.score(data, query_field="text", lm="scratch", setting="pt")


def test_a_dataset_dict_is_pooled_with_split_ids_and_a_task_applies_its_builder():
    from lsplits.api import resolve_data
    from lsplits.builders import boolq

    data = datasets.DatasetDict({"train": datasets.Dataset.from_list(rows(4)),
                                 "validation": datasets.Dataset.from_list(rows(3))})
    _, loaded = resolve_data(data, query_field="text")
    assert [ex["id"] for ex in loaded.examples] == [f"train-{i}" for i in range(4)] + [
        f"validation-{i}" for i in range(3)]
    assert [ex["source_split"] for ex in loaded.examples] == ["train"] * 4 + ["validation"] * 3
    questions = pd.DataFrame({"question": ["is it a", "is it b"], "answer": [True, False], "passage": ["p a", "p b"]})
    spec, loaded = resolve_data(questions, builder="boolq")
    assert spec is boolq.SPEC and [ex["id"] for ex in loaded.examples] == ["data-0", "data-1"]
    assert spec.task.prompt_text(loaded.examples[0]) == boolq.SPEC.task.prompt_text({**questions.iloc[0]})
    split = datasets.Dataset.from_pandas(questions, split="validation")
    assert [ex["id"] for ex in resolve_data(split, builder="boolq")[1].examples] == ["validation-0", "validation-1"]
    with pytest.raises(DataError, match="passage"):  # the builder's fields are checked
        resolve_data(questions.drop(columns="passage"), builder="boolq")


def test_bad_input_is_one_line_before_any_work():
    with pytest.raises(ConfigError, match="data: expected a datasets.Dataset.*got int"):
        lsplits.likelihood_splits(42, query_field="text", lm="scratch")
    with pytest.raises(DataError, match="the list.*2.*expected a dict per example, got str"):
        lsplits.score([{"text": "a"}, "b"], query_field="text", lm="scratch", setting="ft")
    with pytest.raises(ConfigError, match="^query_field is needed for a generic dataset"):
        lsplits.likelihood_splits(rows(10), lm="scratch")
    with pytest.raises(ConfigError, match="unknown builder 'mnli'"):
        lsplits.likelihood_splits(rows(10), builder="mnli", lm="scratch")
    with pytest.raises(ConfigError, match="own fields"):
        lsplits.likelihood_splits(rows(10), builder="snli", query_field="text", lm="scratch")
    with pytest.raises(DataError, match="field 'text'|text"):
        lsplits.likelihood_splits([{"other": "x"}] * 10, query_field="text", lm="scratch")
    with pytest.raises(ConfigError, match="eval"):
        lsplits.likelihood_splits(rows(10), query_field="text", lm="scratch", eval_size=10)
    with pytest.raises(ConfigError, match="setting"):
        lsplits.likelihood_splits(rows(10), query_field="text", lm="scratch", setting="zero-shot")
