"""The settings objects of score and build: defaults owned by the class, checks when built, every
result-changing setting recorded in lsplits.json and the card, and ``build --from-record`` reproducing a build."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import numpy as np
import pytest

from lsplits.building.record import settings_of_record
from lsplits.building.settings import BuildSettings, ScoreSettings
from lsplits.cli.parser import main, parse_args
from lsplits.errors import ConfigError, InvalidOption

WORDS = ["red", "blue", "cat", "dog", "runs", "sleeps", "big", "small", "house", "tree", "under", "near"]


def test_defaults_live_on_the_class_and_the_cli_reads_them(tmp_path):
    args = parse_args(["build", "--data-files", "x.jsonl", "--query-field", "text", "--out", str(tmp_path / "o")])
    assert (args.folds, args.seed, args.lm, args.max_steps, args.eval_size, args.prompt_template) == \
        (BuildSettings.folds, BuildSettings.seed, BuildSettings.lm, None, None, BuildSettings.prompt_template)
    assert parse_args(["score", "--data-files", "x", "--out", "o.parquet"]).setting == ScoreSettings.setting


@pytest.mark.parametrize(("fields", "message"), [
    ({"folds": 1}, r"^folds must be a whole number >= 2, got 1$"),
    ({"seed": -1}, r"^seed must be a whole number >= 0 \(a random seed\), got -1$"),
    ({"max_steps": 0}, r"^max_steps must be a whole number >= 1, got 0$"),
    ({"eval_size": 1.5}, r"^eval_size must be a count \(a whole number >= 1\) or a fraction in \(0, 1\), got 1.5$"),
    ({"eval_size": 0}, r"^eval_size must be .*, got 0$"),
    ({"eval_size": "0.2"}, r"^eval_size must be .*, got '0.2'$"),
    ({"configs": []}, r"^configs must be a non-empty list of names, got \[\]$"),
    ({"lm": ""}, r"^lm must be a non-empty string \('scratch', a Hub model id or a model folder\), got ''$"),
])
def test_bad_build_settings_are_refused_when_built(fields, message):
    with pytest.raises(InvalidOption, match=message) as caught:
        BuildSettings(**fields)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, ConfigError)


def test_score_settings_refuse_prompting_the_scratch_lm_and_unknown_settings():
    with pytest.raises(InvalidOption, match="^setting 'pt' needs a pretrained LM"):
        ScoreSettings(setting="pt")
    with pytest.raises(InvalidOption, match=r"^setting must be 'ft' .*, got 'zero-shot'$"):
        ScoreSettings(setting="zero-shot", lm="gpt2")


def test_settings_round_trip_through_json_and_refuse_unknown_keys(tmp_path):
    settings = BuildSettings(data_files=["train=a.jsonl"], query_field="q", prompt_template="T: {t}", label_field="l",
                             lm="gpt2", folds=4, seed=7, max_steps=11, configs=["ll_split", "random"], eval_size=0.3)
    path = tmp_path / "lsplits.json"
    path.write_text(json.dumps({"lsplits_files": [], "settings": settings.to_dict()}))
    assert settings_of_record(path) == settings
    path.write_text(json.dumps({"settings": {**settings.to_dict(), "fold": 3}}))
    with pytest.raises(ConfigError, match=r"lsplits.json: unknown setting 'fold'"):
        settings_of_record(path)
    path.write_text(json.dumps({"files": ["README.md"]}))  # no settings: read as settings alone, and refused
    with pytest.raises(ConfigError, match=r"lsplits.json: unknown setting 'files'"):
        settings_of_record(path)
    with pytest.raises(ConfigError, match="no such file"):
        settings_of_record(tmp_path / "missing.json")


@pytest.fixture(scope="module")
def user_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "texts.jsonl"
    rows = [{"text": " ".join(WORDS[(i * k + k) % len(WORDS)] for k in range(1, 3 + i % 6)),
             "topic": "ab"[i % 2], "source": f"s{i % 3}"} for i in range(48)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def original(user_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("built") / "first"
    assert main(["build", "--data-files", str(user_file), "--query-field", "text", "--label-field", "topic",
                 "--prompt-template", "From {source}:", "--lm", "scratch", "--folds", "2", "--seed", "3",
                 "--max-steps", "3", "--eval-size", "10", "--configs", "ll_split", "random",
                 "--out", str(out), "--cache-dir", str(tmp_path_factory.mktemp("cache")), "--no-progress"]) == 0
    return out


def test_every_result_changing_setting_is_recorded_in_lsplits_json_and_the_card(original):
    meta = json.loads((original / "lsplits.json").read_text())
    settings = meta["settings"]
    assert (settings["prompt_template"], settings["max_steps"], settings["folds"], settings["seed"]) == \
        ("From {source}:", 3, 2, 3)
    assert (settings["query_field"], settings["label_field"], settings["configs"], settings["eval_size"]) == \
        ("text", "topic", ["ll_split", "random"], 10)
    run = meta["runs"]["ft"]
    assert run["train_config"]["max_steps"] == 3 and run["train_config"]["lr"] > 0
    assert run["scratch_config"]["n_layer"] >= 1 and run["scratch_config"]["vocab_size"] > 0
    assert meta["lm_identity"]["kind"] == "scratch" and meta["lsplits_version"]
    card = (original / "README.md").read_text()
    assert "## Settings" in card and '"prompt_template": "From {source}:"' in card
    assert f"trains for at most 3 steps (AdamW, lr {run['train_config']['lr']:g}" in card  # scratch: early stop


def test_build_with_recorded_settings_reproduces_the_split_and_scores(original, user_file, tmp_path):
    copy = tmp_path / "again"
    assert main(["build", "--from-record", str(original / "lsplits.json"), "--data-files", str(user_file),
                 "--out", str(copy), "--cache-dir", str(tmp_path / "fresh-cache"), "--no-progress"]) == 0
    assert json.loads((copy / "lsplits.json").read_text())["settings"] == \
        json.loads((original / "lsplits.json").read_text())["settings"]
    for config in ("ll_split", "random"):
        first, second = datasets.load_dataset(str(original), config), datasets.load_dataset(str(copy), config)
        for split in ("train", "validation", "test"):
            assert first[split]["id"] == second[split]["id"], (config, split)
            np.testing.assert_allclose(second[split]["ll_score"], first[split]["ll_score"], rtol=0, atol=1e-6)


def test_options_on_the_command_line_win_over_settings_of_record(original, user_file, tmp_path):
    args = parse_args(["build", "--from-record", str(original / "lsplits.json"), "--data-files", str(user_file),
                       "--seed", "9", "--out", str(tmp_path / "o")])
    assert (args.seed, args.folds, args.max_steps, args.prompt_template) == (9, 2, 3, "From {source}:")
    assert Path(args.data_files[0]) == user_file


def test_a_bad_settings_file_is_one_line_before_any_work(tmp_path, capsys):
    bad = tmp_path / "lsplits.json"
    bad.write_text(json.dumps({"settings": {"folds": 1}}))
    assert main(["build", "--from-record", str(bad), "--data-files", "x.jsonl", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "lsplits.json: folds must be a whole number >= 2, got 1" in err
    assert not (tmp_path / "o").exists()


def test_the_readme_describes_the_training_that_runs():
    """README's training recipe for a Hub LM and for the scratch LM is the one RunPlan gives (no drift)."""
    from lsplits.builders import boolq, snli, spider
    from lsplits.lm.plan import RunPlan

    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8").split())
    hub = RunPlan.make("gpt2", "ft").train_config
    scratch_plan = RunPlan.make("scratch", "ft")
    scratch, size = scratch_plan.train_config, scratch_plan.scratch_config
    assert f"in `--folds` folds (default {BuildSettings.folds})" in readme
    assert f"measured every {hub.eval_every} steps on {hub.val_fraction:.0%} of its training pairs" in readme
    assert hub.warmup_steps == 0 and hub.weight_decay == 0 and hub.max_grad_norm == 1
    assert (f"constant lr {hub.lr:g} (no warm-up, no weight decay, batch {hub.batch_size}, gradients clipped "
            f"at norm {hub.max_grad_norm:g})") in readme
    assert (f"(SNLI {snli.SPEC.max_steps:,}, BoolQ {boolq.SPEC.max_steps:,}, Spider {spider.SPEC.max_steps:,}; "
            f"{hub.max_steps:,} for other data)") in readme
    assert (f"a GPT-2 of {size.n_layer} layers, {size.n_head} heads and width {size.n_embd}, with a byte-level "
            f"BPE tokenizer of at most {size.vocab_size:,} tokens") in readme
    assert (f"lr {scratch.lr:g} after {scratch.warmup_steps} warm-up steps (weight decay {scratch.weight_decay:g}, "
            f"batch {scratch.batch_size}) for at most {scratch.max_steps} steps per fold") in readme
    assert "constant LR 2e-5" not in readme


