"""Fine-tuning: the objective is the query-only NLL, steps count optimizer steps under gradient
accumulation, validation perplexity selects the saved checkpoint, batches group lengths."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch
from lm_fixtures import TINY_SCRATCH, naive_score, tiny_records, tiny_sentences

from lsplits.lm.encode import encode_pairs
from lsplits.lm.finetune import finetune, length_grouped_batches, split_validation
from lsplits.lm.scoring import QueryLogProbs, load_causal_lm, pad_pairs
from lsplits.lm.scratch import ScratchConfig, build_scratch_lm
from lsplits.lm.training import TrainConfig


@pytest.fixture()
def fresh_lm(tmp_path):
    return build_scratch_lm(tiny_sentences(), tmp_path / "lm", ScratchConfig(**TINY_SCRATCH), n_positions=64)


def test_training_objective_is_mean_nll_of_query_tokens_only(fresh_lm):
    model, tokenizer = fresh_lm
    prompts, queries = ["the cat sees", "", "Premise: a dog finds an apple today. Say:"], \
        [" the ball today.", "my friend likes the river today.", " yes."]
    batch = pad_pairs(encode_pairs(tokenizer, prompts, queries, max_length=64))
    model.zero_grad()
    ours = -QueryLogProbs(model)(batch.input_ids, batch.attention_mask, batch.position_ids, batch.scored).mean()
    ours.backward()
    our_grads = [p.grad.clone() for p in model.parameters()]

    model.zero_grad()  # the same loss from full log-softmaxes, one unpadded example at a time
    total, n_tokens = 0.0, 0
    for prompt, query in zip(prompts, queries, strict=True):
        bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
        p_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        q_ids = tokenizer(query, add_special_tokens=False)["input_ids"]
        ids = torch.tensor([[bos, *p_ids, *q_ids, eos]])
        logprobs = torch.log_softmax(model(input_ids=ids).logits[0], -1)
        targets = ids[0, 1 + len(p_ids):]
        total = total - logprobs[torch.arange(len(p_ids), ids.shape[1] - 1), targets].sum()
        n_tokens += len(targets)
    naive = total / n_tokens
    naive.backward()
    assert ours.item() == pytest.approx(naive.item(), abs=1e-5)
    for ours_grad, param in zip(our_grads, model.parameters(), strict=True):
        torch.testing.assert_close(ours_grad, param.grad, atol=1e-6, rtol=1e-4)


def test_finetune_counts_optimizer_steps_and_keeps_the_best_checkpoint(fresh_lm, tmp_path):
    model, tokenizer = fresh_lm
    records = tiny_records(30)
    config = TrainConfig.scratch(batch_size=4, grad_accum_steps=2, max_steps=5, eval_every=2, seed=3,
                                 warmup_steps=0, lr=1e-2)
    best_dir = finetune(model, tokenizer, [r["prompt"] for r in records], [r["query"] for r in records],
                        config, tmp_path / "run", ids=[r["id"] for r in records], progress=False)

    assert best_dir == tmp_path / "run" / "best"
    summary = json.loads((tmp_path / "run" / "training.json").read_text())
    assert [h["step"] for h in summary["history"]] == [0, 2, 4, 5]
    assert len(summary["val_ids"]) == 3 and summary["n_train"] == 27
    ppls = [h["val_ppl"] for h in summary["history"]]
    assert ppls[-1] < ppls[0] / 2  # it learns
    assert summary["best_val_ppl"] == min(ppls)
    assert summary["best_step"] == summary["history"][int(np.argmin(ppls))]["step"]

    best, best_tokenizer = load_causal_lm(best_dir, device="cpu")
    by_id = {r["id"]: r for r in records}
    nll, tokens = 0.0, 0
    for example_id in summary["val_ids"]:
        score, n = naive_score(best, best_tokenizer, by_id[example_id]["prompt"], by_id[example_id]["query"])
        nll, tokens = nll - score, tokens + n
    assert math.exp(nll / tokens) == pytest.approx(summary["best_val_ppl"], rel=1e-5)


def test_gradient_accumulation_runs_micro_batches_per_optimizer_step(fresh_lm, tmp_path):
    model, tokenizer = fresh_lm
    records = tiny_records(30)
    training_forwards = []
    model.base_model.register_forward_hook(
        lambda module, args, out: training_forwards.append(1) if module.training else None)
    config = TrainConfig.scratch(batch_size=4, grad_accum_steps=3, max_steps=2, eval_every=10)
    finetune(model, tokenizer, [r["prompt"] for r in records], [r["query"] for r in records], config,
             tmp_path / "run", progress=False)
    assert len(training_forwards) == 6


def test_validation_split_is_seeded_disjoint_and_sized():
    train, val = split_validation(50, TrainConfig(val_fraction=0.1, seed=1))
    assert len(val) == 5 and len(train) == 45
    assert sorted([*train, *val]) == list(range(50))
    again_train, again_val = split_validation(50, TrainConfig(val_fraction=0.1, seed=1))
    assert np.array_equal(val, again_val)
    assert not np.array_equal(val, split_validation(50, TrainConfig(val_fraction=0.1, seed=2))[1])
    assert len(split_validation(50, TrainConfig(max_val_examples=2))[1]) == 2


def test_length_grouped_batches_cover_an_epoch_with_less_padding_than_random():
    rng = np.random.default_rng(0)
    lengths = rng.integers(3, 60, size=400)
    batches = length_grouped_batches(lengths, 8, np.random.default_rng(1), group_factor=10)
    assert sorted(np.concatenate(batches).tolist()) == list(range(400))
    assert all(1 <= len(b) <= 8 for b in batches)

    def padded(batch_list):
        return sum(len(b) * lengths[b].max() for b in batch_list)

    random_batches = np.array_split(rng.permutation(400), 50)
    assert padded(batches) < 0.8 * padded(random_batches)


@pytest.mark.parametrize("overrides, message", [
    (dict(max_steps=0), "max_steps must be a whole number >= 1 (optimizer steps; 0 would score with the untrained initial weights), got 0"),
    (dict(max_steps=-5), "max_steps must be a whole number >= 1 (optimizer steps; 0 would score with the untrained initial weights), got -5"),
    (dict(batch_size=0), "batch_size must be a whole number >= 1, got 0"),
    (dict(batch_size=2.5), "batch_size must be a whole number >= 1, got 2.5"),
    (dict(eval_every=0), "eval_every must be a whole number >= 1"),
    (dict(grad_accum_steps=-1), "grad_accum_steps must be a whole number >= 1"),
    (dict(max_val_examples=0), "max_val_examples must be a whole number >= 1"),
    (dict(warmup_steps=-1), "warmup_steps must be a whole number >= 0"),
    (dict(seed=-1), "seed must be a whole number >= 0"),
    (dict(lr=0.0), "lr must be a number > 0, got 0.0"),
    (dict(lr=float("nan")), "lr must be a number > 0, got nan"),
    (dict(val_fraction=1.0), "val_fraction must be a number in (0, 1), got 1.0"),
    (dict(weight_decay=-0.1), "weight_decay must be a number >= 0"),
    (dict(max_grad_norm=0), "max_grad_norm must be a number > 0"),
])
def test_training_settings_out_of_range_are_config_errors(overrides, message):
    from lsplits.errors import ConfigError

    with pytest.raises(ConfigError, match="^" + re.escape(message)):
        TrainConfig(**overrides)
    with pytest.raises(ConfigError):
        TrainConfig.scratch(**overrides)


def test_scratch_sizes_out_of_range_are_config_errors():
    from lsplits.errors import ConfigError

    for overrides, message in ((dict(n_layer=0), "n_layer must be a whole number >= 1, got 0"),
                               (dict(vocab_size=1), "vocab_size must be a whole number >= 2"),
                               (dict(dropout=1.0), r"dropout must be a number in \[0, 1\)"),
                               (dict(n_embd=30, n_head=4), r"n_embd must be a multiple of n_head \(4\), got 30")):
        with pytest.raises(ConfigError, match=message):
            ScratchConfig(**overrides)
    assert TrainConfig(max_grad_norm=None, max_val_examples=None).max_steps == 2000  # None where allowed
