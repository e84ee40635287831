"""``lsplits push-metrics``: each evaluate module in ``metrics/`` as a self-contained Space ``ORG/NAME``.

Afterwards users call ``evaluate.load("ORG/prr")`` (evaluate looks for ``prr.py`` in the Space
``ORG/prr``) on a machine without lsplits: :func:`stage_metrics` writes each Space folder with the
library modules its computation needs flattened beside it (:mod:`lsplits.hub.flatten`: the module imports
them relatively, so evaluate copies them), and a requirements.txt of PyPI packages only, generated
from what those files import. Each module goes up in one commit through the upload path every push
shares (:mod:`lsplits.hub.push`).
"""

from __future__ import annotations

import ast
import logging
import shutil
from collections.abc import Iterable
from pathlib import Path

from lsplits.errors import ConfigError
from lsplits.hub import SHIPPED, flatten, pin_sdk_version
from lsplits.hub.push import push_folder
from lsplits.io.guard import output_folder
from lsplits.runtime.pysource import parse_python
from lsplits.runtime.tempfolders import temporary_folder

logger = logging.getLogger(__name__)

METRIC_MODULES = ("prr", "beam_uncertainty", "amr_similarity", "ue_metrics")
REQUIRED_FILES = ("{name}.py", "README.md", "app.py")
SIMILARITY_MODULES = ("beam_uncertainty", "amr_similarity")
"""Modules whose config name picks a registered similarity: their Spaces ship every registered one."""
FORBIDDEN = ("lsplits", "torch", "transformers", "accelerate")
"""Packages a metric Space must never need (the point of a 50-line PRR is that it installs in seconds)."""
SPACE_PROVIDED = ("gradio",)
"""Imported by the Space's app only; the Space's SDK installs it."""


def default_metrics_dir() -> Path:
    """The evaluate modules shipped with lsplits: the checkout's ``metrics/``, which the wheel carries inside
    the package (:data:`lsplits.hub.SHIPPED`), so ``push-metrics`` works from a plain ``pip install``."""
    return SHIPPED / "metrics"


def check_module(folder: Path, name: str) -> None:
    """Raise ConfigError naming every file a metric Space needs that ``folder`` lacks."""
    missing = [f.format(name=name) for f in REQUIRED_FILES if not (folder / f.format(name=name)).is_file()]
    if missing:
        raise ConfigError(f"{folder}: not a complete metric module, missing {', '.join(missing)}")


def check_org(org: str) -> str:
    """``org`` when it is a Hub user or organisation name alone; ConfigError otherwise."""
    if not org or "/" in org:
        raise ConfigError(f"give the Hub user or organisation alone (like 'my-org'), not {org!r}")
    return org


def check_modules(root: Path, modules: tuple[str, ...]) -> None:
    """Raise ConfigError when ``modules`` is empty or one of them is incomplete under ``root``."""
    if not modules:
        raise ConfigError("no metric module to push; name at least one")
    for name in modules:
        check_module(root / name, name)


def _core_requirements() -> dict[str, str]:
    """lsplits' own requirement line per distribution (normalised name), optional extras left out."""
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    lines = {}
    for line in requires("lsplits") or []:
        requirement = Requirement(line)
        if requirement.marker is None or "extra" not in str(requirement.marker):
            lines[requirement.name.lower().replace("_", "-")] = str(requirement)
    return lines


def required_imports(imported: Iterable[str]) -> dict[str, list[str]]:
    """Per top-level module of ``imported`` that a core dependency of lsplits provides, that dependency's requirement
    line(s). A module no core dependency provides (an optional extra such as the MiniLM embeddings, or gradio,
    which the Space's SDK installs) is left out; lsplits, torch or transformers is a ConfigError.
    """
    from importlib.metadata import packages_distributions

    core = _core_requirements()
    distributions = packages_distributions()
    required: dict[str, list[str]] = {}
    for name in sorted(set(imported)):
        dists = [d.lower().replace("_", "-") for d in distributions.get(name, [name])]
        if any(d in FORBIDDEN for d in dists):
            raise ConfigError(f"a metric Space would need {name!r}; it must install from PyPI without it")
        found = [core[d] for d in dists if d in core]
        if found:
            required[name] = found
        elif name not in SPACE_PROVIDED:
            logger.debug("metric Space: %s is optional (not a core dependency of lsplits), left out", name)
    return required


def requirements(imported: Iterable[str]) -> list[str]:
    """The requirements.txt lines for the top-level modules ``imported``: evaluate and lsplits' pins of the core
    dependencies that provide them (:func:`required_imports`)."""
    return requirement_lines(required_imports(imported))


def requirement_lines(required: dict[str, list[str]]) -> list[str]:
    """The requirements.txt lines of :func:`required_imports`' answer, evaluate's included, sorted."""
    lines = {_core_requirements()["evaluate"]}
    for found in required.values():
        lines.update(found)
    return sorted(lines, key=str.lower)


