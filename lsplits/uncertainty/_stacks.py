"""Input handling shared by the estimators: one similarity matrix or a stack ``(n, k, k)`` of them, checked."""

from __future__ import annotations

import numpy as np

from lsplits.errors import InvalidInput


def as_stack(matrix: np.ndarray | list) -> tuple[np.ndarray, bool]:
    """The input as a float stack ``(n, k, k)`` and whether it was a single matrix; raises ValueError."""
    values = np.asarray(matrix, dtype=float)
    single = values.ndim == 2
    if single:
        values = values[None]
    if values.ndim != 3 or values.shape[1] != values.shape[2]:
        raise InvalidInput(f"a similarity matrix must be square (or a stack of square matrices), got shape "
                         f"{np.shape(matrix)}")
    if values.shape[1] == 0:
        raise InvalidInput("a similarity matrix needs at least one candidate")
    if not np.isfinite(values).all():
        raise InvalidInput("a similarity matrix must not contain NaN or infinite values")
    return values, single


def symmetric_stack(matrix: np.ndarray | list) -> tuple[np.ndarray, bool]:
    """``(A + A^T) / 2`` of every matrix of the stack, and whether the input was a single matrix."""
    values, single = as_stack(matrix)
    return (values + values.swapaxes(-1, -2)) / 2, single


def one_or_many(values: np.ndarray, single: bool) -> float | np.ndarray:
    """A float for a single matrix, the array for a stack."""
    return float(values[0]) if single else values
