"""Similarity matrices between the beam candidates of each example.

``S[j, l] = similarity(candidate j, candidate l)`` for any registered :class:`~lsplits.similarity.registry.Similarity`,
then: a candidate whose ``prepare`` raises InvalidOutput is invalid and gets 0 with every other
candidate (any other exception from the similarity fails the run, naming it and the example); the matrix is
symmetrised as ``(S + S.T) / 2``, clipped to [0, 1], and its diagonal is 1.

Work is kept to the minimum: each distinct candidate string is prepared once per example (identical
strings share one row, and score 1 with each other), only one triangle is scored for a symmetric
function, examples are spread over worker processes (:class:`lsplits.runtime.pool.Workers`), and finished matrices are cached on disk under a
key made of the similarity's name and version and the candidate strings, so re-running with another
estimator, quality metric or beam size recomputes nothing. A matrix is computed and cached for the candidates
in sorted order (:func:`canonical_order`) and its rows and columns are permuted back to the example's order, so
the same candidates in another order (another system ranking the same graphs differently) are never compared
again. The matrix of the first ``k`` candidates is the top-left ``k x k`` block of the full one
(:meth:`SimilarityMatrix.truncate`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lsplits.errors import InvalidOutput, LsplitsError, SimilarityFailure
from lsplits.io.storage import check_writable
from lsplits.runtime.cancel import check_stop, stoppable
from lsplits.runtime.pool import Workers
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

    def permuted(self, positions: np.ndarray) -> SimilarityMatrix:
        """The matrix whose candidate ``i`` is this matrix's candidate ``positions[i]`` (rows and columns reordered)."""
        return SimilarityMatrix(self.values[np.ix_(positions, positions)], self.invalid[positions],
                                tuple(self.errors[p] for p in positions))


def canonical_order(candidates: Sequence[str]) -> tuple[tuple[str, ...], np.ndarray]:
    """The candidates sorted, and where each original candidate sits among them: the matrix of ``candidates`` is
    the sorted candidates' matrix ``.permuted(positions)``, so any order of the same strings shares one matrix."""
    order = sorted(range(len(candidates)), key=candidates.__getitem__)
    positions = np.empty(len(order), dtype=int)
    positions[order] = np.arange(len(order))
    return tuple(candidates[i] for i in order), positions


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
    new metric version or different candidates never reuse a stale matrix (:func:`build_matrices` stores and looks
    up the candidates in their :func:`canonical_order`, so a reordering hits the same entry); each entry also stores a checksum
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
    canonical = [canonical_order(candidates) for candidates in examples]
    seen: set[tuple[str, ...]] = set()  # the same candidates, in any order, are computed once
    found: dict[tuple[str, ...], SimilarityMatrix] = {}
    todo: list[int] = []
    for index, (key, _) in enumerate(canonical):
        if key in seen:
            continue
        seen.add(key)
        cached = cache.load(similarity, key) if cache is not None else None
        if cached is None:
            todo.append(index)
        else:
            found[key] = cached
    if cache is not None:
        logger.info("%s: %d of %d distinct matrices from the cache", similarity.name,
                    len(seen) - len(todo), len(seen))
    workers = workers if workers > 0 else (os.cpu_count() or 1)
    workers = min(workers, max(1, len(todo) // 4))
    bar = progress_bar(total=len(todo), desc=f"similarity {similarity.name}", unit="example", disable=not progress)
    computed = _compute(similarity, [canonical[i][0] for i in todo], workers)
    with bar, closing(computed):  # closing ends the workers when anything here raises
        for index in todo:
            try:
                matrix = next(computed)
            except SimilarityFailure as exc:  # re-raised with the example that the worker cannot know
                label = ids[index] if ids is not None else f"#{index}"
                raise SimilarityFailure(f"example {label}: {exc}") from exc
            key = canonical[index][0]
            found[key] = matrix
            if cache is not None:
                cache.store(similarity, key, matrix)
            bar.update()
    return [found[key].permuted(positions) for key, positions in canonical]


def validity_matrices(examples: Sequence[Sequence[str]], similarity: Similarity | str) -> list[SimilarityMatrix]:
    """Each example's candidates prepared by ``similarity`` and never compared: the invalid masks and errors a
    report counts for a similarity no estimator reads (k preparations an example instead of k(k-1)/2 comparisons).
    The values are NaN, so nothing can take them for similarities."""
    if isinstance(similarity, str):
        similarity = similarity_registry.get(similarity)
    matrices = []
    for candidates in examples:
        check_stop()
        errors = {text: _prepare(similarity, text)[1] for text in dict.fromkeys(candidates)}
        k = len(candidates)
        matrices.append(SimilarityMatrix(np.full((k, k), np.nan), np.array([bool(errors[t]) for t in candidates],
                                                                            dtype=bool),
                                         tuple(errors[t] for t in candidates)))
    return matrices


def _compute(similarity: Similarity, examples: list[Sequence[str]], workers: int) -> Iterator[SimilarityMatrix]:
    """Matrices in input order, serially or from worker processes (always processes when the work can be
    stopped from outside, :func:`~lsplits.runtime.cancel.stoppable`: a stop then ends them mid-example)."""
    if workers <= 1 and not (stoppable() and examples):
        for candidates in examples:
            check_stop()
            yield build_matrix(candidates, similarity)
        return
    chunksize = max(1, min(16, len(examples) // (workers * 8)))
    pool = Workers(functools.partial(build_matrix, similarity=similarity), workers, name="similarity",
                   passed=(SimilarityFailure, LsplitsError))  # raised here; anything else is a bug in lsplits
    try:
        yield from pool.imap(examples, chunksize)
    finally:
        pool.close()
