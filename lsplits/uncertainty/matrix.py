"""Similarity matrices between the beam candidates of each example.

``S[j, l] = similarity(candidate j, candidate l)`` for any registered :class:`~lsplits.similarity.registry.Similarity`,
then: a candidate whose ``prepare`` raises InvalidOutput is invalid and gets 0 with every other
candidate (any other exception from the similarity fails the run, naming it and the example); the matrix is
symmetrised as ``(S + S.T) / 2``, clipped to [0, 1], and its diagonal is 1.

Work is kept to the minimum: each distinct candidate string is prepared once per example (identical
strings share one row, and score 1 with each other), only one triangle is scored for a symmetric
function, examples are spread over worker processes, and finished matrices are cached on disk under a
key made of the similarity's name and version and the candidate strings, so re-running with another
estimator, quality metric or beam size recomputes nothing. The matrix of the first ``k`` candidates
is the top-left ``k x k`` block of the full one (:meth:`SimilarityMatrix.truncate`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing
import os
import signal
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

import numpy as np

from lsplits.errors import InvalidOutput, LsplitsError, SimilarityFailure, WorkerLost
from lsplits.io import check_writable
from lsplits.runtime.cancel import check_stop, stoppable
from lsplits.runtime.progress import progress_bar
from lsplits.similarity import registry as similarity_registry
from lsplits.similarity.registry import Similarity, prepare_output, score_outputs

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SimilarityMatrix:
    """The symmetric similarity matrix of one example's candidates.

    Attributes:
        values: (k, k) float array, symmetric, in [0, 1], diagonal 1.
        invalid: boolean mask (k,) of candidates that the similarity could not prepare.
        errors: the error message of each invalid candidate ("" for valid ones).
    """

    values: np.ndarray
    invalid: np.ndarray
    errors: tuple[str, ...]

    @property
    def size(self) -> int:
        """Number of candidates k."""
        return len(self.invalid)

    @property
    def invalid_count(self) -> int:
        """How many candidates are invalid."""
        return int(self.invalid.sum())

    def truncate(self, k: int) -> SimilarityMatrix:
        """The matrix of the first ``k`` candidates (all of them when there are fewer)."""
        return SimilarityMatrix(self.values[:k, :k], self.invalid[:k], self.errors[:k])


def _prepare(similarity: Similarity, text: str) -> tuple[Any, str]:
    """Prepared object and "" for a valid output; None and the reason for an invalid one.

    Only the similarity's own :class:`~lsplits.errors.InvalidOutput` marks a candidate invalid; any
    other exception is a bug and fails the run (:func:`~lsplits.similarity.registry.prepare_output`).
    """
    try:
        return prepare_output(similarity, text), ""
    except InvalidOutput as exc:
        return None, str(exc) or "invalid output"


def build_matrix(candidates: Sequence[str], similarity: Similarity) -> SimilarityMatrix:
    """Similarity matrix of one example's candidates (see the module docstring for the rules).

    Example:
        >>> from lsplits.similarity.registry import get
        >>> build_matrix(["a b", "a b", "c"], get("rougel")).values.tolist()
        [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    k = len(candidates)
    distinct: dict[str, int] = {}
    slot = np.array([distinct.setdefault(text, len(distinct)) for text in candidates], dtype=int)
    texts = list(distinct)
    prepared = [_prepare(similarity, text) for text in texts]
    valid = np.array([not error for _, error in prepared], dtype=bool)
    n = len(distinct)
    pairwise = np.eye(n)
    for a in range(n):
        if not valid[a]:
            continue
        for b in range(a + 1 if similarity.symmetric else 0, n):
            if a == b or not valid[b]:
                continue
            pairwise[a, b] = score_outputs(similarity, prepared[a][0], prepared[b][0], (texts[a], texts[b]))
            if similarity.symmetric:
                pairwise[b, a] = pairwise[a, b]
    values = pairwise[np.ix_(slot, slot)]
    invalid = ~valid[slot]
    values[invalid, :] = 0.0
    values[:, invalid] = 0.0
    values = np.clip((values + values.T) / 2, 0.0, 1.0)
    np.fill_diagonal(values, 1.0)
    errors = tuple(prepared[s][1] for s in slot)
    if k and invalid.any():
        logger.debug("%d of %d candidates invalid for %s", int(invalid.sum()), k, similarity.name)
    return SimilarityMatrix(values, invalid, errors)


class MatrixCache:
    """On-disk cache of similarity matrices, one compressed ``.npz`` per (similarity, candidates).

    The key hashes the similarity's name, version and options with the exact candidate strings, so a
    new metric version or different candidates never reuse a stale matrix; each entry also stores a checksum
    of its arrays, so a file whose values were altered (still plausible similarities) is recomputed, not trusted.
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    @staticmethod
    def key(similarity: Similarity, candidates: Sequence[str]) -> str:
        """Content hash identifying one matrix."""
        payload = json.dumps([similarity.name, similarity.version, sorted(similarity.options.items()),
                              list(candidates)], ensure_ascii=False, default=str)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def _path(self, similarity: Similarity, key: str) -> Path:
        return self.folder / f"{similarity.name}-v{similarity.version}" / key[:2] / f"{key}.npz"

    def load(self, similarity: Similarity, candidates: Sequence[str]) -> SimilarityMatrix | None:
        """The cached matrix, or None when absent, unreadable or not the matrix of these candidates (its key,
        checksum, shape or values do not fit: stale or altered; a warning names the file, which is then recomputed
        and rewritten). An entry without a checksum (an older lsplits wrote it) is a plain miss."""
        key = self.key(similarity, candidates)
        path = self._path(similarity, key)
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                problem = _cache_problem(data, key, len(candidates))
                matrix = None if problem else SimilarityMatrix(data["values"], data["invalid"].astype(bool),
                                                               tuple(str(e) for e in data["errors"]))
        except (OSError, ValueError, KeyError, EOFError) as exc:
            problem = f"unreadable ({exc})"
        if problem == _UNCHECKED:
            logger.debug("ignoring the cached similarity matrix %s: %s; recomputing it", path, problem)
            return None
        if problem:
            logger.warning("ignoring the cached similarity matrix %s: %s; recomputing it", path, problem)
            return None
        return matrix

    def store(self, similarity: Similarity, candidates: Sequence[str], matrix: SimilarityMatrix) -> None:
        """Write one matrix atomically (a concurrent reader never sees half a file), with its key and the
        checksum of its arrays (:func:`_checksum`), which :meth:`load` verifies."""
        key = self.key(similarity, candidates)
        path = self._path(similarity, key)
        arrays = {"values": np.asarray(matrix.values), "invalid": np.asarray(matrix.invalid, dtype=bool),
                  "errors": np.array(matrix.errors, dtype=str)}
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz.tmp")
        try:
            with os.fdopen(handle, "wb") as stream:
                np.savez_compressed(stream, **arrays, key=np.array(key), checksum=np.array(_checksum(key, arrays)))
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)


_CHECKED = ("values", "invalid", "errors")
"""The arrays of a cache entry that its checksum covers."""


def _checksum(key: str, arrays: Mapping[str, np.ndarray]) -> str:
    """SHA-256 of a cache entry's key and of each array's dtype, shape and bytes: values altered in the file
    (a poisoned or half-overwritten cache, still similarities in [0, 1]) no longer match it."""
    digest = hashlib.sha256(key.encode("ascii"))
    for name in _CHECKED:
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"|{name}|{array.dtype.str}|{array.shape}|".encode("ascii"))
        digest.update(array.tobytes())
    return digest.hexdigest()


def _cache_problem(data: Any, key: str, k: int) -> str:
    """Why a cache file is not the matrix of ``k`` candidates with this ``key`` ("" when it is)."""
    if "key" not in data.files:
        return "it records no key (written by an older lsplits, or not by lsplits)"
    if str(data["key"]) != key:
        return "its key is not the key of these candidates (a file moved or altered)"
    if "checksum" not in data.files:
        return _UNCHECKED
    if str(data["checksum"]) != _checksum(key, {name: data[name] for name in _CHECKED}):
        return "its values do not match the checksum stored with them (the file was altered or corrupted)"
    values, invalid, errors = data["values"], data["invalid"], data["errors"]
    if values.shape != (k, k) or invalid.shape != (k,) or errors.shape != (k,):
        return f"it holds a {'x'.join(map(str, values.shape))} matrix for {k} candidates"
    if values.size and (not np.isfinite(values).all() or values.min() < 0 or values.max() > 1
                        or not np.all(np.diag(values) == 1)):
        return "its values are not similarities (each in [0, 1], 1 on the diagonal)"
    return ""


_UNCHECKED = "it records no checksum (written by an older lsplits)"
"""The one problem :meth:`MatrixCache.load` takes as a plain miss, not a warning: every entry an older lsplits
wrote has it, and recomputing it (then rewriting it with a checksum) is all there is to do."""


_POOL_SIGNALS = {signal.SIGINT, signal.SIGTERM}
_POLL_SECONDS = 0.2
"""How often the parent checks :func:`~lsplits.runtime.cancel.check_stop` while its workers compute."""


def _worker_main(conn: Connection, similarity: Similarity) -> None:
    """A worker: build the matrices of each chunk the parent sends, until the parent goes away or ends it.

    Signals are left to the parent (SIGINT ignored, SIGTERM ends at once and silently); they were blocked while
    this process was forked (:class:`_Workers`), so none arrives before these handlers are set."""
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
            reply: tuple[int, bool, Any] = (index, True, [build_matrix(c, similarity) for c in chunk])
        except (SimilarityFailure, LsplitsError) as exc:  # raised by the parent; anything else is a bug in
            reply = (index, False, exc)                     # lsplits, which ends this worker with its traceback
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


class _Workers:
    """Worker processes, each fed through its own pipe, yielding matrices in input order.

    Not :class:`multiprocessing.pool.Pool`: its workers share one queue lock, and a worker that a signal kills
    while holding it (a Ctrl-C or ``kill`` sent to the process group reaches every worker) makes ``terminate()``
    and every other worker wait for ever. Here a worker holds nothing another process waits on, so the parent
    always ends them, and a worker that dies on its own (the OOM killer) is an error, not a hang."""

    def __init__(self, similarity: Similarity, workers: int) -> None:
        context = _pool_context()
        self._processes: list[multiprocessing.process.BaseProcess] = []
        self._conns: list[Connection] = []
        with _signals_deferred():
            try:
                for _ in range(workers):
                    parent_end, child_end = context.Pipe()
                    process = context.Process(target=_worker_main, args=(child_end, similarity), daemon=True)
                    process.start()
                    self._conns.append(parent_end)
                    self._processes.append(process)
                    child_end.close()
            except BaseException:
                self.close()
                raise

    def imap(self, examples: Sequence[Sequence[str]], chunksize: int) -> Iterator[SimilarityMatrix]:
        """The matrix of each example, in order; a worker's exception is raised here."""
        chunks = [examples[i:i + chunksize] for i in range(0, len(examples), chunksize)]
        pending = iter(enumerate(chunks))
        busy: set[Connection] = set()  # one chunk per worker: the next is sent once its result is read, so the
        # parent never blocks sending a large chunk while the worker blocks sending a large result (a deadlock)
        finished: dict[int, tuple[bool, Any]] = {}  # chunk -> (ok, its matrices or the worker's exception)

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
            if not ok:  # raised in input order, so the example named is the first that fails
                raise payload
            yield from payload

    def _lost(self, conn: Connection) -> WorkerLost:
        """The error for a worker whose pipe closed before it sent all its results."""
        process = self._processes[self._conns.index(conn)]
        process.join(timeout=5)
        code = process.exitcode
        if code is not None and code > 0:
            return WorkerLost(f"a similarity worker (pid {process.pid}) failed with exit code {code} (its traceback "
                              "is above)")
        how = f"was killed by {signal.Signals(-code).name}" if code is not None and -code in signal.valid_signals() \
            else f"ended with exit code {code}"
        return WorkerLost(f"a similarity worker (pid {process.pid}) {how} before finishing its examples "
                          "(out of memory?); rerun with fewer --workers")

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
    """Fork where available: workers inherit the registry, including similarities registered at run time."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def build_matrices(examples: Sequence[Sequence[str]], similarity: Similarity | str, *,
                   workers: int = 1, cache: MatrixCache | str | os.PathLike[str] | None = None,
                   progress: bool = True, ids: Sequence[str] | None = None) -> list[SimilarityMatrix]:
    """Similarity matrices of many examples, in order.

    Args:
        examples: per example, its candidate strings (k may differ between examples).
        similarity: a Similarity or a registered name.
        workers: processes to use; 1 computes in this process, 0 or less means one per CPU core.
        cache: a MatrixCache or a folder for one; matrices found there are not recomputed.
        progress: show a progress bar (:mod:`lsplits.runtime.progress`).
        ids: the examples' ids, named when a similarity fails (default: their positions, ``#0``, ...).

    Raises:
        SimilarityFailure: the similarity raised anything but InvalidOutput; names it and the example.
        WorkerLost: a worker process died (killed, out of memory) before sending its matrices.
    """
    if isinstance(similarity, str):
        similarity = similarity_registry.get(similarity)
    if cache is not None and not isinstance(cache, MatrixCache):
        cache = MatrixCache(cache)
    if cache is not None:  # read-only: said before any similarity is computed
        check_writable(cache.folder, "the similarity matrix cache")
    results: list[SimilarityMatrix | None] = [None] * len(examples)
    first_of: dict[tuple[str, ...], int] = {}  # identical candidate lists are computed once
    todo: list[int] = []
    for index, candidates in enumerate(examples):
        key = tuple(candidates)
        if key in first_of:
            continue
        first_of[key] = index
        found = cache.load(similarity, candidates) if cache is not None else None
        if found is None:
            todo.append(index)
        else:
            results[index] = found
    if cache is not None:
        logger.info("%s: %d of %d distinct matrices from the cache", similarity.name,
                    len(first_of) - len(todo), len(first_of))
    workers = workers if workers > 0 else (os.cpu_count() or 1)
    workers = min(workers, max(1, len(todo) // 4))
    bar = progress_bar(total=len(todo), desc=f"similarity {similarity.name}", unit="example", disable=not progress)
    computed = _compute(similarity, [examples[i] for i in todo], workers)
    with bar, closing(computed):  # closing ends the workers when anything here raises
        for index in todo:
            try:
                matrix = next(computed)
            except SimilarityFailure as exc:  # re-raised with the example that the worker cannot know
                label = ids[index] if ids is not None else f"#{index}"
                raise SimilarityFailure(f"example {label}: {exc}") from exc
            results[index] = matrix
            if cache is not None:
                cache.store(similarity, examples[index], matrix)
            bar.update()
    return [results[first_of[tuple(candidates)]] for candidates in examples]


def _compute(similarity: Similarity, examples: list[Sequence[str]], workers: int) -> Iterator[SimilarityMatrix]:
    """Matrices in input order, serially or from worker processes (always processes when the work can be
    stopped from outside, :func:`~lsplits.runtime.cancel.stoppable`: a stop then ends them mid-example)."""
    if workers <= 1 and not (stoppable() and examples):
        for candidates in examples:
            check_stop()
            yield build_matrix(candidates, similarity)
        return
    chunksize = max(1, min(16, len(examples) // (workers * 8)))
    pool = _Workers(similarity, workers)
    try:
        yield from pool.imap(examples, chunksize)
    finally:
        pool.close()
