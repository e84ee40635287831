"""``lsplits push-metrics ORG``: upload each evaluate module in ``metrics/`` as a Space ``ORG/NAME``.

Afterwards users call ``evaluate.load("ORG/prr")`` (evaluate looks for ``prr.py`` in the Space
``ORG/prr``), and the Space shows the module's own Gradio app and metric card. Each module goes up in
one commit through the upload path every push shares (:mod:`lsplits.hub.push`: access checked before
any work, then :func:`~lsplits.hub.push.push_folder`).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

from lsplits.errors import ConfigError
from lsplits.hub.push import push_folder

logger = logging.getLogger(__name__)

METRIC_MODULES = ("prr", "beam_uncertainty", "amr_similarity", "ue_metrics")
REQUIRED_FILES = ("{name}.py", "README.md", "requirements.txt", "app.py")


def default_metrics_dir() -> Path:
    """``./metrics`` when it exists, else the ``metrics`` folder of the source checkout."""
    here = Path.cwd() / "metrics"
    return here if here.is_dir() else Path(__file__).resolve().parents[2] / "metrics"


def check_module(folder: Path, name: str) -> None:
    """Raise ConfigError naming every file a metric Space needs that ``folder`` lacks."""
    missing = [f.format(name=name) for f in REQUIRED_FILES if not (folder / f.format(name=name)).is_file()]
    if missing:
        raise ConfigError(f"{folder}: not a complete metric module, missing {', '.join(missing)}")


def _with_requirement(folder: Path, requirement: str, staging: Path) -> Path:
    """A copy of ``folder`` whose requirements.txt names ``requirement`` instead of plain ``lsplits``."""
    copy = staging / folder.name
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    lines = (copy / "requirements.txt").read_text(encoding="utf-8").splitlines()
    replaced = [requirement if line.strip() == "lsplits" else line for line in lines]
    if replaced == lines:
        raise ConfigError(f"{folder / 'requirements.txt'}: no plain 'lsplits' line to replace")
    (copy / "requirements.txt").write_text("\n".join(replaced) + "\n", encoding="utf-8")
    return copy


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


def push_metrics(org: str, *, metrics_dir: str | Path | None = None, modules: tuple[str, ...] = METRIC_MODULES,
                 private: bool = False, token: str | None = None,
                 lsplits_requirement: str | None = None) -> dict[str, str]:
    """Create or update the Space ``org/NAME`` for each module; returns the commit URL per module.

    Every module is checked before anything is uploaded, so a missing file stops the whole push.
    """
    check_org(org)
    root = Path(metrics_dir) if metrics_dir is not None else default_metrics_dir()
    check_modules(root, modules)
    urls: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="lsplits-metrics-") as staging:
        for name in modules:
            folder = root / name
            if lsplits_requirement:
                folder = _with_requirement(folder, lsplits_requirement, Path(staging))
            urls[name] = push_folder(folder, f"{org}/{name}", repo_type="space", space_sdk="gradio",
                                     private=private, token=token,
                                     commit_message=f"Upload the {name} evaluate module with lsplits")
            logger.info("pushed %s to the Space %s/%s", name, org, name)
    return urls
