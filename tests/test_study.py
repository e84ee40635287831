"""Tests for lsplits.uncertainty.study that need no inputs: the configuration is checked when built."""

from __future__ import annotations

import dataclasses

import pytest

from lsplits.cli.parser import in_cli_words
from lsplits.errors import ConfigError, InvalidOption
from lsplits.uncertainty.methods import method_name
from lsplits.uncertainty.study import PRRRow
from lsplits.uncertainty.study_config import StudyConfig


@pytest.mark.parametrize("settings, message", [
    (dict(n_bootstrap=-1), "n_bootstrap must be a whole number >= 0"),
    (dict(ecc_threshold=3.0), "ecc_threshold must be a number in (0, 2]"),
    (dict(estimators=("eigv", "nope")), "estimators item 1 must be one of lexsim, eigv"),
    (dict(metrics=("roc_auc",)), "metrics: roc_auc needs bad_below"),
    (dict(kle_t=0.0), "kle_t must be a number > 0 (the heat-kernel time), got 0.0"),
    (dict(normalizer="nope"), "normalizer must be one of minmax, "),
    (dict(lexical_similarities=("smatch",)), "lexical_similarities item 0 must be one of rouge1, "),
])
def test_config_is_refused_when_built(settings, message):
    with pytest.raises(ConfigError) as error:
        StudyConfig(**settings)
    assert message in str(error.value)


def test_options_are_named_as_the_caller_spells_them():
    with pytest.raises(InvalidOption) as error:
        StudyConfig(n_bootstrap=-5)
    assert str(error.value) == "n_bootstrap must be a whole number >= 0 (bootstrap resamples; 0 = no interval), got -5"
    assert str(in_cli_words(error.value, "ue")) == \
        "--n-bootstrap must be a whole number >= 0 (bootstrap resamples; 0 = no interval), got -5"
    with pytest.raises(InvalidOption) as error:
        StudyConfig(lexical_similarities=("smatch",))
    assert str(in_cli_words(error.value, "ue")).startswith("--lexical-similarities item 0 must be one of rouge1, ")
    with pytest.raises(ConfigError, match="n_bootstrap must be a whole number >= 0"):
        dataclasses.replace(StudyConfig(), n_bootstrap=-5)  # a changed copy is checked again


def test_config_and_rows_are_immutable_and_names_lower_cased():
    config = StudyConfig(estimators=("EigV", "LexSim"), metrics=("PRR",))
    assert config.estimators == ("eigv", "lexsim") and config.metrics == ("prr",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.seed = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        PRRRow(3, "EigV", "smatchpp", None).k = 5


def test_method_names_use_the_registry_display_names():
    assert method_name("eigv", "smatchpp") == "EigV-Smatch++"
    assert method_name("lexsim", None) == "LexSim"
    assert method_name("lexsim", "rouge1_stem") == "LexSim-ROUGE-1+stem"
    assert method_name("degmat", "unregistered") == "DegMat-unregistered"
