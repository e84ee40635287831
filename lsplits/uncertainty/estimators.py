"""Black-box uncertainty estimators over a similarity matrix of k candidates (METHOD B3).

Each estimator maps a symmetric matrix ``A`` (values in [0, 1], diagonal 1, as built by
:mod:`lsplits.uncertainty.matrix`) to one number; higher means more uncertain.

- ``lexsim``: 1 - mean of the off-diagonal entries (with ROUGE-L similarities this is LexSim of
  Kuhn et al. 2023; the paper's eq. 4 negates the mean instead, which ranks identically).
- ``eigv``: sum_j max(0, 1 - lambda_j) over the eigenvalues of the normalised Laplacian
  ``L = I - D^-1/2 A D^-1/2`` (Lin et al. 2024, eq. 7); roughly the number of clusters.
- ``ecc``: eccentricity; rows of the eigenvectors of L with eigenvalue below ``threshold`` embed
  the candidates, and the value is the Frobenius norm of the embeddings minus their mean (eq. 8).
  With every eigenvector kept the value is always sqrt(k - 1) (the embedding is an orthogonal
  matrix), which is why the threshold exists.
- ``degmat``: 1 - sum(A) / k^2 (eq. 9).

Edge cases (all tested):

- k = 1: lexsim 0, eigv 1, ecc 0, degmat 0 (no disagreement is observable; each is its minimum).
- all candidates identical (A all ones): lexsim 0, eigv 1, ecc 0, degmat 0.
- all candidates invalid (A = identity): k separate clusters; eigv k, ecc sqrt(k - 1),
  degmat 1 - 1/k (the maxima); lexsim works on strings and is unaffected by validity.
- a zero-degree candidate (a row of zeros, only possible for matrices built elsewhere, since the
  diagonal is 1 here): treated as an isolated node, ``L = D^-1/2 (D - A) D^-1/2`` with
  ``0^-1/2 := 0``, so it adds a zero eigenvalue (its own component), as an invalid candidate does.
- k = 0 raises ValueError: there is nothing to estimate.

In a report these cases are said, not hidden (:mod:`lsplits.uncertainty.report`): an estimator that
gives every example the same value (k = 1, or identical candidates everywhere) cannot rank them and
gets no "best" mark, and examples without a valid candidate are counted, since the graph estimators
rate them maximally uncertain while LexSim, on strings, may rate them certain.

``ecc_threshold`` outside (0, 2] (or NaN) raises :class:`~lsplits.uncertainty.options.InvalidOption`.

Every value is rounded to 12 decimals: eigen solvers leave noise of about 1e-16 (EigV of identical
candidates is 1.0000000000000002 at k = 3 but 1.0 at k = 5), and PRR must see mathematically equal
uncertainties as the exact ties it averages over, not as an order made of rounding noise.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import InvalidInput, InvalidOption
from .options import check_ecc_threshold

DEFAULT_ECC_THRESHOLD = 0.9
_DECIMALS = 12  # estimator values are rounded to this, so that equal values up to solver noise tie exactly


def _value(number: float) -> float:
    """``number`` rounded to ``_DECIMALS`` as a plain float (and without a negative zero)."""
    return round(float(number), _DECIMALS) + 0.0


def _checked(matrix: np.ndarray | list) -> np.ndarray:
    """The matrix as a float array, symmetrised; raises ValueError when not square or empty."""
    values = np.asarray(matrix, dtype=float)
    if values.ndim != 2 or values.shape[0] != values.shape[1]:
        raise InvalidInput(f"a similarity matrix must be square, got shape {values.shape}")
    if values.shape[0] == 0:
        raise InvalidInput("a similarity matrix needs at least one candidate")
    if not np.isfinite(values).all():
        raise InvalidInput("a similarity matrix must not contain NaN or infinite values")
    return (values + values.T) / 2


def normalized_laplacian(matrix: np.ndarray | list) -> np.ndarray:
    """``I - D^-1/2 A D^-1/2`` (written as ``D^-1/2 (D - A) D^-1/2`` so zero-degree rows are defined)."""
    adjacency = _checked(matrix)
    degree = adjacency.sum(axis=1)
    scale = np.zeros_like(degree)
    positive = degree > 0
    scale[positive] = 1.0 / np.sqrt(degree[positive])
    laplacian = np.diag(degree) - adjacency
    return scale[:, None] * laplacian * scale[None, :]


def lexsim(matrix: np.ndarray | list) -> float:
    """1 - mean pairwise similarity between distinct candidates (0 for a single candidate)."""
    values = _checked(matrix)
    k = values.shape[0]
    if k == 1:
        return 0.0
    return _value(1.0 - (values.sum() - np.trace(values)) / (k * (k - 1)))


def eigv(matrix: np.ndarray | list) -> float:
    """Sum over Laplacian eigenvalues of max(0, 1 - lambda)."""
    eigenvalues = np.linalg.eigvalsh(normalized_laplacian(matrix))
    return _value(np.clip(1.0 - eigenvalues, 0.0, None).sum())


def ecc(matrix: np.ndarray | list, threshold: float = DEFAULT_ECC_THRESHOLD) -> float:
    """Frobenius norm of the centred spectral embeddings (eigenvectors with eigenvalue < threshold).

    Eigenvectors of a repeated eigenvalue are only defined up to rotation, but the value depends
    only on the space they span, so it is deterministic as long as the threshold does not cut
    through a repeated eigenvalue.
    """
    threshold = check_ecc_threshold(threshold, "threshold")
    eigenvalues, eigenvectors = np.linalg.eigh(normalized_laplacian(matrix))
    embedding = eigenvectors[:, eigenvalues < threshold]
    if embedding.shape[1] == 0:
        return 0.0
    centred = embedding - embedding.mean(axis=0, keepdims=True)
    return _value(np.linalg.norm(centred))


def degmat(matrix: np.ndarray | list) -> float:
    """1 - mean of all entries of the (symmetrised) matrix, diagonal included."""
    values = _checked(matrix)
    return _value(1.0 - values.sum() / values.size)


ESTIMATORS: dict[str, Callable[..., float]] = {"lexsim": lexsim, "eigv": eigv, "ecc": ecc, "degmat": degmat}
DISPLAY_NAMES = {"lexsim": "LexSim", "eigv": "EigV", "ecc": "Ecc", "degmat": "DegMat"}


def get_estimator(name: str) -> Callable[..., float]:
    """The estimator function named ``name`` (case-insensitive); ValueError lists the choices."""
    try:
        return ESTIMATORS[name.lower()]
    except KeyError:
        raise InvalidOption(f"unknown estimator {name!r}; choose one of {', '.join(ESTIMATORS)}") from None


def estimate(name: str, matrix: np.ndarray | list, *, ecc_threshold: float = DEFAULT_ECC_THRESHOLD) -> float:
    """Apply the estimator named ``name`` to one matrix (``ecc_threshold`` is used by Ecc only)."""
    function = get_estimator(name)
    check_ecc_threshold(ecc_threshold)
    return function(matrix, threshold=ecc_threshold) if function is ecc else function(matrix)
