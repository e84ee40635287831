"""What ``lsplits difficulty`` computes: one frozen, self-checking :class:`DifficultySettings`.

It owns the command's defaults (the CLI reads them from here and prints them with ``%(default)s``), refuses
an out-of-range option in one line before anything is loaded, and is written as-is (``asdict``) into the
report's ``settings.json`` and the dataset's ``lsplits.json``. Torch-free, so ``lsplits --help`` stays fast;
:meth:`lsplits.difficulty.train.TaskModelSettings.of` takes its training part from it.

>>> DifficultySettings().epochs, DifficultySettings(models=["a", "a", "b"]).models
(2.0, ('a', 'b'))
>>> DifficultySettings(epochs=0)
Traceback (most recent call last):
...
lsplits.errors.InvalidOption: epochs must be a number > 0, got 0
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from lsplits.lm.dtype import DEFAULT_DTYPE
from lsplits.params import PARAMS, Checked, Param
from lsplits.uncertainty.prr import DEFAULT_BOOTSTRAP

CLASSIFIER_LR = 5e-5
"""Peak learning rate of the sequence classifiers when ``--lr`` is not given."""
SEQ2SEQ_LR = 3e-4
"""Peak learning rate of the seq2seq (text-to-SQL) models when ``--lr`` is not given."""


OPTIONAL_LR = Param(PARAMS["lr"].rule, optional=True, why="None: the model kind's default")
"""The rule of a learning rate that may be left to the model kind (:data:`CLASSIFIER_LR`, :data:`SEQ2SEQ_LR`)."""


@dataclass(frozen=True)
class DifficultySettings(Checked):
    """Which models train on which configs, how long, and how the intervals are computed.

    Attributes:
        models: task models, Hub ids or local folders (None: the offline MiniLM-L6).
        configs: configs to evaluate (None: every config of the dataset).
        epochs: passes over the train split (ignored when ``max_steps`` is given).
        max_steps: optimizer steps per config (overrides ``epochs``).
        lr: peak AdamW learning rate (None: :data:`CLASSIFIER_LR`, or :data:`SEQ2SEQ_LR` for seq2seq models).
        batch_size: examples per optimizer step.
        max_length: input tokens per example.
        max_train_examples: train on a seeded sample of at most this many examples (None: all).
        evals_per_epoch: validation measurements per epoch for the checkpoint choice.
        seed: seeds training, the sample and the bootstrap.
        n_bootstrap: bootstrap resamples of the intervals (0: none).
        dtype: compute dtype of the task models, ``auto``, ``fp32`` or ``bf16`` (:mod:`lsplits.lm.dtype`).
    """

    models: tuple[str, ...] | None = None
    configs: tuple[str, ...] | None = None
    epochs: float = 2.0
    max_steps: int | None = None
    lr: float | None = None
    batch_size: int = 32
    max_length: int = 128
    max_train_examples: int | None = None
    evals_per_epoch: int = 2
    seed: int = 0
    n_bootstrap: int = DEFAULT_BOOTSTRAP
    dtype: str = DEFAULT_DTYPE

    RULES = {"lr": OPTIONAL_LR}

    def check_together(self) -> None:
        """A model or config named twice is evaluated once."""
        for name in ("models", "configs"):
            value = getattr(self, name)
            object.__setattr__(self, name, None if value is None else tuple(dict.fromkeys(value)))

    def to_dict(self) -> dict[str, Any]:
        """The settings as a dict (``dataclasses.asdict``), as the report and ``lsplits.json`` record them."""
        return dataclasses.asdict(self)

