"""Each default lives in one place: an ast walk over lsplits/, metrics/ and spaces/ finds every place a named
default is written as a literal (a parameter default, a dataclass field or module constant, a ``default=`` /
``value=`` keyword, a tuple of estimator names) and fails when one is written twice; each cache folder's kind is
named in one ``cache_folder(...)`` call; every ``--help`` states each option's default; and the Python API and
the CLI build the same configs and score in the same setting by default."""

from __future__ import annotations

import argparse
import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from lsplits.cli.parser import COMMANDS, DefaultsFormatter, OneLineParser
from lsplits.data.tasks import SETTINGS
from lsplits.runtime.pysource import parse_file
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


def _choices(node: ast.AST) -> list[ast.AST]:
    """The expressions a default may be: both branches of ``a if test else b`` (each in turn), else the node.
    Only where a default is given (a parameter, ``default=`` / ``value=``): in an assignment a conditional mostly
    resolves a value given (``method = "x" if binary else "y"``), which decides no default."""
    if isinstance(node, ast.IfExp):
        return [*_choices(node.body), *_choices(node.orelse)]
    return [node]


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
    tree = parse_file(path)
    relative = path.relative_to(ROOT)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            positional = [*node.args.posonlyargs, *node.args.args]
            pairs = list(zip(positional[len(positional) - len(node.args.defaults):], node.args.defaults))
            pairs += [(arg, default) for arg, default in zip(node.args.kwonlyargs, node.args.kw_defaults)
                      if default is not None]
            for arg, default in pairs:
                yield from (Site(arg.arg, _literal(value), f"{relative}:{value.lineno}") for value in _choices(default))
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            yield Site(node.target.id, _literal(node.value), f"{relative}:{node.lineno}")
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            for target in node.targets:
                yield Site(target.id, _literal(node.value), f"{relative}:{node.lineno}")
        elif isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in ("default", "value"):
                    yield from (Site(_call_name(node), _literal(value), f"{relative}:{value.lineno}")
                                for value in _choices(keyword.value))


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
    "LM setting ('ft')": lambda s: isinstance(s.value, str) and s.value in SETTINGS and "setting" in s.name.lower(),
    "selective loss ('1-quality')": lambda s: s.value == "1-quality",
    "beam width k (10)": lambda s: _is(int, s.value, 10) and (s.name == "k" or s.name.lower().endswith("_k")),
    "similarity ('smatchpp')": lambda s: s.value == "smatchpp",
    "KLE unit-trace kernel (True)": lambda s: s.value is True and "kle" in s.name.lower() and "normalize" in s.name.lower(),
    "KLE entropy over log k (True)": lambda s: s.value is True and "kle" in s.name.lower() and "scale" in s.name.lower(),
}


def all_sites() -> list[Site]:
    return [site for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
            if ".venv" not in path.parts for site in default_sites(path)]


SITES = all_sites()


OWNERS = {"bootstrap resamples (1000)": "lsplits/uncertainty/prr.py:DEFAULT_BOOTSTRAP",
          "LM setting ('ft')": "lsplits/data/tasks.py:DEFAULT_SETTING",
          "selective loss ('1-quality')": "lsplits/uncertainty/losses.py:DEFAULT_LOSS",
          "beam width k (10)": "lsplits/generation/search.py:DEFAULT_K",
          "similarity ('smatchpp')": "lsplits/similarity/registry.py:DEFAULT_SIMILARITY",
          "KLE unit-trace kernel (True)": "lsplits/uncertainty/estimators.py:DEFAULT_KLE_NORMALIZE",
          "KLE entropy over log k (True)": "lsplits/uncertainty/estimators.py:DEFAULT_KLE_SCALE"}


def test_the_walk_sees_the_places_that_own_the_defaults():
    """The walk is not vacuous: the owners themselves are found (one site each, the named constant)."""
    for concept, owner in OWNERS.items():
        found = [f"{site.where.split(':')[0]}:{site.name}" for site in SITES if NAMED_DEFAULTS[concept](site)]
        assert found == [owner], concept
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


def _sites_of(tmp_path: Path, source: str) -> list[Site]:
    """The default sites of a module with ``source``, walked as a module of the repository is."""
    module = tmp_path / "copy.py"
    module.write_text(source)
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        return list(default_sites(module))
    finally:
        ROOT = saved


def test_the_walk_catches_the_setting_loss_width_and_similarity_written_again(tmp_path):
    """Each default the API, the CLI, the Space and the metric modules wrote again (issue 35): the setting as a
    parameter default (the API's score wrote "pt" where lsplits score reads "ft"), the loss in a metric module,
    k in a generation function, Smatch++ as a gradio value, a module constant and a branch of a conditional value,
    KLE's two flags in the metric module."""
    sites = _sites_of(tmp_path, "def score(data, *, lm, setting='pt'):\n    pass\n\n"
                                "def compute(u, q, selective_loss='1-quality'):\n    pass\n\n"
                                "def beams(model, texts, *, k=10, max_new_tokens=10):\n    pass\n\n"
                                "def _compute(self, candidates, kle_normalize=True, kle_scale=True):\n    pass\n\n"
                                "gr.Dropdown(choices=names, value='smatchpp', label='metric')\n"
                                "DEFAULT_QUALITY = 'smatchpp'\n"
                                "gr.Radio(names, value='smatchpp' if 'smatchpp' in names else names[0], label='q')\n")
    found = {concept: sorted(site.name for site in sites if NAMED_DEFAULTS[concept](site)) for concept in OWNERS}
    assert found == {"bootstrap resamples (1000)": [], "LM setting ('ft')": ["setting"],
                     "selective loss ('1-quality')": ["selective_loss"], "beam width k (10)": ["k"],
                     "similarity ('smatchpp')": ["DEFAULT_QUALITY", "metric", "q"],
                     "KLE unit-trace kernel (True)": ["kle_normalize"], "KLE entropy over log k (True)": ["kle_scale"]}


