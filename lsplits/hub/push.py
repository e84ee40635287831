"""The one upload path to the Hugging Face Hub, shared by ``push``, ``push-metrics`` and ``push-space``.

Every push command first calls :func:`check_hub_access` (repo id, offline switch, token), before
any work, then stages what it uploads (a built folder as it is, a metric module with its
requirements, the demo Space with its assets) and hands it to :func:`push_folder`. A push either
lands whole or not at all: every file goes into one ``create_commit`` call, so a failure leaves the
remote repo as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from lsplits.errors import ConfigError
from lsplits.runtime.failures import hub_failures, offline_variable

logger = logging.getLogger(__name__)

_SKIP_PARTS = {".git", "__pycache__", ".ipynb_checkpoints", ".cache"}


def folder_files(folder: str | Path) -> list[tuple[str, Path]]:
    """List (path in repo, local path) for every file to upload, in sorted order, skipping caches."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{folder}: not a folder")
    files = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not (set(rel.parts) & _SKIP_PARTS) and not rel.name.endswith(".pyc"):
            files.append((rel.as_posix(), path))
    if not files:
        raise ConfigError(f"{folder}: nothing to upload (the folder is empty)")
    return files


def check_repo_id(repo_id: str, *, option: str | None = None) -> str:
    """``repo_id`` when it looks like 'org/name'; ConfigError naming ``option`` and the id otherwise."""
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        where = f"{option} {repo_id}" if option else repo_id
        raise ConfigError(f"{where}: a repo id looks like 'org/name'")
    return repo_id


def check_hub_access(repo_id: str, *, token: str | None = None, option: str | None = None) -> str:
    """Before any work: ``repo_id`` looks like 'org/name', the Hub is not switched off, and a token
    exists that the Hub accepts. Returns the account name.

    Raises:
        ConfigError: one line naming ``option`` and the repo id, and what to do.
    """
    import huggingface_hub

    where = f"{option} {repo_id}" if option else repo_id
    check_repo_id(repo_id, option=option)
    switch = offline_variable()
    if switch:
        later = " (or build without --push-to-hub and run `lsplits push FOLDER REPO_ID` later)" \
            if option == "--push-to-hub" else ""
        raise ConfigError(f"{where}: cannot push, {switch} is set; unset it to reach the Hub{later}")
    token = token or huggingface_hub.get_token()
    if not token:
        raise ConfigError(f"{where}: no Hugging Face token; run `hf auth login` or set HF_TOKEN")
    try:
        info = huggingface_hub.HfApi(token=token).whoami()
    except hub_failures() as exc:  # refused token, no network: one readable line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"{where}: the Hub did not accept the token or cannot be reached: {first}") from exc
    return str(info.get("name", "")) if isinstance(info, dict) else ""


def push_folder(folder: str | Path, repo_id: str, *, repo_type: str = "dataset", private: bool = False,
                token: str | None = None, space_sdk: str | None = None,
                commit_message: str | None = None, replace: Mapping[str, bytes] | None = None) -> str:
    """Create ``repo_id`` if needed and upload every file of ``folder`` in one commit; returns the commit URL.

    ``repo_type`` is ``dataset``, ``space`` or ``model``; Spaces need ``space_sdk`` (``gradio``).
    ``replace`` maps a path in the repo to the bytes uploaded instead of that file (e.g. the card naming the repo).
    """
    from huggingface_hub import CommitOperationAdd, HfApi

    check_repo_id(repo_id)
    files = folder_files(folder)
    api = HfApi(token=token)
    replace = dict(replace or {})
    operations = [CommitOperationAdd(path_in_repo=name, path_or_fileobj=replace.get(name, str(path)))
                  for name, path in files]
    try:
        api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True,
                        space_sdk=space_sdk if repo_type == "space" else None)
        logger.info("uploading %d files to %s (%s) in one commit", len(operations), repo_id, repo_type)
        info = api.create_commit(repo_id, operations=operations, repo_type=repo_type,
                                 commit_message=commit_message or f"Upload {Path(folder).name} with lsplits")
    except hub_failures() as exc:  # the network went away, the Hub refused: one line, nothing half-committed
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"{repo_id}: uploading {folder} failed, nothing was committed: {first}") from exc
    return str(getattr(info, "commit_url", info))
