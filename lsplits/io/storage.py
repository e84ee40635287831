"""Cache folders and the disk: where lsplits caches by default (:func:`cache_folder`), whether a cache folder
may and can be written (:func:`check_writable`), and one line for a write that failed because the disk is full
or read-only (:func:`storage_problem`).
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from lsplits.errors import ConfigError, in_words
from lsplits.io.guard import built_dataset_of
from lsplits.runtime import tempfolders


def check_writable(folder: str | os.PathLike[str], what: str) -> Path:
    """Refuse, before any work, a folder lsplits will write into (a cache) that must not or cannot be written:
    an empty path (the current folder), one inside a built dataset (:func:`lsplits.io.guard.built_dataset_of`),
    a read-only file system, no permission. A probe file is created and removed (``os.access`` misses read-only
    mounts for some users and ignores permissions for root). Returns the folder as a Path.

    Raises:
        ConfigError: one line naming ``what``, the folder and the reason.
    """
    if not str(folder).strip():  # Path("") is the current folder
        raise ConfigError(f"{what}: an empty path, which would put the cache into the current folder; give a folder")
    path = Path(folder).expanduser()
    dataset = built_dataset_of(path)
    if dataset is not None:
        raise ConfigError(f"{what} {folder}: lies inside the built dataset {dataset}, which a rebuild replaces as a "
                          "whole (and refuses while it holds files lsplits did not list); give a folder outside it")
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise ConfigError(f"{what} {folder}: lies under {existing}, which is a file, not a folder")
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".lsplits-probe-"):
            pass
    except OSError as exc:
        raise ConfigError(f"{what} {folder}: cannot write into {existing} ({exc.strerror or exc}); give a writable "
                          "folder") from exc
    return path


_STORAGE_ERRNOS = {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "the disk quota is used up",
                   errno.EROFS: "the file system is read-only"}


def _written_path(exc: OSError) -> str | None:
    """The file a failed write was writing, as the user knows it: a copy's destination (``shutil`` puts its
    source in ``filename`` and its destination in ``filename2``), the output a staging folder stands for
    (``.NAME.PID@HOST.XXXX.tmp/NAME/...`` is NAME), and a temporary folder of lsplits named as such (with ``TMPDIR``)."""
    name = exc.filename2 or exc.filename
    if not name:
        return None
    path = Path(os.fsdecode(name))
    for parent in path.parents:
        if parent.name.startswith(".") and parent.name.endswith(".tmp") and parent.parent != parent:
            inner = path.relative_to(parent)
            return str(parent.parent.joinpath(*inner.parts))  # the output's path: NAME/... beside the staging
    if tempfolders.holding(path) is not None:
        return f"{path} in the temporary folder {Path(tempfile.gettempdir())} (TMPDIR)"
    return str(path)


def storage_problem(exc: BaseException, words: Mapping[str, str] | None = None) -> str | None:
    """One line for a failure to write because the disk is full or read-only (an ``OSError``, or safetensors'
    error that wraps one), found anywhere in ``exc``'s chain, naming the options as ``words`` spells them (the
    CLI's flags; :func:`~lsplits.errors.in_words`); None for any other exception."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        number = exc.errno if isinstance(exc, OSError) else None
        if number is None and type(exc).__name__ == "SafetensorError":
            found = re.search(r"os error (\d+)", str(exc))
            number = int(found.group(1)) if found else None
        if number in _STORAGE_ERRNOS:
            written = _written_path(exc) if isinstance(exc, OSError) else None
            where = f" writing {written}" if written else ""
            return in_words(f"{_STORAGE_ERRNOS[number]}{where}: free space or write the output ({{opt:out}}) and the "
                            "caches ({opt:cache_dir}) to another disk", words)
        exc = exc.__cause__ or exc.__context__
    return None


def cache_folder(kind: str) -> Path:
    """Where lsplits caches ``kind`` (``scores``, ``beams``, ``matrices``) by default.

    ``$LSPLITS_CACHE/KIND``, else ``$XDG_CACHE_HOME/lsplits/KIND`` (``~/.cache/lsplits/KIND``).
    """
    root = os.environ.get("LSPLITS_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lsplits"
    return Path(root).expanduser() / kind
