"""Temporary folders that a signal cannot leak: made and removed inside :func:`~lsplits.runtime.shield.shielded`.

``tempfile.TemporaryDirectory`` registers its removal only after ``mkdtemp`` returned: a Ctrl-C or SIGTERM in
between (a test that signals as soon as the folder appears hits exactly that moment) leaves the folder behind,
and a second signal during its ``rmtree`` leaves half of it. Here the folder is created and recorded in one
shielded step, removed in another, and whatever a signal still left open is removed when the process exits
(:func:`remove_left`, also called by the CLI as it reports the signal).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from lsplits.runtime.shield import shielded

_LIVE: dict[Path, int] = {}  # the folders this process made and has not removed yet -> the pid that made them


def make(prefix: str, dir: str | os.PathLike[str] | None = None, suffix: str = "") -> Path:
    """Create a temporary folder and record it for removal, in one shielded step; remove it with :func:`remove`."""
    with shielded():
        path = Path(tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=dir))
        _LIVE[path] = os.getpid()
    return path


def remove(path: Path) -> None:
    """Remove a folder made by :func:`make` (a signal meanwhile waits until it is gone)."""
    with shielded():
        shutil.rmtree(path, ignore_errors=True)
        _LIVE.pop(path, None)


@contextlib.contextmanager
def temporary_folder(prefix: str, dir: str | os.PathLike[str] | None = None) -> Iterator[Path]:
    """``tempfile.TemporaryDirectory`` that no signal can leak: yields the folder's Path, removes it after."""
    path = make(prefix, dir)
    try:
        yield path
    finally:
        remove(path)


def holding(path: str | os.PathLike[str]) -> Path | None:
    """The live temporary folder of this process that ``path`` lies in, or None."""
    path = Path(path)
    return next((folder for folder in _LIVE if folder == path or folder in path.parents), None)


def remove_left() -> None:
    """Remove every folder this process made and did not remove yet (a signal cut its ``finally``)."""
    for path, pid in list(_LIVE.items()):
        if pid == os.getpid():  # a forked child inherits the record, not the folder's ownership
            remove(path)


atexit.register(remove_left)