def cache_kinds(path: Path) -> Iterator[tuple[str, str]]:
    """(kind, where) of every ``cache_folder("KIND")`` call in one module: where a default cache folder is decided."""
    tree = parse_file(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "cache_folder":
            kind = _literal(node.args[0]) if node.args else None
            if isinstance(kind, str):
                yield kind, f"{path.relative_to(ROOT)}:{node.lineno}"


def test_each_cache_folder_is_decided_once():
    """The scores' default folder was decided by the CLI, the demo and the interrupt line each; now every kind is
    one function's (``building.settings``, ``generation.cache``, ``uncertainty.study``, the Space's home)."""
    calls: dict[str, list[str]] = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for kind, where in cache_kinds(path):
                calls.setdefault(kind, []).append(where)
    assert {"scores", "beams", "matrices"} <= set(calls)
    assert {kind: wheres for kind, wheres in calls.items() if len(wheres) > 1} == {}


def test_the_cache_walk_catches_a_second_decision(tmp_path):
    module = tmp_path / "copy.py"
    module.write_text("from lsplits.io.storage import cache_folder\nfrom lsplits.io import storage\n\n"
                      "a = cache_folder('scores')\nb = storage.cache_folder('scores')\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert list(cache_kinds(module)) == [("scores", "copy.py:4"), ("scores", "copy.py:5")]
    finally:
        ROOT = saved


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


# --- the API and the CLI by default: the same settings, configs, scoring setting and cache -----------------------

ROWS = [{"text": f"the {animal} sat on mat number {i}", "label": "ab"[i % 2]}
        for i, animal in enumerate(["cat", "dog", "bird", "fox"] * 10)]
PRETRAINED = "gpt2"  # a Hub id: both the fine-tuned and the prompted configs apply (no model is read here)


class _Captured(Exception):
    """Raised in place of the scoring, once the call has handed its settings over."""


def _capture(monkeypatch, module, name: str) -> dict:
    """Replace ``module.name`` (the engine call: build or score) by one that records its arguments and stops."""
    seen: dict = {}

    def engine(spec, loaded, settings, **how):
        seen.update(spec=spec, settings=settings, cache_dir=how.get("cache_dir"))
        raise _Captured

    monkeypatch.setattr(module, name, engine)
    return seen


def _data_file(tmp_path: Path) -> Path:
    import json

    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return path


def _same_data(settings, files: tuple[str, ...] | None):
    """``settings`` as if given the CLI's files: the API is handed the rows themselves, the CLI a file of them."""
    import dataclasses

    return dataclasses.replace(settings, data_files=files)


def test_likelihood_splits_and_lsplits_build_build_the_same_configs_by_default(tmp_path, monkeypatch):
    """``likelihood_splits(ds, lm=...)`` built the fine-tuned configs only where ``lsplits build`` builds them all."""
    import lsplits.api
    import lsplits.cli.commands
    from lsplits.building.pipeline import plan_build
    from lsplits.cli.parser import main

    api = _capture(monkeypatch, lsplits.api, "build")
    with pytest.raises(_Captured):
        lsplits.api.likelihood_splits(ROWS, query_field="text", label_field="label", lm=PRETRAINED)
    cli = _capture(monkeypatch, lsplits.cli.commands, "build_dataset")
    data = _data_file(tmp_path)
    with pytest.raises(_Captured):
        main(["build", "--data-files", str(data), "--query-field", "text", "--label-field", "label",
              "--lm", PRETRAINED, "--out", str(tmp_path / "out"), "--no-progress"])
    assert _same_data(api["settings"], cli["settings"].data_files) == cli["settings"]
    api_plan, cli_plan = plan_build(api["spec"], api["settings"]), plan_build(cli["spec"], cli["settings"])
    assert list(api_plan.configs) == list(cli_plan.configs) == list(cli["spec"].configs)
    assert {"ll_split", "ll_split_pt"} <= set(api_plan.configs) and api_plan.settings == cli_plan.settings
    assert api["cache_dir"] == cli["cache_dir"]  # the one default score cache


def test_score_and_lsplits_score_score_in_the_same_setting_by_default(tmp_path, monkeypatch):
    """``score()`` scored with the frozen LM ('pt') where ``lsplits score`` (and the README) fine-tune ('ft')."""
    import lsplits.api
    import lsplits.cli.commands
    from lsplits.building.settings import ScoreSettings
    from lsplits.cli.parser import main

    api = _capture(monkeypatch, lsplits.api, "score_loaded")
    with pytest.raises(_Captured):
        lsplits.api.score(ROWS, query_field="text", lm=PRETRAINED)
    cli = _capture(monkeypatch, lsplits.cli.commands, "score_loaded")
    data = _data_file(tmp_path)
    with pytest.raises(_Captured):
        main(["score", "--data-files", str(data), "--query-field", "text", "--lm", PRETRAINED,
              "--out", str(tmp_path / "scores.parquet"), "--no-progress"])
    assert api["settings"].setting == cli["settings"].setting == ScoreSettings.setting
    assert _same_data(api["settings"], cli["settings"].data_files) == cli["settings"]
    assert api["cache_dir"] == cli["cache_dir"]
