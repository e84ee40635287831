"""The package has no import cycle: the graph of imports between lsplits modules is acyclic.

Read from the source with ``ast`` (no module is imported). Every ``import`` / ``from ... import``
anywhere in a module counts, also inside functions and ``if TYPE_CHECKING:``: a lazy import hides a
cycle from the interpreter, not from the reader (two modules that import each other are one
concept in two places). Importing ``a.b.c`` also loads the packages ``a`` and ``a.b``, so those
are edges too, except the importer's own parent packages (which are always loaded first).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "lsplits"

OPEN_CYCLES: list[list[str]] = []  # none: any cycle fails the test


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _with_packages(target: str, importer: str) -> set[str]:
    """``target`` and the packages above it that importing it loads (not the importer's own parents)."""
    parts = target.split(".")
    found = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    own_parents = {importer.rsplit(".", i)[0] for i in range(1, importer.count(".") + 1)}
    return {name for name in found if name in MODULES and name != importer and name not in own_parents}


def imports_of(name: str) -> set[str]:
    """The lsplits modules that loading ``name`` imports directly."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found |= _with_packages(alias.name, name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            found |= _with_packages(source, name)
            for alias in node.names:  # ``from pkg import submodule``
                found |= _with_packages(f"{source}.{alias.name}", name)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a self-import), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_cycle_finder_sees_a_cycle_through_a_package_init():
    graph = {"p": {"p.a"}, "p.a": {"p.b"}, "p.b": {"p"}, "q": set()}
    assert cycles(graph) == [["p", "p.a", "p.b"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_relative_and_package_imports():
    assert "lsplits.building.export" in imports_of("lsplits.building.card")  # from .export import WrittenFolder
    assert "lsplits.splits.strategy" in imports_of("lsplits.building.configs")  # from .splits.strategy import ...
    assert "lsplits.splits" in imports_of("lsplits.building.configs")  # loading lsplits.splits.* loads the package
    assert "lsplits.splits" not in imports_of("lsplits.splits.spider")  # its own package is already loading
    assert "lsplits.lm.pipeline" in imports_of("lsplits.building.pipeline")  # imported inside a function: still an edge
    assert "lsplits.building.pipeline" not in imports_of("lsplits.lm.pipeline")


def test_no_import_cycle_beyond_the_open_ones():
    graph = {name: imports_of(name) for name in MODULES}
    assert cycles(graph) == OPEN_CYCLES
