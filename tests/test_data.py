"""Loading local files: stable ids, field checks, filters and readable errors."""

from __future__ import annotations

import json
import re

import pytest

from lsplits.builders.common import official_split_name
from lsplits.data.files import read_records
from lsplits.data.loading import load_examples, parse_data_files
from lsplits.data.tasks import generic_task
from lsplits.errors import ConfigError, DataError


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
    with pytest.raises(ConfigError, match="prompt_template is not a template"):
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


# --- broken files: each gives one DataError naming the file and where in it -------------------------------


def test_non_utf8_byte_is_named_by_line_and_byte_offset(tmp_path):
    lines = [b'{"text": "a"}\n', b'{"text": "b"}\n', b'{"text": "caf\xe9 au lait"}\n']
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"".join(lines))
    in_line = lines[2].index(b"\xe9")
    offset = len(lines[0]) + len(lines[1]) + in_line
    assert path.read_bytes()[offset] == 0xE9
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}, line 3: byte 0xe9 at byte offset {offset} "
                                        rf"\(offset {in_line} in the line\) is not UTF-8"):
        read_records(path)
    for suffix, content, line in ((".csv", b"text,label\na,x\ncaf\xe9,y\n", 3),
                                  (".json", b'[{"text": "a"},\n{"text": "\xe9"}]', 2)):
        other = tmp_path / f"d{suffix}"
        other.write_bytes(content)
        bad = content.index(b"\xe9")
        with pytest.raises(DataError, match=rf"^{re.escape(str(other))}, line {line}: byte 0xe9 at byte offset {bad} "):
            read_records(other)


def test_lone_surrogate_is_named_by_line_and_field(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "a", "topic": "x"}\n\n{"text": "b", "topic": "caf\\ud800"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"d\.jsonl, line 3, field 'topic': holds the lone surrogate \\ud800"):
        read_records(path)
    nested = tmp_path / "n.json"
    nested.write_text('[{"text": "a"}, {"text": "b", "tags": ["ok", "\\udfff"]}]', encoding="utf-8")
    with pytest.raises(DataError, match=r"n\.json, record 2, field 'tags': holds the lone surrogate \\udfff"):
        read_records(nested)
    pair = tmp_path / "p.jsonl"  # a full surrogate pair is an ordinary character
    pair.write_text('{"text": "smile \\ud83d\\ude00"}\n', encoding="utf-8")
    assert read_records(pair) == [{"text": "smile \U0001F600"}]


