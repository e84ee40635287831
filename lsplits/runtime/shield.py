"""Short sections that a Ctrl-C or SIGTERM must not cut in half: the signal waits until the section ends.

Creating a temporary folder and registering its removal, or removing one, are two steps; a signal between them
(the handler raises at the next bytecode) leaks the folder. Inside :func:`shielded` the handlers of
:mod:`lsplits.cli.interrupt` only record the signal (:func:`defer`); it is raised as the outermost section
ends. Sections are meant to be short (a ``mkdtemp``, an ``rmtree``): a signal waits at most that long. Only the
main thread's sections count, since Python runs signal handlers there alone.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_DEPTH = [0]  # how many shielded sections the main thread is inside
_PENDING: list[BaseException] = []  # signals received inside a section, raised when it ends


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def active() -> bool:
    """Whether the main thread is inside a shielded section (a signal handler then defers its exception)."""
    return _DEPTH[0] > 0


def defer(exc: BaseException) -> None:
    """Keep a signal's exception until the current section ends (called by a signal handler)."""
    _PENDING.append(exc)


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """Run the block with signals deferred: a signal received meanwhile is raised when the outermost section ends.

    A block that ends with an exception drops the deferred signal: the command is already unwinding (and the
    signal stays recorded by its handler, which is what the CLI reports)."""
    if not _in_main_thread():
        yield
        return
    _DEPTH[0] += 1
    try:
        yield
    except BaseException:
        _DEPTH[0] -= 1
        if not _DEPTH[0]:
            _PENDING.clear()
        raise
    _DEPTH[0] -= 1
    if not _DEPTH[0] and _PENDING:
        pending = _PENDING[0]
        _PENDING.clear()
        raise pending
