"""Pushing a local folder to the Hugging Face Hub in a single commit (datasets, metric Spaces, the demo Space).

A push either lands whole or not at all: every file goes into one ``create_commit`` call, so a
failure leaves the remote repo as it was.
"""

from __future__ import annotations

import logging
from pathlib import Path

from .errors import ConfigError

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


def push_folder(folder: str | Path, repo_id: str, *, repo_type: str = "dataset", private: bool = False,
                token: str | None = None, space_sdk: str | None = None,
                commit_message: str | None = None) -> str:
    """Create ``repo_id`` if needed and upload every file of ``folder`` in one commit; returns the commit URL.

    ``repo_type`` is ``dataset``, ``space`` or ``model``; Spaces need ``space_sdk`` (``gradio``).
    """
    from huggingface_hub import CommitOperationAdd, HfApi

    if "/" not in repo_id:
        raise ConfigError(f"repo id {repo_id!r} must look like 'org/name'")
    files = folder_files(folder)
    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True,
                    space_sdk=space_sdk if repo_type == "space" else None)
    operations = [CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(path)) for name, path in files]
    logger.info("uploading %d files to %s (%s) in one commit", len(operations), repo_id, repo_type)
    info = api.create_commit(repo_id, operations=operations, repo_type=repo_type,
                             commit_message=commit_message or f"Upload {Path(folder).name} with lsplits")
    return str(getattr(info, "commit_url", info))
