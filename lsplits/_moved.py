"""Old module paths that still import for one release, with a ``FutureWarning`` naming the new path.

A finder on ``sys.meta_path`` answers only for the old names in :data:`MOVED`; each old module is a thin
forwarder to the new one (same objects, so ``isinstance`` and identity hold), never a second copy.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings
from typing import Any

# old dotted prefix -> new dotted prefix; a prefix covers its submodules
MOVED: dict[str, str] = {
    "lsplits.build": "lsplits.building",  # `build/` reads as generated output to pytest and gitignores
    "lsplits.hub.failures": "lsplits.runtime.failures",  # data/ and generation/ read it: below hub/ (issue 26)
    "lsplits.uncertainty.lexical": "lsplits.similarity.lexical",  # similarities, registered by similarity/
    "lsplits.data.registry": "lsplits.builders.registry",  # data/ is below the builders it would name
}


def _new_name(fullname: str) -> str | None:
    for old, new in MOVED.items():
        if fullname == old or fullname.startswith(old + "."):
            return new + fullname[len(old):]
    return None


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old names of :data:`MOVED` and loads each as a forwarder to its new module."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        new = _new_name(fullname)
        if new is None:
            return None
        real = importlib.util.find_spec(new)
        if real is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=real.submodule_search_locations is not None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        new = _new_name(spec.name)
        assert new is not None
        warnings.warn(f"{spec.name} has moved to {new}; the old name will be removed in the next release",
                      FutureWarning, stacklevel=2)
        real = importlib.import_module(new)
        module = types.ModuleType(spec.name, real.__doc__)

        def forward(name: str) -> Any:
            return getattr(real, name)

        module.__getattr__ = forward  # type: ignore[method-assign]
        module.__dir__ = lambda: dir(real)  # type: ignore[method-assign]
        if hasattr(real, "__path__"):
            module.__path__ = []  # a package: its old submodules are found by this finder too
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the module forwards every attribute."""


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (``import lsplits`` calls it)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
