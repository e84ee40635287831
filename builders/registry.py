"""The dataset builders ``lsplits build NAME`` knows, by name.

A builder is a module with ``SPEC`` (a :class:`lsplits.building.pipeline.DatasetSpec`) and
``load(data_files=None, options=None)`` (the pooled, filtered examples). Builders register themselves: the
:mod:`lsplits.builders` package, which holds this registry (so importing it has registered them), registers each
of its modules (so a new module there is a new ``lsplits build NAME``), and any other package can call
:func:`register_builder`. A module is imported only when its builder is used, so listing the names
(``lsplits build --help``) stays cheap.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from lsplits.errors import ConfigError, InvalidOption

_BUILDERS: dict[str, str] = {}  # name -> module path


def register_builder(name: str, module: str) -> None:
    """Make ``lsplits build NAME`` run the builder module ``module`` (a dotted path, imported when used)."""
    if _BUILDERS.get(name, module) != module:
        raise ConfigError(f"builder {name!r} is registered twice ({_BUILDERS[name]} and {module})")
    _BUILDERS[name] = module


def builder_names() -> tuple[str, ...]:
    """The registered builder names, sorted."""
    return tuple(sorted(_BUILDERS))


def is_builder(name: str | None) -> bool:
    """True when ``name`` is a registered builder (not a Hub id or a path)."""
    return name is not None and name in builder_names()


def load_builder(name: str) -> ModuleType:
    """The builder module registered as ``name`` (with ``SPEC`` and ``load``); ConfigError listing the names."""
    if not is_builder(name):
        raise InvalidOption(f"unknown builder {name!r}; registered: {', '.join(builder_names()) or 'none'}")
    return importlib.import_module(_BUILDERS[name])