def test_file_that_is_not_parquet_or_is_cut_short(tmp_path):
    fake = tmp_path / "d.parquet"
    fake.write_text('{"text": "a"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"d\.parquet: not a parquet file: .*another format under a \.parquet name"):
        read_records(fake)
    import pandas as pd

    real = tmp_path / "r.parquet"
    pd.DataFrame({"text": ["a b"] * 50}).to_parquet(real)
    real.write_bytes(real.read_bytes()[:-30])
    with pytest.raises(DataError, match=r"r\.parquet: not a parquet file: .*\(truncated\?\)"):
        read_records(real)


def test_broken_json_csv_and_folders_give_one_line(tmp_path):
    cut = tmp_path / "cut.json"
    cut.write_text('[{"text": "a"},\n {"text": "b', encoding="utf-8")
    with pytest.raises(DataError, match=r"cut\.json, line 2: invalid JSON: Unterminated string starting at column 11 "
                                        r"\(it ends too early: truncated\?\)"):
        read_records(cut)
    lines = tmp_path / "lines.json"  # JSON Lines under a .json name is still read, line by line
    lines.write_text('{"text": "a"}\n{"text": "b"\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"lines\.json, line 2: invalid JSON: Expecting ',' delimiter at column 13"):
        read_records(lines)
    quote = tmp_path / "q.csv"
    quote.write_text('text,label\n"open quote,x\nb,y\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"q\.csv: cannot read CSV: Error tokenizing data\. C error: EOF inside string") \
            as caught:
        read_records(quote)
    assert "\n" not in str(caught.value)
    (tmp_path / "folder.jsonl").mkdir()
    with pytest.raises(DataError, match=r"folder\.jsonl: is a folder, not a data file"):
        read_records(tmp_path / "folder.jsonl")


def test_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"text": "a"}\n{"text": "b"}\n')
    assert read_records(path) == [{"text": "a"}, {"text": "b"}]
    csv = tmp_path / "bom.csv"
    csv.write_bytes(b"\xef\xbb\xbftext,label\na,x\n")
    assert read_records(csv) == [{"text": "a", "label": "x"}]


def test_a_missing_local_path_is_not_looked_up_on_the_hub(tmp_path, monkeypatch):
    import datasets

    def no_hub(*args, **kwargs):
        raise AssertionError("the Hub was asked")

    monkeypatch.setattr(datasets, "load_dataset", no_hub)
    monkeypatch.chdir(tmp_path)
    for name in ("./data/train.jsonl", "train.jsonl", "../x"):
        with pytest.raises(DataError, match=rf"^{re.escape(name)}: no such file or folder$"):
            load_examples(generic_task("text"), data=name)


def test_official_file_without_a_field_the_builder_reads(tmp_path):
    from lsplits.builders.snli import load

    path = write_jsonl(tmp_path / "snli_1.0_dev.jsonl",
                       [{"sentence1": "a", "sentence2": "b", "gold_label": "neutral"}, {"sentence1": "c"}])
    with pytest.raises(DataError, match=r"snli_1\.0_dev\.jsonl, line 2, field 'sentence2': missing field "
                                        r"\(the record has: sentence1\)"):
        load(data_files=[str(path)])


def test_null_or_blank_queries_of_every_builder_are_dropped_and_counted(tmp_path):
    """A Spider or BoolQ question that is null would be scored as the text "None": it is dropped, counted."""
    from lsplits.builders import boolq, spider

    sql = "SELECT name FROM singer WHERE age  >  20"
    rows = [{"db_id": "concert_singer", "query": sql, "question": q} for q in ("Which singers?", None, "  ", "Who?")]
    loaded = spider.load(data_files=[str(write_jsonl(tmp_path / "dev.jsonl", rows))])
    assert [ex["id"] for ex in loaded.examples] == ["validation-0", "validation-3"]
    assert loaded.dropped == {"empty query": 2}
    rows = [{"question": q, "passage": "p", "answer": True} for q in ("is it?", float("nan"), "")]
    loaded = boolq.load(data_files=[f"train={write_jsonl(tmp_path / 'train.jsonl', rows)}"])
    assert [ex["id"] for ex in loaded.examples] == ["train-0"] and loaded.dropped == {"empty query": 2}


def test_missing_labels_are_refused_or_dropped_and_user_fields_renamed(tmp_path):
    from lsplits.data.loading import LoadOptions

    rows = [{"text": "a b", "topic": "x", "ll_score": 1.5}, {"text": "c", "topic": None, "ll_score": 2.5},
            {"text": "d", "topic": float("nan"), "ll_score": 3.5}, {"text": "e", "topic": "y", "ll_score": 4.5}]
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    task = generic_task("text", label_field="topic")
    with pytest.raises(DataError, match="field 'll_score'.*lsplits writes its own 'll_score'.*values with rename ll_score="):
        load_examples(task, data_files=[str(path)])
    renamed = LoadOptions.from_cli("error", ["ll_score=my_score"])
    with pytest.raises(DataError, match=r"field 'topic'.*2 of 4 examples have no label.*the first is 'd-1'"):
        load_examples(task, data_files=[str(path)], options=renamed)
    loaded = load_examples(task, data_files=[str(path)], options=LoadOptions.from_cli("drop", ["ll_score=my_score"]))
    assert [(ex["id"], ex["my_score"]) for ex in loaded.examples] == [("d-0", 1.5), ("d-3", 4.5)]
    assert "ll_score" not in loaded.examples[0] and loaded.dropped == {"missing label": 2}
    with pytest.raises(ConfigError, match="^missing_labels must be one of error, drop, got 'keep'$"):
        LoadOptions(missing_labels="keep")
    with pytest.raises(ConfigError, match="'a' is named twice"):
        LoadOptions.from_cli("error", ["a=b", "a=c"])


def test_load_options_check_every_field_when_built():
    """LoadOptions is a Checked settings class: rename is a list of (OLD, NEW) pairs (a list of lists becomes a
    tuple of tuples), drop_labels a list of texts, each refused in one line naming the field."""
    from lsplits.data.loading import LoadOptions

    assert LoadOptions(rename=[["a", "b"]], drop_labels=["-"]) == LoadOptions(rename=(("a", "b"),), drop_labels=("-",))
    for values, message in ((dict(rename=(("a", "a"),)), "rename entries must be OLD=NEW with two different names"),
                            (dict(rename=[("a",)]), "rename item 0 must be a pair, each a non-empty string"),
                            (dict(rename=(("a", "b"), ("", "c"))), "rename item 1 must be a pair"),
                            (dict(rename=("a", "b")), "rename item 0 must be a pair"),
                            (dict(drop_labels="-"), "drop_labels must be a list, each text"),
                            (dict(drop_labels=("-", 0)), "drop_labels item 1 must be text (labels as text), got 0")):
        with pytest.raises(ConfigError) as caught:
            LoadOptions(**values)
        assert str(caught.value).startswith(message), str(caught.value)
    with pytest.raises(ConfigError, match="^rename item 0 must be a pair, each a non-empty string"):
        LoadOptions.from_cli("error", ["=b"])


def test_bulk_loading_pauses_the_cyclic_collector_and_restores_it():
    import gc

    from lsplits.data.loading import bulk_loading

    assert gc.isenabled()
    with bulk_loading():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with bulk_loading():
            pass
        assert not gc.isenabled()  # a caller's own choice is kept
    finally:
        gc.enable()


@pytest.mark.parametrize("query, kind", [(["a", "dog", "runs"], "list"), ({"text": "a dog"}, "dict")])
def test_a_list_or_dict_query_is_refused_naming_its_line_not_scored_as_its_repr(tmp_path, query, kind):
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps({"text": "a cat sleeps"}) + "\n" + json.dumps({"text": query}) + "\n")
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}, line 2, example 'data-1', field 'text': the "
                                        rf"query is a {kind} \(.*\), not text: it would be scored as its Python repr"):
        load_examples(generic_task("text"), data_files=[str(path)])


