"""Fine-tune a causal LM on (prompt, query) pairs with the loss on query tokens only.

Used once per fold of the k-fold setting. The loop runs on ``accelerate`` (one process, or several
under ``accelerate launch`` / ``torchrun``), with gradient accumulation and bf16 autocast where the
dtype says so (:mod:`lsplits.lm.dtype`; fp32 master weights). Batches are length-grouped (examples of similar length together, batch order shuffled) so
little compute goes to padding. The validation perplexity of a held-out share of the training data
is measured every ``eval_every`` optimizer steps (and before the first); the weights with the
lowest one are saved with ``save_pretrained``.

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

import numpy as np
import torch

from lsplits.errors import DataError
from lsplits.io.atomic import atomic_path, atomic_write_text
from lsplits.lm.distributed import sum_over_processes
from lsplits.lm.dtype import DEFAULT_DTYPE
from lsplits.lm.encode import EncodedPair, encode_pairs, model_window
from lsplits.lm.scoring import PaddedBatch, QueryLogProbs, pad_pairs, quiet_transformers_bars, score_encoded
from lsplits.lm.training import STEPS, Training, TrainSettings
from lsplits.params import WHOLE_FROM_1, Checked, Param
from lsplits.runtime.progress import progress_bar

logger = logging.getLogger(__name__)

BEST_FOLDER = "best"
SUMMARY_FILE = "training.json"
"""Written last: its presence means training finished and ``best/`` is final."""


@dataclass(frozen=True)
class TrainConfig(Checked):
    """Training hyperparameters, checked when built (:class:`lsplits.params.Checked`). The defaults are the paper's
    for pretrained GPT-2 models.

    Attributes:
        batch_size: examples per micro-batch over all processes together (each of N processes
            runs about ``batch_size / N`` of them); an optimizer step sees
            ``batch_size * grad_accum_steps`` examples whatever the number of processes.
        lr: AdamW learning rate, constant after ``warmup_steps`` of linear warm-up.
        max_steps: optimizer steps.
        eval_every: optimizer steps between validation perplexity measurements.
        grad_accum_steps: micro-batches accumulated per optimizer step.
        val_fraction: share of the training pairs held out for checkpoint selection.
        max_val_examples: cap on the held-out pairs (None: no cap); the rest train.
        seed: seeds the validation split, batch order, dropout.
        weight_decay: AdamW weight decay.
        warmup_steps: linear warm-up steps (0: constant from the start, as in the paper).
        max_grad_norm: gradient clipping norm (None: no clipping).
        eval_token_budget: padded tokens per validation batch (None: the device's default).
    """

    batch_size: int = 32
    lr: float = 2e-5
    max_steps: int = 2000
    eval_every: int = 64
    grad_accum_steps: int = 1
    val_fraction: float = 0.1
    max_val_examples: int | None = None
    seed: int = 0
    weight_decay: float = 0.0
    warmup_steps: int = 0
    max_grad_norm: float | None = 1.0
    eval_token_budget: int | None = None

    RULES = {"max_steps": STEPS, "eval_every": Param(WHOLE_FROM_1, why="optimizer steps"),
             "max_val_examples": Param(WHOLE_FROM_1, optional=True),
             "eval_token_budget": Param(WHOLE_FROM_1, optional=True)}

    @classmethod
    def scratch(cls, **overrides) -> TrainConfig:
        """Defaults for training the small scratch model from random weights.

        A randomly initialised model needs a far larger learning rate than fine-tuning; with these,
        3 folds on ~3,000 short pairs train in well under two minutes on 2 CPU cores.
        """
        defaults = dict(lr=2e-3, max_steps=320, warmup_steps=30, weight_decay=0.01)
        return cls(**{**defaults, **overrides})

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def train_settings(self, dtype: str = DEFAULT_DTYPE) -> TrainSettings:
        """What the training core (:mod:`lsplits.lm.training`) optimises: constant LR after the warm-up,
        weight decay on every parameter, this config's clipping, accumulation and seed."""
        return TrainSettings(lr=self.lr, max_steps=self.max_steps, warmup_steps=self.warmup_steps,
                             schedule="constant", weight_decay=self.weight_decay, decay_all=True,
                             max_grad_norm=self.max_grad_norm, grad_accum_steps=self.grad_accum_steps,
                             seed=self.seed, dtype=dtype)


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


def finetune(model: torch.nn.Module, tokenizer, prompts: Sequence[str], queries: Sequence[str],
             config: TrainConfig, out_dir: str | Path, *, ids: Sequence[str] | None = None,
             progress: bool = True, desc: str = "training", dtype: str = DEFAULT_DTYPE) -> Path:
    """Train ``model`` on the pairs; return the folder holding the best checkpoint and its tokenizer.

    ``out_dir/best`` gets the weights with the lowest validation perplexity (``save_pretrained``);
    ``out_dir/training.json`` records the validation ids, the perplexity history and the best step.
    ``model`` ends with those weights too, on the main process (the others, which keep no copy of
    them, end with the last step's and should load ``out_dir/best``). ``dtype`` (:mod:`lsplits.lm.dtype`)
    is the compute dtype of the forward passes and of validation; the weights and AdamW stay fp32.

    Raises:
        DataError: fewer than 2 pairs, or a query too long for the model window.
    """
    out_dir = Path(out_dir)
    ids = [str(i) for i in (ids if ids is not None else range(len(prompts)))]
    pairs = encode_pairs(tokenizer, prompts, queries, max_length=model_window(model, tokenizer), ids=ids)
    train_index, val_index = split_validation(len(pairs), config)
    train_pairs = [pairs[i] for i in train_index]
    val_pairs = [pairs[i] for i in val_index]

    training = Training(QueryLogProbs(model), config.train_settings(dtype))
    accelerator, wrapper, precision = training.accelerator, training.model, training.precision
    rank, world = accelerator.process_index, accelerator.num_processes
    lm = training.unwrapped.lm

    bar = progress_bar(total=config.max_steps, desc=desc, unit="step", disable=not progress, leave=False)
    best = _BestWeights(lm, val_pairs, config.eval_token_budget, rank=rank, world=world,
                        keep_copy=accelerator.is_main_process, dtype=precision)

    def evaluate(step: int) -> None:
        ppl = best.evaluate(step)
        bar.set_postfix(val_ppl=f"{ppl:.2f}", best=f"{best.val_ppl:.2f}")

    rng = np.random.default_rng(config.seed)
    lengths = [len(p.input_ids) for p in train_pairs]
    step = 0
    evaluate(0)
    wrapper.train()
    while step < config.max_steps:
        for batch_index in length_grouped_batches(lengths, config.batch_size, rng):
            mine, weight = _process_slice([train_pairs[i] for i in batch_index], rank, world)
            batch = pad_pairs(mine).to(accelerator.device)
            if not training.step(functools.partial(batch_loss, batch=batch, weight=weight)):
                continue
            step += 1
            bar.update(1)
            if step % config.eval_every == 0 or step == config.max_steps:
                evaluate(step)
                wrapper.train()
            if step >= config.max_steps:
                break
    bar.close()

    best_dir = out_dir / BEST_FOLDER
    if accelerator.is_main_process:
        lm.load_state_dict(best.state)
        with atomic_path(best_dir) as staged, quiet_transformers_bars():
            lm.save_pretrained(staged)
            tokenizer.save_pretrained(staged)
        summary = {"best_step": best.step, "best_val_ppl": best.val_ppl, "history": best.history,
                   "config": config.to_dict(), "n_train": len(train_pairs),
                   "val_ids": [ids[i] for i in val_index]}
        atomic_write_text(out_dir / SUMMARY_FILE, json.dumps(summary, indent=1))
    accelerator.wait_for_everyone()
    logger.info("%s: best validation perplexity %.3f at step %d (initial %.3f)", desc,
                best.val_ppl, best.step, best.history[0]["val_ppl"])
    return best_dir


class _BestWeights:
    """Measures validation perplexity and keeps a CPU copy of the weights that scored lowest.

    Kept in memory rather than saved at each improvement: early in training nearly every
    evaluation improves, and writing a large model each time would cost more than the training.
    Only the process that saves keeps the copy (``keep_copy``), so N processes hold one, not N.
    """

    def __init__(self, model: torch.nn.Module, val_pairs: Sequence[EncodedPair], token_budget: int | None, *,
                 rank: int = 0, world: int = 1, keep_copy: bool = True, dtype: str = DEFAULT_DTYPE) -> None:
        self.model, self.val_pairs, self.token_budget, self.dtype = model, val_pairs, token_budget, dtype
        self.rank, self.world, self.keep_copy = rank, world, keep_copy
        self.history: list[dict] = []
        self.step, self.val_ppl, self.state = 0, math.inf, None

    def evaluate(self, step: int) -> float:
        ppl = perplexity(self.model, self.val_pairs, self.token_budget, rank=self.rank, world=self.world,
                         dtype=self.dtype)
        self.history.append({"step": step, "val_ppl": ppl})
        if ppl < self.val_ppl:
            self.step, self.val_ppl = step, ppl
            if self.keep_copy:
                self.state = {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}
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
