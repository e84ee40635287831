"""The Hub layout written by lsplits.building.export opens with datasets.load_dataset by config name, loads fresh
after a rebuild (content-named files), gives every split of every config the same features, and
reads back as the card's YAML lists it."""

from __future__ import annotations

import hashlib
import json
import logging
import re

import datasets
import pandas as pd
import pyarrow.parquet as pq
import pytest

from lsplits.building.card import CardInfo, render_card
from lsplits.building.dataset import open_dataset
from lsplits.building.export import card_data_files, data_file_paths, write_hub_folder
from lsplits.errors import DataError

CONTENT_NAME = re.compile(r"(train|validation|test)-00000-of-00001-([0-9a-f]{16})\.parquet")


def frames(prefix: str = ""):
    def part(name, n):
        return pd.DataFrame({"id": [f"{prefix}{name}-{i}" for i in range(n)], "text": ["t"] * n,
                             "ll_score": [-1.5] * n, "ll_tokens": [3] * n, "length": [2] * n})
    return {name: {"train": part(f"{name}tr", 6), "validation": part(f"{name}va", 2), "test": part(f"{name}te", 2)}
            for name in ("ll_split", "random")}


def toy_card(data):
    return lambda folder: render_card(CardInfo(pretty_name="Toy"), folder, {"ll_split": "least likely", "random": "r"},
                                      repo_hint="org/toy", method="m")


def test_folder_loads_by_config_name_from_content_named_files(tmp_path):
    data = frames()
    out = write_hub_folder(tmp_path / "toy", data, toy_card(data))
    listed = card_data_files((out / "README.md").read_text())
    assert list(listed) == ["ll_split", "random"] and list(listed["random"]) == ["train", "validation", "test"]
    for config, splits in listed.items():
        for split, (path,) in splits.items():
            folder, name = path.split("/")
            match = CONTENT_NAME.fullmatch(name)
            assert folder == config and match and match.group(1) == split
            assert match.group(2) == hashlib.sha256((out / path).read_bytes()).hexdigest()[:16]
    on_disk = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))
    assert on_disk == sorted(p for splits in listed.values() for (p,) in splits.values())
    assert datasets.get_dataset_config_names(str(out)) == ["ll_split", "random"]
    loaded = datasets.load_dataset(str(out), "random")
    assert loaded["train"]["id"] == [f"randomtr-{i}" for i in range(6)]
    assert loaded["test"].num_rows == 2
    default = datasets.load_dataset(str(out))
    assert default["validation"]["id"] == ["ll_splitva-0", "ll_splitva-1"]


def test_rebuilt_folder_loads_the_new_rows_through_the_same_cache(tmp_path):
    cache = tmp_path / "hf-cache"
    out = tmp_path / "toy"
    first = frames("old-")
    write_hub_folder(out, first, toy_card(first))
    assert datasets.load_dataset(str(out), "random", cache_dir=str(cache))["train"]["id"][0] == "old-randomtr-0"
    second = frames("new-")
    write_hub_folder(out, second, toy_card(second))
    again = datasets.load_dataset(str(out), "random", cache_dir=str(cache))
    assert again["train"]["id"] == [f"new-randomtr-{i}" for i in range(6)]
    assert again["test"]["id"] == ["new-randomte-0", "new-randomte-1"]


def test_identical_data_gives_identical_file_names(tmp_path):
    data = frames()
    one = write_hub_folder(tmp_path / "one", data, toy_card(data))
    two = write_hub_folder(tmp_path / "two", data, toy_card(data))
    assert card_data_files((one / "README.md").read_text()) == card_data_files((two / "README.md").read_text())


