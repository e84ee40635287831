"""The one upload path to the Hugging Face Hub, shared by ``push``, ``push-metrics`` and ``push-space``.

Every push command first calls :func:`check_hub_access` (repo id, offline switch, token), before
any work, then stages what it uploads (a built folder as it is, a metric module with its
requirements, the demo Space with its assets) and hands it to :func:`push_folder`. A push either
lands whole or not at all: every file goes into one ``create_commit`` call, so a failure leaves the
remote repo as it was.

A push sends only the files lsplits wrote: those the folder's marker (``lsplits.json`` of a build,
:data:`lsplits.io.records.FOLDER_MARKER` of a staging) lists (:func:`pushed_files`), never a symbolic link or a
file under one. Anything else found there (a ``.env`` with a token, notes, a link to a secret) stays
local, and one warning says how many files were left out, naming a few.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from lsplits.errors import ConfigError
from lsplits.runtime.failures import hub_failures, offline_variable

logger = logging.getLogger(__name__)

_SKIP_PARTS = {".git", "__pycache__", ".ipynb_checkpoints", ".cache"}


def _entries(folder: Path) -> list[tuple[str, Path]]:
    """(path relative to ``folder``, path) of every file and symbolic link below ``folder``, sorted; links to
    folders are listed, never followed."""
    found = []
    for root, dirs, names in os.walk(folder):
        here = Path(root)
        for name in names + [d for d in dirs if (here / d).is_symlink()]:
            found.append(((here / name).relative_to(folder).as_posix(), here / name))
    return sorted(found)


def _skipped(name: str) -> bool:
    """Caches lsplits never uploads, listed or not (``__pycache__``, ``.git``, ``*.pyc``)."""
    return bool(set(name.split("/")) & _SKIP_PARTS) or name.endswith(".pyc")


def shown_names(names: Sequence[str], limit: int = 3) -> str:
    """Up to ``limit`` of ``names`` for a one-line message, ``...`` when there are more."""
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def _marked_folder(folder: Path) -> Path | None:
    """``folder``, or the nearest folder above it, that holds an lsplits marker (None when none does): a staging
    folder's marker lists the files of the Spaces staged inside it (``push-metrics`` pushes each on its own)."""
    from lsplits.io.records import DATASET_MARKER, FOLDER_MARKER

    for candidate in (folder, *folder.resolve().parents):
        if any((candidate / name).is_file() and not (candidate / name).is_symlink()
               for name in (DATASET_MARKER, FOLDER_MARKER)):
            return candidate
    return None


def pushed_files(folder: str | Path) -> list[tuple[str, Path]]:
    """(path in repo, local path) of the files a push of ``folder`` sends, sorted: the files lsplits wrote there.

    Those are the files the lsplits marker of ``folder`` (or of the staging folder holding it) lists as its own
    (:func:`lsplits.io.guard.foreign_files` names the others), never a symbolic link or a file under one, and no cache
    (``__pycache__``). Any other file is left out, with one warning naming how many and a few of them; the list
    sent is logged.

    Raises:
        ConfigError: ``folder`` is not a folder, is empty, or holds no file that lsplits wrote and listed.
    """
    from lsplits.io.guard import foreign_files
    from lsplits.io.records import DATASET_MARKER, FOLDER_MARKER

    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{folder}: not a folder")
    entries = [(name, path) for name, path in _entries(folder) if not _skipped(name)]
    if not entries:
        raise ConfigError(f"{folder}: nothing to upload (the folder is empty)")
    root = _marked_folder(folder)
    sent = []
    if root is not None:
        within = folder.resolve().relative_to(root.resolve())
        foreign = set(foreign_files(root, limit=len(_entries(root)) + 1))  # every file its marker does not list
        sent = [(name, path) for name, path in entries
                if (within / name).as_posix() not in foreign and not path.is_symlink()]
    if not sent:
        raise ConfigError(f"{folder}: no file here that lsplits wrote and listed; push a folder written by "
                          f"`lsplits build` or `lsplits demo` (its {DATASET_MARKER} lists its files; a staging "
                          f"lists them in {FOLDER_MARKER})")
    chosen = {name for name, _ in sent}
    left = [name for name, _ in entries if name not in chosen]
    if left:
        logger.warning("%s: left out %d files that lsplits did not write or that are symbolic links (%s); a push "
                       "sends only the files lsplits listed", folder, len(left), shown_names(left))
    logger.info("a push of %s sends %d files: %s", folder, len(sent), ", ".join(sorted(chosen)))
    return sent


def check_repo_id(repo_id: str, *, option: str | None = None) -> str:
    """``repo_id`` when it looks like 'org/name'; ConfigError naming ``option`` (a Python name) and the id otherwise."""
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        where = f"{{opt:{option}}} {repo_id}" if option else repo_id
        raise ConfigError(f"{where}: a repo id looks like 'org/name'")
    return repo_id


def check_hub_access(repo_id: str, *, token: str | None = None, option: str | None = None) -> str:
    """Before any work: ``repo_id`` looks like 'org/name', the Hub is not switched off, and a token
    exists that the Hub accepts. Returns the account name.

    Raises:
        ConfigError: one line naming ``option`` (a Python name: ``push_to_hub``) and the repo id, and what to do.
    """
    import huggingface_hub

    where = f"{{opt:{option}}} {repo_id}" if option else repo_id
    check_repo_id(repo_id, option=option)
    switch = offline_variable()
    if switch:
        later = " (or build without {opt:push_to_hub} and run `lsplits push FOLDER REPO_ID` later)" \
            if option == "push_to_hub" else ""
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
    """Create ``repo_id`` if needed and upload the files lsplits wrote in ``folder`` (:func:`pushed_files`) in one
    commit; returns the commit URL.

    ``repo_type`` is ``dataset``, ``space`` or ``model``; Spaces need ``space_sdk`` (``gradio``).
    ``replace`` maps a path in the repo to the bytes uploaded instead of that file (e.g. the card naming the repo).
    """
    from huggingface_hub import CommitOperationAdd, HfApi

    check_repo_id(repo_id)
    files = pushed_files(folder)
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
