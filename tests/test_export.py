"""The Hub layout written by export/card opens with datasets.load_dataset by config name."""

from __future__ import annotations

import datasets
import pandas as pd
import pytest
import yaml

from lsplits.card import CardInfo, render_card, size_category
from lsplits.export import write_hub_folder


def frames():
    def part(prefix, n):
        return pd.DataFrame({"id": [f"{prefix}-{i}" for i in range(n)], "text": ["t"] * n,
                             "ll_score": [-1.5] * n, "ll_tokens": [3] * n, "length": [2] * n})
    return {name: {"train": part(f"{name}tr", 6), "validation": part(f"{name}va", 2), "test": part(f"{name}te", 2)}
            for name in ("ll_split", "random")}


def test_folder_loads_by_config_name(tmp_path):
    data = frames()
    card = render_card(CardInfo(pretty_name="Toy"), data, {"ll_split": "least likely", "random": "random"},
                       default="ll_split", repo_hint="org/toy", method="m")
    out = write_hub_folder(tmp_path / "toy", data, card)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "README.md", "ll_split/test.parquet", "ll_split/train.parquet", "ll_split/validation.parquet",
        "random/test.parquet", "random/train.parquet", "random/validation.parquet"]
    assert datasets.get_dataset_config_names(str(out)) == ["ll_split", "random"]
    loaded = datasets.load_dataset(str(out), "random")
    assert loaded["train"]["id"] == [f"randomtr-{i}" for i in range(6)]
    assert loaded["test"].num_rows == 2
    default = datasets.load_dataset(str(out))
    assert default["validation"]["id"] == ["ll_splitva-0", "ll_splitva-1"]


def test_card_yaml_and_body(tmp_path):
    data = frames()
    card = render_card(CardInfo(pretty_name="Toy", license="mit", source_datasets=["org/src"],
                                source_citation="@misc{src}"),
                       data, {"ll_split": "least likely", "random": "random"}, default="ll_split",
                       repo_hint="org/toy", method="Method text.", statistics="| a |\n|---|", plots={"p": "plots/p.png"})
    _, header, body = card.split("---\n", 2)
    meta = yaml.safe_load(header)
    assert meta["license"] == "mit" and meta["pretty_name"] == "Toy"
    assert meta["size_categories"] == ["n<1K"]
    assert meta["configs"][0] == {"config_name": "ll_split", "default": True, "data_files": [
        {"split": "train", "path": "ll_split/train.parquet"},
        {"split": "validation", "path": "ll_split/validation.parquet"},
        {"split": "test", "path": "ll_split/test.parquet"}]}
    assert "| `ll_split` (default) | 6 | 2 | 2 | least likely |" in body
    assert 'load_dataset("org/toy", "ll_split")' in body
    assert "![p](plots/p.png)" in body and "@misc{src}" in body and "Godbole" in body


def test_write_is_atomic_on_failure(tmp_path):
    good = write_hub_folder(tmp_path / "d", frames(), "card v1")
    broken = {"x": {"train": object()}}  # not a DataFrame: fails mid-write
    with pytest.raises(AttributeError):
        write_hub_folder(tmp_path / "d", broken, "card v2")
    assert (good / "README.md").read_text() == "card v1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


@pytest.mark.parametrize(("n", "label"), [(999, "n<1K"), (1000, "1K<n<10K"), (569_018, "100K<n<1M")])
def test_size_category(n, label):
    assert size_category(n) == label


def test_mixed_nested_column_is_kept_as_json(tmp_path):
    frame = pd.DataFrame({"id": ["a", "b"], "sql": [{"from": [1, [2, 3]], "limit": None},
                                                    {"from": "t", "limit": 5}]})
    out = write_hub_folder(tmp_path / "d", {"c": {"train": frame}}, "card")
    import json

    import pyarrow.parquet as pq

    stored = pq.read_table(out / "c" / "train.parquet").to_pylist()
    assert [json.loads(row["sql"]) for row in stored] == frame["sql"].tolist()
