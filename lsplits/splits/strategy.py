"""Split strategies: one protocol for every way lsplits cuts a dataset into train and eval.

Modelled on scikit-learn's splitters: a strategy keeps its parameters on the object
(``LikelihoodSplit(setting="ft", length_control=True)``), prints them in its repr, returns them
from :meth:`SplitStrategy.params`, and :meth:`SplitStrategy.split` turns the per-example inputs
(:class:`SplitInputs`), an eval size and a seed into index arrays (a
:class:`~lsplits.splits.engine.Partition`), never copies of the data.

A :class:`SplitPolicy` is what one dataset adds to every strategy: extra per-example inputs
(Spider: SQL atoms and compounds), a constraint applied to every partition (Spider: every eval
atom occurs in train), per-config statistics and notes for the card. Where it sits: the build
(:mod:`lsplits.building.pipeline`) scores the examples, then asks the policy to split them with each
published config's strategy (:mod:`lsplits.building.configs` maps config names to strategies).

>>> import numpy as np
>>> inputs = SplitInputs(ids=["a", "b", "c", "d"], lengths=np.array([3, 1, 2, 5]), labels=None,
...                      scores={"ft": np.array([-9.0, -1.0, -4.0, -2.0])})
>>> LikelihoodSplit().split(inputs, 2).eval.tolist()
[0, 2]
>>> LikelihoodSplit(reverse=True)
LikelihoodSplit(setting='ft', length_control=False, reverse=True)
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from lsplits.data.tasks import DEFAULT_SETTING, Setting, resolve_setting
from lsplits.errors import ConfigError
from lsplits.splits.engine import Partition, length_partition, likelihood_partition, random_partition

__all__ = [
    "CONSTRAINT_WARN_SHARE",
    "PLAIN_POLICY",
    "ConstraintEffect",
    "LengthSplit",
    "LikelihoodSplit",
    "RandomSplit",
    "SplitInputs",
    "SplitPolicy",
    "SplitStrategy",
]

CONSTRAINT_WARN_SHARE = 0.25
"""The share of a config's eval that a policy's constraint may replace before the build warns that the split is
no longer the strategy's (Spider's atom constraint on small data can swap most of a likelihood split's eval)."""

@dataclass
class SplitInputs:
    """Per-example arrays that split strategies read (all aligned with the example list)."""

    ids: list[str]
    lengths: np.ndarray
    labels: np.ndarray | None
    scores: dict[str, np.ndarray] = field(default_factory=dict)  # "ft"/"pt" -> ll_score
    extras: dict[str, Any] = field(default_factory=dict)  # task-specific (Spider: atoms, sqls, ...)

    def score(self, kind: Setting) -> np.ndarray:
        """The ``kind`` scores; ConfigError when they were not computed."""
        if kind not in self.scores:
            raise ConfigError(f"no {kind!r} scores were computed for this build")
        return self.scores[kind]

    def extra(self, key: str, strategy: object) -> Any:
        """``extras[key]``; ConfigError naming ``strategy`` when the dataset's policy did not provide it."""
        if key not in self.extras:
            raise ConfigError(f"{strategy!r} needs the per-example input {key!r}, which this dataset's split "
                              f"policy does not provide (has: {', '.join(self.extras) or 'none'})")
        return self.extras[key]


