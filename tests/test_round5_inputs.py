"""Reliability round 5, bad inputs (items 9-12 and the minor ones): each ends in one line, before the work.

Deeply nested JSON (data, gold, ``--from-record``), files that are not UTF-8 (PENMAN gold and ranks, a ``beams`` text
input), values past a stated maximum (seeds, bootstrap resamples, the demo's size), a dataset folder holding a
loading script, labels of two kinds, beam candidates that are not strings, 2-D selective inputs, a bad
``cache_dir`` and boolean queries. The CLI cases run ``lsplits.cli.parser.main`` in this process, as
``tests/test_bad_inputs.py`` does, and assert exit code 2, one stderr line naming the file / line / option and
no traceback.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import numpy as np
import pytest
from test_bad_inputs import (
    GOLD_AMR,
    beams_and_gold,
    beams_inputs,
    build_argv,
    difficulty_argv,
    difficulty_folder,
    run_in_process,
    text_rows,
    ue_argv,
    write_jsonl,
    write_penman,
)

from lsplits.errors import DataError, InvalidInput, InvalidOption

REPO = Path(__file__).resolve().parents[1]
DEEP = 100_000
"""Levels of nesting well past Python's recursion limit (its JSON reader raised RecursionError)."""


def one_line(argv: list[str], folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
             *fragments: str) -> str:
    """Run ``lsplits ARGV`` in ``folder``; assert exit 2, no traceback and one stderr line holding every fragment."""
    result = run_in_process([str(item) for item in argv], folder, monkeypatch, capsys)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, (result.returncode, result.stderr[-3000:])
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert len(lines) == 1, result.stderr[-3000:]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def deep_value(depth: int = DEEP) -> str:
    """A JSON array nested ``depth`` levels deep."""
    return "[" * depth + "]" * depth


# --- item 9: JSON nested too deeply -------------------------------------------------------------------------


def test_deep_jsonl_data_is_one_line(tmp_path, monkeypatch, capsys):
    lines = [json.dumps(row) for row in text_rows()]
    lines[2] = lines[2][:-1] + f', "extra": {deep_value()}}}'
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    one_line(build_argv(data, tmp_path / "out"), tmp_path, monkeypatch, capsys,
             "data.jsonl", "line 3", f"JSON nested {DEEP + 1} levels deep")  # the row's object, then the list
    assert not (tmp_path / "out").exists()


def test_deep_json_data_names_the_line_of_the_nesting(tmp_path, monkeypatch, capsys):
    rows = [json.dumps(row) for row in text_rows(4)]
    rows[3] = rows[3][:-1] + f', "extra": {deep_value()}}}'
    data = tmp_path / "data.json"
    data.write_text("[\n" + ",\n".join(rows) + "\n]\n", encoding="utf-8")
    one_line(build_argv(data, tmp_path / "out"), tmp_path, monkeypatch, capsys,
             "data.json", "line 5", "nested", "levels deep")


def test_deep_gold_jsonl_is_one_line(tmp_path, monkeypatch, capsys):
    beams, _ = beams_and_gold(tmp_path)
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "ex0", "amr": GOLD_AMR[0]}) + "\n"
                    + '{"id": "ex1", "amr": ' + json.dumps(GOLD_AMR[1]) + f', "x": {deep_value()}}}\n', encoding="utf-8")
    one_line(ue_argv(tmp_path, [beams], gold), tmp_path, monkeypatch, capsys,
             "gold.jsonl", "line 2", f"JSON nested {DEEP + 1} levels deep")


def test_deep_settings_file_is_one_line(tmp_path, monkeypatch, capsys):
    settings = tmp_path / "settings.json"
    settings.write_text('{"settings": {"lm": "scratch",\n "configs": ' + deep_value() + "}}", encoding="utf-8")
    data = write_jsonl(tmp_path / "data.jsonl", text_rows())
    one_line([*build_argv(data, tmp_path / "out"), "--from-record", settings], tmp_path, monkeypatch, capsys,
             "--from-record", "settings.json", "line 2", f"JSON nested {DEEP + 2} levels deep")


def test_settings_file_of_invalid_json_names_the_line(tmp_path, monkeypatch, capsys):
    settings = tmp_path / "settings.json"
    settings.write_text('{"settings": {"lm": "scratch",\n "seed": }}', encoding="utf-8")
    data = write_jsonl(tmp_path / "data.jsonl", text_rows())
    one_line([*build_argv(data, tmp_path / "out"), "--from-record", settings], tmp_path, monkeypatch, capsys,
             "--from-record", "settings.json", "line 2", "invalid JSON")


