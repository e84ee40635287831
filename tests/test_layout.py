"""The package's shape: at most 8 modules at the top of lsplits/, and argparse stays inside lsplits/cli/."""

from __future__ import annotations

import ast
from pathlib import Path

from lsplits.runtime.pysource import parse_file, parse_python

PACKAGE = Path(__file__).resolve().parents[1] / "lsplits"


def test_at_most_eight_modules_at_the_top_of_the_package():
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top) <= 8, f"{len(top)} top-level modules: {', '.join(top)}"


def _names(node: ast.AST | None) -> set[str]:
    """Every identifier and attribute name in an annotation (string annotations parsed too)."""
    if node is None:
        return set()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        node = parse_python(node.value, mode="eval")
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | \
        {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def test_no_namespace_parameter_or_argparse_outside_the_cli():
    """Library functions take typed settings, never an argparse Namespace (the shell stays in lsplits/cli/)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).as_posix()
        if relative.startswith("lsplits/cli/"):
            continue
        for node in ast.walk(parse_file(path)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module]
                if "argparse" in modules:
                    found.append(f"{relative}:{node.lineno} imports argparse")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                for argument in arguments:
                    if "Namespace" in _names(argument.annotation):
                        found.append(f"{relative}:{node.lineno} {node.name}({argument.arg}: Namespace)")
    assert found == []
