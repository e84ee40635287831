"""Prediction Rejection Ratio (PRR, Malinin et al. 2017) and the prediction-rejection curve.

Given per-example uncertainties u (higher = less trustworthy) and qualities q (higher = better):
sort by increasing uncertainty; at rejection rate r/n (r = 0 .. n-1) reject the r most uncertain
examples and average the qualities of the rest. The area under that curve is the mean of those
values (only up to ``max_rejection`` if given: the rates r/n <= max_rejection). It is compared with
the oracle (uncertainty = -quality) and with random rejection, whose expected curve is flat at the
mean quality, so no sampling is needed:

    PRR = (AUC_uncertainty - AUC_random) / (AUC_oracle - AUC_random)

1 is the oracle, 0 random, below 0 harmful. PRR does not change under q -> a*q + b with a > 0.

Ties in uncertainty: tied examples are rejected in an unknown order, so every tied group
contributes its *mean* quality per rejected or kept member; this is the exact average over all
orders within the tie, independent of the input order (unlike a stable sort, which would reward
or punish the order the examples happen to be listed in).

When the oracle is no better than random (all qualities equal, a single example, or a
``max_rejection`` below 1/n) PRR is undefined: NaN is returned with a warning, never a silent 0.

The bootstrap interval is computed a chunk of resamples at a time, so memory stays bounded (about
``_CHUNK_ELEMENTS`` resampled entries at once, a few hundred MB) whatever n and the number of
resamples; the resamples are exactly those of one ``(n_bootstrap, n)`` draw (see
:func:`_bootstrap_prrs`), so the interval does not depend on the chunk size.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from lsplits.errors import InvalidInput
from lsplits.params import DEFAULT_CONFIDENCE, check

DEFAULT_BOOTSTRAP = 1000
"""Bootstrap resamples of every confidence interval lsplits reports (PRR, the difficulty accuracies)."""
DEFAULT_MAX_REJECTION = 1.0
"""Largest rejection rate in the PRR area (1: the whole curve)."""

_CHUNK_ELEMENTS = 1 << 21  # resampled entries per bootstrap chunk (about 100 bytes of temporaries each)


class UndefinedPRRWarning(RuntimeWarning):
    """PRR is undefined for this input (the oracle does not beat random rejection)."""


@dataclass(frozen=True)
class RejectionCurve:
    """Mean quality of the kept examples at each rejection rate."""

    rates: np.ndarray
    uncertainty: np.ndarray
    oracle: np.ndarray
    random: np.ndarray


@dataclass(frozen=True)
class PRRResult:
    """PRR with its parts and a bootstrap confidence interval (NaN bounds when not computed)."""

    prr: float
    auc_uncertainty: float
    auc_oracle: float
    auc_random: float
    ci_low: float
    ci_high: float
    n: int


def numeric_vector(values, argument: str, what: str = "PRR") -> np.ndarray:
    """``values`` as a flat float array; InvalidInput naming ``argument`` for a string, a non-numeric entry or
    anything but one dimension (a scalar, a column, a matrix)."""
    if isinstance(values, (str, bytes)):
        raise InvalidInput(f"{what}: {argument} must be a list of numbers, got the string {values!r}")
    try:
        array = np.asarray(values)
    except ValueError as exc:  # ragged nesting
        raise InvalidInput(f"{what}: {argument} must be a flat list of numbers ({exc})") from None
    if array.dtype.kind not in "biuf":
        flat = np.asarray(values, dtype=object).ravel().tolist()  # the entries as given, not as numpy cast them
        bad = next((v for v in flat if isinstance(v, (str, bytes)) or not isinstance(v, (numbers.Real, np.number))),
                   flat[0] if flat else None)
        raise InvalidInput(f"{what}: {argument} must be numbers, got {bad!r} ({type(bad).__name__})")
    if array.ndim != 1:  # a column (n, 1) or a matrix would be read row after row, silently
        raise InvalidInput(f"{what}: {argument} must be a flat list of numbers, one per example, got an array of "
                           f"shape {array.shape}")
    return array.astype(float)


def as_inputs(uncertainties, qualities, what: str = "PRR") -> tuple[np.ndarray, np.ndarray]:
    """Paired uncertainty and quality vectors as flat float arrays; InvalidInput (naming ``what``) when they
    differ in length, are empty or hold NaN/inf."""
    u = numeric_vector(uncertainties, "uncertainties", what)
    q = numeric_vector(qualities, "qualities", what)
    if u.shape != q.shape:
        raise InvalidInput(f"{u.size} uncertainties but {q.size} qualities")
    if u.size == 0:
        raise InvalidInput(f"{what} needs at least one example")
    if not (np.isfinite(u).all() and np.isfinite(q).all()):
        raise InvalidInput("uncertainties and qualities must be finite (drop NaN examples first)")
    return u, q


def _rejection_steps(n: int, max_rejection: float) -> int:
    """How many rejection rates r/n (r = 0, 1, ...) are <= max_rejection, at most n."""
    return min(n, math.floor(check("max_rejection", max_rejection) * n + 1e-9) + 1)


def _tie_averaged(u: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Qualities ordered by increasing uncertainty, each replaced by the mean of its tie group.

    Works on a 1-d pair or row-wise on 2-d arrays (one bootstrap sample per row).
    """
    order = np.argsort(u, axis=-1, kind="stable")
    sorted_u = np.take_along_axis(u, order, axis=-1)
    sorted_q = np.take_along_axis(q, order, axis=-1)
    starts = np.ones(sorted_u.shape, dtype=bool)
    starts[..., 1:] = sorted_u[..., 1:] != sorted_u[..., :-1]
    group = np.cumsum(starts.ravel()) - 1  # a new row always starts a new group
    means = np.bincount(group, weights=sorted_q.ravel()) / np.bincount(group)
    return means[group].reshape(sorted_q.shape)


