"""Dataset builders: one module per published dataset (SNLI, BoolQ, Spider).

Each module defines ``SPEC`` (a :class:`lsplits.building.pipeline.DatasetSpec`) and ``load(data_files=None)``
returning the pooled, filtered examples; ``lsplits build NAME`` and ``python -m lsplits.builders.NAME``
run them. Importing this package registers every module in it (except the shared helpers of
``common`` and the registry itself) with :func:`lsplits.builders.registry.register_builder`, without importing
them; :mod:`~lsplits.builders.registry` is where ``lsplits build`` and the API look builders up.
"""

import pkgutil

from lsplits.builders.registry import register_builder

HELPERS = ("common", "registry")
"""Modules of this package that are not builders."""

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in HELPERS and not _module.ispkg:
        register_builder(_module.name, f"{__name__}.{_module.name}")
