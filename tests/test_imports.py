"""Dependencies run one way: neither the lsplits modules nor its subpackages import each other in a cycle.

Read from the source with ``ast`` (no module is imported). Every ``import`` / ``from ... import``
anywhere in a module counts, also inside functions and ``if TYPE_CHECKING:``: a lazy import hides a
cycle from the interpreter, not from the reader (two modules that import each other are one
concept in two places). Importing ``a.b.c`` also loads the packages ``a`` and ``a.b``, so those
are edges too, except the importer's own parent packages (which are always loaded first). The body of an
``if __name__ == "__main__":`` block is a script entry (``python -m lsplits.builders.snli``), run as a module
of its own above every layer, like ``lsplits/__main__.py``: it is not read.

At the package level (``lsplits.lm``, ``lsplits.building``, ...; a top-level module such as ``errors.py`` or
``api.py`` is a node of its own) a string constant that is a whole dotted lsplits module name
(``"lsplits.x.y"`` or ``"lsplits.x.y:ATTRIBUTE"``, as lazy registries and loaders write them) counts as an
import too; prose (docstrings and other bare string statements) does not. The layer order these edges follow
is written in docs/architecture.md ("Layers").
"""

from __future__ import annotations

import ast
import os
import re
from collections import defaultdict
from pathlib import Path

from lsplits.runtime.pysource import parse_file

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lsplits"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
SKIPPED = ("_shipped",)  # the metric modules and the demo Space as the wheel carries them: not package modules

OPEN_CYCLES: list[list[str]] = []  # none: any cycle fails the test

_MODULE_STRING = re.compile(r"lsplits(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?")


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def find_modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package folder ``package`` by its dotted name, through the committed symlink
    ``lsplits/builders -> ../builders`` too (``Path.rglob`` does not follow it)."""
    found = {}
    for folder, subfolders, files in os.walk(package, followlinks=True):
        subfolders[:] = sorted(name for name in subfolders if name not in SKIPPED and name != "__pycache__")
        for file in sorted(files):
            if file.endswith(".py"):
                found[module_name(Path(folder) / file, package)] = Path(folder) / file
    return found


MODULES = find_modules()


def _with_packages(target: str, importer: str, modules: dict[str, Path]) -> set[str]:
    """``target`` and the packages above it that importing it loads (not the importer's own parents)."""
    parts = target.split(".")
    found = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    own_parents = {importer.rsplit(".", i)[0] for i in range(1, importer.count(".") + 1)}
    return {name for name in found if name in modules and name != importer and name not in own_parents}


def _is_script_entry(node: ast.AST) -> bool:
    """``if __name__ == "__main__":``"""
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and isinstance(node.test.left, ast.Name)
            and node.test.left.id == "__name__" and len(node.test.comparators) == 1
            and isinstance(node.test.comparators[0], ast.Constant) and node.test.comparators[0].value == "__main__")


def _nodes(path: Path) -> list[ast.AST]:
    """Every node of the module at ``path``, but those of its ``if __name__ == "__main__":`` blocks."""
    found: list[ast.AST] = []
    todo: list[ast.AST] = [parse_file(path)]
    while todo:
        node = todo.pop()
        if not _is_script_entry(node):
            found.append(node)
            todo += ast.iter_child_nodes(node)
    return found


