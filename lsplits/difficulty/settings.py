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
lsplits.errors.InvalidOption: --epochs 0: must be positive
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from typing import Any

from lsplits.errors import ConfigError, InvalidOption
from lsplits.lm.dtype import DEFAULT_DTYPE, check_dtype
from lsplits.uncertainty.prr import DEFAULT_BOOTSTRAP

CLASSIFIER_LR = 5e-5
"""Peak learning rate of the sequence classifiers when ``--lr`` is not given."""
SEQ2SEQ_LR = 3e-4
"""Peak learning rate of the seq2seq (text-to-SQL) models when ``--lr`` is not given."""


@dataclass(frozen=True)
class DifficultySettings:
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

    def __post_init__(self) -> None:
        for name in ("models", "configs"):
            value = getattr(self, name)
            if value is not None:
                if isinstance(value, str) or not all(isinstance(item, str) and item for item in value) or not value:
                    raise ConfigError(f"--{name.rstrip('s')}: expected names, got {value!r}")
                object.__setattr__(self, name, tuple(dict.fromkeys(value)))
        _check("--epochs", self.epochs, above=0)
        _check("--lr", self.lr, above=0, optional=True)
        _check("--max-steps", self.max_steps, minimum=1, whole=True, optional=True)
        _check("--batch-size", self.batch_size, minimum=1, whole=True)
        _check("--max-length", self.max_length, minimum=8, whole=True)
        _check("--max-train-examples", self.max_train_examples, minimum=2, whole=True, optional=True)
        _check("--evals-per-epoch", self.evals_per_epoch, minimum=1, whole=True)
        _check("--seed", self.seed, minimum=0, whole=True)
        _check("--bootstrap", self.n_bootstrap, minimum=0, whole=True)
        check_dtype(self.dtype)

    def to_dict(self) -> dict[str, Any]:
        """The settings as a dict (``dataclasses.asdict``), as the report and ``lsplits.json`` record them."""
        return dataclasses.asdict(self)


def _check(option: str, value: Any, *, minimum: float | None = None, above: float | None = None,
           whole: bool = False, optional: bool = False) -> None:
    if optional and value is None:
        return
    number = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    ok = number and (not whole or isinstance(value, numbers.Integral)) \
        and (minimum is None or value >= minimum) and (above is None or value > above)
    if not ok:
        limit = "positive" if above == 0 else "0 or more" if minimum == 0 else f"at least {minimum}"
        raise InvalidOption(f"{option} {value}: must be {limit}{' (a whole number)' if whole else ''}")
