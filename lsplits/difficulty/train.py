"""Fine-tune a fresh copy of a task model on one config's train split and predict its validation and test.

The loop runs on ``accelerate`` (one process, or several under ``accelerate launch`` / ``torchrun``;
bf16 autocast where ``dtype`` says so, :mod:`lsplits.lm.dtype`, with fp32 weights). Batches are length-grouped (examples of similar
length together, batch order shuffled; :func:`lsplits.lm.finetune.length_grouped_batches`) so little
compute goes to padding. ``batch_size`` is the global batch: each process takes an interleaved slice
and weights its summed loss so the averaged gradient is the one-process gradient of the whole batch.
The learning rate warms up linearly over ``warmup_ratio`` of the steps, then decays linearly to 0.

Checkpoint choice: the validation metric (accuracy, or exact match of normalised SQL) is measured
``evals_per_epoch`` times per epoch and at the last step; the weights that scored best are the ones
that predict validation and test.

Resume. Everything lives in one work folder per (model, config, settings, data) (:func:`work_folder`):
at every evaluation a training checkpoint (weights, optimizer, scheduler, step, epoch position, RNG
states, history) is written atomically, with the best weights beside it; ``predictions.parquet`` and
then ``result.json`` are written when the config is finished. A killed run started again skips every
config that has ``result.json`` and continues an unfinished one from its last checkpoint. The
checkpoint files are deleted once the config is finished (``keep_model`` keeps the best model).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from lsplits.difficulty.settings import CLASSIFIER_LR, OPTIONAL_LR, SEQ2SEQ_LR, DifficultySettings
from lsplits.difficulty.source import frames_fingerprint
from lsplits.difficulty.tasks import (
    CLASSIFICATION,
    SEQ2SEQ,
    Encoded,
    LabelSpace,
    TaskKind,
    collate,
    encode,
    load_model,
)
from lsplits.errors import DataError
from lsplits.generation.decoding import token_texts
from lsplits.io.atomic import atomic_path, atomic_write_parquet, atomic_write_text
from lsplits.lm.dtype import DEFAULT_DTYPE
from lsplits.lm.finetune import length_grouped_batches
from lsplits.lm.pipeline import _folder_fingerprint
from lsplits.lm.training import TrainConfig, Training, load_tensors
from lsplits.params import WHOLE_FROM_1, Checked, Interval, Param
from lsplits.runtime.progress import progress_bar

logger = logging.getLogger(__name__)

RESULT_FILE = "result.json"
"""Written last: its presence means the config is finished and ``predictions.parquet`` is final."""
PREDICTIONS_FILE = "predictions.parquet"
CHECKPOINT = "checkpoint"
MODEL_FOLDER = "model"
WORK_VERSION = 2
"""Bump when a change would make finished results in work folders wrong."""


@dataclass(frozen=True)
class TaskModelSettings(Checked):
    """Fine-tuning settings of the task models (one set for every config and model, as in the paper); what
    the training core optimises comes from :meth:`training_config`.

    Attributes:
        epochs: passes over the train split (ignored when ``max_steps`` is given).
        max_steps: optimizer steps (overrides ``epochs``).
        lr: peak AdamW learning rate; None: the model kind's default (:mod:`lsplits.difficulty.settings`).
        batch_size: examples per optimizer step (over all processes).
        eval_batch_size: examples per prediction batch.
        max_length: input tokens per example (longer inputs are cut, longest text first).
        max_target_length: SQL tokens (training targets and generation length).
        evals_per_epoch: validation measurements per epoch for the checkpoint choice.
        warmup_ratio: share of the steps with linear warm-up.
        weight_decay: AdamW weight decay (not on biases and norms).
        max_train_examples: train on a seeded sample of at most this many examples (None: all).
        seed: seeds the head's initialisation, the batch order, dropout and the sample.
        num_beams: beams when generating SQL.
        max_grad_norm: gradient clipping norm.
        dtype: compute dtype, ``auto``, ``fp32`` or ``bf16`` (:mod:`lsplits.lm.dtype`; weights stay fp32).
    """

    epochs: float = DifficultySettings.epochs
    max_steps: int | None = None
    lr: float | None = None
    batch_size: int = DifficultySettings.batch_size
    eval_batch_size: int = 64
    max_length: int = DifficultySettings.max_length
    max_target_length: int = 256
    evals_per_epoch: int = DifficultySettings.evals_per_epoch
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    max_train_examples: int | None = None
    seed: int = 0
    num_beams: int = 1
    max_grad_norm: float = 1.0
    dtype: str = DEFAULT_DTYPE

    RULES = {"lr": OPTIONAL_LR, "eval_batch_size": Param(WHOLE_FROM_1), "max_target_length": Param(WHOLE_FROM_1),
             "warmup_ratio": Param(Interval(whole=False, low=0, high=1, closed="left"), why="a share of the steps"),
             "num_beams": Param(WHOLE_FROM_1)}

    def learning_rate(self, kind: TaskKind) -> float:
        return (SEQ2SEQ_LR if kind.kind == SEQ2SEQ else CLASSIFIER_LR) if self.lr is None else self.lr

    @classmethod
    def of(cls, requested: DifficultySettings) -> TaskModelSettings:
        """The fine-tuning part of the command's :class:`~lsplits.difficulty.settings.DifficultySettings`."""
        return cls(epochs=requested.epochs, max_steps=requested.max_steps, lr=requested.lr,
                   batch_size=requested.batch_size, max_length=requested.max_length,
                   max_train_examples=requested.max_train_examples, evals_per_epoch=requested.evals_per_epoch,
                   seed=requested.seed, dtype=requested.dtype)

    def training_config(self, kind: TaskKind, total_steps: int) -> TrainConfig:
        """What the training core (:mod:`lsplits.lm.training`) optimises: ``total_steps`` with linear warm-up
        over ``warmup_ratio`` of them and linear decay to 0, no weight decay on biases and norms (this stack's
        batches, checks and checkpoint choice are its own: the config's fine-tuning fields stay unread)."""
        return TrainConfig(lr=self.learning_rate(kind), max_steps=total_steps,
                           warmup_steps=round(self.warmup_ratio * total_steps), schedule="linear",
                           weight_decay=self.weight_decay, decay_all=False, max_grad_norm=self.max_grad_norm,
                           seed=self.seed)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class ConfigRun:
    """One finished (model, config): per-example predictions on validation and test, and a training summary.

    ``predictions`` has columns ``id``, ``split``, ``gold``, ``prediction``, ``correct``.
    """

    model: str
    config: str
    predictions: pd.DataFrame
    summary: dict[str, Any]
    work_dir: Path

    def correct(self, split: str = "test") -> np.ndarray:
        """Correctness (0/1) of each example of ``split`` (``eval``: validation and test)."""
        frame = self.predictions if split == "eval" else self.predictions[self.predictions["split"] == split]
        return frame["correct"].to_numpy(dtype=float)