def test_parse_json_keeps_shallow_documents_and_counts_depth_outside_strings():
    from lsplits.data.files import parse_json

    assert parse_json('{"a": [1, {"b": "[[["}]}', "x.json") == {"a": [1, {"b": "[[["}]}
    with pytest.raises(DataError) as error:
        parse_json('{"s": "[[[[\\"]]]", "deep":\n' + deep_value(5000) + "}", "x.json")
    assert str(error.value).startswith("x.json, line 2: JSON nested 5001 levels deep")


# --- item 10: files that are not UTF-8 ----------------------------------------------------------------------


def _latin1_penman(path: Path, bad_graph: int) -> Path:
    """A PENMAN file of the gold graphs with ids, graph ``bad_graph`` holding a Latin-1 byte (line 3 per graph)."""
    write_penman(path, [(f"ex{i}", g) for i, g in enumerate(GOLD_AMR)])
    lines = path.read_bytes().split(b"\n")
    line = 3 * bad_graph + 1  # 0-based: "# ::id", graph, blank per example
    lines[line] = lines[line].replace(b")", b' :name "Jos\xe9")', 1)
    path.write_bytes(b"\n".join(lines))
    return path


def test_gold_penman_not_utf8_is_one_line(tmp_path, monkeypatch, capsys):
    beams, _ = beams_and_gold(tmp_path)
    gold = _latin1_penman(tmp_path / "gold.amr", bad_graph=2)
    one_line(ue_argv(tmp_path, [beams], gold), tmp_path, monkeypatch, capsys,
             "gold.amr", "line 8", "byte 0xe9", "not UTF-8")


def test_rank_penman_not_utf8_is_one_line(tmp_path, monkeypatch, capsys):
    rank1 = _latin1_penman(tmp_path / "beam1.amr", bad_graph=1)
    gold = write_penman(tmp_path / "gold.amr", [(f"ex{i}", g) for i, g in enumerate(GOLD_AMR)])
    one_line(ue_argv(tmp_path, [rank1], gold), tmp_path, monkeypatch, capsys,
             "beam1.amr", "line 5", "not UTF-8")


def test_beams_text_input_not_utf8_is_one_line(tmp_path, monkeypatch, capsys):
    inputs = tmp_path / "sentences.txt"
    inputs.write_bytes(b"the boy wants to go\nthe caf\xe9 is open\n")
    one_line(["beams", "no-model", inputs, "--out", tmp_path / "out" / "beams.jsonl", "--no-progress"],
             tmp_path, monkeypatch, capsys, "sentences.txt", "line 2", "byte 0xe9", "not UTF-8")


def test_beams_text_input_is_read_as_before(tmp_path):
    from lsplits.generation.inputs import read_inputs

    read = read_inputs(str(beams_inputs(tmp_path)))
    assert read.ids == ["0", "1", "2"]
    assert read.texts == ["the boy wants to go", "the dog runs", "the cat sleeps"]


# --- item 11: stated maxima ---------------------------------------------------------------------------------


def test_score_seed_above_the_maximum_is_one_line(tmp_path, monkeypatch, capsys):
    data = write_jsonl(tmp_path / "data.jsonl", text_rows())
    argv = ["score", "--data-files", data, "--query-field", "text", "--lm", "scratch", "--out", tmp_path / "out",
            "--max-steps", "2", "--no-progress", "--seed", "99999999999999999999999"]
    one_line(argv, tmp_path, monkeypatch, capsys, "--seed must be at most 4294967295", "99999999999999999999999")


def test_likelihood_splits_seed_above_the_maximum_is_refused_before_training():
    from lsplits.api import likelihood_splits

    with pytest.raises(InvalidOption, match=r"^seed must be at most 4294967295 .*, got 1180591620717411303424$"):
        likelihood_splits(text_rows(), query_field="text", lm="scratch", configs=["ll_split"], eval_size=8,
                          max_steps=1, seed=2**70)  # was torch's "Overflow when unpacking long long"


def test_difficulty_seed_above_the_maximum_is_one_line(tmp_path, monkeypatch, capsys):
    argv = difficulty_argv(difficulty_folder(tmp_path / "data"), "--seed", str(2**32))
    one_line(argv, tmp_path, monkeypatch, capsys, "--seed must be at most 4294967295", f"got {2**32}")


def test_ue_bootstrap_above_the_maximum_is_one_line(tmp_path, monkeypatch, capsys):
    beams, gold = beams_and_gold(tmp_path)
    one_line(ue_argv(tmp_path, [beams], gold, "--n-bootstrap", "100000000000"), tmp_path, monkeypatch, capsys,
             "--n-bootstrap must be at most 100000", "got 100000000000")


