"""The plan of one LM scoring run: model, setting, folds, seed and the training and scratch-model configs.

This module is the one place that decides a scoring run's settings: which settings need a pretrained
LM (``pt`` prompts a frozen model, so the scratch LM, which exists only once trained, cannot do it),
the training defaults (the scratch LM's, a dataset's paper steps for pretrained LMs, ``--max-steps``
over both), the seed each fold's scratch model starts from. :func:`~lsplits.lm.pipeline.compute_scores`
runs a plan and :func:`~lsplits.lm.estimate.estimate_run` (``--dry-run``) estimates the same plan, so
the estimate measures exactly the model and training the run will use.

>>> plan = RunPlan.make("scratch", "ft", folds=3, seed=1, max_steps=20)
>>> plan.train_config.max_steps, plan.train_config.seed, plan.scratch_config is not None
(20, 1, True)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from lsplits.data.tasks import DEFAULT_SETTING, resolve_setting
from lsplits.errors import InvalidOption
from lsplits.lm.defaults import DEFAULT_FOLDS, SCRATCH_LM, check_prompted
from lsplits.lm.defaults import PRETRAINED_ONLY as PRETRAINED_ONLY  # read from here too
from lsplits.lm.dtype import DEFAULT_DTYPE, check_dtype, config_parameters, resolve_dtype
from lsplits.lm.scratch import ScratchConfig
from lsplits.lm.training import TrainConfig
from lsplits.params import check

SCRATCH = SCRATCH_LM
"""The ``lm`` name of the small GPT-2 trained from random weights on the data itself (offline)."""



def needs_pretrained(setting: str) -> bool:
    """Whether ``setting`` scores with a frozen pretrained LM (``pt``), which the scratch LM is not."""
    return setting == "pt"


def runs_with(lm: str, setting: str) -> bool:
    """Whether ``lm`` can score in ``setting`` (everything but the scratch LM prompted)."""
    return not (str(lm) == SCRATCH and needs_pretrained(setting))


@dataclass(frozen=True)
class RunPlan:
    """One scoring run, settled: build it with :meth:`make`, which applies the defaults and checks.

    Attributes:
        lm: ``"scratch"``, a Hub id or a local model folder.
        setting: ``"ft"`` (k-fold training, then each fold scored by the model that did not see it)
            or ``"pt"`` (a frozen pretrained LM scores everything).
        folds: k of the k-fold setting (0 in ``pt``: nothing is trained).
        seed: seeds the folds, the scratch models' initial weights and the default training config.
        train_config: the training of every fold (None in ``pt``).
        scratch_config: the scratch tokenizer's and model's sizes (None unless ``lm`` is scratch).
        dtype: the requested compute dtype, ``auto``, ``fp32`` or ``bf16``; :meth:`resolved_dtype`
            settles it for a device (training and scoring of every fold use that one).
    """

    lm: str
    setting: str
    folds: int
    seed: int
    train_config: TrainConfig | None
    scratch_config: ScratchConfig | None
    dtype: str = DEFAULT_DTYPE

    @classmethod
    def make(cls, lm: str | Any, setting: str = DEFAULT_SETTING, *, folds: int = DEFAULT_FOLDS, seed: int = 0,
             train_config: TrainConfig | None = None, scratch_config: ScratchConfig | None = None,
             max_steps: int | None = None, paper_steps: int | None = None, patience: int | None = None,
             dtype: str = DEFAULT_DTYPE) -> RunPlan:
        """The plan with every default decided.

        ``train_config`` wins when given (``max_steps`` and ``patience`` then replace its own); else the
        scratch LM gets ``TrainConfig.scratch()`` (early stopping on) and a pretrained LM ``TrainConfig()``
        with ``paper_steps`` (a dataset's steps from the paper, trained in full: the paper's fixed recipe),
        ``max_steps`` and ``patience`` (0: no early stopping) overriding either; the default's seed is ``seed``.

        Raises:
            ConfigError: an unknown setting, ``pt`` with the scratch LM, fewer than 2 folds, a bad seed,
                an unknown dtype.
        """
        lm = str(lm)
        check_dtype(dtype)
        setting = resolve_setting(setting)
        check_prompted(lm, setting)
        check("seed", seed)
        check("max_steps", max_steps)
        check("patience", patience)
        if needs_pretrained(setting):
            return cls(lm=lm, setting=setting, folds=0, seed=seed, train_config=None, scratch_config=None,
                       dtype=dtype)
        if not isinstance(folds, int) or isinstance(folds, bool) or folds < 2:
            raise InvalidOption(f"folds must be between 2 and the number of examples, got {folds!r}")
        given = {name: value for name, value in (("max_steps", max_steps), ("patience", patience))
                 if value is not None}
        if train_config is None:
            steps = max_steps or (None if lm == SCRATCH else paper_steps)
            overrides = {**given, "seed": seed, **({"max_steps": steps} if steps else {})}
            train_config = TrainConfig.scratch(**overrides) if lm == SCRATCH else TrainConfig(**overrides)
        elif given:
            train_config = dataclasses.replace(train_config, **given)
        if lm == SCRATCH and scratch_config is None:
            scratch_config = ScratchConfig()
        return cls(lm=lm, setting=setting, folds=folds, seed=seed, train_config=train_config,
                   scratch_config=scratch_config if lm == SCRATCH else None, dtype=dtype)

    @property
    def scratch(self) -> bool:
        """Whether each fold trains the scratch LM from random weights."""
        return self.lm == SCRATCH

    def fold_seed(self, fold: int) -> int:
        """The seed of fold ``fold``'s initial scratch weights (distinct per fold, fixed per run seed)."""
        return self.seed * 1000 + fold

    def resolved_dtype(self, device: Any) -> str:
        """``fp32`` or ``bf16``: :attr:`dtype` settled for ``device`` and this plan's model size
        (:func:`~lsplits.lm.dtype.resolve_dtype`); the size is only computed when it matters."""
        return resolve_dtype(self.dtype, device, n_parameters=self.n_parameters)

    def n_parameters(self) -> int:
        """Parameters of the model this plan trains or scores, from its configuration alone (no weights read).

        The scratch LM's are counted as if its vocabulary and window were full size (an upper bound).
        """
        if not self.scratch:
            return config_parameters(self.lm)
        from transformers import GPT2Config

        sizes = self.scratch_config or ScratchConfig()
        return config_parameters(GPT2Config(vocab_size=sizes.vocab_size, n_positions=sizes.max_positions,
                                            n_layer=sizes.n_layer, n_head=sizes.n_head, n_embd=sizes.n_embd,
                                            bos_token_id=None, eos_token_id=None))  # GPT-2's 50256: not in a small vocabulary

    def to_dict(self) -> dict[str, Any]:
        """Plain values, for ``run.json`` and the score cache key."""
        return {"lm": self.lm, "setting": self.setting, "folds": self.folds, "seed": self.seed, "dtype": self.dtype,
                "train_config": None if self.train_config is None else self.train_config.to_dict(),
                "scratch_config": None if self.scratch_config is None else dataclasses.asdict(self.scratch_config)}
