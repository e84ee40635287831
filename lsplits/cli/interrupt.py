"""Ctrl-C and SIGTERM end a command the same way: one line on stderr, temporary folders removed.

SIGTERM (what ``kill``, ``timeout``, schedulers and containers send) would otherwise end Python at once,
skipping every ``with`` block that removes a temporary folder and every ``finally``. :func:`raise_on_sigterm` turns it
into :class:`Terminated`, a :class:`KeyboardInterrupt`, so the same unwinding runs as for Ctrl-C.
:func:`interrupted_line` says what a rerun can reuse, and only what this run really cached. Similarity
workers leave both signals to their parent (:mod:`lsplits.runtime.pool`), so none prints a traceback.

A caught signal always ends the command: the exception a handler raises can be swallowed where no ``except``
of lsplits sees it (raised inside a ``__del__`` or a weakref callback, Python prints "Exception ignored" and
goes on; a library's ``except BaseException``), and the run would go on as if Ctrl-C had not been pressed. So a
watchdog thread, woken by the signal itself (:func:`signal.set_wakeup_fd`), raises it again in the main
thread at once when a finalizer swallowed it, and every :data:`RERAISE_AFTER_S` while the command has not
reported it.

Neither the handlers nor the watchdog raise inside a shielded section (:mod:`lsplits.runtime.shield`: a
temporary folder being made and recorded, or removed, :mod:`lsplits.runtime.tempfolders`); the signal is raised
as the section ends, so no folder is left half made or half removed.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsplits.runtime import shield, tempfolders
from lsplits.runtime.progress import silence_bars

if TYPE_CHECKING:
    import argparse
    from types import FrameType

logger = logging.getLogger(__name__)

_STARTED = time.time()  # files the interrupted run wrote are newer than this
_SCAN_LIMIT = 100_000  # cache entries looked at to tell whether this run cached anything

SIGINT_EXIT = 130
SIGTERM_EXIT = 143
SIGPIPE_EXIT = 141  # the reader of stdout went away (`lsplits analyze DIR | head`)
"""128 + the signal number, what shells report for a process a signal ended."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt (so ``with`` blocks clean up)."""


_RECEIVED: list[KeyboardInterrupt] = []
"""The signals this run received, kept because a handler's exception can be swallowed: raised inside a
``__del__`` (Python prints "Exception ignored" and goes on), the run then fails for the signal's sake."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not interrupt the cleanup
    _raise(Terminated())


def _interrupt(signum: int, frame: FrameType | None) -> None:
    _raise(KeyboardInterrupt())


def _raise(exc: KeyboardInterrupt) -> None:
    """Record the signal and raise it, or, inside a shielded section (a temporary folder being made or removed:
    :mod:`lsplits.runtime.shield`), leave it for the section's end to raise."""
    _RECEIVED.append(exc)
    if shield.active():
        shield.defer(exc)
        return
    raise exc


RERAISE_AFTER_S = 10.0
"""Seconds a signal may take to end the command (its unwinding and cleanup) before the watchdog raises it
again in the main thread."""

_REPORTED = threading.Event()  # the command caught the signal and reported it: the watchdog stops
_SWALLOWED: list[BaseException] = []  # signals a finalizer swallowed (sys.unraisablehook), raised again at once
_WATCHDOG: list[threading.Thread] = []


def _raise_in_main(kind: type[KeyboardInterrupt]) -> None:
    """Raise ``kind`` in the main thread the next time it runs Python code (CPython's asynchronous exception:
    no lock is taken, so it is safe whatever the main thread holds)."""
    main = threading.main_thread().ident
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(main), ctypes.py_object(kind))


def _watch(wakeup: int) -> None:
    """The watchdog: block until a signal arrives (a byte on the wakeup pipe), then raise it again in the main
    thread while the command goes on without reporting it."""
    while True:
        signum = os.read(wakeup, 1)[0]
        if signum not in (signal.SIGINT, signal.SIGTERM):
            continue
        kind = Terminated if signum == signal.SIGTERM else KeyboardInterrupt
        since = time.monotonic()
        while not _REPORTED.wait(0.1):
            if shield.active():  # a temporary folder is being made or removed: the section raises the signal
                continue
            if _SWALLOWED or time.monotonic() - since >= RERAISE_AFTER_S:
                logger.debug("signal %d did not end the command (%s); raising it again", signum,
                             "a finalizer swallowed it" if _SWALLOWED else f"running {RERAISE_AFTER_S:g} s after it")
                _SWALLOWED.clear()
                since = time.monotonic()
                if not _RECEIVED:  # the handler never ran: what interrupt_behind and exit_code will see
                    _RECEIVED.append(kind())
                _raise_in_main(type(_RECEIVED[0]))


def _unraisable_hook(previous: Callable[[Any], object]) -> Callable[[Any], object]:
    """A ``sys.unraisablehook``: a signal's exception that a finalizer swallowed is raised again (by the watchdog),
    without the "Exception ignored" traceback; anything else goes to ``previous``."""
    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and not _REPORTED.is_set():
            _SWALLOWED.append(unraisable.exc_value)
            return
        previous(unraisable)
    return hook


def _start_watchdog() -> None:
    """Start the watchdog once per process, woken by any caught signal through :func:`signal.set_wakeup_fd`."""
    if _WATCHDOG:
        return
    wakeup, written = os.pipe()
    os.set_blocking(written, False)  # the C handler must never block on it
    signal.set_wakeup_fd(written, warn_on_full_buffer=False)
    sys.unraisablehook = _unraisable_hook(sys.unraisablehook)
    _WATCHDOG.append(threading.Thread(target=_watch, args=(wakeup,), name="lsplits-signal-watchdog", daemon=True))
    _WATCHDOG[0].start()


