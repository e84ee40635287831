"""Atomic writes: a file or folder is written into a staging folder beside its target and put in place in one
step, so a crash or a signal leaves the previous output or the new one, never half of it.

A staging folder is named ``.NAME.PID@HOST.XXXX.tmp``; one whose writer has ended (``kill -9``, out of memory)
or that nobody touched for :data:`STALE_STAGING_SECONDS` is removed by the next write of the same target. These
functions replace whatever the target is: user-facing outputs go through :func:`lsplits.io.guard.check_output`
first.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path

from lsplits.runtime import tempfolders

PARQUET_MARK = b"lsplits"
"""Schema-metadata key of parquet files written by lsplits (its value says what wrote it)."""

STALE_STAGING_SECONDS = 6 * 3600
"""A staging folder (``.NAME.*.tmp``) untouched this long was left by a process that was killed: removed."""


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success put it in place of ``target`` in one step.

    Works for files and folders. A file, or a folder where nothing is there yet, is renamed into place; a
    folder replacing a folder is exchanged with it in one ``renameat2(RENAME_EXCHANGE)`` on Linux (two renames
    elsewhere, with a moment where ``target`` is missing). On error the temporary is removed and ``target`` is
    untouched. Staging folders of the same target left by a killed process are removed first
    (:data:`STALE_STAGING_SECONDS`). This replaces whatever ``target`` is: user-facing outputs go through
    :func:`lsplits.io.guard.check_output` first.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_staging(target)
    tmp = tempfolders.make(prefix=f".{target.name}.{_staging_owner()}.", suffix=".tmp", dir=target.parent)
    staged = tmp / target.name
    try:
        yield staged
        replacing_folder = target.is_dir() and not target.is_symlink()
        if replacing_folder and not _exchange(staged, target):
            os.replace(target, tmp / ".old")
            os.replace(staged, target)
        elif not replacing_folder:
            os.replace(staged, target)
    finally:
        tempfolders.remove(tmp)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2`` with ``RENAME_EXCHANGE``); False where unsupported."""
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # not glibc >= 2.28 / not Linux
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def _staging_owner() -> str:
    """``PID@HOST`` of this process, written into its staging folders' names so a later run can tell whether
    their writer is gone (:func:`_remove_stale_staging`)."""
    return f"{os.getpid()}@{socket.gethostname().replace('.', '-') or 'localhost'}"


def _writer_gone(folder: Path) -> bool:
    """Whether the process named in a staging folder's name (:func:`_staging_owner`) has ended: it ran on this
    host and no process has its pid. False when that cannot be told (another host, an unnamed writer)."""
    found = re.search(r"\.(\d+)@([^.]+)\.[^.]*\.tmp$", folder.name)
    if found is None or found.group(2) != _staging_owner().split("@", 1)[1]:
        return False
    pid = int(found.group(1))
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


def _remove_stale_staging(target: Path) -> None:
    """Remove ``.NAME.*.tmp`` staging folders of ``target`` whose writer has ended (killed with ``kill -9``,
    out of memory), or that no process has touched for :data:`STALE_STAGING_SECONDS`."""
    import glob
    import time

    cutoff = time.time() - STALE_STAGING_SECONDS
    for old in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            if old.is_dir() and not old.is_symlink() and (_writer_gone(old) or old.stat().st_mtime < cutoff):
                shutil.rmtree(old, ignore_errors=True)


def atomic_write_text(target: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``target`` atomically (UTF-8)."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def atomic_write_parquet(target: str | os.PathLike[str], table, *, mark: str | None = None,
                         metadata: Mapping[str, str] | None = None) -> None:
    """Write a pyarrow Table or pandas DataFrame to a parquet file atomically.

    ``mark`` (e.g. ``"score"``) stores :data:`PARQUET_MARK` in the schema metadata, so that a later
    run may replace the file (see :func:`lsplits.io.guard.check_output`); ``metadata`` adds further schema metadata.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not isinstance(table, pa.Table):
        table = pa.Table.from_pandas(table, preserve_index=False)
    extra = {key.encode(): value.encode() for key, value in (metadata or {}).items()}
    if mark is not None:
        extra[PARQUET_MARK] = mark.encode()
    if extra:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **extra})
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp)
