"""One concept a file, readable functions: no module of lsplits/ over 500 lines, no function of lsplits/ or
spaces/ over 80 lines (issue 35). Read with ``ast``, so a new long file or function fails here, naming it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lsplits.runtime.pysource import parse_file

ROOT = Path(__file__).resolve().parents[1]
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80


def _sources(folder: str) -> list[Path]:
    return sorted(path for path in (ROOT / folder).rglob("*.py") if "__pycache__" not in path.parts)


def long_files(paths: list[Path], root: Path = ROOT, limit: int = MAX_FILE_LINES) -> list[str]:
    """``path: N lines`` (relative to ``root``) for every file longer than ``limit`` lines."""
    found = []
    for path in paths:
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > limit:
            found.append(f"{path.relative_to(root).as_posix()}: {count} lines")
    return found


def long_functions(paths: list[Path], root: Path = ROOT, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``path:line name: N lines`` for every function or method (decorators, docstring and body) over ``limit``;
    a nested function counts on its own and within the one around it."""
    found = []
    for path in paths:
        for node in ast.walk(parse_file(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
                count = node.end_lineno - start + 1
                if count > limit:
                    found.append(f"{path.relative_to(root).as_posix()}:{node.lineno} {node.name}: {count} lines")
    return found


def test_no_module_of_the_package_is_over_500_lines():
    assert long_files(_sources("lsplits")) == []


@pytest.mark.parametrize("folder", ["lsplits", "spaces"])
def test_no_function_is_over_80_lines(folder):
    assert _sources(folder), f"no Python file under {folder}/"
    assert long_functions(_sources(folder)) == []


def test_the_checks_name_a_long_file_and_a_long_function(tmp_path):
    """80 lines pass and 81 do not; decorators count; a nested function is reported on its own too."""
    short = "def f():\n" + "    x = 1\n" * 79
    decorated = "@staticmethod\ndef g():\n" + "    x = 1\n" * 79
    nested = "def outer():\n    def inner():\n" + "        x = 1\n" * 80 + "    return inner\n"
    module = tmp_path / "module.py"
    module.write_text("\n".join([short, decorated, nested]), encoding="utf-8")
    assert long_functions([module], root=tmp_path) == [
        "module.py:83 g: 81 lines", "module.py:164 outer: 83 lines", "module.py:165 inner: 81 lines"]
    (tmp_path / "big.py").write_text("x = 1\n" * 501, encoding="utf-8")
    (tmp_path / "small.py").write_text("x = 1\n" * 500, encoding="utf-8")
    assert long_files(sorted(tmp_path.glob("*.py")), root=tmp_path) == ["big.py: 501 lines"]