def import_sites(name: str, modules: dict[str, Path] = MODULES) -> list[tuple[str, int]]:
    """Each lsplits module that loading ``name`` imports directly, with the line that imports it."""
    path = modules[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: list[tuple[str, int]] = []
    for node in sorted((n for n in _nodes(path) if isinstance(n, (ast.Import, ast.ImportFrom))), key=lambda n: n.lineno):
        targets: set[str] = set()
        if isinstance(node, ast.Import):
            for alias in node.names:
                targets |= _with_packages(alias.name, name, modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            targets |= _with_packages(source, name, modules)
            for alias in node.names:  # ``from pkg import submodule``
                targets |= _with_packages(f"{source}.{alias.name}", name, modules)
        found += [(target, node.lineno) for target in sorted(targets)]
    return found


def imports_of(name: str, modules: dict[str, Path] = MODULES) -> set[str]:
    """The lsplits modules that loading ``name`` imports directly."""
    return {target for target, _ in import_sites(name, modules)}


def _prose(nodes: list[ast.AST]) -> set[int]:
    """The ids of the string constants that are statements of their own: docstrings and attribute docstrings."""
    return {id(node.value) for node in nodes
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}


def string_sites(name: str, modules: dict[str, Path] = MODULES) -> list[tuple[str, int]]:
    """Each lsplits module that a string constant of ``name`` names as a whole (``"lsplits.x.y"`` or
    ``"lsplits.x.y:NAME"``), with its line; a name that is no module counts as its module's attribute."""
    nodes = _nodes(modules[name])
    prose = _prose(nodes)
    found = []
    for node in sorted((n for n in nodes if isinstance(n, ast.Constant)), key=lambda n: (n.lineno, n.col_offset)):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
                and _MODULE_STRING.fullmatch(node.value)):
            target = node.value.split(":")[0]
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != name:
                found.append((target, node.lineno))
    return found


def subpackage(module: str) -> str:
    """The package-level node of a module: ``lsplits.lm.plan`` -> ``lm``, ``lsplits.errors`` -> ``errors``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_edges(package: Path = PACKAGE) -> dict[tuple[str, str], list[str]]:
    """(importing subpackage, imported subpackage) -> the ``file:line`` of each import or module string behind it."""
    modules = find_modules(package)
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name, path in modules.items():
        where = Path(*name.split(".")[:-1], path.name) if path.name != "__init__.py" else Path(*name.split("."), path.name)
        for target, line in [*import_sites(name, modules), *string_sites(name, modules)]:
            source_node, target_node = subpackage(name), subpackage(target)
            if source_node != target_node and target != package.name:
                edges[(source_node, target_node)].append(f"{where}:{line} -> {target}")
    return edges


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
        for other in sorted(graph.get(node, ())):
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
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def shortest_cycles(graph: dict[str, set[str]], component: list[str]) -> list[list[str]]:
    """The shortest cycle through each node of ``component`` (a breadth-first search back to it), each once."""
    found: list[list[str]] = []
    for start in component:
        paths = {start: [start]}
        todo = [start]
        while todo:
            node = todo.pop(0)
            if start in graph.get(node, ()):
                cycle = paths[node]
                turn = cycle.index(min(cycle))
                cycle = cycle[turn:] + cycle[:turn]
                if cycle not in found:
                    found.append(cycle)
                break
            for other in sorted(graph.get(node, ())):
                if other in component and other not in paths:
                    paths[other] = [*paths[node], other]
                    todo.append(other)
    return sorted(found, key=lambda cycle: (len(cycle), cycle))


def package_cycle_report(package: Path = PACKAGE) -> str:
    """Empty when the subpackages of ``package`` import each other in no cycle; else, per cycle, its shortest
    loops and every edge inside it, one import (``file:line -> module``) a line."""
    edges = package_edges(package)
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in edges:
        graph[source].add(target)
    lines = []
    for component in cycles(graph):
        lines.append(f"cycle between {', '.join(component)}; shortest loops:")
        lines += [f"  {' -> '.join([*loop, loop[0]])}" for loop in shortest_cycles(graph, component)]
        lines.append("edges inside it:")
        for (source, target), sites in sorted(edges.items()):
            if source in component and target in component:
                lines.append(f"  {source} -> {target}:")
                lines += [f"    {site}" for site in sites if not any(other.startswith(site + ".") for other in sites)]
    return "\n".join(lines)


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


def _write(folder: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text, encoding="utf-8")
    return folder / "lsplits"


def test_the_package_graph_counts_lazy_imports_and_module_strings_but_not_prose_or_script_entries(tmp_path):
    package = _write(tmp_path, {
        "lsplits/__init__.py": "",
        "lsplits/errors.py": ('"""Raised by lsplits.low.core and lsplits.high.top (prose: no edge)."""\n'
                              'if __name__ == "__main__":  # a script entry: no edge\n    from lsplits.high import top\n'),
        "lsplits/low/__init__.py": "",
        "lsplits/low/core.py": ("from typing import TYPE_CHECKING\n"
                                "if TYPE_CHECKING:\n    from lsplits.high import top\n"
                                "def f():\n    from lsplits import errors\n"),
        "lsplits/high/__init__.py": "",
        "lsplits/high/top.py": ('REGISTRY = {"x": "lsplits.low.core:f"}\n'
                                'NOTE = "lsplits.errors"\n"""Attribute docstring naming lsplits.low.core."""\n'),
    })
    edges = package_edges(package)
    assert sorted(edges) == [("high", "errors"), ("high", "low"), ("low", "errors"), ("low", "high")]
    assert edges[("high", "low")] == ["lsplits/high/top.py:1 -> lsplits.low.core"]
    assert edges[("low", "high")] == ["lsplits/low/core.py:3 -> lsplits.high", "lsplits/low/core.py:3 -> lsplits.high.top"]
    report = package_cycle_report(package)
    assert report.splitlines()[:3] == ["cycle between high, low; shortest loops:", "  high -> low -> high",
                                       "edges inside it:"]
    assert "    lsplits/low/core.py:3 -> lsplits.high.top" in report and "errors" not in report
    assert "    lsplits/low/core.py:3 -> lsplits.high\n" not in report  # the package line says nothing more


def test_no_cycle_between_subpackages():
    """lm, data, building, hub, splits, ... and the top-level modules import one way only (fails naming each edge)."""
    report = package_cycle_report()
    assert not report, "subpackages import each other in a cycle (see docs/architecture.md, Layers):\n" + report


def documented_layers(text: str) -> dict[str, int]:
    """The layer of each node in the numbered list of the "## Layers" section of docs/architecture.md (1 lowest):
    ``3. `lm`, `splits`: ...`` puts ``lm`` and ``splits`` in layer 3 (the backticked names before the colon)."""
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    layers = {}
    for line in section.splitlines():
        if (match := re.match(r"(\d+)\. (.*?):", line)):
            for name in re.findall(r"`([\w.]+)`", match.group(2)):
                layers[name] = int(match.group(1))
    return layers


def test_the_layer_list_is_read_from_the_architecture_page():
    text = "# A\n## Layers\n1. `errors`: the errors\n2. `io`, `runtime`: shared (`data` is not here)\n## Next\n3. `x`: no\n"
    assert documented_layers(text) == {"errors": 1, "io": 2, "runtime": 2}


def test_every_subpackage_import_goes_down_the_documented_layers():
    """Each import between subpackages goes to a lower layer of docs/architecture.md ("Layers"); a node the page
    does not place, and an import sideways or up, fail naming the file and line."""
    layers = documented_layers(ARCHITECTURE.read_text(encoding="utf-8"))
    edges = package_edges()
    unplaced = sorted({node for edge in edges for node in edge} - set(layers))
    assert not unplaced, f"docs/architecture.md (Layers) places no layer for: {', '.join(unplaced)}"
    wrong = [f"{source} (layer {layers[source]}) -> {target} (layer {layers[target]}): {site}"
             for (source, target), sites in sorted(edges.items()) if layers[source] <= layers[target] for site in sites]
    assert not wrong, "imports that do not go down the layers of docs/architecture.md:\n" + "\n".join(wrong)