def raise_on_sigterm() -> None:
    """Make SIGTERM raise :class:`Terminated` in the main thread, and SIGINT KeyboardInterrupt as Python does,
    both remembered for :func:`interrupt_behind` (a no-op in other threads)."""
    global _STARTED
    _STARTED = time.time()
    _RECEIVED.clear()
    _REPORTED.clear()
    if threading.current_thread() is threading.main_thread():
        _start_watchdog()
        signal.signal(signal.SIGTERM, _terminate)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where SIGINT is ignored (cmd &)
            signal.signal(signal.SIGINT, _interrupt)


def command_ended() -> None:
    """The command returned or reported its signal: the watchdog raises nothing more in the main thread."""
    _REPORTED.set()


def interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM that ``exc``, raised while unwinding from it, replaced (numpy's ``savez`` closes its
    zip in a ``finally`` and raises ValueError when the signal came mid-write), or that this run received and a
    ``__del__`` swallowed (the workers it killed are then lost); None when there is none."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return current
        seen.add(id(current))
        current = current.__context__
    return _RECEIVED[0] if _RECEIVED else None  # the signal was swallowed, and this error is what it caused


def exit_code(interrupt: KeyboardInterrupt) -> int:
    """143 for SIGTERM, 130 for Ctrl-C."""
    return SIGTERM_EXIT if isinstance(interrupt, Terminated) else SIGINT_EXIT


def report_interrupt(args: argparse.Namespace, interrupt: KeyboardInterrupt) -> int:
    """Print the one line (:func:`interrupted_line`) and return the exit code. Under ``accelerate launch`` the
    signal reaches every process, and only the main one (rank 0) prints, so the user reads the line once."""
    command_ended()
    tempfolders.remove_left()  # a folder whose removal the signal cut (the process may live on: in-process calls)
    silence_bars()  # a bar closed after this line (by the garbage collector, at exit) logs no progress line
    if os.environ.get("RANK", "0") in ("", "0"):
        print(f"lsplits {args.command}: {interrupted_line(args, interrupt)}", file=sys.stderr)
    _release_frames(interrupt)
    return exit_code(interrupt)


def _release_frames(interrupt: KeyboardInterrupt) -> None:
    """Drop the tracebacks of the signal's exceptions, which :data:`_RECEIVED` would keep until the interpreter
    exits: the frames they hold are freed as the command returns, and a ``with`` block the signal cut between its
    start and its body (a build stage) closes then, not after Python's teardown (an "Exception ignored" traceback)."""
    for received in (*_RECEIVED, interrupt):
        received.__traceback__ = None


def _cache_of(args: argparse.Namespace) -> tuple[str, Path | None] | None:
    """(what the command caches, where) for the commands that cache finished work; None for the others."""
    command = getattr(args, "command", None)
    given = getattr(args, "cache_dir", None)
    if command in ("build", "score", "demo") and not getattr(args, "dry_run", False):
        from lsplits.building.settings import default_cache_dir as scores_cache

        return "finished score shards and fold checkpoints", given if given is not None else scores_cache()
    if command == "beams":
        from lsplits.generation.cache import default_cache_dir as beams_cache

        return "finished beam shards", given if given is not None else beams_cache()
    if command == "ue":
        if getattr(args, "no_cache", False):
            return "no similarity matrices (--no-cache)", None
        from lsplits.uncertainty.study_config import default_cache_dir

        return "finished similarity matrices", Path(given) if given else default_cache_dir()
    if command == "difficulty":
        from lsplits.difficulty.run import runs_folder

        return "finished configs and their last checkpoints", runs_folder(args.out, args.cache_dir)  # --out is required
    return None


def interrupted_line(args: argparse.Namespace, interrupt: KeyboardInterrupt) -> str:
    """The one line a user sees: which signal, and what is cached for a rerun (only when something is)."""
    what = "terminated (SIGTERM)" if isinstance(interrupt, Terminated) else "interrupted"
    cache = _cache_of(args)
    if cache is None:
        return f"{what}; temporary files were removed"
    kind, folder = cache
    if folder is None:
        return f"{what}; {kind} were cached, so a rerun starts from the beginning"
    folder = Path(folder)
    if not _written_since(folder, _STARTED):
        return f"{what}; this run cached nothing yet in {folder}, so a rerun starts from the beginning"
    return f"{what}; {kind} are cached in {folder}, and a rerun resumes from them"


_BOOKKEEPING = ("run.json", "manifest.json")
"""Files a cache holds about a run, written before any work is finished: they make nothing a rerun can reuse."""
_PREPARATION = frozenset({"tokenizer", "init"})
"""Folders a scratch-LM run writes before its first training step (the tokenizer, a fold's initial weights): they
spare a rerun seconds, not work, so a run cut before any fold finished says it cached nothing yet."""


def _written_since(folder: Path, start: float) -> bool:
    """Whether any file of finished work under ``folder`` was written at or after ``start`` (this run's work):
    not the run's bookkeeping (:data:`_BOOKKEEPING`), its preparation (:data:`_PREPARATION`), locks or probes (dot
    files)."""
    if not folder.is_dir():
        return False
    for count, path in enumerate(folder.rglob("*")):
        if count >= _SCAN_LIMIT:
            return True  # a huge cache: do not spend the user's time proving a negative
        if path.name in _BOOKKEEPING or path.name.startswith(".") or _PREPARATION & set(path.relative_to(folder).parts):
            continue
        try:
            if path.is_file() and path.stat().st_mtime >= start:
                return True
        except OSError:
            continue
    return False
