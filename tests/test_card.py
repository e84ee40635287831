"""Dataset cards render from what lsplits.building.export wrote: YAML header and configs, sizes, strategies, usage."""

from __future__ import annotations

import pytest
import yaml

from lsplits.building.card import CardInfo, render_card, size_category
from lsplits.building.export import WrittenFolder


def written(sizes: dict[str, tuple[int, int, int]]) -> WrittenFolder:
    """A folder record with the given (train, validation, test) sizes and content-style file names."""
    splits = ("train", "validation", "test")
    return WrittenFolder(
        data_files={name: {split: f"{name}/{split}-00000-of-00001-{'0' * 16}.parquet" for split in splits}
                    for name in sizes},
        num_rows={name: dict(zip(splits, counts, strict=True)) for name, counts in sizes.items()})


def test_card_yaml_and_body():
    folder = written({"ll_split": (6, 2, 2), "random": (6, 2, 2)})
    files = folder.data_files
    card = render_card(CardInfo(pretty_name="Toy", license="mit", source_datasets=["org/src"],
                                source_citation="@misc{src}"),
                       folder, {"ll_split": "least likely", "random": "random"},
                       repo_hint="org/toy", method="Method text.", statistics="| a |\n|---|",
                       plots={"p": "plots/p.png"})
    _, header, body = card.split("---\n", 2)
    meta = yaml.safe_load(header)
    assert meta["license"] == "mit" and meta["pretty_name"] == "Toy"
    assert meta["size_categories"] == ["n<1K"]
    assert meta["configs"][0] == {"config_name": "ll_split", "default": True, "data_files": [
        {"split": split, "path": files["ll_split"][split]} for split in ("train", "validation", "test")]}
    assert "| `ll_split` (default) | 6 | 2 | 2 | least likely |" in body
    assert 'load_dataset("org/toy", "ll_split")' in body
    assert "![p](plots/p.png)" in body and "@misc{src}" in body and "Godbole" in body


def test_the_first_config_is_the_default_and_sizes_count_every_split():
    folder = written({"random": (900, 60, 40), "ll_split": (10, 1, 1)})
    card = render_card(CardInfo(pretty_name="Toy"), folder, {}, repo_hint="org/toy", method="m",
                       strategies={"random": "RandomSplit()", "ll_split": "LikelihoodSplit(setting='ft')"})
    meta = yaml.safe_load(card.split("---\n", 2)[1])
    assert [entry.get("default", False) for entry in meta["configs"]] == [True, False]
    assert meta["size_categories"] == ["1K<n<10K"]  # 900 + 60 + 40 examples in the largest config
    assert "| `random` (default) | 900 | 60 | 40 |  |" in card and 'load_dataset("org/toy", "random")' in card
    assert "- `random`: `RandomSplit()`" in card and "- `ll_split`: `LikelihoodSplit(setting='ft')`" in card


@pytest.mark.parametrize(("n", "label"), [(999, "n<1K"), (1000, "1K<n<10K"), (569_018, "100K<n<1M")])
def test_size_category(n, label):
    assert size_category(n) == label
