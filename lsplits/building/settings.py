"""What ``lsplits score`` and ``lsplits build`` compute: one frozen, self-checking settings object each.

:class:`ScoreSettings` and :class:`BuildSettings` own their defaults (the CLI reads them from here, its
help prints them with ``%(default)s``), check themselves when built (one line naming the setting) and hold every choice that changes a result: the data and its fields, the
prompt template, the LM, folds, seed, training steps, configs and eval size; each option's rule is
:data:`lsplits.params.PARAMS`' (an :class:`~lsplits.errors.InvalidOption`, a ValueError). How a run goes (output
folder, cache, progress bars, ``torch.compile``) is not a setting: it changes no number. A build writes
``dataclasses.asdict(settings)`` into ``lsplits.json`` and its card, and
:func:`lsplits.building.record.settings_of_record` reads it back, so ``lsplits build --from-record DIR/lsplits.json`` reproduces the build.

>>> BuildSettings(query_field="text", folds=2).folds, BuildSettings.folds
(2, 3)
>>> BuildSettings(folds=1)
Traceback (most recent call last):
...
lsplits.errors.InvalidOption: folds must be a whole number >= 2, got 1
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from lsplits.data.loading import DEFAULT_MISSING_LABELS, MISSING_LABEL_CHOICES, LoadOptions
from lsplits.data.tasks import DEFAULT_SETTING, SETTING_RULE, Setting
from lsplits.errors import ConfigError, InvalidOption
from lsplits.io.storage import cache_folder
from lsplits.lm.defaults import DEFAULT_FOLDS, SCRATCH_LM, check_prompted
from lsplits.lm.dtype import DEFAULT_DTYPE
from lsplits.params import Checked, Each, Options, Param, Text, check

logger = logging.getLogger(__name__)

SETTINGS_KEY = "settings"
"""The key of ``lsplits.json`` that holds the build's :class:`BuildSettings` as a dict."""

DEFAULT_EVAL_FRACTION = 0.2
"""Share of the examples in eval (validation + test) when neither ``eval_size`` nor the paper gives one."""

MIN_EVAL_SIZE = 2
"""Validation and test get half of eval each, so eval needs at least 2 examples."""

SMALL_EVAL_HALF = 50
"""A default eval size whose validation or test half is smaller than this is warned about: a test split of a few
dozen examples measures accuracy to within several points at best (the paper's proportion, e.g. SNLI's 3.6%, is
meant for the full data)."""

T = TypeVar("T", bound="RunSettings")


def default_cache_dir() -> Path:
    """Where scores and fold checkpoints are cached when no folder is given: by ``lsplits build``, ``score`` and
    ``demo``, :func:`lsplits.likelihood_splits` and :func:`lsplits.score` alike, so any of them reuses what another
    computed (:func:`lsplits.io.storage.cache_folder` ``scores``). A cache changes no number: it is no setting."""
    return cache_folder("scores")


def check_eval_size(eval_size: Any, field: str = "eval_size") -> int | float | None:
    """``eval_size`` if it has the shape of one: None (the dataset's default), a count of at least 1, or a
    fraction strictly between 0 and 1 (the rule of :data:`lsplits.params.PARAMS`). Whether it fits the
    dataset is checked when its size is known (:func:`lsplits.building.pipeline.checked_eval_size`)."""
    try:
        return check("eval_size", eval_size)
    except InvalidOption as exc:
        raise exc.renamed(field) from None


