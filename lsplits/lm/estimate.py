"""``--dry-run``: what a scoring run will cost before it runs: tokens, time on this hardware, disk.

The estimate takes the run's :class:`~lsplits.lm.plan.RunPlan` (the same defaults as the run) and its
model: a pretrained LM as loaded, the scratch LM made exactly as the run makes fold 0's (the tokenizer
trained on the same seeded sample of the texts, the same window, sizes and seed). Every example's tokens are counted with that
tokenizer. Then a short warm-up is measured on this machine with the model: a few scoring
batches of the real token budget taken across the length range, and for the fine-tuned setting a
few training micro-batches. The projection assumes the whole run goes at the measured rates and,
under a launcher, that the processes share the work evenly; model loading and saving are not
counted. Disk: each fold's checkpoint (fp32 weights and tokenizer; scratch runs also keep the
initial weights) and the parquet score shards, sized by writing rows of the real ids in memory.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from lsplits.data.tasks import DEFAULT_SETTING
from lsplits.errors import DataError
from lsplits.lm.defaults import DEFAULT_FOLDS
from lsplits.lm.distributed import process_device, world_size
from lsplits.lm.dtype import FP32, dtype_text
from lsplits.lm.encode import EncodedPair, encode_pairs, model_window, text_lengths
from lsplits.lm.finetune import batch_loss, length_grouped_batches, split_validation
from lsplits.lm.pipeline import DEFAULT_SHARD_SIZE, plan_of, record_columns
from lsplits.lm.plan import SCRATCH, RunPlan
from lsplits.lm.scoring import (
    QueryLogProbs,
    default_token_budget,
    load_causal_lm,
    pad_pairs,
    resolve_device,
    score_encoded,
    token_budget_batches,
)
from lsplits.lm.scratch import ScratchConfig, scratch_model, scratch_tokenizer, window_for
from lsplits.lm.training import TrainConfig, Training
from lsplits.runtime.progress import format_bytes, format_duration
from lsplits.runtime.tempfolders import temporary_folder

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class RunEstimate:
    """Projected cost of one ``compute_scores`` run (all times in seconds, sizes in bytes).

    Attributes:
        setting, lm, n_examples, folds (0 for ``"pt"``), processes, device: what was estimated.
        prompt_tokens: BOS plus prompt tokens (context, after truncation to the window).
        scored_tokens: query tokens plus EOS, the tokens whose log-probs are summed.
        padded_tokens: tokens the scoring batches process, padding included.
        model_config: the estimated model's configuration (``config.json``): the model the run trains.
        train_config: the training config of every fold (None for ``"pt"``), as a dict.
        scoring_tokens_per_s: measured scoring rate of one process, in padded tokens.
        train_step_s: measured seconds per optimizer step of one process (0 for ``"pt"``).
        train_steps: optimizer steps over all folds.
        validation_tokens: padded tokens of all validation passes of all folds.
        checkpoint_bytes: model folders the cache will hold (all folds).
        shard_bytes: all parquet score shards.
        dtype: the compute dtype the run resolves to on this device (``fp32`` or ``bf16``), the
            one the warm-up was measured in.
    """

    setting: str
    lm: str
    n_examples: int
    folds: int
    processes: int
    device: str
    prompt_tokens: int
    scored_tokens: int
    padded_tokens: int
    model_config: dict
    train_config: dict | None
    scoring_tokens_per_s: float
    train_step_s: float
    train_steps: int
    validation_tokens: int
    checkpoint_bytes: int
    shard_bytes: int
    dtype: str = FP32

    @property
    def scoring_s(self) -> float:
        return self.padded_tokens / self.scoring_tokens_per_s / self.processes

    @property
    def validation_s(self) -> float:
        return self.validation_tokens / self.scoring_tokens_per_s / self.processes

    @property
    def training_s(self) -> float:
        return self.train_step_s * self.train_steps

    @property
    def total_s(self) -> float:
        return self.scoring_s + self.validation_s + self.training_s

    @property
    def disk_bytes(self) -> int:
        return self.checkpoint_bytes + self.shard_bytes

    def report(self) -> str:
        """A few plain lines for the terminal."""
        setup = f"{self.folds} folds, " if self.folds else ""
        lines = [f"dry run: setting {self.setting}, lm {self.lm}, {setup}{self.n_examples:,} examples, "
                 f"{self.processes} process{'es' if self.processes > 1 else ''} on {self.device}, "
                 f"dtype {dtype_text(self.dtype)}",
                 f"  tokens:  {self.prompt_tokens:,} context + {self.scored_tokens:,} scored; scoring batches "
                 f"process {self.padded_tokens:,} (padding included)"]
        if self.lm == SCRATCH:
            config = self.model_config
            lines.append(f"  model:   scratch GPT-2, {config['n_layer']} layers x {config['n_embd']} wide, vocabulary "
                         f"{config['vocab_size']:,}, window {config['n_positions']} tokens (as the run builds it)")
        warmup = f"  warm-up: scoring {self.scoring_tokens_per_s:,.0f} tokens/s per process"
        if self.train_steps:
            warmup += f"; training {self.train_step_s:.3g} s per optimizer step"
        lines.append(warmup)
        parts = []
        if self.train_steps:
            at_most = "at most " if (self.train_config or {}).get("patience") else ""  # early stopping may end sooner
            parts += [f"training {at_most}{self.train_steps:,} steps {format_duration(self.training_s)}",
                      f"validation {format_duration(self.validation_s)}"]
        parts.append(f"scoring {format_duration(self.scoring_s)}")
        lines.append(f"  time:    {', '.join(parts)}: about {format_duration(self.total_s)}")
        lines.append(f"  disk:    checkpoints {format_bytes(self.checkpoint_bytes)} + score shards "
                     f"{format_bytes(self.shard_bytes)}: about {format_bytes(self.disk_bytes)} in the cache folder")
        return "\n".join(lines)


def estimate_run(records: Sequence[Mapping[str, Any]], *, lm: str | Path | None = None,
                 setting: str = DEFAULT_SETTING, folds: int = DEFAULT_FOLDS, seed: int = 0,
                 train_config: TrainConfig | None = None,
                 scratch_config: ScratchConfig | None = None, max_steps: int | None = None,
                 plan: RunPlan | None = None, shard_size: int = DEFAULT_SHARD_SIZE,
                 token_budget: int | None = None, device: str | None = None,
                 warmup_batches: int = 3, warmup_steps: int = 10) -> RunEstimate:
    """Count tokens, time a warm-up and size the cache of ``compute_scores`` with the same arguments.

    Args:
        records, lm, setting, folds, seed, train_config, scratch_config, max_steps, plan, shard_size,
            token_budget, device: as for :func:`~lsplits.lm.pipeline.compute_scores`.
        warmup_batches: scoring batches timed (after one untimed).
        warmup_steps: training micro-batches timed (after two untimed: the first steps run slower).

    Raises:
        DataError: bad records, or a query longer than the model window (the run would fail too).
        ConfigError: the model cannot be loaded.
    """
    ids, prompts, queries = record_columns(records)
    plan = plan_of(plan, lm=lm, setting=setting, folds=folds, seed=seed, train_config=train_config,
                   scratch_config=scratch_config, max_steps=max_steps)
    lm, setting, folds, train_config = plan.lm, plan.setting, plan.folds, plan.train_config
    device = resolve_device(device or process_device())
    precision = plan.resolved_dtype(device)
    token_budget = token_budget or default_token_budget(device)
    with temporary_folder(prefix="lsplits-estimate-") as tmp:
        if plan.scratch:  # exactly fold 0's initial model (the folds differ only in their seeds)
            tokenizer = scratch_tokenizer(prompts, queries, Path(tmp) / "tokenizer", plan.scratch_config)
            prompt_lengths, query_lengths = text_lengths(tokenizer, prompts), text_lengths(tokenizer, queries)
            window = window_for(prompt_lengths + query_lengths + 2, plan.scratch_config.max_positions)
            model, tokenizer = scratch_model(tokenizer, prompts, queries, Path(tmp) / "model", plan.scratch_config,
                                             seed=plan.fold_seed(0), window=window)
        else:
            model, tokenizer = load_causal_lm(lm, device="cpu")
            prompt_lengths, query_lengths = text_lengths(tokenizer, prompts), text_lengths(tokenizer, queries)
        model_config = model.config.to_diff_dict()
        model.to(device)
        window = model_window(model, tokenizer)
        too_long = np.flatnonzero(query_lengths + 2 > window)
        if len(too_long):
            raise DataError(f"the query is {query_lengths[too_long[0]]} tokens; with BOS and EOS it exceeds the "
                            f"model window of {window} tokens", example=ids[too_long[0]], field="query")
        lengths = np.minimum(prompt_lengths + query_lengths + 2, window)
        batches = token_budget_batches(lengths, token_budget)
        padded = sum(len(batch) * int(lengths[batch].max()) for batch in batches)

        def encoded(index: Sequence[int]) -> list[EncodedPair]:
            return encode_pairs(tokenizer, [prompts[i] for i in index], [queries[i] for i in index],
                                max_length=window)

        rate = _scoring_rate(model, batches, encoded, token_budget, warmup_batches, precision)
        step_s, steps, validation_tokens = 0.0, 0, 0
        if setting == "ft":
            processes = world_size()
            per_process = max(1, math.ceil(train_config.batch_size / processes))
            step_s = _train_step_seconds(model, lengths, per_process, encoded, train_config, warmup_steps,
                                         precision)
            steps = folds * train_config.max_steps
            n_train = len(ids) - len(ids) // folds
            n_val = len(split_validation(n_train, train_config)[1])
            passes = 1 + train_config.max_steps // train_config.eval_every + \
                (train_config.max_steps % train_config.eval_every != 0)
            validation_tokens = round(folds * passes * n_val * padded / len(ids))
        checkpoint = _checkpoint_bytes(model, tokenizer, Path(tmp) / "tokenizer-size")
    checkpoints = folds * (2 if plan.scratch else 1)  # scratch runs also keep the initial weights
    return RunEstimate(setting=setting, lm=lm, n_examples=len(ids), folds=folds, processes=world_size(),
                       device=str(device), prompt_tokens=int(lengths.sum() - (query_lengths + 1).sum()),
                       scored_tokens=int((query_lengths + 1).sum()), padded_tokens=int(padded),
                       model_config=model_config,
                       train_config=None if train_config is None else train_config.to_dict(), scoring_tokens_per_s=rate, train_step_s=step_s,
                       train_steps=steps, validation_tokens=validation_tokens,
                       checkpoint_bytes=checkpoints * checkpoint, shard_bytes=_shard_bytes(ids, shard_size),
                       dtype=precision)


def _evenly_spaced(n: int, k: int) -> list[int]:
    """``k`` indices spread over ``range(n)`` (fewer when ``n`` is small), in order."""
    return sorted({round(x) for x in np.linspace(0, n - 1, num=min(n, k))})


def _scoring_rate(model: torch.nn.Module, batches: list[np.ndarray], encoded, token_budget: int,
                  warmup_batches: int, dtype: str) -> float:
    """Padded tokens per second scoring a few of ``batches`` (the first, longest one untimed)."""
    score_encoded(model, encoded(batches[0]), token_budget=token_budget, progress=False, dtype=dtype)
    tokens, seconds = 0, 0.0
    for index in _evenly_spaced(len(batches), warmup_batches):
        pairs = encoded(batches[index])
        start = time.perf_counter()
        score_encoded(model, pairs, token_budget=token_budget, progress=False, dtype=dtype)
        seconds += time.perf_counter() - start
        tokens += len(pairs) * max(len(p.input_ids) for p in pairs)
    return tokens / max(seconds, 1e-9)


def _train_step_seconds(model: torch.nn.Module, lengths: np.ndarray, per_process: int, encoded,
                        config: TrainConfig, timed: int, dtype: str, untimed: int = 2) -> float:
    """Seconds per optimizer step of the training core (:mod:`lsplits.lm.training`) on a few length-grouped
    micro-batches: forward, backward, clipping and AdamW, in the run's dtype.

    Trains ``model`` for those few steps (it is a throwaway copy of the run's model).
    """
    training = Training(QueryLogProbs(model), dataclasses.replace(config, grad_accum_steps=1), dtype=dtype)
    device = training.accelerator.device
    warmup, batches = timed_batches(lengths, per_process, np.random.default_rng(config.seed), untimed, timed)
    training.model.train()
    seconds = 0.0
    for n, batch_index in enumerate([*warmup, *batches]):
        pairs = encoded(batch_index)
        batch = pad_pairs(pairs).to(device)
        weight = 1.0 / sum(pair.n_scored for pair in pairs)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        training.step(functools.partial(batch_loss, batch=batch, weight=weight))
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        if n >= len(warmup):
            seconds += time.perf_counter() - start
    model.eval()
    micro = seconds / max(len(batches), 1)
    return micro * config.grad_accum_steps


def timed_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator, untimed: int,
                  timed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(warm-up batches, timed batches) of one training epoch: the warm-up the narrowest ones, the timed ones
    spread evenly over the epoch's batches by width (every batch when there are few).

    A step's time grows with its batch's width, and a few wide batches can dominate an epoch (BoolQ's passages):
    timing the first batches of a shuffled epoch, as the estimate did, missed them and projected a 200-row BoolQ
    build at 0.62 s a step where it ran at 2-4.6 s.
    """
    epoch = sorted(length_grouped_batches(lengths, batch_size, rng), key=lambda b: (int(lengths[b].max()), len(b)))
    warmup = epoch[:untimed] if len(epoch) > untimed else epoch[:1]
    return warmup, [epoch[i] for i in _evenly_spaced(len(epoch), timed)]


def _checkpoint_bytes(model: torch.nn.Module, tokenizer, folder: Path) -> int:
    """Size of a ``save_pretrained`` folder of ``model`` in fp32 and its tokenizer, without writing the weights.

    Tied weights are stored once; each tensor also has a small header entry (name, shape, offsets).
    """
    unique = {tensor.data_ptr(): (name, tensor) for name, tensor in model.state_dict().items()}
    weights = sum(tensor.numel() * 4 + len(name) + 64 for name, tensor in unique.values())
    tokenizer.save_pretrained(folder)
    model.config.save_pretrained(folder)
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.save_pretrained(folder)
    return weights + sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _shard_bytes(ids: list[str], shard_size: int) -> int:
    """All score shards' size, scaled from one shard of the first ids written to memory."""
    rows = min(len(ids), shard_size)
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"position": np.arange(rows), "id": ids[:rows], "ll_score": -rng.random(rows) * 100,
                          "ll_tokens": rng.integers(1, 100, rows), "fold": np.zeros(rows, dtype=np.int64)})
    buffer = io.BytesIO()
    table.to_parquet(buffer, index=False)
    return round(buffer.tell() * len(ids) / rows)