def _curve_values(sorted_q: np.ndarray, steps: int) -> np.ndarray:
    """Mean of the kept qualities when rejecting r = 0..steps-1 from the end (row-wise)."""
    n = sorted_q.shape[-1]
    kept = np.arange(n, n - steps, -1)
    totals = np.cumsum(sorted_q, axis=-1)[..., kept - 1]
    return totals / kept


def _curve(u: np.ndarray, q: np.ndarray, steps: int) -> RejectionCurve:
    """The curves of checked 1-d inputs over the first ``steps`` rejection rates (ties averaged once)."""
    return RejectionCurve(
        rates=np.arange(steps) / u.size,
        uncertainty=_curve_values(_tie_averaged(u, q), steps),
        oracle=_curve_values(np.sort(q)[::-1], steps),
        random=np.full(steps, q.mean()),
    )


def rejection_curve(uncertainties, qualities, *, max_rejection: float = DEFAULT_MAX_REJECTION) -> RejectionCurve:
    """The prediction-rejection curves of the estimator, the oracle and random rejection."""
    u, q = as_inputs(uncertainties, qualities)
    return _curve(u, q, _rejection_steps(u.size, max_rejection))


def _curve_means(curves: np.ndarray) -> np.ndarray:
    """Mean of a curve, or of each row of a 2-d stack of curves.

    Rows are summed left to right (the order numpy uses for the column-major stacks that
    :func:`_curve_values` returns), so a bootstrap chunk of one row gives the same bits as a chunk
    of many; a single curve keeps numpy's pairwise mean.
    """
    if curves.ndim == 1:
        return curves.mean()
    return np.cumsum(curves, axis=-1)[..., -1] / curves.shape[-1]


