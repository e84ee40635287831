"""Loading local files: stable ids, field checks, filters and readable errors."""

from __future__ import annotations

import json

import pytest

from builders.common import official_split_name
from lsplits.data import load_examples, parse_data_files, read_records
from lsplits.errors import ConfigError, DataError
from lsplits.tasks import generic_task


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_ids_point_back_to_source_and_index(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [{"text": "x"}, {"text": ""}, {"text": "z"}])
    b = write_jsonl(tmp_path / "b.jsonl", [{"text": "w"}])
    loaded = load_examples(generic_task("text"), data_files=[f"train={a}", str(b)])
    assert [ex["id"] for ex in loaded.examples] == ["train-0", "train-2", "b-0"]
    assert loaded.dropped == {"empty query": 1}
    assert [ex["source_split"] for ex in loaded.examples] == ["train", "train", "b"]


def test_own_id_field_is_kept_and_duplicates_rejected(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "q1", "text": "a"}, {"id": "q1", "text": "b"}])
    with pytest.raises(DataError, match=r"d.jsonl.*'q1'.*duplicate id"):
        load_examples(generic_task("text"), data_files=[str(path)])


def test_missing_field_names_field_and_file(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"sentence": "a"}])
    with pytest.raises(DataError, match=r"d.jsonl.*field 'text'.*has: sentence"):
        load_examples(generic_task("text"), data_files=[str(path)])


def test_missing_field_on_a_later_line_names_the_line(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"text": "a", "label": 1}, {"text": "b"}])
    with pytest.raises(DataError, match=r"line 2.*'label'"):
        load_examples(generic_task("text"), data_files=[str(path)])


def test_bad_json_line_is_reported_with_line_number(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "a"}\n{"text": \n', encoding="utf-8")
    with pytest.raises(DataError, match=r"d.jsonl, line 2: invalid JSON"):
        read_records(path)


def test_empty_dataset_is_an_error(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"text": " "}])
    with pytest.raises(DataError, match="empty"):
        load_examples(generic_task("text"), data_files=[str(path)])


def test_csv_and_parquet_read_the_same_rows(tmp_path):
    import pandas as pd

    frame = pd.DataFrame({"text": ["a b", "c"], "label": ["x", "y"]})
    frame.to_csv(tmp_path / "d.csv", index=False)
    frame.to_parquet(tmp_path / "d.parquet")
    assert read_records(tmp_path / "d.csv") == read_records(tmp_path / "d.parquet") == frame.to_dict("records")


def test_prompt_template_fields_are_required(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"text": "a"}])
    task = generic_task("text", "Title: {title}")
    with pytest.raises(DataError, match="'title'"):
        load_examples(task, data_files=[str(path)])
    with pytest.raises(ConfigError, match="prompt-template"):
        generic_task("text", "Title: {title")


def test_generic_task_prompt_and_query_formats():
    task = generic_task("q", "Context: {c}")
    ex = {"q": "why?", "c": "sky"}
    assert (task.prompt_text(ex), task.query_text(ex)) == ("Context: sky", " why?")
    bare = generic_task("q")
    assert (bare.prompt_text(ex), bare.query_text(ex)) == ("", "why?")


def test_data_file_naming():
    assert parse_data_files(["train=x/a.jsonl", "y/b.csv"])[0][0] == "train"
    assert parse_data_files(["y/b.csv"])[0][0] == "b"
    assert official_split_name("snli_1.0_dev.jsonl") == "validation"
    assert official_split_name("train_spider.json") == "train"
    with pytest.raises(DataError, match="share the source name"):
        parse_data_files(["a/x.jsonl", "b/x.jsonl"])
