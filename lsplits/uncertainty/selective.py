"""Risk-controlled selective prediction: an uncertainty threshold with a finite-sample guarantee.

PRR says how well an estimator ranks outputs; this module says where to cut. From a calibration set
of (uncertainty, quality) pairs, :func:`calibrate_threshold` returns the largest threshold ``t`` such
that, with probability at least ``1 - delta`` over the calibration draw, the *selective risk* of new
outputs, the mean loss over those accepted (``uncertainty <= t``), is at most ``max_risk``. The loss
is ``1 - quality`` on qualities in [0, 1] by default (any callable mapping qualities to losses in
[0, 1] also works). This is Learn-then-Test (Angelopoulos, Bates, Candès, Jordan and Lei 2021):
one test of ``H_t: risk(t) > max_risk`` per candidate threshold, each by a p-value from a concentration
bound, combined by a multiple-testing procedure that controls the family-wise error at ``delta``.

Bounds (``method``), each an upper confidence bound on the mean of m i.i.d. losses in [0, 1]:

- ``ltt-wsr`` (default): the Waudby-Smith and Ramdas (2023) betting bound, as in Bates et al.'s RCPS
  (2021): the wealth ``K_i(R) = prod_{j<=i} (1 - nu_j (L_j - R))`` with predictable bets
  ``nu_j = min(1, sqrt(2 log(1/delta) / (m sigma2_{j-1})))`` from running variance estimates, is a
  nonnegative supermartingale when the true mean is >= R, so by Ville's inequality
  ``p = min(1, 1 / max_i K_i(max_risk))`` is a valid p-value. Variance-adaptive: it is much
  tighter than Hoeffding when losses vary little. The losses enter in a seeded random order.
- ``ltt-hoeffding``: ``p = exp(-2 m (max_risk - mean)_+^2)``.
- ``ltt-hb``: Hoeffding-Bentkus (Bates et al. 2021): the smaller of the Hoeffding-KL tail
  ``exp(-m h(min(mean, max_risk), max_risk))`` and ``e * P(Binomial(m, max_risk) <= ceil(m mean))``.

Candidate thresholds and multiple testing. By default the candidates are the calibration
uncertainties at a fixed grid of coverage levels (:data:`DEFAULT_COVERAGES`: 10%, 11%, ..., 100%; a first
test on a handful of examples fails and would stop the sequence, so it starts at 10%, or later, at the first
level that keeps twice the examples that would certify ``max_risk`` were all their losses 0:
:func:`smallest_certifiable`, which depends on n, the bound, ``max_risk`` and ``delta`` only, not on the data);
``thresholds=`` gives a grid in uncertainty units instead. They are tested by **fixed-sequence
testing** in increasing order (most certain outputs first, fixed before any loss is seen), each at
level ``delta``, stopping at the first threshold not certified; the last certified one is returned.
Fixed-sequence rather than Bonferroni because the selective risk typically grows with the threshold,
so the order is natural and no level is split over ~100 tests (Bonferroni, ``multiple_testing=
"bonferroni"``, tests each at ``delta / J`` and keeps the largest certified; it is valid for any
risk curve, also a non-monotone one, at a cost in coverage). With a data-independent ``thresholds``
grid the guarantee is exact (LTT's theorem: given how many examples a fixed threshold accepts, their
losses are i.i.d. with the selective risk as mean). With the coverage grid a threshold is an order
statistic ``t = u_(m)``; given ``t``, the other accepted calibration examples are i.i.d. draws from the
population below ``t``, so each p-value stays valid for ``risk(t)`` (exactly for continuous
uncertainties; the one example at ``t`` itself shifts it by at most 1/m). ``tests/test_selective.py``
checks the guarantee by simulation.

When no threshold is certified the result says so (``certified`` False) and rejects everything:
its threshold is ``-inf``, so :func:`accept` accepts nothing. Ties in uncertainty are accepted or
rejected together.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from lsplits.errors import InvalidInput, InvalidOption
from lsplits.uncertainty.options import check_calibration_fraction, check_delta, check_target_risk
from lsplits.uncertainty.prr import as_inputs

METHODS = ("ltt-wsr", "ltt-hoeffding", "ltt-hb")
MULTIPLE_TESTING = ("fixed-sequence", "bonferroni")
DEFAULT_METHOD = "ltt-wsr"
DEFAULT_DELTA = 0.1
DEFAULT_COVERAGES = tuple(round(0.01 * i, 2) for i in range(10, 101))
START_FACTOR = 2  # the default sequence starts where twice the examples an all-correct sample needs are kept
_GRID, _GRID_ROUNDS = 64, 5  # the bound to within 64^-5 ~ 1e-9

Loss = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class SelectiveThreshold:
    """A calibrated rejection rule: accept an output when its uncertainty is <= ``threshold``.

    ``coverage`` and ``risk`` are measured on the calibration set (risk NaN when nothing is accepted);
    ``bound`` is the upper confidence bound on the selective risk at the threshold (NaN when nothing is
    certified). ``certified`` False means no tested threshold passed: ``threshold`` is then ``-inf``.
    """

    threshold: float
    coverage: float
    risk: float
    bound: float
    n: int
    method: str
    max_risk: float
    delta: float
    certified: bool
    multiple_testing: str = "fixed-sequence"
    accepted: int = 0

    def accept(self, uncertainties) -> np.ndarray:
        """The mask of the outputs this rule keeps (:func:`accept`)."""
        return accept(self.threshold, uncertainties)


def accept(threshold: float | SelectiveThreshold, uncertainties) -> np.ndarray:
    """Boolean mask ``uncertainty <= threshold`` (ties kept together; a ``-inf`` threshold keeps nothing)."""
    value = threshold.threshold if isinstance(threshold, SelectiveThreshold) else float(threshold)
    if math.isnan(value):
        raise InvalidInput("a selective threshold must not be NaN")
    u = np.asarray(uncertainties, dtype=float)
    if np.isnan(u).any():
        raise InvalidInput("uncertainties must not be NaN")
    return u <= value


def losses_of(qualities, loss: Loss | None = None) -> np.ndarray:
    """Per-example losses in [0, 1]: ``1 - quality`` (qualities must lie in [0, 1]) or ``loss(qualities)``.

    InvalidInput when a quality (default loss) or a loss falls outside [0, 1] or is not finite.
    """
    q = np.asarray(qualities, dtype=float).ravel()
    if loss is None:
        if q.size and (np.nanmin(q) < 0 or np.nanmax(q) > 1):
            raise InvalidInput(f"the default loss 1 - quality needs qualities in [0, 1], got {np.nanmin(q):g} to "
                               f"{np.nanmax(q):g} (pass loss= to map them to [0, 1])")
        return 1.0 - q
    values = np.asarray(loss(q), dtype=float).ravel()
    if values.shape != q.shape:
        raise InvalidInput(f"loss returned {values.size} values for {q.size} qualities")
    if not np.isfinite(values).all() or (values.size and (values.min() < 0 or values.max() > 1)):
        raise InvalidInput("loss must map every quality to a finite value in [0, 1]")
    return values


def selective_risk(threshold: float | SelectiveThreshold, uncertainties, qualities,
                   loss: Loss | None = None) -> tuple[float, float]:
    """(coverage, selective risk) of ``threshold`` on a set of outputs; risk NaN when nothing is accepted."""
    u, q = as_inputs(uncertainties, qualities, what="a selective risk")
    kept = accept(threshold, u)
    losses = losses_of(q, loss)
    return float(kept.mean()), float(losses[kept].mean()) if kept.any() else math.nan


def oracle_threshold(uncertainties, qualities, max_risk: float, loss: Loss | None = None) -> tuple[float, float]:
    """(threshold, coverage) of the largest threshold whose selective risk on these very outputs is <= ``max_risk``.

    No guarantee: it looks at the losses it is judged on. Benchmarks compare calibrated thresholds with it;
    ``(-inf, 0.0)`` when no threshold qualifies.
    """
    check_target_risk(max_risk)
    u, q = as_inputs(uncertainties, qualities, what="an oracle threshold")
    losses = losses_of(q, loss)
    values, ends = _tie_ends(u)
    order = np.argsort(u, kind="stable")
    risks = np.cumsum(losses[order])[ends - 1] / ends
    ok = np.flatnonzero(risks <= max_risk)
    if not ok.size:
        return -math.inf, 0.0
    return float(values[ok[-1]]), float(ends[ok[-1]] / u.size)


def calibration_mask(ids: Sequence[str], fraction: float, seed: int = 0) -> np.ndarray:
    """Which examples calibrate (True) and which are held out: a seeded random ``fraction`` of the distinct ids.

    Decided by id, not position, so two lists of the same ids (two systems' outputs) split alike. At least one
    example falls on each side; InvalidInput with fewer than two ids.
    """
    check_calibration_fraction(fraction)
    distinct = sorted(set(ids))
    if len(distinct) < 2:
        raise InvalidInput(f"a calibration split needs at least 2 examples, got {len(distinct)}")
    size = min(len(distinct) - 1, max(1, round(fraction * len(distinct))))
    chosen = {distinct[i] for i in np.random.default_rng(seed).permutation(len(distinct))[:size]}
    return np.array([i in chosen for i in ids], dtype=bool)


def _tie_ends(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``u`` (increasing) and, per value, how many examples are <= it."""
    values, counts = np.unique(u, return_counts=True)
    return values, np.cumsum(counts)


def _check_choice(value: object, allowed: Sequence[str], option: str) -> str:
    if not isinstance(value, str) or value.lower() not in allowed:
        raise InvalidOption(f"{option} must be one of {', '.join(allowed)}, got {value!r}")
    return value.lower()


def smallest_certifiable(method: str, max_risk: float, delta: float, limit: int) -> int:
    """The fewest examples that could certify ``max_risk`` at ``delta`` if every loss were 0 (``limit + 1`` if
    even ``limit`` cannot). It depends on the bound and the settings only, never on the data."""
    def certifies(m: int) -> bool:
        return bool(_p_values(method, np.zeros(m), np.ones((1, m), dtype=bool), max_risk, delta)[0] <= delta)

    if not certifies(limit):
        return limit + 1
    low, high = 0, limit  # certifies(high) holds; certifies(low) does not (0 examples never do)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if certifies(middle) else (middle, high)
    return high


def _candidates(u: np.ndarray, coverages: Sequence[float] | None, thresholds: Sequence[float] | None,
                min_count: int = 1) -> np.ndarray:
    """The candidate thresholds in test order (increasing, distinct); a coverage level that keeps fewer than
    ``min_count`` examples is left out (the user's ``thresholds`` never are)."""
    if thresholds is not None:
        grid = np.asarray(thresholds, dtype=float).ravel()
        if not grid.size or not np.isfinite(grid).all():
            raise InvalidOption("thresholds must be a non-empty sequence of finite numbers")
        return np.unique(grid)
    levels = np.asarray(DEFAULT_COVERAGES if coverages is None else coverages, dtype=float).ravel()
    if not levels.size or not np.isfinite(levels).all() or levels.min() <= 0 or levels.max() > 1:
        raise InvalidOption("coverages must be a non-empty sequence of levels in (0, 1]")
    counts = np.clip(np.ceil(np.sort(levels) * u.size - 1e-9).astype(int), 1, u.size)
    counts = counts[counts >= min(min_count, u.size)]
    return np.unique(np.sort(u)[counts - 1])


def _wsr_bets(losses: np.ndarray, masks: np.ndarray, delta: float) -> np.ndarray:
    """The WSR bets nu_j of every masked loss (0 where masked out), from the running variance before it."""
    m = np.maximum(masks.sum(axis=1, keepdims=True), 1)
    taken = masks.astype(float)
    count = np.cumsum(taken, axis=1)
    mean = (0.5 + np.cumsum(taken * losses, axis=1)) / (1.0 + count)
    squares = taken * (losses - mean) ** 2
    previous = (0.25 + np.cumsum(squares, axis=1) - squares) / (1.0 + count - taken)  # sigma2 before this loss
    return taken * np.minimum(1.0, np.sqrt(2.0 * math.log(1.0 / delta) / (m * previous)))


def _log_wealth(losses: np.ndarray, bets: np.ndarray, risk) -> np.ndarray:
    """Per row: max(0, max over i of log K_i(risk)), K_i the wealth after the first i bets."""
    risk = np.asarray(risk, dtype=float)
    with np.errstate(divide="ignore"):  # a loss of 1 bet on in full at risk 0 is log(0): the wealth is gone
        steps = np.log1p(-bets * (losses - (risk[..., None] if risk.ndim else risk)))
    return np.maximum(np.cumsum(steps, axis=-1).max(axis=-1), 0.0)


def _p_from_summary(method: str, m: np.ndarray, mean: np.ndarray, risk) -> np.ndarray:
    """Hoeffding or Hoeffding-Bentkus p-values of ``H: mean >= risk`` from sample sizes and means (m = 0: 1)."""
    m, mean, risk = np.broadcast_arrays(np.asarray(m, dtype=float), np.asarray(mean, dtype=float),
                                        np.asarray(risk, dtype=float))
    if method == "ltt-hoeffding":
        p = np.exp(-2.0 * m * np.maximum(risk - mean, 0.0) ** 2)
    else:
        from scipy.stats import binom

        low = np.minimum(mean, risk)
        with np.errstate(divide="ignore", invalid="ignore"):
            kl = (np.where(low > 0, low * np.log(low / risk), 0.0)
                  + np.where(low < 1, (1 - low) * np.log((1 - low) / (1 - risk)), 0.0))
        bentkus = math.e * binom.cdf(np.ceil(m * mean - 1e-9), m, risk)
        p = np.minimum(np.exp(-m * kl), bentkus)
    return np.where(m > 0, np.minimum(p, 1.0), 1.0)


def _p_values(method: str, losses: np.ndarray, masks: np.ndarray, risk, delta: float) -> np.ndarray:
    """One p-value per mask row for ``H: selective risk >= risk`` (rows with no example get p = 1)."""
    m = masks.sum(axis=1)
    if method == "ltt-wsr":
        p = np.exp(-_log_wealth(losses, _wsr_bets(losses, masks, delta), np.broadcast_to(risk, m.shape)))
        return np.where(m > 0, np.minimum(p, 1.0), 1.0)
    return _p_from_summary(method, m, masks @ losses / np.maximum(m, 1), risk)


def p_value(losses, max_risk: float, *, delta: float = DEFAULT_DELTA, method: str = DEFAULT_METHOD,
            seed: int | None = 0) -> float:
    """The p-value of ``H: mean loss >= max_risk`` from i.i.d. ``losses`` in [0, 1] (1.0 for no loss).

    ``delta`` tunes the WSR bets (the level the test is meant for); the losses enter the WSR bound in a
    random order drawn with ``seed`` (None: as given).
    """
    method = _check_choice(method, METHODS, "method")
    check_target_risk(max_risk)
    check_delta(delta)
    values = _ordered(losses, seed)
    return float(_p_values(method, values, np.ones((1, values.size), dtype=bool), max_risk, delta)[0])


def _ordered(losses, seed: int | None) -> np.ndarray:
    values = np.asarray(losses, dtype=float).ravel()
    if not np.isfinite(values).all() or (values.size and (values.min() < 0 or values.max() > 1)):
        raise InvalidInput("losses must be finite values in [0, 1]")
    return values if seed is None else values[np.random.default_rng(seed).permutation(values.size)]


def upper_bound(losses, *, delta: float, method: str = DEFAULT_METHOD, seed: int | None = 0) -> float:
    """The upper confidence bound at level ``1 - delta`` on the mean of i.i.d. ``losses`` in [0, 1].

    The smallest R whose p-value (:data:`METHODS`) is <= ``delta``, by bisection; the losses enter the
    WSR bound in a random order drawn with ``seed`` (None: as given).
    """
    method = _check_choice(method, METHODS, "method")
    check_delta(delta)
    values = _ordered(losses, seed)
    if not values.size:
        return math.nan
    return _invert(method, values, np.ones((1, values.size), dtype=bool), delta)


def _invert(method: str, losses: np.ndarray, mask: np.ndarray, delta: float) -> float:
    """The smallest risk level rejected at ``delta`` (1.0 when even that is not): a grid search refined
    :data:`_GRID_ROUNDS` times, each round on :data:`_GRID` levels (the p-values fall as the level rises)."""
    kept = losses[mask[0]]
    if method == "ltt-wsr":  # the bets do not depend on the risk level: compute them once
        bets = _wsr_bets(kept, np.ones((1, kept.size), dtype=bool), delta)[0]

        def rejected(levels: np.ndarray) -> np.ndarray:
            return _log_wealth(kept, bets, levels) >= math.log(1.0 / delta)
    else:
        def rejected(levels: np.ndarray) -> np.ndarray:
            return _p_from_summary(method, kept.size, kept.mean() if kept.size else 1.0, levels) <= delta
    if not rejected(np.array([1.0]))[0]:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(_GRID_ROUNDS):
        levels = np.linspace(low, high, _GRID + 1)
        first = int(np.argmax(rejected(levels)))  # the top level is always rejected
        low, high = (levels[first - 1] if first else low), levels[first]
        if first == 0:
            break
    return float(high)


def calibrate_threshold(uncertainties, qualities, *, max_risk: float, delta: float = DEFAULT_DELTA,
                        loss: Loss | None = None, method: str = DEFAULT_METHOD,
                        multiple_testing: str = "fixed-sequence", coverages: Sequence[float] | None = None,
                        thresholds: Sequence[float] | None = None, seed: int = 0) -> SelectiveThreshold:
    """The largest threshold certified to keep the selective risk <= ``max_risk`` with probability >= 1 - delta.

    ``uncertainties`` and ``qualities`` are the calibration set (finite, same length); the candidates are
    the calibration uncertainties at ``coverages`` (default :data:`DEFAULT_COVERAGES`) or the given
    ``thresholds``; ``seed`` draws the order in which the WSR bound sees the losses. Raises InvalidInput
    (bad values) or InvalidOption (bad settings) before any computation.

    >>> rule = calibrate_threshold([0.1, 0.2, 0.3, 0.4] * 50, [1.0, 0.9, 0.5, 0.0] * 50, max_risk=0.2)
    >>> rule.certified, rule.threshold, rule.coverage
    (True, 0.2, 0.5)
    """
    check_target_risk(max_risk)
    check_delta(delta)
    method = _check_choice(method, METHODS, "method")
    multiple_testing = _check_choice(multiple_testing, MULTIPLE_TESTING, "multiple_testing")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise InvalidOption(f"seed must be a whole number >= 0, got {seed!r}")
    u, q = as_inputs(uncertainties, qualities, what="a selective threshold")
    losses = losses_of(q, loss)
    order = np.random.default_rng(seed).permutation(u.size)
    u, losses = u[order], losses[order]
    levels = len(DEFAULT_COVERAGES if coverages is None else coverages) if thresholds is None else len(thresholds)
    level = delta if multiple_testing == "fixed-sequence" else delta / levels  # Bonferroni over the whole grid
    start = START_FACTOR * smallest_certifiable(method, max_risk, level, u.size) if coverages is None else 1
    grid = _candidates(u, coverages, thresholds, start)
    if not grid.size:  # too few examples for this target at all
        grid = np.array([-math.inf])
    if method == "ltt-wsr":  # the bets see the accepted losses in their (random) order: one mask per threshold
        masks = u[None, :] <= grid[:, None]
        p = _p_values(method, losses, masks, max_risk, level)
    else:  # the counts and sums of the accepted losses suffice
        by_uncertainty = np.argsort(u, kind="stable")
        counts = np.searchsorted(u[by_uncertainty], grid, side="right")
        sums = np.r_[0.0, np.cumsum(losses[by_uncertainty])][counts]
        p = _p_from_summary(method, counts, sums / np.maximum(counts, 1), max_risk)
    passed = p <= level
    if multiple_testing == "fixed-sequence":
        failed = np.flatnonzero(~passed)
        last = (failed[0] if failed.size else grid.size) - 1
    else:
        found = np.flatnonzero(passed)
        last = found[-1] if found.size else -1
    common = {"n": int(u.size), "method": method, "max_risk": float(max_risk), "delta": float(delta),
              "multiple_testing": multiple_testing}
    if last < 0:
        return SelectiveThreshold(threshold=-math.inf, coverage=0.0, risk=math.nan, bound=math.nan,
                                  certified=False, accepted=0, **common)
    kept = u <= grid[last]
    return SelectiveThreshold(threshold=float(grid[last]), coverage=float(kept.mean()),
                              risk=float(losses[kept].mean()), bound=_invert(method, losses, kept[None, :], level),
                              certified=True, accepted=int(kept.sum()), **common)
