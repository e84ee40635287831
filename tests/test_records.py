"""lsplits.json and the beams settings record as typed records (issue 35, deliverable 4): a real build's
lsplits.json holds each value once, every reader takes the data files from it (not from the card), ``lsplits
difficulty`` updates it through the same type, and a record that is not one is refused in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from lsplits.building.dataset import open_dataset
from lsplits.building.record import BuildRecord
from lsplits.cli.parser import main
from lsplits.errors import DataError

WORDS = ["red", "blue", "cat", "dog", "runs", "sleeps", "big", "small", "house", "tree"]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A dataset the real ``lsplits build`` wrote (scratch LM, 2 steps, two configs)."""
    root = tmp_path_factory.mktemp("records")
    data = root / "some.jsonl"
    rows = [{"text": " ".join(WORDS[(i * k + k) % len(WORDS)] for k in range(1, 3 + i % 7)), "topic": "ab"[i % 2]}
            for i in range(48)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = root / "built"
    assert main(["build", "--data-files", str(data), "--query-field", "text", "--label-field", "topic", "--lm",
                 "scratch", "--out", str(out), "--eval-size", "8", "--max-steps", "2", "--configs", "ll_split",
                 "random", "--cache-dir", str(root / "cache"), "--no-progress"]) == 0
    return out


@pytest.fixture
def copy(built: Path, tmp_path: Path) -> Path:
    """A copy of :func:`built` this test may change."""
    return Path(shutil.copytree(built, tmp_path / "built"))


def test_lsplits_json_writes_no_key_twice(built):
    document = json.loads((built / "lsplits.json").read_text(encoding="utf-8"))
    settings = set(document["settings"])
    assert not settings & set(document), sorted(settings & set(document))  # lm, folds, seed were top level too
    for kind, run in document["runs"].items():
        assert not settings & set(run), (kind, sorted(settings & set(run)))  # and in each run's plan
    keys = [key for value in (document, document["settings"], *document["runs"].values()) for key in value]
    assert all(keys.count(name) == 1 for name in ("lm", "folds", "seed", "dtype", "eval_size", "query_field"))
    assert document["settings"]["lm"] == "scratch" and document["settings"]["seed"] == 0


def test_lsplits_json_is_written_and_read_through_its_type(built):
    text = (built / "lsplits.json").read_text(encoding="utf-8")
    record = BuildRecord.of_folder(built)
    assert record.to_json() == text  # nothing in the file that the type does not know
    assert record.configs == ("ll_split", "random") and record.lm == "scratch"
    assert record.task.query_field == "text" and record.task.label_field == "topic"
    card = yaml.safe_load((built / "README.md").read_text(encoding="utf-8").split("---")[1])
    listed = {entry["config_name"]: {f["split"]: f["path"] for f in entry["data_files"]} for entry in card["configs"]}
    assert record.splits == listed  # the card and the record name the same files
    assert set(record.files) == {p.relative_to(built).as_posix() for p in built.rglob("*")
                                 if p.is_file() and p.name != "lsplits.json"}


def test_the_data_files_come_from_the_record_not_the_card(copy):
    """A card whose YAML names other files (edited by hand) does not change what is read."""
    record = BuildRecord.of_folder(copy)
    card = (copy / "README.md").read_text(encoding="utf-8")
    wrong = card.replace(record.splits["ll_split"]["train"], record.splits["random"]["train"])
    assert wrong != card
    (copy / "README.md").write_text(wrong, encoding="utf-8")
    frames = open_dataset(copy).load("ll_split")
    import pandas as pd

    expected = pd.read_parquet(copy / record.splits["ll_split"]["train"])
    assert frames["train"]["id"].tolist() == expected["id"].tolist()
    assert frames["train"]["id"].tolist() != pd.read_parquet(copy / record.splits["random"]["train"])["id"].tolist()


def test_a_record_path_out_of_the_folder_is_refused_in_one_line(copy, capsys):
    (copy.parent / "outside.parquet").write_bytes((copy / BuildRecord.of_folder(copy).splits["random"]["test"])
                                                  .read_bytes())
    document = json.loads((copy / "lsplits.json").read_text(encoding="utf-8"))
    document["splits"]["random"]["test"] = "../outside.parquet"
    (copy / "lsplits.json").write_text(json.dumps(document), encoding="utf-8")
    assert main(["analyze", str(copy), "--configs", "random"]) != 0
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == (f"lsplits analyze: error: {copy / 'lsplits.json'}: config 'random', split 'test': the data file "
                    "path '../outside.parquet' goes up with '..'; the data files lsplits.json lists must lie inside "
                    "the dataset folder")


def test_without_data_files_in_the_record_the_card_is_read_with_its_checks(copy):
    """A dataset whose record lists no data files (built elsewhere, written by hand): the card's paths, checked."""
    record = BuildRecord.of_folder(copy)
    record.replace(splits={}).write(copy)
    assert open_dataset(copy).configs == ["ll_split", "random"]
    assert open_dataset(copy).load("random")["test"]["id"].tolist()
    card = (copy / "README.md").read_text(encoding="utf-8")
    (copy / "README.md").write_text(card.replace(record.splits["random"]["test"], "/etc/passwd"), encoding="utf-8")
    with pytest.raises(DataError, match=r"README.md: config 'random', split 'test': the data file path '/etc/passwd' "
                                        r"is absolute; a card's data files must lie inside the dataset folder"):
        open_dataset(copy).load("random")


def test_difficulty_updates_the_record_through_its_type(copy, tmp_path):
    from lsplits.difficulty.card import update_folder

    figure = tmp_path / "figure.png"
    figure.write_bytes(b"\x89PNG figure")
    before = BuildRecord.of_folder(copy)
    update_folder(copy, "## Difficulty\n\nrandom: 50%", {"results": []}, files={"plots/difficulty.png": figure},
                  configs=["random"])
    after = BuildRecord.of_folder(copy)
    assert (copy / "lsplits.json").read_text(encoding="utf-8") == after.to_json()
    assert after.difficulty == {"results": [], "data_files": {"random": {s: [p] for s, p in before.splits["random"]
                                                                          .items()}},
                                "files": ["plots/difficulty.png"]}
    assert set(after.files) == set(before.files) | {"plots/difficulty.png"}
    assert after.replace(difficulty=None, files=before.files) == before  # nothing else changed


@pytest.mark.parametrize(("change", "expected"), [
    (lambda d: d.update(lm="gpt2"), "unknown key 'lm' (a lsplits.json holds: settings, task, splits, "),
    (lambda d: d.update(splits=["random"]), "'splits' is list, not a JSON object"),
    (lambda d: d["settings"].update(folds=1), "folds must be a whole number >= 2, got 1"),
])
def test_a_record_that_is_not_one_is_refused_in_one_line(copy, capsys, change, expected):
    document = json.loads((copy / "lsplits.json").read_text(encoding="utf-8"))
    change(document)
    (copy / "lsplits.json").write_text(json.dumps(document), encoding="utf-8")
    assert main(["analyze", str(copy)]) != 0
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"lsplits analyze: error: {copy}") and expected in line and "lsplits.json" in line