def model_slug(name: str) -> str:
    """A folder name for a model id or path (``sentence-transformers/all-MiniLM-L6-v2`` -> ``...all-MiniLM-L6-v2``)."""
    slug = re.sub(r"[^\w.-]+", "_", str(name))[-60:].strip("_.")
    return slug or "model"


def work_folder(root: Path, name: str, model: str, config: str, kind: TaskKind, labels: LabelSpace | None,
                frames: dict[str, pd.DataFrame], settings: TaskModelSettings) -> Path:
    """The work folder of one (model, config), under the model's ``name``; its name hashes everything
    the result depends on (model files, data, settings), so a changed input never reuses a result. Give it
    the settings with their dtype resolved (:func:`lsplits.difficulty.run.run_difficulty` does), so a cache
    shared between machines never mixes precisions."""
    key = {"version": WORK_VERSION, "model": str(model), "model_files": _folder_fingerprint(str(model)),
           "config": config, "kind": dataclasses.asdict(kind), "labels": labels.names if labels else None,
           "settings": settings.to_dict(),
           "data": frames_fingerprint(frames, [*kind.text_fields, kind.target_field])}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return Path(root) / model_slug(name) / f"{config}-{digest}"


def finished(work_dir: Path) -> bool:
    """Whether the (model, config) of ``work_dir`` is done (its result is final)."""
    return (Path(work_dir) / RESULT_FILE).is_file()


