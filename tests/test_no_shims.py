"""No pre-release shims, and explicit ``process`` markers.

Version 0.1.0 has never been released, so no old name is kept: no forwarder of old module paths, no deprecated
flag or keyword. And ``make check`` (``-m "not process and not slow and not browser"``) must run every test that
starts no process: a test that starts one (``subprocess``, ``sys.executable``, a browser, a virtual environment,
itself or through a fixture or helper) says so with ``@pytest.mark.process`` or its module's ``pytestmark``; a
test that starts none is not marked. :func:`process_report` finds both mistakes by reading the tests' source
(no test is run), so the check costs a second.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from lsplits.runtime.pysource import parse_file

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"

PROCESS_NAMES = frozenset({"Popen", "sync_playwright", "async_playwright", "EnvBuilder", "sys.executable",
                           "subprocess.run", "subprocess.Popen", "subprocess.call", "subprocess.check_call",
                           "subprocess.check_output", "subprocess.getoutput", "subprocess.getstatusoutput",
                           "venv.create", "venv.EnvBuilder", "os.system", "os.fork", "os.execv", "os.spawnv"})
"""Names whose use starts a process, a browser or a virtual environment (not ``subprocess.CompletedProcess``)."""
PROCESS_MODULES = frozenset({"subprocess", "venv", "playwright.sync_api", "playwright.async_api"})
"""Modules whose imported names start processes (``from subprocess import run``), their types apart."""


@dataclass
class Module:
    """One test or helper module, as far as :func:`process_report` needs it."""

    path: Path
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (module, name)
    modules: dict[str, str] = field(default_factory=dict)  # local name -> a helper module of tests/
    module_marked: bool = False


def _marks_process(node: ast.AST) -> bool:
    """Whether ``node`` (a decorator, or ``pytestmark``'s value) applies the ``process`` mark anywhere in it."""
    return any(isinstance(sub, ast.Attribute) and sub.attr == "process" and "mark" in ast.unparse(sub.value)
               for sub in ast.walk(node))


def read_module(path: Path) -> Module:
    """The top-level functions, imports and ``pytestmark`` of ``path``."""
    tree = parse_file(path)
    module = Module(path)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            module.functions[node.name] = node
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                module.imported[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module.modules[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                   for t in node.targets):
            module.module_marked = _marks_process(node.value)
    return module


def _names(function: ast.AST) -> Iterator[str]:
    """Every name ``function`` uses (``a`` and ``a.b`` for ``a.b``), docstrings and other strings left out."""
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            yield f"{node.value.id}.{node.attr}"
        elif isinstance(node, ast.arg):
            yield node.arg  # a fixture the function asks for


def _starts_directly(module: Module, function: ast.AST) -> bool:
    for name in _names(function):
        if name in PROCESS_NAMES:
            return True
        origin = module.imported.get(name)
        if origin is not None and origin[0] in PROCESS_MODULES and not origin[1][:1].isupper():
            return True  # a function of those modules (run, check_output), not a type or constant (PIPE)
    return False


def process_starters(modules: dict[str, Module]) -> set[tuple[str, str]]:
    """(module, function) of every function of ``modules`` (stem -> module) that starts a process, itself or
    through a function of its module, a helper module or ``conftest.py`` (fixtures by their argument names)."""
    def callees(stem: str, function: ast.AST) -> Iterator[tuple[str, str]]:
        module = modules[stem]
        for name in _names(function):
            head, _, attr = name.partition(".")
            if name in module.functions:
                yield stem, name
            elif name in module.imported and module.imported[name][0] in modules:
                yield module.imported[name][0], module.imported[name][1]
            elif attr and module.modules.get(head) in modules:
                yield module.modules[head], attr
            elif name in modules["conftest"].functions:
                yield "conftest", name

    starters = {(stem, name) for stem, module in modules.items() for name, function in module.functions.items()
                if _starts_directly(module, function)}
    edges = {(stem, name): set(callees(stem, function))
             for stem, module in modules.items() for name, function in module.functions.items()}
    changed = True
    while changed:
        changed = False
        for caller, called in edges.items():
            if caller not in starters and called & starters:
                starters.add(caller)
                changed = True
    return starters


def process_report(folder: Path = TESTS) -> list[str]:
    """One line per test marked wrongly: it starts a process unmarked, or is marked but starts none."""
    modules = {path.stem: read_module(path) for path in sorted(folder.glob("*.py"))}
    modules.setdefault("conftest", Module(folder / "conftest.py"))
    starters = process_starters(modules)
    wrong = []
    for stem, module in modules.items():
        if not stem.startswith("test_"):
            continue
        for name, function in module.functions.items():
            if not name.startswith("test_"):
                continue
            marked = module.module_marked or any(_marks_process(d) for d in function.decorator_list)
            starts = (stem, name) in starters
            where = f"{module.path.relative_to(folder.parent).as_posix()}:{function.lineno} {name}"
            if starts and not marked:
                wrong.append(f"{where}: starts a process but is not marked process")
            elif marked and not starts and not any(_marks_process(d) for d in function.decorator_list
                                                   if "parametrize" in ast.unparse(d)):
                wrong.append(f"{where}: marked process but starts none (make check would skip it)")
    return wrong


def test_every_test_that_starts_a_process_is_marked_and_no_other():
    wrong = process_report()
    assert not wrong, "mark these tests (pytest.mark.process) or unmark them:\n" + "\n".join(wrong)


def test_the_marker_check_follows_fixtures_and_helpers(tmp_path):
    (tmp_path / "conftest.py").write_text("import subprocess\n\ndef launched():\n    subprocess.run(['true'])\n")
    (tmp_path / "helper.py").write_text("import sys\n\ndef spawn():\n    return [sys.executable, '-c', '']\n")
    (tmp_path / "test_a.py").write_text(
        "import pytest\nfrom helper import spawn\n\n"
        "def test_fixture(launched):\n    pass\n\n"
        "def test_helper():\n    spawn()\n\n"
        "def test_docstring_only():\n    '''Runs in this process, not a subprocess.'''\n\n"
        "@pytest.mark.process\ndef test_marked():\n    spawn()\n\n"
        "@pytest.mark.process\ndef test_marked_in_vain():\n    pass\n")
    assert [line.split(" ", 1)[1] for line in process_report(tmp_path)] == [
        "test_fixture: starts a process but is not marked process",
        "test_helper: starts a process but is not marked process",
        "test_marked_in_vain: marked process but starts none (make check would skip it)"]
    (tmp_path / "test_b.py").write_text("import pytest\nimport subprocess\n\npytestmark = pytest.mark.process\n\n"
                                        "def test_one():\n    subprocess.run(['true'])\n")
    assert not [line for line in process_report(tmp_path) if "test_b" in line]


@pytest.mark.parametrize("pattern", [r"_moved", r"OldFlag", r"old_name"])
def test_no_old_names_are_kept_in_the_package(pattern):
    """No forwarder of old module paths, deprecated flag or keyword survives in ``lsplits/`` (issue 35)."""
    found = [f"{path.relative_to(ROOT)}:{number}" for path in sorted((ROOT / "lsplits").rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(pattern, line)]
    assert not found, f"{pattern} is still in: {', '.join(found)}"


def test_the_cli_accepts_no_old_flag(capsys):
    """The old spellings are unknown options (one line, exit 2), not warned-about aliases."""
    from lsplits.cli.parser import build_parser

    for argv, old in [(["ue", "b.jsonl", "--gold", "g", "--out", "o", "--bootstrap", "7"], "--bootstrap"),
                      (["ue", "b.jsonl", "--gold", "g", "--out", "o", "--cache", "c"], "--cache"),
                      (["ue", "b.jsonl", "--gold", "g", "--out", "o", "--lexsim-similarities", "rouge1"],
                       "--lexsim-similarities"),
                      (["push-space", "me/demo", "--stage-only", "s"], "--stage-only"),
                      (["push-space", "me/demo", "--scratch-steps", "4"], "--scratch-steps"),
                      (["build", "--settings", "lsplits.json", "--out", "o"], "--settings")]:
        with pytest.raises(SystemExit) as caught:
            build_parser(only=argv[0]).parse_args(argv)  # that command's options alone
        assert caught.value.code == 2
        assert f"unrecognized arguments: {old}" in capsys.readouterr().err
    args = build_parser(only="build").parse_args(["build", "--from-record", "lsplits.json", "--out", "o"])
    assert args.from_record == Path("lsplits.json")


def test_the_docs_name_only_current_flags():
    text = "\n".join(path.read_text(encoding="utf-8") for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
    old = [flag for flag in ("--settings ", "--bootstrap ", "--stage-only", "--cache ", "--lexsim-similarities",
                             "OldFlag", "old_name", "_moved") if flag in text]
    assert not old, f"README.md or docs/ name old flags or shims: {old}"



def test_the_space_files_its_own_scores_as_frozen_lm_scores(tmp_path):
    """"Score your own" scores with the LM as it is (nothing is trained on the examples): the ``pt`` setting, so
    its split is ``ll_split_pt`` (``ll_split_pt_len``) and the summary says so, not ``ft`` / ``ll_split``."""
    import importlib

    from lm_fixtures import tiny_model_folder
    from space_helpers import build_fixture_dataset, space_settings

    settings = space_settings(tmp_path, build_fixture_dataset(tmp_path / "demo"))
    splits_tab = importlib.import_module("splits_tab")  # on sys.path once space_settings has loaded the app
    settings = type(settings)(**{**vars(settings), "scratch_lm": tiny_model_folder(tmp_path / "lm")})
    models = splits_tab.LanguageModels(settings)
    lines = "\n".join(["the cat sat", "a dog ran home", "the bird sang", "xylophones juggle kumquats"] * 3)
    for length_control, config in [(False, "ll_split_pt"), (True, "ll_split_pt_len")]:
        summary, table, _ = splits_tab.score_own(lines, None, "text", "", "scratch", 0.25, length_control, models)
        assert f"frozen (the `pt` setting: nothing is trained on your examples). A Likelihood Split (`{config}`)" \
            in summary, summary
        assert (table["split"] == "eval").sum() == 3
