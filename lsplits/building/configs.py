"""The split configs a dataset repo publishes (``ll_split``, ``ll_split_len``, ``random``, ...), by name.

:data:`CONFIGS` is the one place where a published config name maps to its split strategy
(:mod:`lsplits.splits.strategy`, :mod:`lsplits.splits.spider`). A dataset offers the configs its
split policy supports (Spider's ``template`` and ``tmcd`` read SQL inputs only its policy provides).

>>> CONFIGS["ll_split_len"]
LikelihoodSplit(setting='ft', length_control=True, reverse=False)
"""

from __future__ import annotations

from collections.abc import Mapping

from lsplits.errors import InvalidOption
from lsplits.splits.spider import TemplateSplit, TMCDSplit
from lsplits.splits.strategy import (
    PLAIN_POLICY,
    LengthSplit,
    LikelihoodSplit,
    RandomSplit,
    SplitInputs,
    SplitPolicy,
    SplitStrategy,
)

__all__ = ["CONFIGS", "DEFAULT_CONFIGS", "SplitInputs", "available_configs", "resolve_configs"]

CONFIGS: dict[str, SplitStrategy] = {
    "ll_split": LikelihoodSplit("ft"),
    "ll_split_reverse": LikelihoodSplit("ft", reverse=True),
    "ll_split_len": LikelihoodSplit("ft", length_control=True),
    "ll_split_len_reverse": LikelihoodSplit("ft", length_control=True, reverse=True),
    "ll_split_pt": LikelihoodSplit("pt"),
    "ll_split_pt_len": LikelihoodSplit("pt", length_control=True),
    "random": RandomSplit(),
    "length": LengthSplit(),
    "template": TemplateSplit(),
    "tmcd": TMCDSplit(),
}
"""Every published config name and its strategy."""

DEFAULT_CONFIGS = ("ll_split", "ll_split_len", "ll_split_pt", "ll_split_pt_len", "ll_split_reverse",
                   "ll_split_len_reverse", "random")


def available_configs(policy: SplitPolicy = PLAIN_POLICY) -> dict[str, SplitStrategy]:
    """The configs a dataset with ``policy`` can build (those whose inputs the policy provides)."""
    return {name: strategy for name, strategy in CONFIGS.items() if policy.supports(strategy)}


def resolve_configs(names: list[str] | tuple[str, ...],
                    available: Mapping[str, SplitStrategy]) -> dict[str, SplitStrategy]:
    """Look up config names (name -> strategy, duplicates dropped), raising ConfigError that lists the valid ones."""
    unknown = [name for name in names if name not in available]
    if unknown:
        raise InvalidOption(f"unknown config(s) {', '.join(unknown)}; choose from {', '.join(available)}")
    return {name: available[name] for name in dict.fromkeys(names)}
