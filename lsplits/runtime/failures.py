"""Which exceptions of ``huggingface_hub`` and ``datasets`` mean "the download or load failed", not a bug.

The library turns exactly these into one-line ConfigError/DataError messages (offline, unknown or gated
repo, missing file, unreadable data; see :mod:`lsplits.errors`); any other exception propagates. Kept out
of :mod:`lsplits.errors`, which every metric Space copies, so that those need neither package.
"""

from __future__ import annotations

import importlib


def hub_failures() -> tuple[type[BaseException], ...]:
    """The exception types by which ``huggingface_hub`` and ``datasets`` report a failed download or load.

    What a library function may turn into a one-line ConfigError/DataError (offline, unknown or gated
    repo, missing file, unreadable data); anything else (a TypeError, a KeyError) is a bug and propagates.
    """
    failures: list[type[BaseException]] = [OSError, ValueError]
    try:
        from huggingface_hub.errors import EntryNotFoundError

        failures.append(EntryNotFoundError)
    except ImportError:  # pragma: no cover - an old huggingface_hub: its errors are OSErrors
        pass
    for client in ("httpx", "httpx2"):  # huggingface_hub 1.x talks through httpx, 2.x through httpx2
        try:
            failures.append(importlib.import_module(client).HTTPError)
        except ImportError:  # pragma: no cover - an older huggingface_hub uses requests (OSErrors)
            pass
    try:
        from datasets.exceptions import DatasetsError

        failures.append(DatasetsError)
    except ImportError:  # pragma: no cover - datasets not installed
        pass
    try:
        import yaml

        failures.append(yaml.YAMLError)  # a dataset card whose YAML header does not parse
    except ImportError:  # pragma: no cover - datasets not installed
        pass
    return tuple(failures)