def load_run(work_dir: Path, model: str, config: str) -> ConfigRun:
    """Read a finished (model, config) back from its work folder."""
    summary = json.loads((work_dir / RESULT_FILE).read_text(encoding="utf-8"))
    return ConfigRun(model, config, pd.read_parquet(work_dir / PREDICTIONS_FILE), summary, work_dir)


def train_config(model: str, config: str, kind: TaskKind, labels: LabelSpace | None,
                 frames: dict[str, pd.DataFrame], settings: TaskModelSettings, work_dir: Path, *,
                 name: str | None = None, progress: bool = True, keep_model: bool = False) -> ConfigRun:
    """Fine-tune ``model`` on ``frames['train']`` with checkpoint choice on validation; predict validation and test.

    ``model`` is a Hub id or folder; ``name`` (default: ``model``) is how logs and the result name it.
    Returns the finished run at once when ``work_dir`` holds one; resumes from its checkpoint otherwise.

    Raises:
        DataError: a missing label, or fewer than 1 train / validation example.
    """
    work_dir, name = Path(work_dir), name or model
    if finished(work_dir):
        logger.info("%s / %s: finished earlier, reusing %s", name, config, work_dir)
        return load_run(work_dir, name, config)
    return _Trainer(model, name, config, kind, labels, frames, settings, work_dir, progress, keep_model).run()