@dataclass(frozen=True)
class RunSettings(Checked):
    """What scoring depends on, shared by :class:`ScoreSettings` and :class:`BuildSettings`: which examples,
    which text, which LM trained how.

    Attributes:
        data: a registered builder (``snli``), a Hub dataset id or a local file (None: ``data_files`` only).
        data_files: local files, optionally named by split (``train=a.jsonl``).
        query_field: the field the LM scores (generic datasets; builders know theirs).
        prompt_template: the prompt before the query, with ``{field}`` placeholders (generic datasets).
        label_field: the field eval is balanced by (generic datasets).
        lm: ``"scratch"`` (tiny offline LM), a Hub model id or a local model folder.
        folds: k of the k-fold fine-tuned setting.
        seed: seeds the folds, training and the splits.
        max_steps: training steps per fold (None: the LM's default, see :class:`lsplits.lm.plan.RunPlan`).
        patience: stop a fold once this many validation checks in a row have not improved its perplexity (0:
            never, train all steps; None: the LM's default, on for the scratch LM, off for a pretrained LM, whose
            paper recipe is fixed steps; see :class:`lsplits.lm.plan.RunPlan`).
        missing_labels: ``"error"`` (an example without a label stops the run) or ``"drop"`` (dropped, counted).
        rename: ``"OLD=NEW"`` field renames applied when loading (to keep a user field lsplits writes).
        drop_labels: label values whose examples are dropped when loading, counted (``--drop-label``).
        dtype: compute dtype, ``auto``, ``fp32`` or ``bf16`` (:mod:`lsplits.lm.dtype`; what each LM run
            resolved it to is recorded beside the settings).
    """

    data: str | None = None
    data_files: tuple[str, ...] | None = None
    query_field: str | None = None
    prompt_template: str = ""
    label_field: str | None = None
    lm: str = SCRATCH_LM
    folds: int = DEFAULT_FOLDS
    seed: int = 0
    max_steps: int | None = None
    patience: int | None = None
    missing_labels: str = DEFAULT_MISSING_LABELS
    rename: tuple[str, ...] = ()
    dtype: str = DEFAULT_DTYPE
    drop_labels: tuple[str, ...] = ()

    RULES = {"missing_labels": Param(Options(MISSING_LABEL_CHOICES)),
             "rename": Param(Each(Text(), empty=True), optional=True, why="OLD=NEW field renames"),
             "drop_labels": Param(Each(Text(empty=True), empty=True), optional=True, why="labels as text")}

    def check_together(self) -> None:
        """The renames parse and agree (each field checked on its own before: :class:`lsplits.params.Checked`)."""
        for name in ("rename", "drop_labels"):  # None (not given) is none
            object.__setattr__(self, name, getattr(self, name) or ())
        self.load_options()  # refuses a bad --rename now, before any work

    def load_options(self) -> LoadOptions:
        """How the data is loaded (:class:`lsplits.data.loading.LoadOptions`): missing labels and renames."""
        return LoadOptions.from_cli(self.missing_labels, self.rename, self.drop_labels)

    def to_dict(self) -> dict[str, Any]:
        """The settings as a dict (``dataclasses.asdict``: what ``lsplits.json`` and the card record)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls: type[T], values: Mapping[str, Any], *, source: str = "the settings") -> T:
        """Settings from a dict as :meth:`to_dict` writes it; ConfigError naming ``source`` and the key for
        an unknown key or a bad value."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown setting {unknown[0]!r} for {cls.__name__} "
                              f"(known: {', '.join(sorted(known))})")
        try:
            return cls(**dict(values))
        except InvalidOption as exc:
            raise exc.within(source) from None
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None


@dataclass(frozen=True)
class ScoreSettings(RunSettings):
    """What ``lsplits score`` computes: :class:`RunSettings` in one LM setting.

    Attributes:
        setting: ``"ft"`` (k-fold fine-tuned) or ``"pt"`` (frozen pretrained LM with a prompt).
    """

    setting: Setting = DEFAULT_SETTING

    RULES = {"setting": SETTING_RULE}

    def check_together(self) -> None:
        """The scratch LM is not scored prompted."""
        super().check_together()
        check_prompted(self.lm, self.setting)


@dataclass(frozen=True)
class BuildSettings(RunSettings):
    """What ``lsplits build`` computes: :class:`RunSettings` (each config scores in its own LM setting)
    plus the configs and the eval size.

    Attributes:
        configs: the configs to build (None: the dataset's standard set).
        eval_size: validation + test examples, a count or a fraction (None: the dataset's default, the paper's
            proportion or 20%).
    """

    configs: tuple[str, ...] | None = None
    eval_size: int | float | None = None