def test_difficulty_bootstrap_above_the_maximum_is_one_line(tmp_path, monkeypatch, capsys):
    argv = difficulty_argv(difficulty_folder(tmp_path / "data"), "--n-bootstrap", "100000000000")
    one_line(argv, tmp_path, monkeypatch, capsys, "--n-bootstrap must be at most 100000", "got 100000000000")


def test_prr_metric_bootstrap_above_the_maximum():
    import evaluate

    prr = evaluate.load(str(REPO / "metrics" / "prr"))
    with pytest.raises(InvalidOption, match=r"^n_bootstrap must be at most 100000 .*, got 100000000000$"):
        prr.compute(uncertainties=[0.1, 0.5, 0.9], qualities=[0.9, 0.5, 0.1], n_bootstrap=10**11)
    at_most = prr.compute(uncertainties=[0.1, 0.5, 0.9], qualities=[0.9, 0.5, 0.1], n_bootstrap=100)
    assert at_most["prr_ci_low"] <= at_most["prr"] <= at_most["prr_ci_high"]


def test_demo_size_above_the_maximum_is_one_line_at_once(tmp_path, monkeypatch, capsys):
    started = time.monotonic()
    one_line(["demo", "--n", "10000000000000", "--out", tmp_path / "out"], tmp_path, monkeypatch, capsys,
             "--n must be at most 100000", "got 10000000000000")
    assert time.monotonic() - started < 30
    assert not (tmp_path / "out").exists()


def test_maximum_is_checked_where_params_check_is():
    from lsplits.params import MAX_BOOTSTRAP, MAX_SEED, check

    assert check("seed", MAX_SEED) == MAX_SEED
    assert check("n_bootstrap", MAX_BOOTSTRAP) == MAX_BOOTSTRAP
    with pytest.raises(InvalidOption, match=r"^seed must be a whole number >= 0 \(a random seed\), got -1$"):
        check("seed", -1)  # the rule's message is unchanged below the interval


# --- item 12: a dataset folder holding a loading script -----------------------------------------------------


def _scripted_folder(folder: Path) -> Path:
    """A dataset folder ``mydata`` with its loading script ``mydata.py`` and a data file beside it."""
    data = folder / "mydata"
    write_jsonl(data / "test.jsonl", [{"text": row["text"], "topic": row["topic"]} for row in text_rows()])
    (data / "mydata.py").write_text("import datasets\nraise SystemExit('this script must not run')\n",
                                    encoding="utf-8")
    return data


def test_build_of_a_folder_with_a_dataset_script_is_one_line(tmp_path, monkeypatch, capsys):
    folder = _scripted_folder(tmp_path)
    argv = ["build", f"{folder}", "--query-field", "text", "--label-field", "topic", "--lm", "scratch",
            "--out", tmp_path / "out", "--max-steps", "2", "--no-progress"]
    one_line(argv, tmp_path, monkeypatch, capsys, str(folder), "holds the dataset script mydata.py",
             "no longer runs dataset scripts")


def test_beams_of_a_folder_with_a_dataset_script_is_one_line(tmp_path, monkeypatch, capsys):
    folder = _scripted_folder(tmp_path)
    one_line(["beams", "no-model", folder, "--out", tmp_path / "out" / "beams.jsonl", "--no-progress"],
             tmp_path, monkeypatch, capsys, str(folder), "holds the dataset script mydata.py")


# --- minor items ---------------------------------------------------------------------------------------------


def test_labels_of_two_kinds_are_refused(tmp_path, monkeypatch, capsys):
    rows = text_rows()
    for i, row in enumerate(rows):
        row["topic"] = ["a", "b", "c"][i % 3] if i % 2 else i % 3  # 0, 1, 2 and "a", "b", "c": six classes
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    one_line(build_argv(data, tmp_path / "out"), tmp_path, monkeypatch, capsys,
             "data.jsonl", "field 'topic'", "labels of two kinds", "'b' (example 'data-1') is text",
             "0 (example 'data-0') is a number")


def test_labels_of_one_kind_still_load():
    from lsplits.data.loading import prepare_examples
    from lsplits.data.tasks import generic_task

    task = generic_task(query_field="text", label_field="topic")
    rows = [{"text": f"w{i}", "topic": i % 3} for i in range(6)]
    loaded = prepare_examples([("data", rows, "data.jsonl")], task)
    assert [example["topic"] for example in loaded.examples] == [0, 1, 2, 0, 1, 2]


