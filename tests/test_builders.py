"""The SNLI, BoolQ and Spider builders on tiny fixtures in the official file formats."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import yaml

from lsplits.building.dataset import open_dataset
from lsplits.building.export import data_file_paths
from lsplits.cli.parser import main
from lsplits.splits.spider import sql_atoms

ANIMALS = ["dog", "cat", "horse", "bird", "cow", "goat", "fox", "owl"]
PLACES = ["park", "field", "barn", "yard", "road", "lake"]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def build(tmp_path, name, data_files, *extra):
    """``lsplits build NAME`` (``name`` None: generic data) into ``tmp_path/NAME-likelihood``."""
    out = tmp_path / f"{name or 'generic'}-likelihood"
    code = main(["build", *([name] if name else []), "--data-files", *data_files, "--lm", "scratch", "--out", str(out),
                 "--max-steps", "2", "--cache-dir", str(tmp_path / "cache"), "--no-progress", *extra])
    assert code == 0
    return out


def all_rows(folder, config):
    ds = datasets.load_dataset(str(folder), config)
    return {split: ds[split].to_list() for split in ("train", "validation", "test")}


def check_features(folder, configs, expected):
    """Every config loads with ``expected`` features for the fields named there, the card's YAML
    ``dataset_info.features`` is the parquet schema's, and "How to load" names a placeholder repo."""
    card = (folder / "README.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(card.split("---", 2)[1])
    infos = {info["config_name"]: info for info in meta["dataset_info"]}
    assert set(infos) == set(configs)
    for config in configs:
        ds = datasets.load_dataset(str(folder), config)
        for split, paths in data_file_paths(folder, config).items():
            schema_features = datasets.Features.from_arrow_schema(pq.read_schema(paths[0]))
            assert ds[split].features == schema_features
            assert datasets.Features._from_yaml_list(infos[config]["features"]) == schema_features
            for name, feature in expected.items():
                assert ds[split].features[name] == feature, (config, split, name)
    assert f'load_dataset("your-org/{folder.name}"' in card and str(folder) not in card
    assert "&id" not in card.split("---", 2)[1]  # plain YAML, no anchors and aliases


def snli_rows(n, offset=0):
    labels = ["entailment", "neutral", "contradiction"]
    rows = []
    for i in range(n):
        animal, place = ANIMALS[(i + offset) % 8], PLACES[(i * 3 + offset) % 6]
        rows.append({"pairID": f"p{offset + i}", "captionID": f"c{offset + i}",
                     "sentence1": f"A {animal} stands in the {place}.",
                     "sentence2": f"The {animal} is {'not ' if i % 3 == 2 else ''}in a {place}.",
                     "gold_label": labels[i % 3], "annotator_labels": [labels[i % 3]]})
    return rows


def test_snli_builder_filters_balances_and_keeps_fields(tmp_path):
    train = snli_rows(30)
    train[4]["gold_label"] = "-"
    train[5]["sentence1"] = "Cannot see picture to describe."
    train[7]["sentence2"] = "n/a"
    files = [write_jsonl(tmp_path / "snli_1.0_train.jsonl", train),
             write_jsonl(tmp_path / "snli_1.0_dev.jsonl", snli_rows(15, offset=100))]
    out = build(tmp_path, "snli", files, "--eval-size", "9", "--configs", "ll_split", "ll_split_len", "random")
    for config in ("ll_split", "ll_split_len", "random"):
        rows = all_rows(out, config)
        ids = [r["id"] for part in rows.values() for r in part]
        assert len(ids) == 42 and {"train-4", "train-5", "train-7"}.isdisjoint(ids)
        assert "validation-0" in ids
        eval_labels = [r["label"] for r in rows["validation"] + rows["test"]]
        assert sorted(eval_labels) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
        first = rows["train"][0]
        assert {"premise", "hypothesis", "label", "pairID", "gold_label", "annotator_labels",
                "ll_score", "ll_tokens", "length"} <= set(first)
    card = (out / "README.md").read_text()
    assert "license: cc-by-sa-4.0" in card and "stanfordnlp/snli" in card and "Bowman" in card
    nli = datasets.ClassLabel(names=["entailment", "neutral", "contradiction"])  # as the Hub's snli
    check_features(out, ["ll_split", "ll_split_len", "random"], {"label": nli, "gold_label": datasets.Value("string")})
    assert json.loads((out / "lsplits.json").read_text())["class_labels"] == {"label": nli.names}
    frames = open_dataset(out).frames(["random"])  # readers (analyze, difficulty, Space) see the names
    assert sorted(set(frames["random"]["train"]["label"])) == ["contradiction", "entailment", "neutral"]


def test_boolq_builder_balances_answers(tmp_path):
    rows = [{"idx": i, "question": f"is the {ANIMALS[i % 8]} in the {PLACES[i % 6]}",
             "title": "Animals", "passage": f"The {ANIMALS[i % 8]} lives near the {PLACES[(i + 1) % 6]}.",
             "answer": i % 3 == 0} for i in range(40)]
    out = build(tmp_path, "boolq", [write_jsonl(tmp_path / "boolq_dev.jsonl", rows)], "--eval-size", "10",
                "--configs", "ll_split", "random")
    for config in ("ll_split", "random"):
        parts = all_rows(out, config)
        answers = [r["answer"] for r in parts["validation"] + parts["test"]]
        assert answers.count(True) == answers.count(False) == 5
        assert parts["train"][0]["id"].startswith("validation-")
    check_features(out, ["ll_split", "random"], {"answer": datasets.Value("bool")})  # BoolQ keeps a bool
    assert not json.loads((out / "lsplits.json").read_text())["class_labels"]  # no label column became a class
    # what was read is the one file given and its count, not the Hub's "train and validation pooled"
    card = (out / "README.md").read_text()
    # given by an absolute path, the file is named alone in what was read (the Settings section keeps the path as
    # given: --from-record rebuilds from it)
    assert "Read `boolq_dev.jsonl` (40 rows as split `validation`)." in card
    assert "pooled" not in card and "official test set" not in card
    assert json.loads((out / "lsplits.json").read_text())["read"] == [
        {"source": "boolq_dev.jsonl", "split": "validation", "rows": 40, "examples": 40}]


def test_generic_text_labels_become_a_class_label_in_sorted_order(tmp_path):
    rows = [{"text": f"the {ANIMALS[i % 8]} runs to the {PLACES[i % 6]}", "topic": ["sport", "animals", "zoo"][i % 3]}
            for i in range(30)]
    out = build(tmp_path, None, [write_jsonl(tmp_path / "mine.jsonl", rows)], "--query-field", "text",
                "--label-field", "topic", "--eval-size", "6", "--configs", "ll_split", "random")
    names = ["animals", "sport", "zoo"]
    check_features(out, ["ll_split", "random"], {"topic": datasets.ClassLabel(names=names)})
    assert json.loads((out / "lsplits.json").read_text())["class_labels"] == {"topic": names}
    ds = datasets.load_dataset(str(out), "random")
    by_text = {r["text"]: r["topic"] for r in rows}
    for row in ds["train"]:
        assert names[row["topic"]] == by_text[row["text"]]
    assert "`topic` is a `ClassLabel` (0 animals, 1 sport, 2 zoo)" in (out / "README.md").read_text()


SPIDER_SQL = [
    "SELECT count(*) FROM singer",
    "SELECT name FROM singer WHERE age  >  20",
    "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.singer_id",
    "SELECT avg(age) FROM singer",
    "SELECT name ,  country FROM singer ORDER BY age DESC",
    "SELECT count(*) FROM concert WHERE year  =  2014",
    "SELECT max(capacity) FROM stadium",
    "SELECT name FROM stadium WHERE capacity  >  5000",
    "SELECT DISTINCT country FROM singer",
    "SELECT name FROM singer WHERE country  =  'France'",
]


def spider_rows(n, offset=0):
    return [{"db_id": "concert_singer", "query": SPIDER_SQL[(i + offset) % len(SPIDER_SQL)],
             "question": f"How  many {ANIMALS[(i + offset) % 8]}s sing in {PLACES[i % 6]}?"} for i in range(n)]


# Templates over atoms the other queries also hold: the only groups the template config can put in eval
# (each SPIDER_SQL template holds an atom of its own, which the atom constraint keeps in train).
COMMON_ATOM_SQL = ["SELECT name FROM singer", "SELECT country FROM singer", "SELECT age FROM singer",
                   "SELECT name FROM stadium", "SELECT count(*) FROM stadium", "SELECT name, country FROM singer"]


def test_spider_builder_enforces_atom_constraint_in_every_config(tmp_path):
    from lsplits.splits.spider import sql_template

    common = [{"db_id": "concert_singer", "query": sql, "question": f"Which {ANIMALS[i % 8]}s {i}?"}
              for i, sql in enumerate(COMMON_ATOM_SQL * 2)]
    train = tmp_path / "train_spider.json"
    train.write_text(json.dumps(spider_rows(40) + common), encoding="utf-8")
    dev = write_jsonl(tmp_path / "dev.jsonl", spider_rows(20, offset=3))
    configs = ["ll_split", "ll_split_len", "random", "length", "template", "tmcd"]
    out = build(tmp_path, "spider", [str(train), dev], "--eval-size", "12", "--configs", *configs)
    for config in configs:
        parts = all_rows(out, config)
        train_atoms = set().union(*(sql_atoms(r["query"]) for r in parts["train"]))
        eval_atoms = set().union(*(sql_atoms(r["query"]) for r in parts["validation"] + parts["test"]))
        assert eval_atoms <= train_atoms, config
        assert len(parts["validation"]) + len(parts["test"]) == 12
        if config == "template":
            templates = {split: {sql_template(r["query"]) for r in rows} for split, rows in parts.items()}
            assert not templates["train"] & (templates["validation"] | templates["test"])
        assert {r["hardness"] for r in parts["train"]} <= {"easy", "medium", "hard", "extra"}
    card = (out / "README.md").read_text()
    assert (f"Read `{train.name}` (52 rows as split `train`); `{Path(dev).name}` (20 rows as split `validation`) and "
            "pooled (72 examples).") in card
    assert "train_spider and dev pooled" not in card
    record = json.loads((out / "lsplits.json").read_text())
    assert [(entry["split"], entry["rows"]) for entry in record["read"]] == [("train", 52), ("validation", 20)]
    assert set(record["constraint_effects"]) == set(configs)
    assert "| config | atom divergence | compound divergence |" in card
    assert "hardness=" in card
    check_features(out, configs, {"query": datasets.Value("string"), "hardness": datasets.Value("string")})
    ds = datasets.load_dataset(str(out), "random")
    assert not any(isinstance(f, datasets.ClassLabel) for f in ds["train"].features.values())  # no label field


def test_default_eval_size_follows_the_paper_proportions():
    from lsplits.builders import boolq, snli, spider

    assert snli.SPEC.default_eval_size(569_018) == 20_000
    assert boolq.SPEC.default_eval_size(12_697) == 5_080
    assert spider.SPEC.default_eval_size(8_034) == 2_068
    assert snli.SPEC.default_eval_size(9_842) == round(9_842 * 20_000 / 569_018)


def test_the_card_and_analyze_count_labels_by_the_same_names(tmp_path):
    """The card counted SNLI's labels as ``label=0/1/2`` (the ids it writes), ``lsplits analyze`` as names."""
    from difficulty_fixtures import build_dataset, snli_rows

    from lsplits.building.report import analyze_folder

    folder = build_dataset(tmp_path, "snli", snli_rows(), configs=("random",))
    card = (folder / "README.md").read_text(encoding="utf-8")
    [header] = [line for line in card.splitlines() if line.startswith("| split | size |")]
    card_columns = [cell.strip() for cell in header.strip("|").split("|") if cell.strip().startswith("label=")]
    assert card_columns == ["label=contradiction", "label=entailment", "label=neutral"]
    analyzed = analyze_folder(folder).splitlines()
    [analyze_header] = [line for line in analyzed if line.startswith("split ")]
    assert [word for word in analyze_header.split() if word.startswith("label=")] == card_columns
    # and the same shares: the train row of each
    card_train = [cell.strip() for cell in next(line for line in card.splitlines() if line.startswith("| train |"))
                  .strip("|").split("|")]
    analyze_train = next(line for line in analyzed if line.startswith("train ")).split()
    assert card_train[-3:] == analyze_train[-3:]