def test_score_records_its_settings_in_the_parquet_metadata(user_file, tmp_path):
    import pyarrow.parquet as pq

    from lsplits.cli.commands import SCORE_SETTINGS_KEY

    out = tmp_path / "scores.parquet"
    assert main(["score", "--data-files", str(user_file), "--query-field", "text", "--prompt-template", "From {source}:",
                 "--folds", "2", "--max-steps", "2", "--out", str(out), "--cache-dir", str(tmp_path / "cache"),
                 "--no-progress"]) == 0
    recorded = json.loads(pq.read_schema(out).metadata[SCORE_SETTINGS_KEY.encode()])
    expected = ScoreSettings(data_files=(str(user_file),), query_field="text", prompt_template="From {source}:",
                             folds=2, max_steps=2)
    assert recorded["settings"] == json.loads(json.dumps(expected.to_dict()))
    assert recorded["runs"]["ft"]["train_config"]["max_steps"] == 2 and recorded["lsplits_version"]


def test_the_lm_identity_pins_the_weights(tmp_path, monkeypatch):
    """A local LM is recorded by its weights hash (which changes with the weights), a cached Hub LM by the
    revision of its snapshot, the scratch LM by nothing (its recipe and seed are recorded instead)."""
    from huggingface_hub import constants
    from lm_fixtures import tiny_model_folder

    from lsplits.lm.model_files import model_identity

    assert model_identity("scratch") == {"kind": "scratch", "revision": None, "weights_sha256": None}
    model = tiny_model_folder(tmp_path / "lm")
    local = model_identity(str(model))
    assert local["kind"] == "local" and len(local["weights_sha256"]) == 16
    weights = model / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # one bit of the weights differs
    assert model_identity(str(model))["weights_sha256"] != local["weights_sha256"]
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = tmp_path / "hub" / "models--org--tiny-lm" / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (tmp_path / "hub" / "models--org--tiny-lm" / "refs").mkdir()
    (tmp_path / "hub" / "models--org--tiny-lm" / "refs" / "main").write_text(commit)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert model_identity("org/tiny-lm") == {"kind": "hub", "revision": commit, "weights_sha256": None}