BEAM_CASES = [
    ([["(a / cat)", ["x", "y"]]], "candidate 1 of example 0 is list"),
    ([["(a / cat)", "(a / cat)"], ["(a / cat)", 3, "(a / cat)"]], "candidate 1 of example 1 is int"),
    ([[None]], "candidate 0 of example 0 is NoneType"),
    ([["(a / cat)"], None], "candidates of example 1 is NoneType"),
]


@pytest.mark.parametrize(("candidates", "message"), BEAM_CASES, ids=["nested-list", "int", "none", "example-none"])
def test_beam_uncertainty_metric_refuses_candidates_that_are_not_strings(candidates, message):
    import evaluate

    metric = evaluate.load(str(REPO / "metrics" / "beam_uncertainty"), "rougel")
    with pytest.raises(InvalidInput, match=message):
        metric.compute(candidates=candidates, estimators=["degmat"])


def test_beam_uncertainty_metric_checks_candidates_added_one_example_at_a_time():
    import evaluate

    metric = evaluate.load(str(REPO / "metrics" / "beam_uncertainty"), "rougel")
    metric.add(candidates=["a cat", "a cat"])
    with pytest.raises(InvalidInput, match=r"candidate 1 of example 0 is int \(3\), not a string"):
        metric.add(candidates=["a cat", 3])


def test_beam_uncertainty_metric_counts_only_unparsable_strings_invalid():
    import evaluate

    metric = evaluate.load(str(REPO / "metrics" / "beam_uncertainty"), "smatchpp")
    out = metric.compute(candidates=[["(a / cat)", "(a / cat)", ""], ["(a / cat)", "(d / dog)"]],
                         estimators=["degmat"])
    assert out["invalid_candidates"] == [1, 0]


def test_calibrate_threshold_refuses_2d_inputs():
    from lsplits.uncertainty.selective import calibrate_threshold

    u = np.array([[0.1, 0.2, 0.3, 0.4]] * 50)
    q = np.array([[1.0, 0.9, 0.5, 0.0]] * 50)
    with pytest.raises(InvalidInput, match=r"uncertainties must be a flat list of numbers, one per example, got "
                                            r"an array of shape \(50, 4\)"):
        calibrate_threshold(u, q, target_risk=0.2)
    with pytest.raises(InvalidInput, match=r"qualities must be a flat list .* shape \(200, 1\)"):
        calibrate_threshold(u.ravel(), q.reshape(-1, 1), target_risk=0.2)
    with pytest.raises(InvalidInput, match=r"qualities\['bad'\] must be a flat list .* shape \(200, 1\)"):
        calibrate_threshold(u.ravel(), {"bad": (1 - q).reshape(-1, 1)}, target_risk={"bad": 0.2})
    rule = calibrate_threshold(u.ravel(), q.ravel(), target_risk=0.2)
    assert rule.certified and rule.threshold == 0.2


def test_rule_predict_of_text_names_the_argument():
    from lsplits.uncertainty.selective import calibrate_threshold

    rule = calibrate_threshold([0.1, 0.2, 0.3, 0.4] * 50, [1.0, 0.9, 0.5, 0.0] * 50, target_risk=0.2)
    with pytest.raises(InvalidInput, match=r"uncertainties must be numbers, got 'x' \(str\)"):
        rule.predict(["x"])
    assert rule.predict([0.1, 0.5]).tolist() == [True, False]


@pytest.mark.parametrize("function", ["score", "likelihood_splits"])
def test_cache_dir_of_the_wrong_type_is_an_invalid_option(function):
    import lsplits.api

    with pytest.raises(InvalidOption, match=r"^cache_dir must be a folder path \(a str or os.PathLike\) or None, "
                                            r"got 3$"):
        getattr(lsplits.api, function)(text_rows(), query_field="text", lm="scratch", setting="ft", max_steps=1,
                                       cache_dir=3)  # was a TypeError from pathlib, after loading


def test_boolean_queries_are_called_booleans(caplog):
    from lsplits.data.loading import prepare_examples
    from lsplits.data.tasks import generic_task

    task = generic_task(query_field="flag")
    rows = [{"flag": i % 2 == 0} for i in range(4)] + [{"flag": "a sentence"}]
    with caplog.at_level(logging.WARNING, logger="lsplits.data.loading"):
        prepare_examples([("data", rows, "data.jsonl")], task)
    said = [record.getMessage() for record in caplog.records]
    assert any("4 of 5 queries (field 'flag') are booleans, not text" in line and "True and False" in line
               for line in said), said
    assert not any("are numbers" in line for line in said), said