def _aucs(u: np.ndarray, q: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """AUC of estimator, oracle and random, row-wise for 2-d inputs."""
    auc_u = _curve_means(_curve_values(_tie_averaged(u, q), steps))
    auc_o = _curve_means(_curve_values(-np.sort(-q, axis=-1), steps))
    return auc_u, auc_o, q.mean(axis=-1)


def _ratio(auc_u, auc_o, auc_r):
    """(u - r) / (o - r), NaN where the denominator is not positive."""
    denominator = np.asarray(auc_o - auc_r, dtype=float)
    scale = np.maximum(np.abs(auc_o), np.abs(auc_r)) + 1.0
    defined = denominator > 1e-12 * scale
    safe = np.where(defined, denominator, 1.0)
    return np.where(defined, (auc_u - auc_r) / safe, np.nan)


def _bootstrap_prrs(u: np.ndarray, q: np.ndarray, steps: int, n_bootstrap: int, seed: int) -> np.ndarray:
    """PRR of each of ``n_bootstrap`` resamples (with replacement), computed a chunk of resamples at a time.

    numpy's ``Generator.integers`` draws its numbers one after another from the bit generator (the
    half-used 32-bit word it keeps lives in the generator's state), so drawing the rows of the
    ``(n_bootstrap, n)`` index matrix a chunk at a time yields exactly the same indices as one draw;
    the result is identical to the all-at-once computation for the same seed, for any chunk size.
    """
    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_ELEMENTS // u.size)
    samples = np.empty(n_bootstrap)
    for start in range(0, n_bootstrap, rows):
        stop = min(n_bootstrap, start + rows)
        draws = rng.integers(0, u.size, size=(stop - start, u.size))
        samples[start:stop] = _ratio(*_aucs(u[draws], q[draws], steps))
    return samples


def prr(uncertainties, qualities, *, max_rejection: float = DEFAULT_MAX_REJECTION) -> float:
    """PRR of ``uncertainties`` at predicting ``qualities``; NaN with a warning when undefined.

    Example:
        >>> prr([0.1, 0.5, 0.9], [0.9, 0.5, 0.1])
        1.0
    """
    return prr_with_ci(uncertainties, qualities, max_rejection=max_rejection, n_bootstrap=0, _stacklevel=3).prr


def prr_with_ci(uncertainties, qualities, *, max_rejection: float = DEFAULT_MAX_REJECTION, n_bootstrap: int = DEFAULT_BOOTSTRAP,
                confidence: float = DEFAULT_CONFIDENCE, seed: int = 0, _stacklevel: int = 2) -> PRRResult:
    """PRR with a percentile bootstrap confidence interval over examples (resampled with replacement).

    Resamples where PRR is undefined (all drawn qualities equal) are left out of the interval.
    ``n_bootstrap=0`` skips the interval (NaN bounds). Options out of range raise
    :class:`~lsplits.errors.InvalidOption` (a ValueError) before any work.
    """
    return prr_and_curve(uncertainties, qualities, max_rejection=max_rejection, n_bootstrap=n_bootstrap,
                         confidence=confidence, seed=seed, _stacklevel=_stacklevel + 1)[0]


def prr_outputs(uncertainties, qualities, *, max_rejection: float = DEFAULT_MAX_REJECTION, n_bootstrap: int = DEFAULT_BOOTSTRAP,
                confidence: float = DEFAULT_CONFIDENCE, seed: int = 0) -> dict[str, float]:
    """The ``prr`` evaluate module's result: PRR, its bootstrap interval and the three areas it is made of."""
    result = prr_with_ci(uncertainties, qualities, max_rejection=max_rejection, n_bootstrap=n_bootstrap,
                         confidence=confidence, seed=seed, _stacklevel=3)
    return {"prr": result.prr, "prr_ci_low": result.ci_low, "prr_ci_high": result.ci_high,
            "auc_uncertainty": result.auc_uncertainty, "auc_oracle": result.auc_oracle,
            "auc_random": result.auc_random}


def prr_and_curve(uncertainties, qualities, *, max_rejection: float = DEFAULT_MAX_REJECTION, n_bootstrap: int = DEFAULT_BOOTSTRAP,
                  confidence: float = DEFAULT_CONFIDENCE, seed: int = 0, _stacklevel: int = 2) -> tuple[PRRResult, RejectionCurve]:
    """:func:`prr_with_ci` and the :func:`rejection_curve` it is the area of, ties averaged once for both."""
    n_bootstrap = check("n_bootstrap", n_bootstrap)
    confidence = check("confidence", confidence)
    seed = check("seed", seed)
    u, q = as_inputs(uncertainties, qualities)
    steps = _rejection_steps(u.size, max_rejection)
    curve = _curve(u, q, steps)
    auc_u, auc_o, auc_r = float(_curve_means(curve.uncertainty)), float(_curve_means(curve.oracle)), float(q.mean())
    value = float(_ratio(auc_u, auc_o, auc_r))
    if math.isnan(value):
        warnings.warn("PRR is undefined: the oracle is no better than random rejection (all qualities "
                      f"equal, or too few examples: n={u.size}, max_rejection={max_rejection}); "
                      "returning NaN", UndefinedPRRWarning, stacklevel=_stacklevel)
    low = high = float("nan")
    if n_bootstrap > 0 and u.size > 1:
        samples = _bootstrap_prrs(u, q, steps, n_bootstrap, seed)
        samples = samples[~np.isnan(samples)]
        if samples.size:
            alpha = (1.0 - confidence) / 2
            low, high = (float(x) for x in np.quantile(samples, [alpha, 1.0 - alpha]))
    return PRRResult(value, auc_u, auc_o, auc_r, low, high, int(u.size)), curve
