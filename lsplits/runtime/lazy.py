"""Short public names of a package, imported on first use, so that importing the package stays cheap (no torch).

The one way lsplits' packages (``lsplits``, ``lsplits.lm``, ``lsplits.similarity``, ``lsplits.generation``,
``lsplits.uncertainty``) export names lazily: each ``__init__.py`` sets
``__getattr__, __dir__ = lazy_exports(__name__, {...})``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

Source = str | Callable[[], Any]
"""Where a lazy name comes from: the dotted module defining it (same name there), or a function that makes it."""


def lazy_exports(package: str, names: Mapping[str, Source]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each of ``names`` is imported from its module (a string)
    or made by its function (a callable, e.g. a registry look-up) when first asked for; a module's name is the
    same object as the long path gives."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        source = names[name]
        return source() if callable(source) else getattr(importlib.import_module(source), name)

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
