"""Flatten library modules into one folder of files that import each other relatively (metric Spaces).

evaluate loads a Space's module with the files it imports relatively (``from .helper import x``) copied
beside it, and nothing else: no package folders, no transitive imports. So :func:`flatten` copies the
lsplits modules a metric needs, with all they import, as ``lsplits_<path>.py`` files (``lsplits.uncertainty.prr``
-> ``lsplits_uncertainty_prr.py``) whose ``lsplits`` imports are rewritten to relative ones, and
:func:`imported_packages` says which packages they import. Generated at push time, so the repository
keeps no second copy of the computation.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from lsplits.errors import ConfigError
from lsplits.runtime.pysource import parse_file, parse_python

PACKAGE = "lsplits"


def flat_name(module: str) -> str:
    """The file stem a library module gets in a flat folder: ``lsplits.uncertainty.prr`` -> ``lsplits_uncertainty_prr``."""
    return module.replace(".", "_")


def module_file(module: str) -> Path | None:
    """The source file of the lsplits module ``module`` (``__init__.py`` for a package), None when there is none."""
    spec = importlib.util.find_spec(module)
    return Path(spec.origin) if spec is not None and spec.origin and spec.origin.endswith(".py") else None


def _is_module(name: str) -> bool:
    try:
        return module_file(name) is not None
    except ModuleNotFoundError:
        return False


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str | None:
    """The absolute module name an ``from ... import`` names, resolving relative ones against ``module``."""
    if not node.level:
        return node.module
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


@dataclass(frozen=True)
class _Import:
    node: ast.ImportFrom
    module: str  # absolute name of the lsplits module imported from
    submodules: frozenset[str]  # imported names that are modules themselves


def _lsplits_imports(source: str, module: str, is_package: bool) -> list[_Import]:
    found = []
    for node in ast.walk(parse_python(source)):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == PACKAGE for a in node.names):
            raise ConfigError(f"{module}: `import {node.names[0].name}` cannot be flattened; use `from ... import ...`")
        if isinstance(node, ast.ImportFrom):
            name = _absolute(node, module, is_package)
            if name and name.split(".")[0] == PACKAGE:
                subs = frozenset(a.name for a in node.names if _is_module(f"{name}.{a.name}"))
                found.append(_Import(node, name, subs))
    return found


_REGISTRY_STRING = re.compile(r"""(["'])(lsplits(?:\.\w+)+):(\w+)\1""")


def registry_targets(source: str) -> list[str]:
    """The modules named by ``"lsplits.x.y:ATTRIBUTE"`` strings (lazy registries, such as the similarity one)."""
    return [m.group(2) for m in _REGISTRY_STRING.finditer(source)]


def closure(roots: Iterable[str], *, lazy: bool = False) -> list[str]:
    """Every lsplits module that ``roots`` import, directly or not, at module level or in functions, sorted.

    With ``lazy``, also the modules named by registry strings (``"lsplits.x:NAME"``), and theirs.
    A package itself is included only when something imports a name defined in its ``__init__``.
    """
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        path = module_file(module)
        if path is None:
            raise ConfigError(f"{module}: no such lsplits module to flatten")
        seen.add(module)
        source = path.read_text(encoding="utf-8")
        for imp in _lsplits_imports(source, module, path.name == "__init__.py"):
            todo += [f"{imp.module}.{name}" for name in imp.submodules]
            if len(imp.submodules) < len(imp.node.names):
                todo.append(imp.module)
        if lazy:
            todo += registry_targets(source)
    return sorted(seen)


def _rewrite_import(imp: _Import, indent: str, absolute: bool) -> str:
    """``from lsplits.a import b, c as d`` as flat-folder imports (relative, or plain for a script like app.py)."""
    prefix = "" if absolute else "."
    lines = []
    names = []
    for alias in imp.node.names:
        if alias.name in imp.submodules:
            target = flat_name(f"{imp.module}.{alias.name}")
            local = alias.asname or alias.name
            lines.append(f"{indent}import {target} as {local}" if absolute
                         else f"{indent}from . import {target} as {local}")
        else:
            names.append(alias.name if alias.asname is None else f"{alias.name} as {alias.asname}")
    if names:
        lines.insert(0, f"{indent}from {prefix}{flat_name(imp.module)} import {', '.join(names)}")
    return "\n".join(lines)


def rewrite(source: str, module: str, *, absolute: bool = False, is_package: bool = False) -> str:
    """``source`` with every lsplits import pointing at the flat files, and registry strings made relative.

    ``absolute`` writes ``from lsplits_x import y`` instead of ``from .lsplits_x import y`` (for a script run
    directly, such as a Space's app.py, whose folder is on ``sys.path``).
    """
    lines = source.splitlines(keepends=True)
    for imp in sorted(_lsplits_imports(source, module, is_package), key=lambda i: -i.node.lineno):
        first, last = imp.node.lineno - 1, imp.node.end_lineno
        indent = re.match(r"\s*", lines[first]).group(0)
        lines[first:last] = [_rewrite_import(imp, indent, absolute) + "\n"]
    text = "".join(lines)
    text = _REGISTRY_STRING.sub(lambda m: f"{m.group(1)}.{flat_name(m.group(2))}:{m.group(3)}{m.group(1)}", text)
    if any(isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == PACKAGE
           for node in ast.walk(parse_python(text))):
        raise ConfigError(f"{module}: an lsplits import is left after flattening")
    return text


def flatten(modules: Iterable[str], folder: Path) -> list[Path]:
    """Write each of ``modules`` (a :func:`closure`) into ``folder`` as its flat file; returns the files written."""
    written = []
    for module in modules:
        path = module_file(module)
        target = folder / f"{flat_name(module)}.py"
        target.write_text(rewrite(path.read_text(encoding="utf-8"), module, is_package=path.name == "__init__.py"),
                          encoding="utf-8")
        written.append(target)
    return written


def imported_packages(files: Iterable[Path]) -> set[str]:
    """The top-level names of the non-standard-library, non-relative modules that ``files`` import anywhere."""
    names: set[str] = set()
    for file in files:
        for node in ast.walk(parse_file(file)):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.add(node.module.split(".")[0])
    local = {file.stem for file in files}
    return {n for n in names if n not in sys.stdlib_module_names and n not in local and n != "__future__"}
