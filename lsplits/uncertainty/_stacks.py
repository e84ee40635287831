"""Input handling shared by the estimators: one similarity matrix or a stack ``(n, k, k)`` of them, checked.

A similarity lies in [0, 1] (what :mod:`lsplits.uncertainty.matrix` builds, and what the estimators' ranges
assume: EigV at most k, LexSim at most 1); a value outside it (up to float noise of 1e-9) is refused.
"""

from __future__ import annotations

import numpy as np

from lsplits.errors import InvalidInput

_NOISE = 1e-9  # float noise tolerated outside [0, 1] (then clipped)
DECIMALS = 12  # estimator values are rounded to this, so that equal values up to solver noise tie exactly


def as_stack(matrix: np.ndarray | list) -> tuple[np.ndarray, bool]:
    """The input as a float stack ``(n, k, k)`` and whether it was a single matrix; raises ValueError."""
    if isinstance(matrix, (str, bytes)):
        raise InvalidInput(f"a similarity matrix must be numbers, got the string {matrix!r}")
    try:
        values = np.asarray(matrix, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"a similarity matrix must be a square array of numbers in [0, 1] ({exc})") from None
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
    low, high = float(values.min()), float(values.max())
    if low < -_NOISE or high > 1.0 + _NOISE:
        raise InvalidInput(f"a similarity matrix must lie in [0, 1], got values from {low:g} to {high:g} "
                           "(rescale it, e.g. (cosine + 1) / 2)")
    return np.clip(values, 0.0, 1.0), single


def symmetric_stack(matrix: np.ndarray | list) -> tuple[np.ndarray, bool]:
    """``(A + A^T) / 2`` of every matrix of the stack, and whether the input was a single matrix."""
    values, single = as_stack(matrix)
    return (values + values.swapaxes(-1, -2)) / 2, single


def one_or_many(values: np.ndarray, single: bool) -> float | np.ndarray:
    """A float for a single matrix, the array for a stack."""
    return float(values[0]) if single else values


def rounded(values: np.ndarray) -> np.ndarray:
    """``values`` rounded to :data:`DECIMALS` (and without negative zeros), what every estimator returns."""
    return np.round(values, DECIMALS) + 0.0