def test_card_data_files_reads_every_yaml_form():
    card = ("---\nconfigs:\n- config_name: a\n  data_files:\n  - split: train\n    path: a/x.parquet\n"
            "  - split: test\n    path: [a/y.parquet, a/z.parquet]\n- config_name: b\n  data_files: b/*.parquet\n"
            "---\n# body\n")
    assert card_data_files(card) == {"a": {"train": ["a/x.parquet"], "test": ["a/y.parquet", "a/z.parquet"]},
                                     "b": {"train": ["b/*.parquet"]}}
    assert card_data_files("# no yaml") == {} and card_data_files("---\nconfigs: []\n---\n") == {}


def test_old_layout_folders_are_still_read(tmp_path):
    folder = tmp_path / "old"
    (folder / "c").mkdir(parents=True)
    for split, ids in (("train", ["a", "b"]), ("test", ["c"])):
        pd.DataFrame({"id": ids, "text": ["x"] * len(ids)}).to_parquet(folder / "c" / f"{split}.parquet")
    (folder / "lsplits.json").write_text(json.dumps({"task": {"query_field": "text"}}))  # lists no data files
    (folder / "README.md").write_text("---\nconfigs:\n- config_name: c\n  data_files:\n  - split: train\n"
                                      "    path: c/train.parquet\n  - split: test\n    path: c/test.parquet\n---\n")
    frames_read = open_dataset(folder).frames()
    assert frames_read["c"]["train"]["id"].tolist() == ["a", "b"] and frames_read["c"]["test"]["id"].tolist() == ["c"]
    with pytest.raises(DataError, match="config 'c' has no validation split"):  # difficulty needs all three
        open_dataset(folder).load("c")
    (folder / "README.md").write_text("# a card without YAML")
    assert data_file_paths(folder, "c") == {"train": [folder / "c/train.parquet"], "test": [folder / "c/test.parquet"]}