class SplitStrategy(abc.ABC):
    """One way to cut a dataset into train and eval; subclasses are frozen dataclasses of their parameters.

    Class attributes: ``setting`` is the LM setting whose scores the strategy reads (None: none),
    ``requires`` the :attr:`SplitInputs.extras` keys it reads (a dataset offers the strategy only
    when its policy provides them).
    """

    setting: ClassVar[Setting | None] = None
    requires: ClassVar[tuple[str, ...]] = ()

    @property
    @abc.abstractmethod
    def description(self) -> str:
        """One line for the card: which examples form eval."""

    @abc.abstractmethod
    def split(self, inputs: SplitInputs, eval_size: int | float, seed: int = 0) -> Partition:
        """The train/eval partition of the examples of ``inputs`` (deterministic under ``seed``)."""

    def own_choice(self, inputs: SplitInputs, eval_size: int | float, seed: int = 0) -> Partition | None:
        """The partition the strategy would choose before a constraint that :meth:`split` applies itself (the
        template split's whole-group atom constraint), so its effect is reported too; None when it applies none."""
        return None

    def check(self, partition: Partition, inputs: SplitInputs) -> None:
        """Raise SplitInvariantError when ``partition`` (after the policy's constraint) breaks a promise the
        strategy's description makes; the build calls it on every config (default: no promise to check)."""
        return None

    def params(self) -> dict[str, Any]:
        """The strategy's parameters by name (what its repr shows)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    def record(self) -> dict[str, Any]:
        """``{"strategy": class name, "params": params()}``, as ``lsplits.json`` stores it."""
        return {"strategy": type(self).__name__, "params": self.params()}


@dataclass(frozen=True)
class LikelihoodSplit(SplitStrategy):
    """The least likely examples (lowest ``ll_score`` under the ``setting``'s LM) form eval.

    ``length_control`` cuts within each query-length bucket; ``reverse`` sends the most likely
    instead (the paper's control). Eval is label-balanced when the inputs have labels.
    """

    setting: Setting = DEFAULT_SETTING  # type: ignore[misc]
    length_control: bool = False
    reverse: bool = False

    def __post_init__(self) -> None:
        resolve_setting(self.setting, what="LikelihoodSplit setting")

    @property
    def description(self) -> str:
        lm = "a frozen pretrained LM (prompting)" if self.setting == "pt" else "an LM fine-tuned in k folds"
        tail = "most likely" if self.reverse else "least likely"
        text = f"the {tail} examples under {lm} form eval"
        return text + (", within each query-length bucket" if self.length_control else "")

    def split(self, inputs: SplitInputs, eval_size: int | float, seed: int = 0) -> Partition:
        return likelihood_partition(inputs.score(self.setting), eval_size,
                                    lengths=inputs.lengths if self.length_control else None,
                                    labels=inputs.labels, reverse=self.reverse, seed=seed)


@dataclass(frozen=True)
class RandomSplit(SplitStrategy):
    """A seeded random split with the same sizes (and label balance) as the likelihood splits."""

    @property
    def description(self) -> str:
        return "a seeded random split with the same sizes (and label balance)"

    def split(self, inputs: SplitInputs, eval_size: int | float, seed: int = 0) -> Partition:
        return random_partition(len(inputs.ids), eval_size, labels=inputs.labels, seed=seed)


@dataclass(frozen=True)
class LengthSplit(SplitStrategy):
    """The examples with the longest queries form eval (Spider's ``length`` baseline)."""

    @property
    def description(self) -> str:
        return "the examples with the longest queries form eval"

    def split(self, inputs: SplitInputs, eval_size: int | float, seed: int = 0) -> Partition:
        return length_partition(inputs.lengths, eval_size, labels=inputs.labels)


@dataclass(frozen=True)
class ConstraintEffect:
    """What a policy's constraint did to one config's partition: how many eval examples it swapped for train
    examples, how many of the strategy's own eval choices it kept, and (for every config, when the build scored
    its examples) the mean ``ll_score`` of eval before and after it and of train after it, so a card can say
    whether a likelihood split still points its way and whether another config's eval became likelier than train.

    Attributes:
        constraint: what the constraint is, in words (the policy's ``constraint_name``).
        eval_examples: the examples in eval (the constraint never changes the count).
        swaps: eval examples the constraint replaced with train examples.
        reverse: the likelihood config sends the most likely examples to eval (None: not a likelihood config).
        eval_mean_before, eval_mean, train_mean: mean ``ll_score`` (a likelihood config's own setting, else the
            build's ``ft`` or ``pt`` scores; None: no scores).
    """

    constraint: str
    eval_examples: int
    swaps: int
    reverse: bool | None = None
    eval_mean_before: float | None = None
    eval_mean: float | None = None
    train_mean: float | None = None

    @classmethod
    def of(cls, constraint: str, strategy: SplitStrategy, before: Partition, after: Partition,
           inputs: SplitInputs) -> ConstraintEffect:
        """The effect of the constraint that turned ``before`` (the strategy's partition) into ``after``."""
        kept = np.intersect1d(before.eval, after.eval).size
        effect = cls(constraint=constraint, eval_examples=int(after.eval.size), swaps=int(after.eval.size - kept))
        likelihood = isinstance(strategy, LikelihoodSplit)
        # a likelihood config is judged by its own scores; any other (random, length, template, tmcd) by the
        # build's, so a constraint that makes its eval more likely than train is seen too
        setting = strategy.setting if likelihood else next((s for s in ("ft", "pt") if s in inputs.scores), None)
        if setting not in inputs.scores:
            return effect
        scores = inputs.scores[setting]
        return dataclasses.replace(effect, reverse=strategy.reverse if likelihood else None,
                                   eval_mean_before=_mean(scores[before.eval]), eval_mean=_mean(scores[after.eval]),
                                   train_mean=_mean(scores[after.train]))

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> ConstraintEffect:
        """The effect :meth:`to_dict` wrote (``lsplits.json``'s ``constraint_effects``)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in values.items() if key in names})

    def to_dict(self) -> dict[str, Any]:
        """The effect as plain JSON values, each under its field name."""
        return dataclasses.asdict(self)

    @property
    def kept(self) -> int:
        """How many of the strategy's own eval choices are still in eval."""
        return self.eval_examples - self.swaps

    @property
    def share(self) -> float:
        """The share of eval the constraint replaced."""
        return self.swaps / self.eval_examples if self.eval_examples else 0.0

    @property
    def turned(self) -> bool:
        """True when a likelihood config's eval ended up on the wrong side of train after the constraint (more
        likely than train on average; less likely for a reverse config) though it was not before."""
        if self.reverse is None or None in (self.eval_mean_before, self.eval_mean, self.train_mean):
            return False
        sign = -1.0 if self.reverse else 1.0
        return sign * (self.eval_mean - self.train_mean) > 0 >= sign * (self.eval_mean_before - self.train_mean)

    def describe(self) -> str:
        """One line for the card and ``lsplits analyze``: swaps, eval choices kept and the mean scores."""
        text = (f"{self.constraint}: {self.swaps:,} of {self.eval_examples:,} eval examples swapped for train "
                f"examples ({self.share:.0%}); {self.kept:,} of the config's own eval choices kept")
        if self.eval_mean is not None:
            text += (f"; mean ll_score eval {self.eval_mean:.2f} (before the constraint {self.eval_mean_before:.2f}), "
                     f"train {self.train_mean:.2f}")
            if self.turned:
                side = "less" if self.reverse else "more"
                text += f": eval is now {side} likely than train, the split's direction turned around"
        if self.share > CONSTRAINT_WARN_SHARE:
            text += f" -- more than {CONSTRAINT_WARN_SHARE:.0%} of eval replaced, so eval is no longer the config's choice"
        return text

    def warning(self, config: str) -> str | None:
        """The one-line warning the build logs when the constraint replaced more than :data:`CONSTRAINT_WARN_SHARE`
        of eval or turned the split's direction around; None when it did neither."""
        if self.share <= CONSTRAINT_WARN_SHARE and not self.turned:
            return None
        return (f"config {config}: {self.describe()}; the data is too small for this constraint (see the README, "
                "'Spider on small data')")


def _mean(values: np.ndarray) -> float | None:
    return float(np.mean(values)) if values.size else None


@dataclass(frozen=True)
class SplitPolicy:
    """What one dataset adds to every split strategy.

    Attributes:
        name: short name, recorded in ``lsplits.json`` (``plain``, ``spider``).
        provides: the :attr:`SplitInputs.extras` keys that ``extras`` computes.
        extras: examples -> extra per-example inputs (Spider: SQL strings, atoms, compounds).
        constraint: applied to every partition (Spider: the atom constraint).
        constraint_name: the constraint in words, as the card, ``lsplits.json`` and warnings name it.
        statistics: (inputs, config -> partition) -> config -> named numbers for the card.
        notes: inputs -> facts about one build for the card's method section and ``lsplits.json``.
    """

    name: str = "plain"
    provides: frozenset[str] = frozenset()
    extras: Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]] | None = None
    constraint: Callable[[Partition, SplitInputs], Partition] | None = None
    constraint_name: str = "constraint"
    statistics: Callable[[SplitInputs, Mapping[str, Partition]], dict[str, dict[str, float]]] | None = None
    notes: Callable[[SplitInputs], dict[str, Any]] | None = None

    def supports(self, strategy: SplitStrategy) -> bool:
        """True when this policy provides every extra input ``strategy`` reads."""
        return set(strategy.requires) <= self.provides

    def inputs(self, examples: Sequence[Mapping[str, Any]], *, ids: Sequence[str], lengths: Collection[int],
               labels: Sequence[object] | None = None,
               scores: Mapping[str, np.ndarray] | None = None) -> SplitInputs:
        """The :class:`SplitInputs` of ``examples`` with this policy's extras computed from them."""
        return SplitInputs(ids=list(ids), lengths=np.asarray(lengths),
                           labels=None if labels is None else np.asarray(labels),
                           scores=dict(scores or {}), extras=self.extras(examples) if self.extras else {})

    def split(self, strategy: SplitStrategy, inputs: SplitInputs, eval_size: int | float,
              seed: int = 0) -> Partition:
        """``strategy``'s partition of ``inputs``, passed through this policy's constraint, then checked
        against the strategy's own promise (:meth:`SplitStrategy.check`)."""
        return self.split_with_effect(strategy, inputs, eval_size, seed)[0]

    def split_with_effect(self, strategy: SplitStrategy, inputs: SplitInputs, eval_size: int | float,
                          seed: int = 0) -> tuple[Partition, ConstraintEffect | None]:
        """:meth:`split`, and what the constraint did to the strategy's partition (None without a constraint)."""
        partition, effect = strategy.split(inputs, eval_size, seed), None
        if self.constraint is not None:
            chosen = strategy.own_choice(inputs, eval_size, seed)
            chosen = partition if chosen is None else chosen
            partition = self.constraint(partition, inputs)
            effect = ConstraintEffect.of(self.constraint_name, strategy, chosen, partition, inputs)
        strategy.check(partition, inputs)
        return partition, effect

    def statistics_of(self, inputs: SplitInputs, partitions: Mapping[str, Partition]) -> dict[str, dict[str, float]]:
        """The policy's per-config numbers ({} without any)."""
        return self.statistics(inputs, partitions) if self.statistics is not None else {}

    def notes_of(self, inputs: SplitInputs) -> dict[str, Any]:
        """The policy's facts about this build ({} without any)."""
        return self.notes(inputs) if self.notes is not None else {}


PLAIN_POLICY = SplitPolicy()
"""The policy of datasets that add nothing to the generic strategies."""