_GUARD = """import importlib.util

# The packages of this Space's requirements.txt that its files import, looked up before any is imported, so
# that a missing one is named in one line (not a ModuleNotFoundError from deep inside a flattened file).
_REQUIRED = {required!r}
_MISSING = [line for module, line in _REQUIRED.items() if importlib.util.find_spec(module) is None]
if _MISSING:
    raise ImportError(f"the evaluate module {name!r} needs {{', '.join(_MISSING)}}, not installed: install its "
                      "Space's requirements.txt (pip install -r requirements.txt, the file beside {name}.py)")

"""


def _requirements_guard(script: str, name: str, required: dict[str, list[str]]) -> str:
    """``script`` with :data:`_GUARD` before its first relative import: a missing package of the Space's
    requirements.txt is one line naming it and that file, before the flattened files import it."""
    shown = {module: ", ".join(lines) for module, lines in sorted(required.items()) if module != "evaluate"}
    relative = [node.lineno for node in parse_python(script).body if isinstance(node, ast.ImportFrom) and node.level]
    if not shown or not relative:
        return script
    lines = script.splitlines(keepends=True)
    at = min(relative) - 1
    return "".join(lines[:at] + [_GUARD.format(required=shown, name=name)] + lines[at:])


def _script_roots(source: str) -> list[str]:
    """The lsplits modules a metric script or app imports directly."""
    return [node.module for node in ast.walk(parse_python(source))
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "lsplits"]


def _import_block(script: str, modules: list[str]) -> str:
    """``script`` with a relative import of each of ``modules`` it does not import yet, after its imports.

    evaluate copies only the files a module imports relatively itself (not those its helpers import).
    """
    tree = parse_python(script)
    direct = {node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.level}
    missing = [flatten.flat_name(m) for m in modules if flatten.flat_name(m) not in direct]
    if not missing:
        return script
    last = max(node.end_lineno for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)))
    lines = script.splitlines(keepends=True)
    block = ["\n# The rest of the computation's files: evaluate copies only those imported here (and reads any\n",
             "# comment after an import as a URL to fetch, so these lines carry none).\n"]
    block += [f"from .{name} import __name__ as _{name}\n" for name in missing]
    return "".join(lines[:last] + block + lines[last:])


def stage_module(root: Path, name: str, folder: Path) -> list[str]:
    """Write the self-contained Space of the module ``root/name`` into ``folder``; returns its requirements."""
    source = root / name
    check_module(source, name)
    script = (source / f"{name}.py").read_text(encoding="utf-8")
    app = (source / "app.py").read_text(encoding="utf-8")
    modules = flatten.closure(_script_roots(script) + _script_roots(app), lazy=name in SIMILARITY_MODULES)
    folder.mkdir(parents=True)
    files = flatten.flatten(modules, folder)
    script = _import_block(flatten.rewrite(script, name), modules)
    (folder / f"{name}.py").write_text(script, encoding="utf-8")
    (folder / "app.py").write_text(flatten.rewrite(app, "app", absolute=True), encoding="utf-8")
    shutil.copy2(source / "README.md", folder / "README.md")
    pin_sdk_version(folder / "README.md")
    required = required_imports(flatten.imported_packages([*files, folder / f"{name}.py", folder / "app.py"]))
    (folder / f"{name}.py").write_text(_requirements_guard(script, name, required), encoding="utf-8")
    lines = requirement_lines(required)
    (folder / "requirements.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    logger.info("staged %s: %d library files, requirements %s", name, len(files), ", ".join(lines))
    return lines


def stage_metrics(out: str | Path, *, metrics_dir: str | Path | None = None,
                  modules: tuple[str, ...] = METRIC_MODULES) -> Path:
    """Write one self-contained Space folder per module under ``out`` (``out/NAME``): what ``push-metrics`` uploads.

    ``out`` must be new, empty or a staging lsplits wrote (the output guard); every module is checked first.
    """
    root = Path(metrics_dir) if metrics_dir is not None else default_metrics_dir()
    check_modules(root, modules)
    with output_folder(out, option="{opt:stage}") as staged:
        for name in modules:
            stage_module(root, name, staged / name)
    return Path(out)


def push_metrics(org: str, *, metrics_dir: str | Path | None = None, modules: tuple[str, ...] = METRIC_MODULES,
                 private: bool = False, token: str | None = None) -> dict[str, str]:
    """Stage the modules (:func:`stage_metrics`) and create or update the Space ``org/NAME`` for each.

    Returns the commit URL per module. Every module is checked and staged before anything is uploaded.
    """
    check_org(org)
    urls: dict[str, str] = {}
    with temporary_folder(prefix="lsplits-metrics-") as tmp:
        staged = stage_metrics(Path(tmp) / "spaces", metrics_dir=metrics_dir, modules=modules)
        for name in modules:
            urls[name] = push_folder(staged / name, f"{org}/{name}", repo_type="space", space_sdk="gradio",
                                     private=private, token=token,
                                     commit_message=f"Upload the {name} evaluate module with lsplits")
            logger.info("pushed %s to the Space %s/%s", name, org, name)
    return urls
