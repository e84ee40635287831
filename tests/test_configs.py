"""Published config names -> split strategies (lsplits.building.configs): names say what the strategy does,
each dataset offers what its policy supports, and unknown names are refused listing the valid ones."""

from __future__ import annotations

import doctest

import pytest

from lsplits.building import configs as configs_module
from lsplits.building.configs import CONFIGS, DEFAULT_CONFIGS, available_configs, resolve_configs
from lsplits.errors import ConfigError
from lsplits.splits.spider import SPIDER_POLICY, TemplateSplit, TMCDSplit
from lsplits.splits.strategy import PLAIN_POLICY, LengthSplit, LikelihoodSplit, RandomSplit

GENERIC = ["ll_split", "ll_split_reverse", "ll_split_len", "ll_split_len_reverse", "ll_split_pt", "ll_split_pt_len",
           "random", "length"]


def test_a_likelihood_config_name_spells_its_parameters():
    likelihood = {name: s for name, s in CONFIGS.items() if isinstance(s, LikelihoodSplit)}
    assert len(likelihood) == 6
    for name, strategy in likelihood.items():
        spelled = ("ll_split" + ("_pt" if strategy.setting == "pt" else "") + ("_len" if strategy.length_control else "")
                   + ("_reverse" if strategy.reverse else ""))
        assert name == spelled
    assert CONFIGS["random"] == RandomSplit() and CONFIGS["length"] == LengthSplit()
    assert CONFIGS["template"] == TemplateSplit() and CONFIGS["tmcd"] == TMCDSplit()


def test_each_dataset_offers_the_configs_its_policy_supports():
    assert list(available_configs(PLAIN_POLICY)) == GENERIC
    assert list(available_configs(SPIDER_POLICY)) == [*GENERIC, "template", "tmcd"]
    assert set(DEFAULT_CONFIGS) <= set(available_configs())


def test_resolve_keeps_order_drops_repeats_and_names_the_valid_configs():
    chosen = resolve_configs(["random", "ll_split", "random"], available_configs())
    assert list(chosen) == ["random", "ll_split"] and chosen["ll_split"] is CONFIGS["ll_split"]
    with pytest.raises(ConfigError, match=f"unknown config\\(s\\) template, x; choose from {', '.join(GENERIC)}$"):
        resolve_configs(["template", "random", "x"], available_configs())


def test_module_examples():
    assert doctest.testmod(configs_module).failed == 0