def test_write_is_atomic_on_failure(tmp_path):
    data = frames()
    good = write_hub_folder(tmp_path / "d", data, "card v1")

    def broken_card(files):
        raise RuntimeError("card failed after the data files were written")

    with pytest.raises(RuntimeError):
        write_hub_folder(tmp_path / "d", frames("other-"), broken_card)
    assert (good / "README.md").read_text() == "card v1"
    assert read_folder_ids(good) == [f"ll_splittr-{i}" for i in range(6)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def read_folder_ids(folder):
    (path,) = data_file_paths(folder, "ll_split")["train"]
    return pd.read_parquet(path)["id"].tolist()


def test_mixed_nested_column_is_kept_as_json(tmp_path):
    frame = pd.DataFrame({"id": ["a", "b"], "sql": [{"from": [1, [2, 3]], "limit": None},
                                                    {"from": "t", "limit": 5}]})
    out = write_hub_folder(tmp_path / "d", {"c": {"train": frame}}, "card")
    (path,) = data_file_paths(out, "c")["train"]
    stored = pq.read_table(path).to_pylist()
    assert [json.loads(row["sql"]) for row in stored] == frame["sql"].tolist()


def test_mixed_types_get_one_type_in_every_config_and_split(tmp_path, caplog):
    """An int in most rows and "n/a" in the test split only; a list in the text field of one row of
    one config's train split: every split of every config loads, with identical features."""
    n = 12
    rows = pd.DataFrame({"id": [f"e{i}" for i in range(n)], "text": [f"sentence {i}" for i in range(n)],
                         "year": [2000 + i for i in range(n)], "note": [None] * n})
    rows["year"] = rows["year"].astype(object)
    rows["text"] = rows["text"].astype(object)
    rows.loc[11, "year"] = "n/a"
    rows.at[2, "text"] = ["a", "list"]
    rows.loc[3, "note"] = 1.5
    data = {"first": {"train": rows.iloc[:8], "validation": rows.iloc[8:10], "test": rows.iloc[10:]},
            "second": {"train": rows.iloc[4:], "validation": rows.iloc[:2], "test": rows.iloc[2:4]}}
    with caplog.at_level(logging.WARNING, logger="lsplits.building.export"):
        out = write_hub_folder(tmp_path / "mixed", data, lambda folder: render_card(
            CardInfo(pretty_name="Mixed"), folder, {}, repo_hint="org/m", method="m"))
    warnings = [r.getMessage() for r in caplog.records]
    assert any("'year'" in w and "int, str" in w for w in warnings), warnings
    assert any("'text'" in w and "list, str" in w for w in warnings), warnings
    assert not any("'note'" in w for w in warnings)
    features = set()
    for config in data:
        loaded = datasets.load_dataset(str(out), config, cache_dir=str(tmp_path / "hf"))
        for split in ("train", "validation", "test"):
            features.add(repr(loaded[split].features))
    assert len(features) == 1, features
    first = datasets.load_dataset(str(out), "first", cache_dir=str(tmp_path / "hf"))
    assert first["test"]["year"] == ["2010", "n/a"] and first["train"]["year"][0] == "2000"
    assert first["train"]["text"][2] == '["a", "list"]' and first["train"]["text"][0] == "sentence 0"
    assert first["validation"]["note"] == [None, None] and first["train"]["note"][3] == 1.5


def _add_difficulty(out, tmp_path, configs=("random",)):
    """What `lsplits difficulty` adds to a built folder: the card section, the entry and the figure."""
    from lsplits.difficulty.card import update_folder

    figure = tmp_path / "figure.png"
    figure.write_bytes(b"\x89PNG not really")
    update_folder(out, "## Difficulty\n\nrandom: 71.8%", {"results": [{"config": "random", "accuracy": 0.718}],
                                                          "settings": {"configs": list(configs)}},
                  files={"plots/difficulty.png": figure}, configs=configs)


def test_rebuild_keeps_the_difficulty_results_while_their_splits_are_unchanged(tmp_path, caplog):
    from lsplits.building.additions import read_section

    out = write_hub_folder(tmp_path / "toy", frames(), toy_card(None))
    _add_difficulty(out, tmp_path)
    card_before = (out / "README.md").read_text()
    meta_before = json.loads((out / "lsplits.json").read_text())
    assert meta_before["difficulty"]["data_files"] == {"random": {s: [p] for s, p in zip(
        ("train", "validation", "test"), [ps[0] for ps in card_data_files(card_before)["random"].values()])}}
    changed = frames()
    changed["ll_split"]["test"] = changed["ll_split"]["test"].assign(ll_score=-9.0)  # not a config it describes
    for data in (frames(), changed):
        with caplog.at_level(logging.WARNING, logger="lsplits"):
            write_hub_folder(out, data, toy_card(None))
        card = (out / "README.md").read_text()
        assert read_section(card) == "## Difficulty\n\nrandom: 71.8%"
        assert data is changed or card == card_before  # byte-identical splits: the very same card
        meta = json.loads((out / "lsplits.json").read_text())
        assert meta["difficulty"] == meta_before["difficulty"]
        assert "plots/difficulty.png" in meta["lsplits_files"]
        assert (out / "plots" / "difficulty.png").read_bytes() == b"\x89PNG not really"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_rebuild_with_changed_splits_removes_the_difficulty_results_in_one_warning(tmp_path, caplog):
    from lsplits.building.additions import read_section

    out = write_hub_folder(tmp_path / "toy", frames(), toy_card(None))
    _add_difficulty(out, tmp_path)
    with caplog.at_level(logging.WARNING, logger="lsplits"):
        write_hub_folder(out, frames("new-"), toy_card(None))
    assert read_section((out / "README.md").read_text()) is None
    meta = json.loads((out / "lsplits.json").read_text())
    assert meta["difficulty"] is None and "plots/difficulty.png" not in meta["lsplits_files"]
    assert not (out / "plots" / "difficulty.png").exists()
    [warning] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "removed the previous Difficulty results" in warning.getMessage()
    assert "the splits they describe changed (random)" in warning.getMessage()
    write_hub_folder(out, frames(), toy_card(None))  # the folder is still lsplits' to replace
