"""Fine-tune a causal LM on (prompt, query) pairs with the loss on query tokens only.

Used once per fold of the k-fold setting. The loop runs on ``accelerate`` (one process, or several
under ``accelerate launch`` / ``torchrun``), with gradient accumulation and bf16 autocast where the
dtype says so (:mod:`lsplits.lm.dtype`; fp32 master weights). Batches are length-grouped (examples of similar length together, batch order shuffled) so
little compute goes to padding. The validation perplexity of a held-out share of the training data
is measured every ``eval_every`` optimizer steps (and before the first); the weights with the
lowest one are saved with ``save_pretrained``. With ``patience`` (:class:`~lsplits.lm.training.TrainConfig`)
training stops once that many checks in a row have not lowered it: the weights kept are the same as a longer
run's whenever it would not have improved later, so only the steps that bought nothing are saved.

Several processes compute the *same* training as one: ``batch_size`` is the global batch, every
process takes an interleaved slice of each batch, and its loss is weighted so that the averaged
gradient equals the one-process gradient of the whole batch (the loss is the mean over the batch's
scored tokens). Validation examples are split between the processes and the log-likelihoods summed.
What still differs with the number of processes: floating-point summation order (last-bit
differences) and dropout masks, which are drawn per process; with dropout off, N processes train
the same model as one up to rounding.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter

import numpy as np
import torch

from lsplits.errors import DataError
from lsplits.io.atomic import atomic_path, atomic_write_text
from lsplits.lm.distributed import sum_over_processes
from lsplits.lm.dtype import DEFAULT_DTYPE
from lsplits.lm.encode import EncodedPair, encode_pairs, model_window
from lsplits.lm.scoring import PaddedBatch, QueryLogProbs, pad_pairs, quiet_transformers_bars, score_encoded
from lsplits.lm.training import TrainConfig, Training
from lsplits.runtime.progress import progress_bar

logger = logging.getLogger(__name__)

BEST_FOLDER = "best"
SUMMARY_FILE = "training.json"
"""Written last: its presence means training finished and ``best/`` is final."""


def length_grouped_batches(lengths: Sequence[int], batch_size: int, rng: np.random.Generator,
                           group_factor: int = 50) -> list[np.ndarray]:
    """One epoch of index batches: shuffle, sort within groups of ``group_factor`` batches, shuffle batches.

    Examples in a batch have similar lengths (little padding) while the epoch stays random.
    """
    order = rng.permutation(len(lengths))
    lengths = np.asarray(lengths)
    batches = []
    group = batch_size * group_factor
    for start in range(0, len(order), group):
        chunk = order[start:start + group]
        chunk = chunk[np.argsort(-lengths[chunk], kind="stable")]
        batches.extend(chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def split_validation(n: int, config: TrainConfig) -> tuple[np.ndarray, np.ndarray]:
    """Seeded (train indices, validation indices) of ``n`` pairs; both sorted, both non-empty."""
    if n < 2:
        raise DataError(f"fine-tuning needs at least 2 examples (1 to train, 1 to validate), got {n}")
    n_val = min(n - 1, max(1, round(config.val_fraction * n)))
    if config.max_val_examples is not None:
        n_val = max(1, min(n_val, config.max_val_examples))
    order = np.random.default_rng(config.seed).permutation(n)
    return np.sort(order[n_val:]), np.sort(order[:n_val])


def perplexity(model: torch.nn.Module, pairs: Sequence[EncodedPair], token_budget: int | None, *,
               rank: int = 0, world: int = 1, dtype: str = DEFAULT_DTYPE) -> float:
    """exp(mean negative log-likelihood per scored token) of ``pairs`` under ``model``.

    With ``world`` > 1 processes, each scores every ``world``-th pair from ``rank`` on and the sums
    are combined across processes (every process must call this).
    """
    scores, counts = score_encoded(model, pairs[rank::world], token_budget=token_budget, progress=False, dtype=dtype)
    log_likelihood, n_tokens = sum_over_processes([scores.sum(), counts.sum()])
    return math.exp(-log_likelihood / n_tokens)


@dataclass(frozen=True)
class Stopped:
    """Where one fine-tuning run stopped and why, as ``training.json`` records it and a build's ``lsplits.json``
    and card report it per fold.

    Attributes:
        steps_run: optimizer steps taken.
        max_steps: the steps the run was allowed.
        best_step: the step whose weights scored lowest on validation (the weights kept; 0: the initial ones).
        best_val_ppl: that validation perplexity.
        reason: ``"max steps"``, or ``"no improvement for N checks"`` when :attr:`TrainConfig.patience` stopped it.
    """

    steps_run: int
    max_steps: int
    best_step: int
    best_val_ppl: float
    reason: str

    def to_dict(self) -> dict[str, int | float | str]:
        return dataclasses.asdict(self)

    @classmethod
    def of_run(cls, out_dir: str | Path) -> Stopped | None:
        """What :func:`finetune` recorded in ``out_dir`` (its ``training.json``); None when it holds no record."""
        path = Path(out_dir) / SUMMARY_FILE
        if not path.is_file():
            return None
        summary = json.loads(path.read_text(encoding="utf-8"))
        return cls(**{field.name: summary[field.name] for field in dataclasses.fields(cls)})


MAX_STEPS = "max steps"
"""The :attr:`Stopped.reason` of a run that took all its steps."""


def no_improvement(patience: int) -> str:
    """The :attr:`Stopped.reason` of a run that early stopping ended."""
    return f"no improvement for {patience} check{'s' * (patience != 1)}"


LONG_RUN_S = 600.0
"""A training run projected to take longer than this (seconds) says so when it starts (:class:`_StepClock`)."""


def finetune(model: torch.nn.Module, tokenizer, prompts: Sequence[str], queries: Sequence[str],
             config: TrainConfig, out_dir: str | Path, *, ids: Sequence[str] | None = None,
             progress: bool = True, desc: str = "training", dtype: str = DEFAULT_DTYPE,
             planned_steps: int | None = None) -> Path:
    """Train ``model`` on the pairs; return the folder holding the best checkpoint and its tokenizer.

    ``out_dir/best`` gets the weights with the lowest validation perplexity (``save_pretrained``);
    ``out_dir/training.json`` records the validation ids, the perplexity history, the best step and where and
    why training stopped (:class:`Stopped`: all ``max_steps``, or ``config.patience`` checks in a row without
    a lower perplexity). ``model`` ends with the best weights too, on the main process (the others, which
    keep no copy of them, end with the last step's and should load ``out_dir/best``). ``dtype``
    (:mod:`lsplits.lm.dtype`) is the compute dtype of the forward passes and of validation; the weights and
    AdamW stay fp32. ``planned_steps``: the steps of the whole run this one starts (several folds); when
    they are projected, from the first steps' pace, to take over :data:`LONG_RUN_S`, the projection is logged.

    Raises:
        DataError: fewer than 2 pairs, or a query too long for the model window.
    """
    out_dir = Path(out_dir)
    ids = [str(i) for i in (ids if ids is not None else range(len(prompts)))]
    pairs = encode_pairs(tokenizer, prompts, queries, max_length=model_window(model, tokenizer), ids=ids)
    train_index, val_index = split_validation(len(pairs), config)
    train_pairs = [pairs[i] for i in train_index]
    val_pairs = [pairs[i] for i in val_index]

    training = Training(QueryLogProbs(model), config, dtype=dtype)
    accelerator, wrapper, precision = training.accelerator, training.model, training.precision
    rank, world = accelerator.process_index, accelerator.num_processes
    lm = training.unwrapped.lm

    bar = progress_bar(total=config.max_steps, desc=desc, unit="step", disable=not progress, leave=False)
    best = _BestWeights(lm, val_pairs, config.eval_token_budget, rank=rank, world=world,
                        keep_copy=accelerator.is_main_process, dtype=precision)
    clock = _StepClock(desc, planned_steps if accelerator.is_main_process else None, config.patience)

    def evaluate(step: int) -> bool:
        """Measure validation perplexity at ``step``; whether training should stop (patience spent)."""
        ppl = best.evaluate(step)
        bar.set_postfix(val_ppl=f"{ppl:.2f}", best=f"{best.val_ppl:.2f}")
        wrapper.train()
        clock.restart()  # validation is not a training step's time
        return 0 < config.patience <= best.checks_since_best  # the same on every process: ppl is summed

    rng = np.random.default_rng(config.seed)
    lengths = [len(p.input_ids) for p in train_pairs]
    step, stop = 0, evaluate(0)
    while step < config.max_steps and not stop:
        for batch_index in length_grouped_batches(lengths, config.batch_size, rng):
            mine, weight = _process_slice([train_pairs[i] for i in batch_index], rank, world)
            batch = pad_pairs(mine).to(accelerator.device)
            if not training.step(functools.partial(batch_loss, batch=batch, weight=weight)):
                continue
            step += 1
            clock.stepped(step)
            bar.update(1)
            if step % config.eval_every == 0 or step == config.max_steps:
                stop = evaluate(step)
            if step >= config.max_steps or stop:
                break
    bar.close()
    stopped = Stopped(steps_run=step, max_steps=config.max_steps, best_step=best.step, best_val_ppl=best.val_ppl,
                      reason=no_improvement(config.patience) if stop else MAX_STEPS)

    best_dir = out_dir / BEST_FOLDER
    if accelerator.is_main_process:
        lm.load_state_dict(best.state)  # the best weights, not the last step's, are what scores
        with atomic_path(best_dir) as staged, quiet_transformers_bars():
            lm.save_pretrained(staged)
            tokenizer.save_pretrained(staged)
        summary = {**stopped.to_dict(), "history": best.history, "config": config.to_dict(),
                   "n_train": len(train_pairs), "val_ids": [ids[i] for i in val_index]}
        atomic_write_text(out_dir / SUMMARY_FILE, json.dumps(summary, indent=1))
    accelerator.wait_for_everyone()
    logger.info("%s: best validation perplexity %.3f at step %d (initial %.3f); stopped at step %d of %d (%s)",
                desc, best.val_ppl, best.step, best.history[0]["val_ppl"], step, config.max_steps, stopped.reason)
    return best_dir


class _StepClock:
    """Times a run's first optimizer steps and, when ``planned_steps`` at that pace would take longer than
    :data:`LONG_RUN_S`, logs the projection once: a long build says so when it starts, not when it ends."""

    UNTIMED, TIMED = 1, 5
    """The first step (slower: allocations, kernel choice) is not timed; the projection uses the next ones."""

    def __init__(self, desc: str, planned_steps: int | None, patience: int) -> None:
        self.desc, self.planned_steps, self.patience = desc, planned_steps, patience
        self.seconds, self.last = 0.0, perf_counter()

    def restart(self) -> None:
        """Time the next step from now (after a validation pass)."""
        self.last = perf_counter()

    def stepped(self, step: int) -> None:
        """Optimizer step ``step`` (from 1), all its micro-batches, has just ended."""
        now = perf_counter()
        took, self.last = now - self.last, now
        if self.planned_steps is None or step <= self.UNTIMED:
            return
        self.seconds += took
        if step < self.UNTIMED + self.TIMED:
            return
        per_step = self.seconds / self.TIMED
        projected = per_step * self.planned_steps
        if projected > LONG_RUN_S:
            from lsplits.runtime.progress import format_duration

            early = (f"; early stopping (patience {self.patience}) may end folds sooner" if self.patience
                     else "")
            logger.info("%s: a long run: at %.3g s a step, its %d training steps take about %s%s (`--dry-run` "
                        "estimates a run before it starts)", self.desc, per_step, self.planned_steps,
                        format_duration(projected), early)
        self.planned_steps = None


class _BestWeights:
    """Measures validation perplexity and keeps a CPU copy of the weights that scored lowest.

    Kept in memory rather than saved at each improvement: early in training nearly every
    evaluation improves, and writing a large model each time would cost more than the training.
    Only the process that saves keeps the copy (``keep_copy``), so N processes hold one, not N.
    :attr:`checks_since_best` counts the checks since the best one (what early stopping reads).
    """

    def __init__(self, model: torch.nn.Module, val_pairs: Sequence[EncodedPair], token_budget: int | None, *,
                 rank: int = 0, world: int = 1, keep_copy: bool = True, dtype: str = DEFAULT_DTYPE) -> None:
        self.model, self.val_pairs, self.token_budget, self.dtype = model, val_pairs, token_budget, dtype
        self.rank, self.world, self.keep_copy = rank, world, keep_copy
        self.history: list[dict] = []
        self.step, self.val_ppl, self.state = 0, math.inf, None
        self.checks_since_best = 0

    def evaluate(self, step: int) -> float:
        ppl = perplexity(self.model, self.val_pairs, self.token_budget, rank=self.rank, world=self.world,
                         dtype=self.dtype)
        self.history.append({"step": step, "val_ppl": ppl})
        if ppl < self.val_ppl:
            self.step, self.val_ppl, self.checks_since_best = step, ppl, 0
            if self.keep_copy:
                self.state = {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}
        else:
            self.checks_since_best += 1
        return ppl


def batch_loss(module: torch.nn.Module, *, batch: PaddedBatch, weight: float) -> torch.Tensor:
    """The weighted negative log-likelihood of a batch's scored tokens (see :func:`_process_slice`)."""
    return -module(batch.input_ids, None, batch.position_ids, batch.scored_index).sum() * weight


def _process_slice(batch: Sequence[EncodedPair], rank: int, world: int) -> tuple[list[EncodedPair], float]:
    """This process's examples of a global batch, and the weight of their summed log-probs in its loss.

    The weight is ``world / scored tokens of the whole batch``: data-parallel training averages the
    processes' gradients, so the result is the gradient of the batch's mean token NLL. A process
    left without an example (a batch smaller than ``world``) runs its first one at weight 0, since
    every process has to take part in each gradient exchange.
    """
    n_tokens = sum(pair.n_scored for pair in batch)
    mine = list(batch[rank::world])
    if not mine:
        return list(batch[:1]), 0.0
    return mine, world / n_tokens
