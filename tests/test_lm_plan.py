"""The LM run plan: the defaults decided once, and ``--dry-run`` estimating exactly the model the run builds."""

from __future__ import annotations

import json
import re

import pytest
from lm_fixtures import tiny_sentences

from lsplits.cli.parser import main as cli_main
from lsplits.errors import ConfigError
from lsplits.lm.plan import SCRATCH, RunPlan, needs_pretrained, runs_with
from lsplits.lm.scratch import ScratchConfig
from lsplits.lm.training import TrainConfig


def test_training_defaults_follow_the_lm_the_steps_and_the_seed():
    scratch = RunPlan.make(SCRATCH, "ft", folds=3, seed=2)
    assert scratch.train_config == TrainConfig.scratch(seed=2) and scratch.scratch_config == ScratchConfig()
    assert RunPlan.make(SCRATCH, max_steps=7).train_config == TrainConfig.scratch(max_steps=7)
    assert RunPlan.make("gpt2", max_steps=7).train_config == TrainConfig(max_steps=7)
    paper = RunPlan.make("gpt2", seed=4, paper_steps=123)
    assert (paper.train_config.max_steps, paper.train_config.seed, paper.scratch_config) == (123, 4, None)
    assert RunPlan.make("gpt2", paper_steps=123, max_steps=9).train_config.max_steps == 9
    assert RunPlan.make(SCRATCH, paper_steps=123).train_config.max_steps == TrainConfig.scratch().max_steps
    given = TrainConfig(batch_size=4, lr=1e-4)
    assert RunPlan.make("gpt2", train_config=given).train_config is given
    assert RunPlan.make("gpt2", train_config=given, max_steps=5).train_config == TrainConfig(batch_size=4, lr=1e-4,
                                                                                            max_steps=5)


def test_prompting_needs_a_pretrained_lm_and_trains_nothing():
    prompted = RunPlan.make("gpt2", "pt", folds=5, seed=1)
    assert (prompted.folds, prompted.train_config, prompted.scratch_config) == (0, None, None)
    assert needs_pretrained("pt") and not needs_pretrained("ft")
    assert not runs_with(SCRATCH, "pt") and runs_with(SCRATCH, "ft") and runs_with("gpt2", "pt")
    with pytest.raises(ConfigError, match="setting 'pt' needs a pretrained LM"):
        RunPlan.make(SCRATCH, "pt")


@pytest.mark.parametrize("arguments, message", [
    (dict(setting="xx"), "setting must be 'ft' .* got 'xx'"),
    (dict(folds=1), "folds must be between 2"),
    (dict(seed=-1), "seed must be a whole number >= 0"),
    (dict(max_steps=0), "max_steps must be a whole number >= 1"),
])
def test_bad_plans_are_refused(arguments, message):
    with pytest.raises(ConfigError, match=message):
        RunPlan.make(SCRATCH, **arguments)


def test_fold_seeds_differ_per_fold_and_per_run_seed():
    plan = RunPlan.make(SCRATCH, seed=3)
    assert [plan.fold_seed(f) for f in range(3)] == [3000, 3001, 3002]
    assert RunPlan.make(SCRATCH, seed=4).fold_seed(0) != plan.fold_seed(0)


def test_dry_run_describes_exactly_the_scratch_model_the_run_builds(tmp_path, capsys):
    """The scratch model's sizes printed by ``score --dry-run`` are the fold-0 model the real run writes."""
    data = tmp_path / "lines.jsonl"
    # a long line among short ones sets the window: a tokenizer trained on a sample could miss it
    lines = [*tiny_sentences(40), " ".join(tiny_sentences(12))]
    data.write_text("".join(json.dumps({"text": line}) + "\n" for line in lines))
    argv = ["score", "--data-files", str(data), "--query-field", "text", "--folds", "2", "--max-steps", "2",
            "--seed", "3", "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "scores.parquet"),
            "--no-progress"]
    assert cli_main([*argv, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    match = re.search(r"scratch GPT-2, (\d+) layers x (\d+) wide, vocabulary ([\d,]+), window (\d+) tokens", printed)
    assert match, printed
    assert not (tmp_path / "cache").exists()
    assert cli_main(argv) == 0
    (run_dir,) = (tmp_path / "cache").iterdir()
    built = json.loads((run_dir / "fold-0" / "init" / "config.json").read_text())
    assert (int(match[1]), int(match[2]), int(match[3].replace(",", "")), int(match[4])) == \
        (built["n_layer"], built["n_embd"], built["vocab_size"], built["n_positions"])
    assert json.loads((run_dir / "run.json").read_text())["train_config"]["max_steps"] == 2
    assert "training at most 4 steps" in printed  # 2 folds x --max-steps 2, as the run trained (or fewer: early stop)


def test_a_sampled_scratch_tokenizer_is_the_same_in_the_dry_run_and_the_run(tmp_path):
    """With fewer texts allowed than the data has, the tokenizer is trained on a sample, and the estimate
    still describes the fold-0 model the run builds: the same vocabulary and the window set by the long line
    (measured with that tokenizer on every pair, whether or not the long line is in the sample)."""
    from lsplits.lm.estimate import estimate_run
    from lsplits.lm.pipeline import compute_scores
    from lsplits.lm.scratch import scratch_tokenizer

    lines = [*tiny_sentences(40), " ".join(tiny_sentences(12))]
    records = [{"id": str(n), "prompt": "", "query": line} for n, line in enumerate(lines)]
    sampled = ScratchConfig(tokenizer_sample=8)
    full = scratch_tokenizer([], lines, tmp_path / "full", ScratchConfig())
    assert len(scratch_tokenizer([], lines, tmp_path / "sampled", sampled)) < len(full)  # the sample is used
    assert scratch_tokenizer([], lines, tmp_path / "again", sampled).get_vocab() == \
        scratch_tokenizer([], lines, tmp_path / "sampled-2", sampled).get_vocab()  # and seeded
    estimate = estimate_run(records, lm=SCRATCH, folds=2, max_steps=1, scratch_config=sampled, warmup_batches=1,
                            warmup_steps=1)
    compute_scores(records, lm=SCRATCH, folds=2, max_steps=1, scratch_config=sampled, cache_dir=tmp_path / "cache",
                   progress=False)
    (run_dir,) = (tmp_path / "cache").iterdir()
    built = json.loads((run_dir / "fold-0" / "init" / "config.json").read_text())
    assert (estimate.model_config["vocab_size"], estimate.model_config["n_positions"]) == \
        (built["vocab_size"], built["n_positions"])
    assert built["n_positions"] > 64  # set by the long line (the short ones fit in 64 tokens)


def test_token_counts_are_those_of_calling_the_tokenizer_repeated_texts_included(tmp_path):
    """text_lengths (the window, the dry run's token counts, the empty-query check) counts each distinct text
    once, through the Rust tokenizer when it can; the counts are still exactly those of ``tokenizer(text)``."""
    from lsplits.lm.encode import text_lengths
    from lsplits.lm.scratch import scratch_tokenizer

    sentences = tiny_sentences(30)
    tokenizer = scratch_tokenizer([], sentences, tmp_path / "tok", ScratchConfig(vocab_size=300))
    texts = [*sentences, sentences[3], "", "  ", " e\u0301t\u00e9\tok", sentences[3]]
    expected = [len(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in texts]
    assert text_lengths(tokenizer, texts).tolist() == expected
    tokenizer.backend_tokenizer.enable_truncation(3)  # a backend with state of its own is not called directly
    assert text_lengths(tokenizer, texts).tolist() == expected
