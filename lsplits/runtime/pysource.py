"""Parsing Python source to an AST safely in a process that runs finalizers: the one way lsplits (and its tests)
call ``ast.parse``.

CPython 3.11 keeps the AST constructor's recursion depth in one shared counter; a garbage collection that runs
during the construction can run a finalizer which itself parses (a ``__del__`` whose error is printed with a
traceback: 3.11's traceback module parses source lines to place its carets), and the outer parse then fails
with ``SystemError: AST constructor recursion depth mismatch`` (CPython gh-106905). Holding the collector off
while parsing removes that window (the construction itself drops no reference that could run a finalizer).
"""

from __future__ import annotations

import ast
import gc
from pathlib import Path


def parse_python(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """``ast.parse(source, filename, mode)`` with the garbage collector held off, so that no finalizer runs
    (and parses) in the middle of the AST's construction."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source, filename=filename, mode=mode)
    finally:
        if enabled:
            gc.enable()


def parse_file(path: Path) -> ast.Module:
    """The AST of the Python file at ``path`` (UTF-8), parsed as :func:`parse_python` does."""
    tree = parse_python(Path(path).read_text(encoding="utf-8"), filename=str(path))
    assert isinstance(tree, ast.Module)
    return tree
