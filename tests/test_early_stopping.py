"""Early stopping of fold fine-tuning (issue 38 item 4): a run whose validation perplexity stops improving stops
after ``patience`` checks and keeps the same best weights as the full run; each fold's stop is recorded in
``training.json``, ``lsplits.json`` and the card; ``--patience`` sets it (on for the scratch LM, off for a
pretrained LM's fixed paper recipe); a long run logs its projected training time when it starts."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
import torch
from lm_fixtures import TINY_SCRATCH, tiny_records, tiny_sentences

from lsplits.errors import InvalidOption
from lsplits.lm.finetune import SUMMARY_FILE, finetune
from lsplits.lm.scoring import load_causal_lm, score_pairs
from lsplits.lm.scratch import ScratchConfig, build_scratch_lm
from lsplits.lm.training import TrainConfig

OVERFITS = dict(batch_size=4, max_steps=20, eval_every=2, lr=5e-2, warmup_steps=0, val_fraction=0.25)
"""8 examples (6 train, 2 validation) at a high learning rate: validation perplexity bottoms out within a few
steps and does not come back down (checked in the test, which fails rather than passes if it ever does)."""


def _train(folder, records, config: TrainConfig, **keywords):
    """A fresh tiny scratch LM (the same initial weights every call) trained on ``records`` into ``folder``."""
    model, tokenizer = build_scratch_lm(tiny_sentences(), folder / "lm", ScratchConfig(**TINY_SCRATCH),
                                        n_positions=64)
    best = finetune(model, tokenizer, [r["prompt"] for r in records], [r["query"] for r in records], config,
                    folder / "run", ids=[r["id"] for r in records], progress=False, **keywords)
    return model, best, json.loads((folder / "run" / SUMMARY_FILE).read_text())


def _expected_stop(history: list[dict], patience: int) -> int | None:
    """The step at which ``patience`` checks in a row have not beaten the best so far (None: never)."""
    best, since = float("inf"), 0
    for check in history:
        if check["val_ppl"] < best:
            best, since = check["val_ppl"], 0
        else:
            since += 1
            if since == patience:
                return check["step"]
    return None


def test_a_run_that_stops_improving_stops_early_with_the_full_runs_best_weights_and_scores(tmp_path):
    records = tiny_records(8)
    _, full_best, full = _train(tmp_path / "full", records, TrainConfig.scratch(**OVERFITS, patience=0))
    ppls = [check["val_ppl"] for check in full["history"]]
    stop = _expected_stop(full["history"], patience=2)
    assert stop is not None and full["best_step"] < stop < OVERFITS["max_steps"], full["history"]
    later = [check["val_ppl"] for check in full["history"] if check["step"] > stop]
    assert min(later) > full["best_val_ppl"]  # the full run would not have improved after the stop
    assert (full["steps_run"], full["reason"]) == (20, "max steps")

    model, early_best, early = _train(tmp_path / "early", records, TrainConfig.scratch(**OVERFITS, patience=2))

    assert (early["steps_run"], early["max_steps"], early["reason"]) == (stop, 20, "no improvement for 2 checks")
    assert early["history"] == full["history"][:len(early["history"])]  # the same run, cut short
    assert (early["best_step"], early["best_val_ppl"]) == (full["best_step"], min(ppls))
    full_model, tokenizer = load_causal_lm(full_best, device="cpu")
    early_model, _ = load_causal_lm(early_best, device="cpu")
    for name, value in full_model.state_dict().items():
        assert torch.equal(value, early_model.state_dict()[name]), name
        assert torch.equal(value, model.state_dict()[name].cpu()), name  # the best weights restored, not the last
    prompts, queries = [r["prompt"] for r in records], [r["query"] for r in records]
    full_scores = score_pairs(full_model, tokenizer, prompts, queries, progress=False)
    early_scores = score_pairs(early_model, tokenizer, prompts, queries, progress=False)
    for ours, theirs in zip(early_scores, full_scores, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_patience_defaults_to_the_lms_recipe_and_is_checked_as_any_setting():
    from lsplits.building.settings import BuildSettings
    from lsplits.lm.plan import RunPlan

    assert RunPlan.make("scratch").train_config.patience == 2  # the scratch LM stops early by default
    assert RunPlan.make("gpt2", paper_steps=3000).train_config.patience == 0  # the paper's fixed steps
    assert RunPlan.make("gpt2", patience=3).train_config.patience == 3
    assert RunPlan.make("scratch", patience=0).train_config.patience == 0
    given = TrainConfig.scratch(max_steps=8)
    assert RunPlan.make("scratch", train_config=given, patience=5).train_config.patience == 5
    assert BuildSettings(patience=4).patience == 4 and BuildSettings().patience is None
    for bad in (-1, 1.5, "2", True):
        with pytest.raises(InvalidOption, match=r"^patience must be a whole number >= 0 \(validation checks"):
            BuildSettings(patience=bad)
        with pytest.raises(InvalidOption, match="^patience must be"):
            TrainConfig(patience=bad)
    with pytest.raises(InvalidOption, match="^patience must be"):
        TrainConfig(patience=None)  # a config says 0 for "never"; None is only a settings object's "the default"


def test_the_patience_flag_reaches_the_build_plan_and_a_bad_one_is_one_line(tmp_path, capsys):
    from lsplits.builders.registry import load_builder
    from lsplits.building.pipeline import plan_build
    from lsplits.building.settings import BuildSettings
    from lsplits.cli.parser import build_parser, main, settings_of

    args = build_parser().parse_args(["build", "snli", "--lm", "gpt2", "--out", str(tmp_path / "o"), "--patience",
                                      "3"])
    settings = settings_of(args, BuildSettings)
    assert settings.patience == 3
    assert plan_build(load_builder("snli").SPEC, settings).runs["ft"].train_config.patience == 3
    default = settings_of(build_parser().parse_args(["build", "snli", "--lm", "gpt2", "--out", "o"]), BuildSettings)
    assert plan_build(load_builder("snli").SPEC, default).runs["ft"].train_config.patience == 0

    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"text": s}) + "\n" for s in tiny_sentences(20)), encoding="utf-8")
    code = main(["build", "--data-files", str(data), "--query-field", "text", "--lm", "scratch", "--out",
                 str(tmp_path / "out"), "--patience", "-1", "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and not (tmp_path / "out").exists()
    assert err.count("\n") == 0 and "error: --patience must be a whole number >= 0" in err and "got -1" in err


def test_a_build_records_where_each_fold_stopped_in_lsplits_json_and_the_card(tmp_path):
    from lsplits.building.card import CardInfo
    from lsplits.building.pipeline import DatasetSpec, build_splits, export_dataset
    from lsplits.building.record import BuildRecord
    from lsplits.building.settings import BuildSettings
    from lsplits.data.loading import prepare_examples
    from lsplits.data.tasks import generic_task

    spec = DatasetSpec(task=generic_task("text"), card=CardInfo(pretty_name="Toy"))
    loaded = prepare_examples([("toy", [{"text": s} for s in tiny_sentences(24)], "toy rows")], spec.task)
    settings = BuildSettings(query_field="text", configs=("ll_split",), eval_size=6, folds=2)
    # lr 1.0 diverges at once: every check after the first is worse, so each fold stops after 2 more checks
    diverges = TrainConfig.scratch(batch_size=4, max_steps=20, eval_every=2, lr=1.0, warmup_steps=0, patience=2)
    result = build_splits(spec, loaded, settings, train_config=diverges, progress=False, cache_dir=tmp_path / "cache")
    out = export_dataset(spec, result, tmp_path / "toy", settings)

    record = BuildRecord.of_folder(out)
    assert [stop["fold"] for stop in record.training["ft"]] == [0, 1]
    for stop in record.training["ft"]:
        assert (stop["steps_run"], stop["max_steps"], stop["best_step"], stop["reason"]) == \
            (4, 20, 0, "no improvement for 2 checks")
        history = json.loads(next((tmp_path / "cache").glob(f"*/fold-{stop['fold']}/train/{SUMMARY_FILE}"))
                             .read_text())["history"]
        assert [check["step"] for check in history] == [0, 2, 4]
        assert stop["best_val_ppl"] == min(check["val_ppl"] for check in history)
    card = (out / "README.md").read_text()
    assert "trains for at most 20 steps" in card
    assert "A fold stops early once 2 checks in a row have not lowered its validation perplexity" in card
    assert ("Fold 0 ran 4 of 20 steps (no improvement for 2 checks; best at step 0); "
            "Fold 1 ran 4 of 20 steps (no improvement for 2 checks; best at step 0).") in card


def test_a_long_run_logs_its_projected_training_time_when_it_starts(tmp_path, caplog):
    records = tiny_records(12)
    config = TrainConfig.scratch(batch_size=4, max_steps=8, eval_every=4, warmup_steps=0, patience=0)
    with caplog.at_level(logging.INFO, logger="lsplits.lm.finetune"):
        _train(tmp_path / "long", records, config, planned_steps=10**9)
    [line] = [r.getMessage() for r in caplog.records if "a long run" in r.getMessage()]
    assert "its 1000000000 training steps take about" in line and "--dry-run" in line
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="lsplits.lm.finetune"):
        _train(tmp_path / "short", records, config, planned_steps=8)  # 8 tiny steps: seconds, said nothing
    assert not [r for r in caplog.records if "a long run" in r.getMessage()]