def test_rebuilding_with_other_weights_warns(tmp_path, caplog):
    from lsplits.building.settings import BuildSettings as Settings
    from lsplits.cli.commands import warn_if_lm_changed

    model = tmp_path / "lm"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"weights")
    recorded = tmp_path / "lsplits.json"
    recorded.write_text(json.dumps({"settings": {"lm": str(model)}, "lm_identity": {"kind": "local", "revision": None,
                                                                                      "weights_sha256": "0" * 16}}))
    with caplog.at_level("WARNING"):
        warn_if_lm_changed(recorded, Settings(lm=str(model)))
    assert "is not the one recorded" in caplog.text
    caplog.clear()
    from lsplits.lm.model_files import model_identity

    recorded.write_text(json.dumps({"settings": {"lm": str(model)}, "lm_identity": model_identity(str(model))}))
    with caplog.at_level("WARNING"):
        warn_if_lm_changed(recorded, Settings(lm=str(model)))
    assert caplog.text == ""


def test_build_settings_on_other_data_warns_before_any_work(original, user_file, tmp_path, caplog):
    recorded = json.loads((original / "lsplits.json").read_text())["input"]
    assert recorded["examples"] == 48 and {len(digest) for digest in recorded["fields"].values()} == {16}
    fewer = tmp_path / "fewer.jsonl"
    fewer.write_text("".join(user_file.read_text(encoding="utf-8").splitlines(keepends=True)[:30]), encoding="utf-8")
    edited = tmp_path / "edited.jsonl"
    edited.write_text(user_file.read_text(encoding="utf-8").replace('"text": "', '"text": "the ', 1), encoding="utf-8")
    settings = str(original / "lsplits.json")
    for data, expected in [(user_file, None), (fewer, "it had 48 examples, this data 30"),
                           (edited, "it had 48 examples, as this data has, but other ids and queries (field 'text')")]:
        caplog.clear()
        with caplog.at_level("WARNING"):
            assert main(["build", "--from-record", settings, "--data-files", str(data), "--out", str(tmp_path / "o"),
                         "--dry-run"]) == 0
        warned = [r.getMessage() for r in caplog.records if "is of a build that split other data" in r.getMessage()]
        if expected is None:
            assert warned == []
        else:
            assert len(warned) == 1 and expected in warned[0] and "this build will not reproduce it" in warned[0]
