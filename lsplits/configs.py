"""The split configs a dataset repo publishes (``ll_split``, ``ll_split_len``, ``random``, ...).

Each :class:`SplitConfig` turns the per-example columns of a dataset (:class:`SplitInputs`) into a
:class:`~lsplits.splits.engine.Partition`. Dataset builders add their own (Spider's ``template``
and ``tmcd``) and a hook applied to every partition (Spider's atom constraint).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .errors import ConfigError
from .splits.engine import Partition, length_partition, likelihood_partition, random_partition

ScoreKind = Literal["ft", "pt"]


@dataclass
class SplitInputs:
    """Per-example arrays that split strategies read (all aligned with the example list)."""

    ids: list[str]
    lengths: np.ndarray
    labels: np.ndarray | None
    scores: dict[str, np.ndarray] = field(default_factory=dict)  # "ft"/"pt" -> ll_score
    extras: dict[str, Any] = field(default_factory=dict)  # task-specific (Spider: atoms, sqls, ...)

    def score(self, kind: ScoreKind) -> np.ndarray:
        """The ``kind`` scores; ConfigError when they were not computed."""
        if kind not in self.scores:
            raise ConfigError(f"no {kind!r} scores were computed for this build")
        return self.scores[kind]


@dataclass(frozen=True)
class SplitConfig:
    """One published config: its name, a one-line description, and the scores it needs."""

    name: str
    description: str
    make: Callable[[SplitInputs, int, int], Partition]  # (inputs, eval size, seed) -> Partition
    needs: ScoreKind | None = None


def _likelihood(kind: ScoreKind, *, length_control: bool, reverse: bool) -> Callable[..., Partition]:
    def make(inputs: SplitInputs, eval_size: int, seed: int) -> Partition:
        return likelihood_partition(inputs.score(kind), eval_size,
                                    lengths=inputs.lengths if length_control else None,
                                    labels=inputs.labels, reverse=reverse, seed=seed)
    return make


def _describe(kind: ScoreKind, length_control: bool, reverse: bool) -> str:
    lm = "a frozen pretrained LM (prompting)" if kind == "pt" else "an LM fine-tuned in k folds"
    tail = "most likely" if reverse else "least likely"
    text = f"the {tail} examples under {lm} form eval"
    return text + (", within each query-length bucket" if length_control else "")


GENERIC_CONFIGS: dict[str, SplitConfig] = {}
for _kind, _prefix in (("ft", "ll_split"), ("pt", "ll_split_pt")):
    for _len in (False, True):
        for _rev in (False, True):
            if _kind == "pt" and _rev:
                continue
            _name = _prefix + ("_len" if _len else "") + ("_reverse" if _rev else "")
            GENERIC_CONFIGS[_name] = SplitConfig(_name, _describe(_kind, _len, _rev),
                                                 _likelihood(_kind, length_control=_len, reverse=_rev), _kind)
GENERIC_CONFIGS["random"] = SplitConfig(
    "random", "a seeded random split with the same sizes (and label balance)",
    lambda inputs, size, seed: random_partition(len(inputs.ids), size, labels=inputs.labels, seed=seed))
GENERIC_CONFIGS["length"] = SplitConfig(
    "length", "the examples with the longest queries form eval",
    lambda inputs, size, seed: length_partition(inputs.lengths, size, labels=inputs.labels))

DEFAULT_CONFIGS = ("ll_split", "ll_split_len", "ll_split_pt", "ll_split_pt_len", "ll_split_reverse",
                   "ll_split_len_reverse", "random")


def resolve_configs(names: list[str] | tuple[str, ...], available: Mapping[str, SplitConfig]) -> list[SplitConfig]:
    """Look up config names, raising ConfigError that lists the valid ones."""
    unknown = [name for name in names if name not in available]
    if unknown:
        raise ConfigError(f"unknown config(s) {', '.join(unknown)}; choose from {', '.join(available)}")
    return [available[name] for name in dict.fromkeys(names)]
