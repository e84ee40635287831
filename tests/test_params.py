"""The one validation vocabulary (lsplits.params): each option's rule, one error class (a ValueError), one
message style, and the caller's words (Python name or CLI flag)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from lsplits.errors import ConfigError, InvalidOption, LsplitsError
from lsplits.params import PARAMS, Interval, check, check_choice, renamed


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("folds", 2, 2), ("seed", np.int64(7), 7), ("eval_size", 0.25, 0.25), ("eval_size", 40, 40),
    ("max_steps", None, None), ("configs", ["a", "b"], ("a", "b")), ("ecc_threshold", 2, 2.0),
    ("max_rejection", 1.0, 1.0), ("n_bootstrap", 0, 0),
])
def test_accepted_values_come_back_normalised(name, value, expected):
    got = check(name, value)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(("name", "value", "words"), [
    ("folds", 1, "folds must be a whole number >= 2, got 1"),
    ("seed", -1, "seed must be a whole number >= 0 (a random seed), got -1"),
    ("seed", True, "got True"), ("seed", 1.5, "got 1.5"), ("seed", "3", "got '3'"),
    ("eval_size", 0, "eval_size must be a count (a whole number >= 1) or a fraction in (0, 1), got 0"),
    ("eval_size", 1.0, "got 1.0"), ("eval_size", math.nan, "got nan"),
    ("lr", math.inf, "lr must be a number > 0, got inf"),
    ("ecc_threshold", 0, "ecc_threshold must be a number in (0, 2]"),
    ("data_files", "a.jsonl", "data_files must be a non-empty list of names, got 'a.jsonl'"),
    ("configs", [], "got []"),
])
def test_refused_values_raise_one_class_in_one_style(name, value, words):
    with pytest.raises(InvalidOption) as caught:
        check(name, value)
    assert words in str(caught.value)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, ConfigError)
    assert isinstance(caught.value, LsplitsError)
    assert caught.value.name == name


def test_the_error_is_renamed_into_the_callers_words_and_survives_pickling():
    with pytest.raises(InvalidOption) as caught:
        check("n_bootstrap", -2)
    flag = caught.value.renamed("--bootstrap")
    assert str(flag) == "--bootstrap must be a whole number >= 0 (bootstrap resamples; 0 = no interval), got -2"
    assert str(flag.within("--settings a.json")).startswith("--settings a.json: --bootstrap must")
    assert str(pickle.loads(pickle.dumps(flag))) == str(flag)


def test_interval_bounds_are_open_or_closed_as_described():
    share = Interval(whole=False, low=0, high=1, closed="neither")
    assert [share.accepts(v) for v in (0, 0.5, 1)] == [False, True, False]
    assert share.describe() == "a number in (0, 1)"
    assert Interval(whole=False, low=0, high=2, closed="right").describe() == "a number in (0, 2]"


def test_choices_and_deprecated_names():
    assert check_choice("method", "a", ("a", "b")) == "a"
    with pytest.raises(InvalidOption, match=r"^method must be one of a, b, got 'c'$"):
        check_choice("method", "c", ("a", "b"))
    with pytest.warns(FutureWarning, match="max_risk is renamed target_risk"):
        assert renamed({"max_risk": 0.2}, "max_risk", "target_risk", owner="f") == {"target_risk": 0.2}
    with pytest.raises(InvalidOption, match="not both"):
        renamed({"max_risk": 0.2, "target_risk": 0.1}, "max_risk", "target_risk", owner="f")


def test_every_param_rule_describes_itself():
    for name, param in PARAMS.items():
        assert param.describe(), name
