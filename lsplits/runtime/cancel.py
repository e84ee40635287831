"""Stopping long work from outside: a time budget, or a caller who went away (the Space's requests).

A caller wraps the work in :func:`stop_when` with a function that returns why to stop (or None to go on);
the long loops call :func:`check_stop` between their steps, and the similarity worker pool polls it while it
waits, so a stop ends the workers at once (:mod:`lsplits.uncertainty.matrix`) instead of leaving them busy.
The check is a context variable: it follows the work in its own thread and costs nothing when unset.

>>> with stop_when(lambda: "the budget ran out"):
...     check_stop()
Traceback (most recent call last):
...
lsplits.errors.Stopped: stopped: the budget ran out
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from lsplits.errors import Stopped

_REASON: ContextVar[Callable[[], str | None] | None] = ContextVar("lsplits_stop", default=None)


@contextmanager
def stop_when(reason: Callable[[], str | None]) -> Iterator[None]:
    """Within the block, :func:`check_stop` raises :class:`~lsplits.errors.Stopped` once ``reason()`` says why."""
    token = _REASON.set(reason)
    try:
        yield
    finally:
        _REASON.reset(token)


def stoppable() -> bool:
    """Whether a stop condition is set (the worker pool then computes out of this process, so it can be ended)."""
    return _REASON.get() is not None


def check_stop() -> None:
    """Raise :class:`~lsplits.errors.Stopped` if the work should stop now; nothing when no condition is set."""
    reason = _REASON.get()
    if reason is not None:
        why = reason()
        if why:
            raise Stopped(f"stopped: {why}")


def deadline(seconds: float, what: str = "this request") -> Callable[[], str | None]:
    """A stop condition that says so once ``seconds`` have passed from now."""
    end = time.monotonic() + seconds

    def reason() -> str | None:
        return f"{what} ran past its time budget of {seconds:g} s" if time.monotonic() > end else None

    return reason