def test_number_and_empty_queries_are_warned_about_where_a_notebook_shows_it(tmp_path, caplog):
    path = tmp_path / "data.jsonl"
    rows = [{"text": "a cat sleeps"}, {"text": 42}, {"text": None}, {"text": float("nan")}, {"text": 7}]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    with caplog.at_level("WARNING", logger="lsplits.data.loading"):
        loaded = load_examples(generic_task("text"), data_files=[str(path)])
    assert [example["text"] for example in loaded.examples] == ["a cat sleeps", 42, 7]
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "dropped 2 of 5 examples: empty query" in warnings
    assert "2 of 5 queries (field 'text') are numbers, not text, and are scored as their digits; the first is " \
           "example 'data-1': 42" in warnings


def test_rows_that_are_all_identical_are_warned_about(tmp_path, caplog):
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps({"text": "a dog runs", "label": "x"}) + "\n" for _ in range(4)))
    with caplog.at_level("WARNING", logger="lsplits.data.loading"):
        loaded = load_examples(generic_task("text", label_field="label"), data_files=[str(path)])
    assert len(loaded.examples) == 4
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [
        "all 4 examples are the same row (every field but the id is equal): their scores tie, so a split of them "
        "says nothing about likelihood"]
    caplog.clear()
    other = tmp_path / "other.jsonl"  # the same query with another label is another row
    other.write_text(json.dumps({"text": "a dog runs", "label": "x"}) + "\n" + json.dumps({"text": "a dog runs",
                                                                                           "label": "y"}) + "\n")
    with caplog.at_level("WARNING", logger="lsplits.data.loading"):
        load_examples(generic_task("text", label_field="label"), data_files=[str(other)])
    assert [r for r in caplog.records if r.levelname == "WARNING"] == []
