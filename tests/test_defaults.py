"""Each default lives in one place: an ast walk over lsplits/, metrics/ and spaces/ finds every place a named
default is written as a literal (a parameter default, a dataclass field or module constant, a ``default=`` /
``value=`` keyword, a tuple of estimator names) and fails when one is written twice; and every ``--help``
states each option's default."""

from __future__ import annotations

import argparse
import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from lsplits.cli.parser import COMMANDS, DefaultsFormatter, OneLineParser
from lsplits.uncertainty.bounds import METHODS
from lsplits.uncertainty.selective import MULTIPLE_TESTING

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("lsplits", "metrics", "spaces")
ESTIMATOR_NAMES = {"lexsim", "eigv", "ecc", "degmat"}


@dataclass(frozen=True)
class Site:
    """A literal written where a default is decided: the name it is bound to (parameter, field, constant or
    option) and where."""

    name: str
    value: object
    where: str


def _literal(node: ast.AST) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _call_name(call: ast.Call) -> str:
    """The option or label a ``default=`` / ``value=`` keyword belongs to (``--bootstrap``, a gradio label)."""
    for arg in call.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("-"):
            return arg.value.lstrip("-").replace("-", "_")
    for keyword in call.keywords:
        if keyword.arg == "label" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    return ""


def default_sites(path: Path) -> Iterator[Site]:
    """Every literal default in one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    relative = path.relative_to(ROOT)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            positional = [*node.args.posonlyargs, *node.args.args]
            pairs = list(zip(positional[len(positional) - len(node.args.defaults):], node.args.defaults))
            pairs += [(arg, default) for arg, default in zip(node.args.kwonlyargs, node.args.kw_defaults)
                      if default is not None]
            for arg, default in pairs:
                yield Site(arg.arg, _literal(default), f"{relative}:{default.lineno}")
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            yield Site(node.target.id, _literal(node.value), f"{relative}:{node.lineno}")
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            for target in node.targets:
                yield Site(target.id, _literal(node.value), f"{relative}:{node.lineno}")
        elif isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in ("default", "value"):
                    yield Site(_call_name(node), _literal(keyword.value), f"{relative}:{keyword.value.lineno}")


def _is(kind: type, value: object, expected: object) -> bool:
    return type(value) is kind and value == expected


NAMED_DEFAULTS: dict[str, Callable[[Site], bool]] = {
    "bootstrap resamples (1000)": lambda s: _is(int, s.value, 1000) and "bootstrap" in s.name.lower(),
    "confidence level (0.95)": lambda s: _is(float, s.value, 0.95) and "confidence" in s.name.lower(),
    "normaliser ('minmax')": lambda s: s.value == "minmax",
    "k folds (3)": lambda s: _is(int, s.value, 3) and "fold" in s.name.lower() and "cross" not in s.name.lower(),
    "estimator list": lambda s: isinstance(s.value, (tuple, list)) and len(ESTIMATOR_NAMES & set(map(str, s.value))) >= 2,
    "eval fraction (0.2)": lambda s: _is(float, s.value, 0.2) and ("eval" in s.name.lower()
                                                                   or "fraction" in s.name.lower()),
    "minimum eval size (2)": lambda s: _is(int, s.value, 2) and "eval_size" in s.name.lower(),
    "cache path": lambda s: isinstance(s.value, str) and (".cache" in s.value or "lsplits-cache" in s.value),
    "PRR area (max_rejection 1.0)": lambda s: _is(float, s.value, 1.0) and "rejection" in s.name.lower(),
    "demo size (3000)": lambda s: _is(int, s.value, 3000),
    "scratch LM name ('scratch')": lambda s: s.value == "scratch",
    "selective delta (0.1)": lambda s: (_is(float, s.value, 0.1) or s.value == "0.1") and "delta" in s.name.lower(),
    "selective method": lambda s: isinstance(s.value, str) and s.value in METHODS and "method" in s.name.lower(),
    "multiple testing": lambda s: isinstance(s.value, str) and s.value in MULTIPLE_TESTING and "testing" in s.name.lower(),
}


def all_sites() -> list[Site]:
    return [site for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
            if ".venv" not in path.parts for site in default_sites(path)]


SITES = all_sites()


def test_the_walk_sees_the_places_that_own_the_defaults():
    """The walk is not vacuous: the owners themselves are found (one site each)."""
    owners = {site.where.split(":")[0] for site in SITES if NAMED_DEFAULTS["bootstrap resamples (1000)"](site)}
    assert owners == {"lsplits/uncertainty/prr.py"}
    assert any(site.name == "DEFAULT_FOLDS" and site.value == 3 for site in SITES)
    assert any(site.name == "PAPER_ESTIMATORS" or site.name == "LEXICAL_ESTIMATORS" for site in SITES)


@pytest.mark.parametrize("concept", list(NAMED_DEFAULTS))
def test_each_named_default_is_written_once(concept):
    found = [site for site in SITES if NAMED_DEFAULTS[concept](site)]
    assert len(found) <= 1, f"{concept} is written {len(found)} times: " + ", ".join(
        f"{site.where} ({site.name} = {site.value!r})" for site in found)


def test_the_walk_catches_a_second_copy(tmp_path):
    """A module that writes bootstrap=1000 as a keyword default and in add_argument is caught twice."""
    module = tmp_path / "copy.py"
    module.write_text("def f(*, n_bootstrap=1000):\n    pass\n\nparser.add_argument('--bootstrap', default=1000)\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        found = [site for site in default_sites(module) if NAMED_DEFAULTS["bootstrap resamples (1000)"](site)]
    finally:
        ROOT = saved
    assert [site.name for site in found] == ["n_bootstrap", "bootstrap"]


def test_the_walk_catches_selective_defaults_written_again(tmp_path):
    """delta=0.1 and a bound's name written as literals beside bounds.DEFAULT_DELTA / DEFAULT_METHOD (as
    ue_metrics and the metric module did) are each caught: the method both as the default and as another bound."""
    module = tmp_path / "copy.py"
    module.write_text("def f(u, *, max_risk=None, delta=0.1, method='ltt-wsr'):\n    pass\n\n"
                      "def g(*, selective_method='auto', delta=DEFAULT_DELTA, method=DEFAULT_METHOD):\n    pass\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        sites = list(default_sites(module))
    finally:
        ROOT = saved
    assert [s.where for s in sites if NAMED_DEFAULTS["selective delta (0.1)"](s)] == ["copy.py:1"]
    assert [s.name for s in sites if NAMED_DEFAULTS["selective method"](s)] == ["method", "selective_method"]
    owners = [s.where.split(":")[0] for s in SITES if NAMED_DEFAULTS["selective delta (0.1)"](s)]
    assert owners == ["lsplits/uncertainty/bounds.py"]  # the owner is found, and only it


def _options(command) -> Iterator[argparse.Action]:
    parser = OneLineParser(prog=f"lsplits {command.name}", formatter_class=DefaultsFormatter)
    command.arguments(parser)
    for action in parser._actions:
        if action.option_strings and not action.required and action.nargs != 0 \
                and not isinstance(action, argparse._HelpAction):
            yield action


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_every_help_states_each_options_default(command):
    parser = OneLineParser(prog=f"lsplits {command.name}", formatter_class=DefaultsFormatter)
    command.arguments(parser)
    formatter = DefaultsFormatter(prog=parser.prog)
    for action in _options(command):
        text = formatter._expand_help(action) if action.help else ""
        option = action.option_strings[-1]
        assert "default" in text, f"lsplits {command.name} {option}: the help does not state the default"
        default = action.default
        if default is not None and default != () and default != []:  # an empty default is stated as "none"
            shown = ",".join(map(str, default)) if isinstance(default, (tuple, list)) else str(default)
            assert shown in text, f"lsplits {command.name} {option}: the help does not show the default {shown!r}"
            assert "%(default)" in action.help, f"lsplits {command.name} {option}: the help writes its default " \
                "as a literal instead of %(default)s"