class _Trainer:
    """The training loop of :func:`train_config` with its resumable state."""

    def __init__(self, model: str, name: str, config: str, kind: TaskKind, labels: LabelSpace | None,
                 frames: dict[str, pd.DataFrame], settings: TaskModelSettings, work_dir: Path,
                 progress: bool, keep_model: bool) -> None:
        for split in ("train", "validation", "test"):
            if len(frames[split]) == 0:
                raise DataError(f"config {config!r} has an empty {split} split")
        self.name, self.config, self.kind, self.settings, self.labels = name, config, kind, settings, labels
        self.work_dir, self.progress, self.keep_model = work_dir, progress, keep_model
        from accelerate.utils import set_seed

        set_seed(settings.seed)  # the new head's initialisation
        model_obj, self.tokenizer = load_model(model, kind, len(labels) if labels else 0)
        encode_args = dict(labels=labels, max_length=settings.max_length, max_target_length=settings.max_target_length)
        train_frame = frames["train"]
        if settings.max_train_examples is not None and len(train_frame) > settings.max_train_examples:
            rng = np.random.default_rng(settings.seed)
            keep = np.sort(rng.choice(len(train_frame), size=settings.max_train_examples, replace=False))
            train_frame = train_frame.iloc[keep]
        self.data = {split: encode(kind, self.tokenizer, frame, source=f"{config}/{split}", **encode_args)
                     for split, frame in (("train", train_frame), ("validation", frames["validation"]),
                                          ("test", frames["test"]))}
        n_train = len(self.data["train"].ids)
        # generated SQL may run a little longer than the longest training target, never much longer
        longest = max((len(t) for t in self.data["train"].targets), default=1) if kind.kind == SEQ2SEQ else 1
        self.generate_tokens = min(settings.max_target_length, int(1.25 * longest) + 8)
        self.steps_per_epoch = math.ceil(n_train / settings.batch_size)
        self.total_steps = settings.max_steps or max(1, math.ceil(settings.epochs * self.steps_per_epoch))
        self.eval_every = max(1, math.ceil(self.steps_per_epoch / max(1, settings.evals_per_epoch)))
        self.training = Training(model_obj, settings.training_config(kind, self.total_steps), dtype=settings.dtype)
        self.accelerator, self.model = self.training.accelerator, self.training.model
        self.rank, self.world = self.accelerator.process_index, self.accelerator.num_processes
        self.state = {"step": 0, "epoch": 0, "position": 0, "history": [], "best_step": None, "best_metric": -1.0,
                      "resumed_from": None, "seconds": 0.0}
        checkpoint = work_dir / CHECKPOINT
        if (checkpoint / "state.json").is_file():
            self.state = json.loads((checkpoint / "state.json").read_text(encoding="utf-8"))
            self.training.resume(checkpoint)
            self.state["resumed_from"] = self.state["step"]
            logger.info("%s / %s: resuming from the checkpoint at step %d", name, config, self.state["step"])
        self._started = time.perf_counter()

    # --- training ---------------------------------------------------------------------------------

    def run(self) -> ConfigRun:
        settings, state = self.settings, self.state
        lengths = self.data["train"].lengths
        bar = progress_bar(total=self.total_steps, initial=state["step"], desc=f"{self.config}", unit="step",
                   disable=not self.progress, leave=False)
        logger.info("%s / %s: %d train examples, %d steps (%d per epoch), evaluation every %d steps",
                    self.name, self.config, len(lengths), self.total_steps, self.steps_per_epoch, self.eval_every)
        self.model.train()
        while state["step"] < self.total_steps:
            batches = length_grouped_batches(lengths, settings.batch_size,
                                             np.random.default_rng([settings.seed, state["epoch"]]))
            for position in range(state["position"], len(batches)):
                self._step(batches[position])
                state["step"] += 1
                state["position"] = position + 1
                bar.update(1)
                if state["step"] % self.eval_every == 0 or state["step"] == self.total_steps:
                    metric = self._evaluate()
                    bar.set_postfix(val=f"{metric:.3f}", best=f"{state['best_metric']:.3f}")
                if state["step"] >= self.total_steps:
                    break
            else:
                state["epoch"] += 1
                state["position"] = 0
        bar.close()
        return self._finish()

    def _step(self, batch_index: np.ndarray) -> None:
        """One optimizer step on a global batch (this process's slice of it)."""
        data = self.data["train"]
        mine = list(batch_index[self.rank::self.world])
        count = self._count(data, batch_index)
        weight = self.world / count
        if not mine:  # a batch smaller than the number of processes: take part at weight 0
            mine, weight = list(batch_index[:1]), 0.0
        batch = {k: v.to(self.accelerator.device) for k, v in collate(self.kind, self.tokenizer, data, mine).items()}

        def loss_of(model: torch.nn.Module) -> torch.Tensor:
            logits = model(**batch).logits
            labels = batch["labels"]
            return torch.nn.functional.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                                     ignore_index=-100, reduction="sum") * weight

        self.training.step(loss_of)

    def _count(self, data: Encoded, batch_index: np.ndarray) -> int:
        """What the batch's loss is averaged over: examples, or target tokens for seq2seq."""
        if self.kind.kind == CLASSIFICATION:
            return len(batch_index)
        return sum(len(data.targets[i]) for i in batch_index)

    def _evaluate(self) -> float:
        """Validation metric now; keeps the best weights and writes a checkpoint (main process)."""
        state = self.state
        predictions = self._predict("validation", progress=False)
        metric = float(np.mean([p == g for p, g in zip(predictions, self.data["validation"].gold)]))
        state["history"].append({"step": state["step"], "validation": metric})
        improved = metric > state["best_metric"]
        if improved:  # the best weights' validation predictions are kept, not computed again at the end
            state["best_metric"], state["best_step"] = metric, state["step"]
            state["best_predictions"] = predictions
        state["seconds"] += time.perf_counter() - self._started
        self._started = time.perf_counter()
        if self.accelerator.is_main_process:
            self._write_checkpoint(improved)
        self.accelerator.wait_for_everyone()
        self.model.train()
        return metric

    def _write_checkpoint(self, improved: bool) -> None:
        unwrapped = self.accelerator.unwrap_model(self.model)
        checkpoint = self.work_dir / CHECKPOINT
        with atomic_path(checkpoint) as staged:
            staged.mkdir()
            self.training.write_checkpoint(staged)
            if improved or not (checkpoint / "best.pt").is_file():
                torch.save(unwrapped.state_dict(), staged / "best.pt")
            else:  # unchanged best weights: a hard link, not another copy
                _link_or_copy(checkpoint / "best.pt", staged / "best.pt")
            (staged / "state.json").write_text(json.dumps(self.state, indent=1), encoding="utf-8")

    # --- prediction -------------------------------------------------------------------------------

    @torch.no_grad()
    def _predict(self, split: str, progress: bool = True) -> list[str]:
        """Predicted answers (label names, or normalised SQL) for every example of ``split``."""
        from lsplits.difficulty.tasks import canonical_sql

        data = self.data[split]
        order = np.argsort(data.lengths, kind="stable")
        size = self.settings.eval_batch_size
        batches = [order[i:i + size] for i in range(0, len(order), size)]
        model = self.accelerator.unwrap_model(self.model)
        model.eval()
        found: list[tuple[int, str]] = []
        for index in progress_bar(batches[self.rank::self.world], desc=f"{self.config} {split}", unit="batch",
                          disable=not (self.progress and progress), leave=False):
            batch = {k: v.to(self.accelerator.device)
                     for k, v in collate(self.kind, self.tokenizer, data, index, with_targets=False).items()}
            with self.training.autocast():
                if self.kind.kind == SEQ2SEQ:
                    out = model.generate(**batch, max_new_tokens=self.generate_tokens,
                                         num_beams=self.settings.num_beams)
                    texts = [canonical_sql(t) for t in token_texts(self.tokenizer, out)]
                else:
                    ids = model(**batch).logits.argmax(-1).tolist()
                    texts = [self.labels.names[i] for i in ids]
            found.extend(zip(index.tolist(), texts))
        if self.world > 1:
            from accelerate.utils import gather_object

            found = gather_object(found)
        predictions = dict(found)
        return [predictions[i] for i in range(len(data.ids))]

    # --- end of a config --------------------------------------------------------------------------

    def _finish(self) -> ConfigRun:
        """Predict test with the best weights; write predictions (with validation's), then result.json."""
        checkpoint = self.work_dir / CHECKPOINT
        unwrapped = self.accelerator.unwrap_model(self.model)
        unwrapped.load_state_dict(load_tensors(checkpoint / "best.pt"))
        rows = []
        state = self.state
        for split, predicted in (("validation", state["best_predictions"]), ("test", self._predict("test"))):
            data = self.data[split]
            for example_id, gold, prediction in zip(data.ids, data.gold, predicted):
                rows.append({"id": example_id, "split": split, "gold": gold, "prediction": prediction,
                             "correct": prediction == gold})
        predictions = pd.DataFrame(rows)
        state["seconds"] += time.perf_counter() - self._started
        summary = {"model": self.name, "config": self.config, "best_step": state["best_step"],
                   "best_validation": state["best_metric"], "steps": self.total_steps,
                   "steps_per_epoch": self.steps_per_epoch, "n_train": len(self.data["train"].ids),
                   "history": state["history"], "resumed_from": state["resumed_from"],
                   "train_seconds": round(state["seconds"], 1), "settings": self.settings.to_dict(),
                   "processes": self.world}
        if self.accelerator.is_main_process:
            if self.keep_model:
                with atomic_path(self.work_dir / MODEL_FOLDER) as staged:
                    unwrapped.save_pretrained(staged)
                    self.tokenizer.save_pretrained(staged)
            atomic_write_parquet(self.work_dir / PREDICTIONS_FILE, predictions)
            atomic_write_text(self.work_dir / RESULT_FILE, json.dumps(summary, indent=1))
            shutil.rmtree(checkpoint, ignore_errors=True)
        self.accelerator.wait_for_everyone()
        logger.info("%s / %s: best validation %.4f at step %d; test %.4f", self.name, self.config,
                    state["best_metric"], state["best_step"], predictions.loc[predictions.split == "test",
                                                                               "correct"].mean())
        return ConfigRun(self.name, self.config, predictions, summary, self.work_dir)


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
