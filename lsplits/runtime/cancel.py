"""Stopping long work from outside: a time budget, or a caller who went away (the Space's requests).

A caller wraps the work in :func:`stop_when` with a function that returns why to stop (or None to go on);
the long loops call :func:`check_stop` between their steps, and the similarity worker pool polls it while it
waits, so a stop ends the workers at once (:mod:`lsplits.runtime.pool`) instead of leaving them busy.
The check is a context variable: it follows the work in its own thread and costs nothing when unset.

>>> with stop_when(lambda: "the budget ran out"):
...     check_stop()
Traceback (most recent call last):
...
lsplits.errors.Stopped: stopped: the budget ran out
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, copy_context
from dataclasses import dataclass, field
from typing import TypeVar

from lsplits.errors import Stopped

T = TypeVar("T")
POLL_SECONDS = 0.2
"""How often :func:`wait_stoppable` checks the stop condition while a blocking call runs."""


@dataclass
class _Condition:
    """One :func:`stop_when` block: why to stop, its deadline (``time.monotonic()``), the process that set it
    and what the work noted for it (:func:`note`)."""

    reason: Callable[[], str | None]
    end: float | None
    pid: int
    notes: Counter[str] = field(default_factory=Counter)


_REASON: ContextVar[_Condition | None] = ContextVar("lsplits_stop", default=None)


@contextmanager
def stop_when(reason: Callable[[], str | None], *, end: float | None = None) -> Iterator[Counter[str]]:
    """Within the block, :func:`check_stop` raises :class:`~lsplits.errors.Stopped` once ``reason()`` says why.

    ``end`` (a ``time.monotonic()`` value, default: that of an enclosing block) is the budget's deadline, which
    :func:`time_left` tells work that can bound itself (a solver's time limit). Yields the counter of what the
    work noted (:func:`note`), for the caller to report."""
    outer = _REASON.get()
    if end is None and outer is not None:
        end = outer.end
    condition = _Condition(reason, end, os.getpid())
    token = _REASON.set(condition)
    try:
        yield condition.notes
    finally:
        _REASON.reset(token)


def stoppable() -> bool:
    """Whether a stop condition is set (the worker pool then computes out of this process, so it can be ended)."""
    return _REASON.get() is not None


def check_stop() -> None:
    """Raise :class:`~lsplits.errors.Stopped` if the work should stop now; nothing when no condition is set."""
    condition = _REASON.get()
    if condition is not None:
        why = condition.reason()
        if why:
            raise Stopped(f"stopped: {why}")


def time_left() -> float | None:
    """Seconds until the deadline of the current stop condition (0 once it passed); None without a deadline."""
    condition = _REASON.get()
    if condition is None or condition.end is None:
        return None
    return max(0.0, condition.end - time.monotonic())


def note(what: str) -> bool:
    """Count ``what`` (an approximation the work made to stay within its budget) for the caller that set the stop
    condition; False when it cannot reach that caller (none is set, or this is another process: a similarity
    worker forked from it), so that the work does not approximate where nobody would be told."""
    condition = _REASON.get()
    if condition is None or condition.pid != os.getpid():
        return False
    condition.notes[what] += 1
    return True


def wait_stoppable(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` run in a helper thread while this one waits, checking :func:`check_stop` every
    :data:`POLL_SECONDS`: for a long call into C (an ILP solver) that holds no lock Python can break.

    The calling thread stays where a signal's handler runs (the CLI's Ctrl-C or SIGTERM take effect at once,
    not when the call returns) and a stop raises :class:`~lsplits.errors.Stopped` at once; the abandoned call
    ends by itself (give it a time limit) and its result is dropped."""
    outcome: list[tuple[bool, object]] = []
    context = copy_context()  # the helper sees the same stop condition

    def run() -> None:
        try:
            outcome.append((True, context.run(fn, *args)))
        except BaseException as exc:  # handed to the waiting thread, which raises it
            outcome.append((False, exc))

    helper = threading.Thread(target=run, name="lsplits-stoppable", daemon=True)
    helper.start()
    while True:
        helper.join(POLL_SECONDS)
        if not helper.is_alive():
            break
        check_stop()
    ok, value = outcome[0]
    if not ok:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]


def deadline(seconds: float, what: str = "this request") -> Callable[[], str | None]:
    """A stop condition that says so once ``seconds`` have passed from now."""
    end = time.monotonic() + seconds

    def reason() -> str | None:
        return f"{what} ran past its time budget of {seconds:g} s" if time.monotonic() > end else None

    return reason
