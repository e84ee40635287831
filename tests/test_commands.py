"""The CLI subcommands of lsplits.cli.commands called directly with parsed arguments: which dataset and
spec a command gets, which paths it treats as inputs, which training config, and the refusals that
come before any work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from space_helpers import build_fixture_dataset

from lsplits.building.record import settings_of_record
from lsplits.building.settings import BuildSettings
from lsplits.cli import commands, publish
from lsplits.cli.parser import build_parser, in_cli_words, settings_of
from lsplits.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]


def parse(*argv: str):
    return build_parser().parse_args(list(argv))


def build_settings(*argv):
    return settings_of(parse(*argv), BuildSettings)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_builder_name_gives_its_spec_and_a_file_the_generic_task(tmp_path):
    from lsplits.builders import boolq

    rows = [{"question": f"is it {i}", "answer": i % 2 == 0, "passage": f"passage {i}"} for i in range(6)]
    official = write_jsonl(tmp_path / "boolq_dev.jsonl", rows)
    spec, loaded = commands.resolve_dataset(build_settings("build", "boolq", "--data-files", str(official), "--out", "o"))
    assert spec is boolq.SPEC and [ex["id"] for ex in loaded.examples] == [f"validation-{i}" for i in range(6)]
    own = write_jsonl(tmp_path / "mine.jsonl", [{"text": f"line {i}", "topic": "ab"[i % 2]} for i in range(5)])
    spec, loaded = commands.resolve_dataset(build_settings("build", "--data-files", str(own), "--query-field", "text",
                                                  "--label-field", "topic", "--out", "o"))
    assert (spec.task.name, spec.task.query_field, spec.task.label_field) == ("generic", "text", "topic")
    assert spec.card.pretty_name == "mine (Likelihood Splits)" and len(loaded.examples) == 5
    with pytest.raises(ConfigError, match="^query_field is needed for a generic dataset: the field the LM scores$") \
            as caught:
        commands.resolve_dataset(build_settings("build", "--data-files", str(own), "--out", "o"))
    assert str(in_cli_words(caught.value, "build")).startswith("--query-field is needed")


def test_inputs_and_caches_are_refused_as_outputs_before_any_work(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [{"text": "a"}])
    args = parse("build", str(tmp_path), "--data-files", f"train={data}", "--query-field", "text",
                 "--out", str(data), "--cache-dir", str(tmp_path / "cache"))
    assert commands.input_paths(args) == [data, tmp_path]
    with pytest.raises(ConfigError, match=f"^out {data}: is the input") as caught:
        commands.check_out(args, "folder")
    assert str(in_cli_words(caught.value, "build")).startswith(f"--out {data}: is the input")
    args.out = tmp_path / "cache" / ".."
    with pytest.raises(ConfigError, match="holds the input"):
        commands.check_out(args, "folder")
    args = parse("build", "snli", "--out", str(tmp_path / "c"), "--cache-dir", str(tmp_path / "c" / "scores"))
    assert commands.input_paths(args) == []  # a builder name is not a path
    with pytest.raises(ConfigError, match="is or holds the cache folder"):
        commands.check_out(args, "folder")


def test_prompted_scores_need_a_pretrained_lm(tmp_path):
    data = write_jsonl(tmp_path / "d.jsonl", [{"text": f"line {i}"} for i in range(4)])
    with pytest.raises(ConfigError, match="setting 'pt' needs a pretrained LM"):
        commands.score(parse("score", "--data-files", str(data), "--query-field", "text", "--setting", "pt",
                             "--out", str(tmp_path / "s.parquet"), "--cache-dir", str(tmp_path / "cache")))
    assert not (tmp_path / "cache").exists() and not (tmp_path / "s.parquet").exists()


def test_push_refuses_a_folder_that_is_not_a_build(tmp_path):
    with pytest.raises(ConfigError, match="no README.md; is this a folder written by `lsplits build`"):
        publish.push(parse("push", str(tmp_path), "org/x"))


def test_only_rank_zero_writes(tmp_path, monkeypatch):
    """The other ranks of a launched run score their share but leave the output to rank 0."""
    from lsplits.lm import distributed

    data = write_jsonl(tmp_path / "d.jsonl", [{"text": f"line number {i} of the test"} for i in range(6)])
    argv = ["score", "--data-files", str(data), "--query-field", "text", "--folds", "2", "--max-steps", "1",
            "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    monkeypatch.setattr(distributed, "is_main", lambda: False)
    assert commands.score(parse(*argv, "--out", str(tmp_path / "other.parquet"))) == 0
    assert not (tmp_path / "other.parquet").exists()
    monkeypatch.undo()
    assert commands.score(parse(*argv, "--out", str(tmp_path / "main.parquet"))) == 0
    assert len(pd.read_parquet(tmp_path / "main.parquet")) == 6


def test_score_keeps_every_field_of_the_data_in_input_order(tmp_path):
    """Issue 38 item 8: the parquet of lsplits score held id, ll_score and ll_tokens alone, so using it needed a
    join back to the data; it holds every field (a renamed one under its new name), as lsplits.score returns them."""
    import lsplits

    rows = [{"text": f"line number {i} of the {'long ' * (i % 4)}test", "topic": "ab"[i % 2], "n": i,
             "ll_score": f"mine {i}"} for i in range(8)][::-1]
    data = write_jsonl(tmp_path / "d.jsonl", rows)
    common = dict(folds=2, max_steps=1, cache_dir=tmp_path / "cache")
    argv = ["score", "--data-files", str(data), "--query-field", "text", "--folds", "2", "--max-steps", "1",
            "--rename", "ll_score=note", "--cache-dir", str(common["cache_dir"]), "--no-progress"]
    assert commands.score(parse(*argv, "--out", str(tmp_path / "s.parquet"))) == 0
    written = pd.read_parquet(tmp_path / "s.parquet")
    assert list(written.columns) == ["id", "text", "topic", "n", "note", "source_split", "ll_score", "ll_tokens",
                                     "fold"]
    assert written[["text", "topic", "n"]].to_dict("records") == [
        {key: row[key] for key in ("text", "topic", "n")} for row in rows]
    assert list(written["note"]) == [row["ll_score"] for row in rows]
    assert written["ll_score"].dtype == "float64" and (written["ll_score"] < 0).all()
    assert sorted(written["fold"].value_counts().tolist()) == [4, 4]  # 2 folds, each scored by the other's LM
    api = lsplits.score(str(data), query_field="text", lm="scratch", rename={"ll_score": "note"}, **common)
    assert written.drop(columns="fold").to_dict("list") == api.to_pandas().to_dict("list")  # the Python API's table
    clash = write_jsonl(tmp_path / "folds.jsonl", [{**row, "fold": 1} for row in rows])
    with pytest.raises(ConfigError, match=r"^lsplits score writes its own 'fold' .* --rename fold=fold_orig$"):
        commands.score(parse(*argv[:2], str(clash), *argv[3:], "--out", str(tmp_path / "clash.parquet")))


@pytest.mark.process
def test_a_reader_that_goes_away_ends_analyze_quietly(tmp_path):
    """`lsplits analyze DIR | head`: the closed pipe gives SIGPIPE's exit status and no traceback."""
    folder = build_fixture_dataset(tmp_path / "built")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    child = subprocess.Popen([sys.executable, "-m", "lsplits", "analyze", str(folder)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
    child.stdout.close()  # before the command has printed anything
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=120) == 141, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


def test_analyze_prints_each_configs_statistics(tmp_path, capsys):
    folder = build_fixture_dataset(tmp_path / "built")
    assert commands.analyze(parse("analyze", str(folder), "--configs", "random")) == 0
    out = capsys.readouterr().out
    assert "== random ==" in out and "== ll_split ==" not in out
    rows = {line.split()[0]: line.split()[1:3] for line in out.splitlines()[2:6]}
    # the fixture's random config: eval is every fifth example (ll_score -10 - i), validation the first four
    assert rows == {"train": ["32", "-30.00"], "validation": ["4", "-17.50"], "test": ["4", "-37.50"],
                    "eval": ["8", "-27.50"]}


def test_an_option_of_another_command_is_not_read_as_an_abbreviation(tmp_path, capsys):
    """``build --setting pt`` (score's option) is refused whole, not read as an abbreviation of a build option."""
    from lsplits.cli.parser import main

    with pytest.raises(SystemExit) as caught:
        main(["build", "--setting", "pt", "--data-files", "x.jsonl", "--out", str(tmp_path / "o")])
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == "lsplits: error: unrecognized arguments: --setting (see lsplits --help)"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["score", "--data-file", "x.jsonl", "--out", "s.parquet"])
    assert "unrecognized arguments: --data-file" in capsys.readouterr().err


def test_a_beams_settings_record_given_to_build_settings_is_named_for_what_it_is(tmp_path):
    from lsplits.io.records import write_settings_record

    record = write_settings_record(tmp_path / "beams.jsonl", "beams", {"settings": {"num_beams": 5}})
    with pytest.raises(ConfigError, match=rf"^from_record {record}: the settings record of `lsplits beams` \(written "
                                          r"beside its output\), not of a build; give a built folder's lsplits\.json$"):
        settings_of_record(record)
