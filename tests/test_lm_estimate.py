"""``--dry-run`` estimates: token counts by hand, padding of the real batches, steps and validation
passes of k-fold training, checkpoint and shard sizes against what a real run writes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from lm_fixtures import TINY_SCRATCH, TINY_TRAIN, tiny_records, tiny_sentences

from lsplits.cli.parser import main as cli_main
from lsplits.errors import DataError
from lsplits.lm import ScratchConfig, TrainConfig, compute_scores
from lsplits.lm.estimate import estimate_run
from lsplits.lm.scoring import load_causal_lm
from lsplits.lm.scratch import build_scratch_lm
from lsplits.runtime.progress import format_bytes, format_duration


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny-lm")
    build_scratch_lm(tiny_sentences(), folder, ScratchConfig(**TINY_SCRATCH), n_positions=64)
    return folder / "model"


def _hand_counts(tokenizer, records) -> tuple[int, int, int]:
    """(BOS + prompt tokens, query tokens + EOS, longest pair) summed over ``records``."""
    prompt = [len(tokenizer(r["prompt"], add_special_tokens=False)["input_ids"]) for r in records]
    query = [len(tokenizer(r["query"], add_special_tokens=False)["input_ids"]) for r in records]
    return sum(p + 1 for p in prompt), sum(q + 1 for q in query), max(p + q + 2 for p, q in zip(prompt, query))


def _folder_bytes(folder) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_prompted_estimate_counts_tokens_and_sizes_the_shards(tiny_folder, tmp_path):
    records = tiny_records(12)
    _, tokenizer = load_causal_lm(tiny_folder, device="cpu")
    estimate = estimate_run(records, lm=tiny_folder, setting="pt", shard_size=4, token_budget=10_000)
    prompt, scored, longest = _hand_counts(tokenizer, records)
    assert (estimate.prompt_tokens, estimate.scored_tokens) == (prompt, scored)
    assert estimate.padded_tokens == 12 * longest  # the budget holds them all: one batch, padded to the longest
    assert estimate.folds == 0 and estimate.train_steps == 0 and estimate.checkpoint_bytes == 0
    assert estimate.scoring_tokens_per_s > 0
    assert estimate.total_s == pytest.approx(estimate.padded_tokens / estimate.scoring_tokens_per_s)

    compute_scores(records, lm=tiny_folder, setting="pt", shard_size=4, cache_dir=tmp_path, progress=False)
    shards = list(tmp_path.glob("*/pretrained/scores-*.parquet"))
    assert len(shards) == 3
    assert estimate.shard_bytes == pytest.approx(sum(p.stat().st_size for p in shards), rel=0.1)


def test_fine_tuned_estimate_counts_steps_validation_passes_and_checkpoints(tiny_folder, tmp_path):
    records = tiny_records(30)
    config = TrainConfig(batch_size=4, max_steps=10, eval_every=4)
    estimate = estimate_run(records, lm=tiny_folder, setting="ft", folds=3, train_config=config,
                            token_budget=10_000)
    assert estimate.folds == 3 and estimate.train_steps == 30 and estimate.train_step_s > 0
    # each fold trains on 20 examples, validates on 2 of them at steps 0, 4, 8 and 10
    assert estimate.validation_tokens == round(3 * 4 * 2 * estimate.padded_tokens / 30)
    model, tokenizer = load_causal_lm(tiny_folder, device="cpu")
    model.save_pretrained(tmp_path / "saved")
    tokenizer.save_pretrained(tmp_path / "saved")
    assert estimate.checkpoint_bytes == pytest.approx(3 * _folder_bytes(tmp_path / "saved"), rel=0.02)
    assert estimate.training_s == pytest.approx(30 * estimate.train_step_s)


def test_scratch_estimate_is_the_run_s_model_and_sizes_what_the_run_writes(tmp_path):
    records = tiny_records(30)
    settings = dict(lm="scratch", folds=2, train_config=TrainConfig.scratch(**TINY_TRAIN),
                    scratch_config=ScratchConfig(**TINY_SCRATCH), shard_size=4)
    estimate = estimate_run(records, **settings)
    assert estimate.train_steps == 2 * TINY_TRAIN["max_steps"]

    compute_scores(records, cache_dir=tmp_path, progress=False, **settings)
    (run_dir,) = tmp_path.iterdir()
    written = sum(_folder_bytes(run_dir / f"fold-{fold}" / part) for fold in (0, 1) for part in ("init", "train/best"))
    assert estimate.checkpoint_bytes == pytest.approx(written, rel=0.1)
    _, tokenizer = load_causal_lm(run_dir / "fold-0" / "train" / "best", device="cpu")
    prompt, scored, _ = _hand_counts(tokenizer, records)  # the run's own tokenizer gives the estimate's counts
    assert (estimate.prompt_tokens, estimate.scored_tokens) == (prompt, scored)
    run_model, _ = load_causal_lm(run_dir / "fold-0" / "init", device="cpu")  # fold 0's model, as it trains
    assert {k: v for k, v in estimate.model_config.items() if k != "_name_or_path"} == \
        {k: v for k, v in run_model.config.to_diff_dict().items() if k != "_name_or_path"}
    assert estimate.train_config == json.loads((run_dir / "run.json").read_text())["train_config"]


def test_query_longer_than_the_window_fails_the_dry_run(tiny_folder):
    records = tiny_records(4)
    records[2]["query"] = " " + " ".join(tiny_sentences(20))
    with pytest.raises(DataError, match=r"example 'r002', field 'query'.*window of 64"):
        estimate_run(records, lm=tiny_folder, setting="pt")


def _write_pairs(path, n: int) -> list[dict]:
    records = [{"premise": s, "hypothesis": tiny_sentences()[(i * 5) % 36]}
               for i, s in enumerate(tiny_sentences(n))]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return records


def test_score_dry_run_prints_counts_and_writes_nothing(tiny_folder, tmp_path, capsys):
    rows = _write_pairs(tmp_path / "pairs.jsonl", 20)
    code = cli_main(["score", "--data-files", str(tmp_path / "pairs.jsonl"), "--query-field", "hypothesis",
                     "--prompt-template", "Premise: {premise}", "--lm", str(tiny_folder), "--setting", "pt",
                     "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "scores.parquet"),
                     "--dry-run"])
    assert code == 0
    _, tokenizer = load_causal_lm(tiny_folder, device="cpu")
    # the generic task's prompt is the formatted template; its query is " " + the field after a prompt
    prompt, scored, _ = _hand_counts(tokenizer, [{"prompt": f"Premise: {r['premise']}", "query": " " + r["hypothesis"]}
                                                 for r in rows])
    printed = capsys.readouterr().out
    assert f"tokens:  {prompt:,} context + {scored:,} scored" in printed
    assert "dry run: setting pt" in printed and "time:" in printed and "disk:" in printed
    assert not (tmp_path / "scores.parquet").exists() and not (tmp_path / "cache").exists()


def test_build_dry_run_estimates_every_setting_the_configs_need(tiny_folder, tmp_path, capsys):
    _write_pairs(tmp_path / "pairs.jsonl", 20)
    code = cli_main(["build", "--data-files", str(tmp_path / "pairs.jsonl"), "--query-field", "hypothesis",
                     "--lm", str(tiny_folder), "--max-steps", "3", "--out", str(tmp_path / "built"), "--dry-run"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "dry run: setting ft" in printed and "dry run: setting pt" in printed
    assert "training 9 steps" in printed and "all settings: about" in printed
    assert not (tmp_path / "built").exists()


def test_durations_and_sizes_read_naturally():
    assert [format_duration(s) for s in (42, 150, 3 * 3600)] == ["42 s", "2.5 min", "3.0 h"]
    assert [format_bytes(b) for b in (812, 3_400_000, 1.2e9)] == ["812 B", "3.4 MB", "1.2 GB"]
    assert math.isclose(float(format_bytes(999_999).split()[0]), 1000.0)


def _write_labelled(path, sizes: dict[str, int]) -> None:
    """JSONL pairs whose ``label`` has ``sizes[label]`` examples of each label (raw SNLI keeps ``-``)."""
    labels = [label for label, n in sizes.items() for _ in range(n)]
    rows = [{"premise": s, "hypothesis": tiny_sentences()[(i * 5) % 36], "label": label}
            for i, (s, label) in enumerate(zip(tiny_sentences(len(labels)), labels))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_build_dry_run_refuses_a_class_below_its_eval_quota_and_offers_to_drop_it(tiny_folder, tmp_path, capsys):
    """The check the build makes before training, made by the dry run too; --drop-label is offered and works."""
    _write_labelled(tmp_path / "pairs.jsonl", {"entailment": 30, "neutral": 23, "-": 7})
    argv = ["build", "--data-files", str(tmp_path / "pairs.jsonl"), "--query-field", "hypothesis",
            "--label-field", "label", "--lm", str(tiny_folder), "--max-steps", "3", "--eval-size", "30",
            "--configs", "ll_split_pt", "--out", str(tmp_path / "built"), "--dry-run"]
    assert cli_main(argv) != 0
    captured = capsys.readouterr()
    [line] = captured.err.strip().splitlines()
    assert "label class '-' has 7 examples, fewer than its eval quota of 10" in line
    assert line.startswith("lsplits build: error: --eval-size: label field 'label': ")
    assert "an eval size of at most 21 fits, or drop the class (--drop-label '-')" in line
    assert "dry run" not in captured.out
    assert cli_main([*argv, "--drop-label", "-"]) == 0
    assert "dry run: setting pt" in capsys.readouterr().out
    assert not (tmp_path / "built").exists()


def test_drop_label_drops_and_counts_a_class_and_refuses_one_that_is_absent(tmp_path):
    from lsplits.api import resolve_data
    from lsplits.data.loading import LoadOptions

    rows = [{"text": f"sentence {i}", "label": ["a", "b", "-"][i % 3]} for i in range(30)]
    _, loaded = resolve_data(rows, query_field="text", label_field="label",
                             options=LoadOptions(drop_labels=("-",)))
    assert sorted({ex["label"] for ex in loaded.examples}) == ["a", "b"] and len(loaded.examples) == 20
    assert loaded.dropped == {"label '-' dropped (drop_labels)": 10}
    with pytest.raises(ValueError, match=r"^drop_labels must name labels of field 'label' \(-, a, b\); no example "
                                         r"has that label, got 'c'$"):
        resolve_data(rows, query_field="text", label_field="label", options=LoadOptions(drop_labels=("c",)))


def test_a_default_eval_size_too_small_to_measure_on_is_warned_about_and_a_given_one_is_not(tiny_folder, tmp_path,
                                                                                          caplog):
    """SNLI at 591 rows got a 21-example eval from the paper's proportion without a word (issue 38's walk)."""
    _write_pairs(tmp_path / "pairs.jsonl", 20)
    argv = ["build", "--data-files", str(tmp_path / "pairs.jsonl"), "--query-field", "hypothesis",
            "--lm", str(tiny_folder), "--max-steps", "3", "--out", str(tmp_path / "built"), "--dry-run"]
    with caplog.at_level("WARNING"):
        assert cli_main(argv) == 0
    [line] = [r.getMessage() for r in caplog.records if "default eval size" in r.getMessage()]
    assert line.startswith("the default eval size gives 4 eval examples of 20 (20%): validation and test get about 2 "
                           "each, too few")
    caplog.clear()
    with caplog.at_level("WARNING"):
        assert cli_main([*argv, "--eval-size", "4"]) == 0
    assert not [r for r in caplog.records if "eval size" in r.getMessage()]


def test_the_timed_training_batches_span_the_epoch_widest_included():
    """A 200-row BoolQ dry run timed the first batches of a shuffled epoch and missed the few wide ones that take
    most of its time: 0.62 s a step projected, 2-4.6 s measured (issue 38's walk)."""
    from lsplits.lm.estimate import timed_batches

    lengths = np.r_[np.full(199, 40), 1024]  # one passage fills the window: its batch is the slow one
    for seed in range(5):
        warmup, timed = timed_batches(lengths, 32, np.random.default_rng(seed), untimed=2, timed=10)
        assert len(timed) == 7  # 200 examples in batches of 32: every batch of the epoch is timed
        assert sorted(np.concatenate(timed).tolist()) == list(range(200))
        assert any(199 in batch for batch in timed)
        assert all(lengths[b].max() == 40 for b in warmup) and len(warmup) == 2
    from lsplits.lm.finetune import length_grouped_batches

    many = np.random.default_rng(0).integers(20, 1024, size=2000)
    warmup, timed = timed_batches(many, 32, np.random.default_rng(0), untimed=2, timed=10)
    widths = sorted(int(many[b].max()) for b in timed)
    epoch = sorted(int(many[b].max()) for b in length_grouped_batches(many, 32, np.random.default_rng(0)))
    assert len(timed) == 10 and widths[-1] == epoch[-1] and widths[0] == epoch[0]  # the narrowest to the widest
    assert sorted(int(many[b].max()) for b in warmup) == epoch[:2]
