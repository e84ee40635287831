"""Every settings class checks every field when built (issue 35, deliverable 1).

The classes are found by introspection (every dataclass deriving from :class:`lsplits.params.Checked` once the
library, the metric modules and the Space's settings are imported) and so are their fields, so a class or field
added later is covered without touching this file. Each field gets bad values derived from its own rule (below a
bound, not a choice, one string where a list is due, a bad list item, a wrong kind) and must be refused with
InvalidOption naming that field.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import pkgutil
import sys
from pathlib import Path

import pytest

import lsplits
from lsplits.errors import InvalidOption
from lsplits.params import (
    Checked,
    Each,
    Either,
    Flag,
    Interval,
    Kind,
    Names,
    Options,
    Pair,
    Param,
    Text,
    rule_of,
)

ROOT = Path(__file__).resolve().parents[1]
SPACE = ROOT / "spaces" / "lsplits-demo"

REQUIRED = {"lr": 1e-3, "max_steps": 10, "demo_data": Path("demo"), "scratch_lm": Path("lm"),
            "example_dir": Path("example"), "work_dir": Path("work")}
"""Good values of the fields that have no default (the test fails naming any other)."""


def _import_everything() -> None:
    for module in pkgutil.walk_packages(lsplits.__path__, "lsplits."):
        if "._shipped" in module.name or module.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(module.name)
        except ImportError:  # an optional extra that is not installed: its settings are not reachable either
            continue
    if str(SPACE) not in sys.path:
        sys.path.insert(0, str(SPACE))
    try:
        importlib.import_module("ui_common")
    except ImportError:
        pass


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


_import_everything()
CLASSES = sorted({cls for cls in _subclasses(Checked) if dataclasses.is_dataclass(cls)
                  and not cls.__module__.startswith("tests")}, key=lambda cls: cls.__qualname__)
FIELDS = [(cls, field.name) for cls in CLASSES for field in dataclasses.fields(cls) if field.init]


def _bad_values(rule) -> list[object]:
    """Values ``rule`` refuses, read from the rule itself (never from the code under test's messages)."""
    values: list[object] = [object()]
    if isinstance(rule, Interval):
        values += ["1", math.nan]
        if rule.low is not None:
            values.append(rule.low - 1)
        if rule.high is not None:
            values.append(rule.high + 1)
        if rule.whole:
            values.append(2.5)
    elif isinstance(rule, Options):
        values += ["no such choice", 3]
    elif isinstance(rule, Each):
        values += ["one string", [_bad_values(rule.rule)[-1]]]
        if not rule.empty:
            values.append([])
    elif isinstance(rule, Names):
        values += ["one string", [], [3]]
    elif isinstance(rule, Text):
        values.append(3)
        if not rule.empty:
            values.append("")
    elif isinstance(rule, Flag):
        values += [1, "yes"]
    elif isinstance(rule, Kind):
        values.append(3)
    elif isinstance(rule, Pair):
        values += ["ab", ("a",), ("a", "b", "c"), (_bad_values(rule.rule)[-1], _good_item(rule.rule))]
    elif isinstance(rule, Either):
        values.append("text")
    return [value for value in values if not rule.accepts(value)]


def _good_item(rule) -> object:
    """A value a Text or Options rule accepts (the other half of a pair whose first half is bad)."""
    return rule.names()[0] if isinstance(rule, Options) else "name"


def _build(cls: type, **values: object):
    required = {field.name: REQUIRED[field.name] for field in dataclasses.fields(cls) if field.init
                and field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING}
    return cls(**{**required, **values})


def test_the_discovery_finds_the_settings_classes():
    names = {cls.__name__ for cls in CLASSES}
    assert {"StudyConfig", "EstimatorSettings", "TrainConfig", "ScratchConfig", "RunSettings",
            "ScoreSettings", "BuildSettings", "DemoSettings", "DifficultySettings", "TaskModelSettings",
            "BeamSettings", "Decoding", "LoadOptions"} <= names
    assert len(FIELDS) > 100


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_field_has_a_rule_and_the_defaults_pass_it(cls):
    for field in dataclasses.fields(cls):
        assert isinstance(rule_of(cls, field.name), Param), f"{cls.__name__}.{field.name} has no rule"
    _build(cls)


@pytest.mark.parametrize("cls, name", FIELDS, ids=[f"{cls.__name__}.{name}" for cls, name in FIELDS])
def test_a_bad_value_in_any_field_is_refused_naming_it(cls, name):
    bad = _bad_values(rule_of(cls, name).rule)
    assert bad, f"no bad value found for {cls.__name__}.{name}"
    for value in bad:
        with pytest.raises(InvalidOption) as caught:
            _build(cls, **{name: value})
        assert caught.value.name == name, (cls.__name__, name, value, str(caught.value))
        assert str(caught.value).startswith(name + " "), str(caught.value)


@pytest.mark.parametrize("values, message", [
    (dict(beam_sizes=(0,)), "beam_sizes item 0 must be a whole number >= 1 (candidates per input), got 0"),
    (dict(beam_sizes=("a",)), "beam_sizes item 0 must be a whole number >= 1 (candidates per input), got 'a'"),
    (dict(beam_sizes=(3, 5, -1)), "beam_sizes item 2 must be a whole number >= 1 (candidates per input), got -1"),
    (dict(similarities=("smatch", "nope")), "similarities item 1 must be one of "),
    (dict(qualities="smatchpp"), "qualities must be a non-empty list, each one of "),
    (dict(qualities=()), "qualities must be a non-empty list, each one of "),
    (dict(estimators=("EIGV", "nope")), "estimators item 1 must be one of lexsim, "),
    (dict(metrics=("prr", 3)), "metrics item 1 must be one of prr, "),
    (dict(progress="no"), "progress must be True or False, got 'no'"),
    (dict(cache_dir=3), "cache_dir must be a path, got 3"),
])
def test_the_study_config_cases_of_the_issue(values, message):
    from lsplits.uncertainty.study_config import StudyConfig

    with pytest.raises(InvalidOption) as caught:
        StudyConfig(**values)
    assert str(caught.value).startswith(message), str(caught.value)
    assert caught.value.name == next(iter(values))


def test_names_are_lower_cased_and_lists_become_tuples():
    from lsplits.uncertainty.study_config import StudyConfig

    config = StudyConfig(estimators=["EIGV", "Ecc"], beam_sizes=[3, 5], similarities=["smatchpp"])
    assert (config.estimators, config.beam_sizes, config.similarities) == (("eigv", "ecc"), (3, 5), ("smatchpp",))


def test_one_unknown_name_wording_lists_the_choices():
    """Every "unknown name" goes through check_choice: NAME must be one of A, B, got X."""
    from lsplits.similarity.registry import available, get
    from lsplits.uncertainty.estimators import estimator_names, get_estimator
    from lsplits.uncertainty.normalization import NORMALIZERS, get_normalizer

    for call, name, choices in ((lambda: get_estimator("nope"), "estimator", estimator_names()),
                                (lambda: get_normalizer("nope"), "normalizer", tuple(NORMALIZERS)),
                                (lambda: get("nope"), "similarity", tuple(available()))):
        with pytest.raises(InvalidOption) as caught:
            call()
        assert str(caught.value) == f"{name} must be one of {', '.join(choices)}, got 'nope'"
