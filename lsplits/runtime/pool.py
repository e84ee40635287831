"""Worker processes that a signal, a stop or a dying worker never leave hanging.

:class:`Workers` applies one function to chunks of items in forked processes and yields the results in input
order (what :func:`lsplits.uncertainty.matrix.build_matrices` spreads its examples over). The parent owns
SIGINT and SIGTERM: they are held while the workers are forked (:func:`_signals_deferred`) and the workers leave
both to it (:func:`_worker_main`), so a Ctrl-C or a ``kill`` of the process group ends the command with one line
and no worker traceback; the parent polls :func:`~lsplits.runtime.cancel.check_stop` while it waits.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection, wait
from typing import Any

from lsplits.errors import LsplitsError, WorkerLost
from lsplits.runtime.cancel import check_stop

_POOL_SIGNALS = {signal.SIGINT, signal.SIGTERM}
_POLL_SECONDS = 0.2
"""How often the parent checks :func:`~lsplits.runtime.cancel.check_stop` while its workers compute."""


def _worker_main(conn: Connection, work: Callable[[Any], Any], passed: tuple[type[BaseException], ...]) -> None:
    """A worker: apply ``work`` to each item of each chunk the parent sends, until the parent goes away or ends it.
    An exception of a ``passed`` type goes back to the parent, which raises it; any other is a bug in lsplits,
    which ends this worker with its traceback.

    Signals are left to the parent (SIGINT ignored, SIGTERM ends at once and silently); they were blocked while
    this process was forked (:class:`Workers`), so none arrives before these handlers are set."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _POOL_SIGNALS)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        index, chunk = task
        try:
            reply: tuple[int, bool, Any] = (index, True, [work(item) for item in chunk])
        except passed as exc:
            reply = (index, False, exc)
        conn.send(reply)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while worker processes are forked, then deliver the first that came.

    Blocked in this thread, a signal still reaches Python's handler through any other thread, and a Ctrl-C
    raised between the fork and ``Process.start`` returning would leave a worker nobody can end. So the Python
    handlers only record it here, and the forked children start with both blocked (see :func:`_worker_main`)."""
    if threading.current_thread() is not threading.main_thread():  # handlers can only be set in the main thread
        yield
        return
    received: list[int] = []
    handlers = {s: signal.signal(s, lambda signum, _frame: received.append(signum)) for s in _POOL_SIGNALS}
    blocked = hasattr(signal, "pthread_sigmask")
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _POOL_SIGNALS) if blocked else None
    try:
        yield
    finally:
        if previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        for signum, handler in handlers.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # None: set outside Python
        if received:
            signal.raise_signal(received[0])  # now the real handler runs: KeyboardInterrupt or Terminated


class Workers:
    """Worker processes, each fed through its own pipe, yielding ``work``'s results in input order.

    ``name`` says whose workers they are in a :class:`~lsplits.errors.WorkerLost` message ("a similarity worker
    ..."); ``passed`` are the exception types a worker hands back for the parent to raise.

    Not :class:`multiprocessing.pool.Pool`: its workers share one queue lock, and a worker that a signal kills
    while holding it (a Ctrl-C or ``kill`` sent to the process group reaches every worker) makes ``terminate()``
    and every other worker wait for ever. Here a worker holds nothing another process waits on, so the parent
    always ends them, and a worker that dies on its own (the OOM killer) is an error, not a hang."""

    def __init__(self, work: Callable[[Any], Any], workers: int, *, name: str = "pool",
                 passed: tuple[type[BaseException], ...] = (LsplitsError,)) -> None:
        context = _pool_context()
        self._name = name
        self._processes: list[multiprocessing.process.BaseProcess] = []
        self._conns: list[Connection] = []
        with _signals_deferred():
            try:
                for _ in range(workers):
                    parent_end, child_end = context.Pipe()
                    process = context.Process(target=_worker_main, args=(child_end, work, passed), daemon=True)
                    process.start()
                    self._conns.append(parent_end)
                    self._processes.append(process)
                    child_end.close()
            except BaseException:
                self.close()
                raise

    def imap(self, items: Sequence[Any], chunksize: int) -> Iterator[Any]:
        """``work`` of each item, in order; a worker's exception is raised here."""
        chunks = [items[i:i + chunksize] for i in range(0, len(items), chunksize)]
        pending = iter(enumerate(chunks))
        busy: set[Connection] = set()  # one chunk per worker: the next is sent once its result is read, so the
        # parent never blocks sending a large chunk while the worker blocks sending a large result (a deadlock)
        finished: dict[int, tuple[bool, Any]] = {}  # chunk -> (ok, its results or the worker's exception)

        def feed(conn: Connection) -> None:
            task = next(pending, None)
            if task is not None:
                try:
                    conn.send(task)
                except OSError:  # BrokenPipeError: the worker died after sending its last result
                    raise self._lost(conn) from None
                busy.add(conn)

        for conn in self._conns:
            feed(conn)
        for wanted in range(len(chunks)):
            while wanted not in finished:
                check_stop()  # a stop raises here; the caller's close() then ends the busy workers
                for conn in wait(list(busy), timeout=_POLL_SECONDS):
                    assert isinstance(conn, Connection)
                    try:
                        index, ok, payload = conn.recv()
                    except (EOFError, OSError):
                        raise self._lost(conn) from None
                    busy.discard(conn)
                    finished[index] = (ok, payload)
                    feed(conn)
            ok, payload = finished.pop(wanted)
            if not ok:  # raised in input order, so the item named is the first that fails
                raise payload
            yield from payload

    def _lost(self, conn: Connection) -> WorkerLost:
        """The error for a worker whose pipe closed before it sent all its results."""
        process = self._processes[self._conns.index(conn)]
        process.join(timeout=5)
        code = process.exitcode
        if code is not None and code > 0:
            return WorkerLost(f"a {self._name} worker (pid {process.pid}) failed with exit code {code} (its "
                              "traceback is above)")
        how = f"was killed by {signal.Signals(-code).name}" if code is not None and -code in signal.valid_signals() \
            else f"ended with exit code {code}"
        return WorkerLost(f"a {self._name} worker (pid {process.pid}) {how} before finishing its examples "
                          "(out of memory?); rerun with fewer {opt:workers}")

    def close(self) -> None:
        """End every worker now (SIGTERM, which they take at once) and wait for them; safe to call twice."""
        for process in self._processes:
            if process.exitcode is None:  # started (every listed one is) and still running
                process.terminate()
        for process in self._processes:
            process.join()
        for conn in self._conns:
            conn.close()
        self._processes, self._conns = [], []


def _pool_context() -> multiprocessing.context.BaseContext:
    """Fork where available: workers inherit the parent's state (a similarity registered at run time, say)."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)
