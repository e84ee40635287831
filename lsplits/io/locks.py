"""Output locks: while a command runs, the outputs it was allowed to write are locked (a ``.NAME.lsplits-lock``
file beside each, held with ``flock``), so that a second command writing the same output is refused at once
instead of both reporting success. :func:`lsplits.io.guard.check_output` takes the lock; a command's run
(``lsplits.cli.parser.main``, :func:`lsplits.io.guard.output_folder`) holds it in :func:`holding_outputs`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from lsplits.errors import ConfigError

_LOCKS: dict[Path, tuple[int, Path]] = {}  # output path -> the descriptor and path of its lock file
_SCOPES: list[list[Path]] = []  # the outputs locked within each open holding_outputs() block


@contextlib.contextmanager
def holding_outputs() -> Iterator[None]:
    """Within the block, every output :func:`lsplits.io.guard.check_output` accepts is locked until the block
    ends (a command's whole run: ``lsplits.cli.parser.main``, :func:`lsplits.io.guard.output_folder`), so that a
    second command writing the same output is refused at once instead of both reporting success. Outside any
    block nothing is locked."""
    _SCOPES.append([])
    try:
        yield
    finally:
        for target in _SCOPES.pop():
            _unlock_output(target)


def lock_output(target: Path, where: str) -> None:
    """Lock ``target`` (a ``.NAME.lsplits-lock`` file beside it) for the innermost :func:`holding_outputs` block.
    Only the main process of a launch locks (``RANK`` 0); the others write nothing there."""
    if not _SCOPES or target in _LOCKS or os.environ.get("RANK", "0") not in ("", "0"):
        return
    import fcntl

    lock = _lock_path(target)
    descriptor = _open_lock(lock, where)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(descriptor)
        raise ConfigError(f"{where}: another lsplits command (pid {holder}) is writing it now; wait for it to "
                          "finish, or give another path") from None
    os.ftruncate(descriptor, 0)  # ours: a regular file of one name holding at most a pid (_open_lock)
    os.pwrite(descriptor, str(os.getpid()).encode(), 0)
    _LOCKS[target] = descriptor, lock
    _SCOPES[-1].append(target)


def _open_lock(lock: Path, where: str) -> int:
    """Open (or create) the lock file ``lock`` without following a symbolic link, and only when it is one
    lsplits writes: a regular file with no other name (hard link) that holds at most a process id. Anything
    else planted there is refused rather than truncated.

    Raises:
        ConfigError: one line naming the output (``where``), the lock file and what it is.
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(lock, flags, 0o644)
    except OSError as exc:
        problem = {errno.ELOOP: "is a symbolic link", errno.EISDIR: "is a folder"}.get(
            exc.errno, f"cannot be opened ({exc.strerror or exc})")
        raise ConfigError(f"{where}: its lock file {lock} {problem}, not a lock file lsplits wrote; remove it "
                          "yourself or give another path") from None
    info = os.fstat(descriptor)
    problem = None
    if not stat.S_ISREG(info.st_mode):
        problem = "is not a regular file"
    elif info.st_nlink != 1:
        problem = f"has {info.st_nlink} names (hard links)"
    elif info.st_size > 32 or not re.fullmatch(rb"\d*\s*", os.pread(descriptor, 33, 0)):
        problem = "holds something other than a process id"
    if problem is not None:
        os.close(descriptor)
        raise ConfigError(f"{where}: its lock file {lock} {problem}, not a lock file lsplits wrote; remove it "
                          "yourself or give another path")
    return descriptor


def _lock_path(target: Path) -> Path:
    """``.NAME.lsplits-lock`` beside ``target``, or, while its folder does not exist yet, in the nearest folder
    above that does (named by the path below it: ``.out%beams.jsonl.lsplits-lock``)."""
    home = next(p for p in target.parents if p.is_dir())
    return home / f".{'%'.join(target.relative_to(home).parts)}.lsplits-lock"


def _unlock_output(target: Path) -> None:
    """Remove the lock file and release the lock (the kernel releases it anyway when a process dies)."""
    held = _LOCKS.pop(target, None)
    if held is not None:
        with contextlib.suppress(OSError):
            held[1].unlink()
        os.close(held[0])
