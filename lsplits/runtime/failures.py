"""Which exceptions of ``huggingface_hub`` and ``datasets`` mean "the download or load failed", not a bug.

The library turns exactly these into one-line ConfigError/DataError messages (offline, unknown or gated
repo, missing file, unreadable data; see :mod:`lsplits.errors`); any other exception propagates. Kept out
of :mod:`lsplits.errors`, which every metric Space copies, so that those need neither package.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from pathlib import Path

OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
"""The environment variables that switch the Hub off; huggingface_hub reads either."""


def offline_variable() -> str | None:
    """The variable that switches the Hub off here (read now, and as huggingface_hub read it at import), or None."""
    for name in OFFLINE_VARIABLES:
        value = os.environ.get(name)
        if value:  # the first one set decides, as huggingface_hub reads them
            if value.strip().lower() in {"1", "true", "yes", "on"}:
                return name
            break
    import huggingface_hub

    return OFFLINE_VARIABLES[0] if huggingface_hub.is_offline_mode() else None


def hub_failures() -> tuple[type[BaseException], ...]:
    """The exception types by which ``huggingface_hub`` and ``datasets`` report a failed download or load.

    What a library function may turn into a one-line ConfigError/DataError: the Hub's HTTP errors (unknown,
    gated or disabled repo, refused token), a file missing from the cache or the repo, a repo id the Hub refuses,
    the Hub switched off or unreachable (the HTTP client's errors, ConnectionError, TimeoutError), a dataset
    ``datasets`` cannot find, read or build, and a dataset card whose YAML does not parse. Anything else (a
    ValueError, TypeError or KeyError from a bug) propagates.
    """
    from huggingface_hub.utils import (
        EntryNotFoundError,
        HfHubHTTPError,
        HFValidationError,
        LocalTokenNotFoundError,
        OfflineModeIsEnabled,
    )

    failures: list[type[BaseException]] = [HfHubHTTPError, EntryNotFoundError, HFValidationError,
                                           LocalTokenNotFoundError, OfflineModeIsEnabled, ConnectionError,
                                           TimeoutError]
    # huggingface_hub 0.x talks through requests, 1.x through httpx, 2.x through httpx2
    for client, error in (("requests", "RequestException"), ("httpx", "HTTPError"), ("httpx2", "HTTPError")):
        try:
            failures.append(getattr(importlib.import_module(client), error))
        except ImportError:  # pragma: no cover - a client this huggingface_hub does not use
            pass
    try:
        from datasets.data_files import EmptyDatasetError  # a folder or pattern with no data files
        from datasets.exceptions import DatasetsError  # not found, no data files, cannot build

        failures += [DatasetsError, EmptyDatasetError]
    except ImportError:  # pragma: no cover - datasets not installed
        pass
    try:
        import yaml

        failures.append(yaml.YAMLError)  # a dataset card whose YAML header does not parse
    except ImportError:  # pragma: no cover - pyyaml not installed
        pass
    return tuple(failures)


def is_hub_id(text: str, *, namespaced: bool = False) -> bool:
    """Whether ``text`` is a valid Hub repo id (``name`` or ``org/name``; ``namespaced``: ``org/name`` only), by
    huggingface_hub's own rules, from the string alone (nothing on this machine's disk is looked at)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    if namespaced and text.count("/") != 1:
        return False
    try:
        validate_repo_id(text)
    except HFValidationError:
        return False
    return True


def hub_snapshot(repo_id: str, *, repo_type: str, allow_patterns: Sequence[str] | None, what: str) -> Path:
    """The folder of Hub repo ``repo_id``'s snapshot in the Hugging Face cache, downloaded when missing (the files
    ``allow_patterns`` matches); never a folder of this machine that happens to have the same name.

    Raises:
        ConfigError: the download failed (offline and not cached, unknown or gated repo), in one line naming
            ``what`` (``dataset``, ``model``) and the repo.
    """
    import huggingface_hub

    from lsplits.errors import ConfigError

    try:
        return Path(huggingface_hub.snapshot_download(repo_id, repo_type=repo_type,
                                                      allow_patterns=list(allow_patterns) if allow_patterns else None))
    except hub_failures() as exc:  # offline, unknown repo, no access: one readable line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"cannot download the Hub {what} {repo_id!r}: {first}") from exc
