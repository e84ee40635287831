"""The tests behind risk-controlled selective prediction: p-values and upper confidence bounds on the mean of
i.i.d. losses in [0, 1] (:mod:`lsplits.uncertainty.selective` calibrates thresholds with them).

Tests (``method``), each a valid p-value for the mean of m i.i.d. losses:

- ``auto`` (default): ``ltt-binomial`` when every loss is 0 or 1, else ``ltt-wsr`` (``loss_type``
  ``binary`` requires 0/1 losses, ``bounded`` treats them as [0, 1] losses).
- ``ltt-binomial``: 0/1 losses only, the exact binomial tail ``P(Binomial(m, target) <= k)`` for k
  losses of 1 among m: given m, they are i.i.d. Bernoulli(risk), so it is exact.
- ``ltt-wsr``: the Waudby-Smith and Ramdas (2023) betting bound, as in Bates et al.'s RCPS
  (2021): the wealth ``K_i(R) = prod_{j<=i} (1 - nu_j (L_j - R))`` with predictable bets
  ``nu_j = min(1, sqrt(2 log(1/delta) / (m sigma2_{j-1})))`` from running variance estimates, is a
  nonnegative supermartingale when the true mean is >= R, so by Ville's inequality
  ``p = min(1, 1 / max_i K_i(target_risk))`` is a valid p-value. Variance-adaptive: it is much
  tighter than Hoeffding when losses vary little. The losses enter in a seeded random order.
- ``ltt-hoeffding``: ``p = exp(-2 m (target_risk - mean)_+^2)``.
- ``ltt-hb``: Hoeffding-Bentkus (Bates et al. 2021): the smaller of the Hoeffding-KL tail
  ``exp(-m h(min(mean, target), target))`` and ``e * P(Binomial(m, target) <= ceil(m mean))``; the
  factor e is what losses anywhere in [0, 1] need, so 0/1 losses get the binomial tail without it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np

from lsplits.errors import InvalidInput, InvalidOption
from lsplits.params import check, check_choice

METHODS = ("auto", "ltt-wsr", "ltt-hoeffding", "ltt-hb", "ltt-binomial")
LOSS_TYPES = ("auto", "binary", "bounded")
DEFAULT_METHOD = "auto"  # ltt-binomial for 0/1 losses, ltt-wsr for others
DEFAULT_DELTA = 0.1
_GRID, _GRID_ROUNDS = 64, 5  # the bound to within 64^-5 ~ 1e-9


def checked_choice(value: object, allowed: Sequence[str], option: str) -> str:
    """``value`` lower-cased when it is one of ``allowed``; else the vocabulary's refusal naming ``option``."""
    return check_choice(option, value, allowed, fold_case=True)


@functools.lru_cache(maxsize=4096)
def smallest_certifiable(method: str, target_risk: float, delta: float, limit: int, *, binary: bool = False) -> int:
    """The fewest examples that could certify ``target_risk`` at ``delta`` if every loss were 0 (``limit + 1`` if
    even ``limit`` cannot). It depends on the bound and the settings only, never on the data."""
    method = auto_test(True) if method == "auto" else method  # zero losses are 0/1

    def certifies(m: int) -> bool:
        return bool(masked_p_values(method, np.zeros(m), np.ones((1, m), dtype=bool), target_risk, delta,
                              binary=binary or method == "ltt-binomial")[0] <= delta)

    high = 1  # doubling from 1, so the cost follows the answer, not the limit (a study asks with a limit of 10^7)
    while not certifies(min(high, limit)):
        if high >= limit:
            return limit + 1
        high *= 2
    low, high = high // 2, min(high, limit)  # certifies(high) holds; certifies(low) does not (0 examples never do)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if certifies(middle) else (middle, high)
    return high


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


def _binomial_cdf(k, n, p) -> np.ndarray:
    """P(Binomial(n, p) <= k), 0 for k < 0 (scipy.special.bdtr: the same value as scipy.stats.binom.cdf, faster)."""
    from scipy.special import bdtr

    k, n, p = np.broadcast_arrays(np.floor(np.asarray(k, dtype=float)), np.asarray(n).astype(np.int64),
                                  np.asarray(p, dtype=float))
    return np.where(k < 0, 0.0, bdtr(np.maximum(k, 0.0).astype(np.int64), n, p))


def binomial_at_least(k, n, p) -> np.ndarray:
    """P(Binomial(n, p) >= k): 1 for k <= 0."""
    return 1.0 - _binomial_cdf(np.asarray(k, dtype=float) - 1, n, p)


def p_from_summary(method: str, m: np.ndarray, mean: np.ndarray, risk, binary: bool = False) -> np.ndarray:
    """Hoeffding, Hoeffding-Bentkus or exact binomial p-values of ``H: mean >= risk`` from sample sizes and
    means (m = 0: 1). ``binary``: the losses are 0/1, so the binomial tail is exact and needs no factor e."""
    m, mean, risk = np.broadcast_arrays(np.asarray(m, dtype=float), np.asarray(mean, dtype=float),
                                        np.asarray(risk, dtype=float))
    if method == "ltt-hoeffding":
        p = np.exp(-2.0 * m * np.maximum(risk - mean, 0.0) ** 2)
    else:
        low = np.minimum(mean, risk)
        with np.errstate(divide="ignore", invalid="ignore"):
            kl = (np.where(low > 0, low * np.log(low / risk), 0.0)
                  + np.where(low < 1, (1 - low) * np.log((1 - low) / (1 - risk)), 0.0))
        bentkus = (1.0 if binary else math.e) * _binomial_cdf(np.ceil(m * mean - 1e-9), m, risk)
        p = bentkus if method == "ltt-binomial" else np.minimum(np.exp(-m * kl), bentkus)
    return np.where(m > 0, np.minimum(p, 1.0), 1.0)


def masked_p_values(method: str, losses: np.ndarray, masks: np.ndarray, risk, delta: float,
              binary: bool = False) -> np.ndarray:
    """One p-value per mask row for ``H: selective risk >= risk`` (rows with no example get p = 1)."""
    m = masks.sum(axis=1)
    if method == "ltt-wsr":
        p = np.exp(-_log_wealth(losses, _wsr_bets(losses, masks, delta), np.broadcast_to(risk, m.shape)))
        return np.where(m > 0, np.minimum(p, 1.0), 1.0)
    return p_from_summary(method, m, masks @ losses / np.maximum(m, 1), risk, binary=binary)


def p_value(losses, target_risk: float | None = None, *, delta: float = DEFAULT_DELTA, method: str = DEFAULT_METHOD,
            seed: int | None = 0, loss_type: str = "auto") -> float:
    """The p-value of ``H: mean loss >= target_risk`` from i.i.d. ``losses`` in [0, 1] (1.0 for no loss).

    ``delta`` tunes the WSR bets (the level the test is meant for); the losses enter the WSR bound in a
    random order drawn with ``seed`` (None: as given). 0/1 losses (``loss_type``) get the exact binomial tail.
    """
    target_risk = required_target(target_risk, "p_value")
    method = checked_choice(method, METHODS, "method")
    loss_type = checked_choice(loss_type, LOSS_TYPES, "loss_type")
    check("target_risk", target_risk)
    check("delta", delta)
    values = _ordered(losses, seed)
    method, binary = resolve_test(method, values, loss_type, "the losses")
    return float(masked_p_values(method, values, np.ones((1, values.size), dtype=bool), target_risk, delta,
                           binary=binary)[0])


def _ordered(losses, seed: int | None) -> np.ndarray:
    values = np.asarray(losses, dtype=float).ravel()
    if not np.isfinite(values).all() or (values.size and (values.min() < 0 or values.max() > 1)):
        raise InvalidInput("losses must be finite values in [0, 1]")
    return values if seed is None else values[np.random.default_rng(seed).permutation(values.size)]


def upper_bound(losses, *, delta: float, method: str = DEFAULT_METHOD, seed: int | None = 0,
                loss_type: str = "auto") -> float:
    """The upper confidence bound at level ``1 - delta`` on the mean of i.i.d. ``losses`` in [0, 1].

    The smallest R whose p-value (:data:`METHODS`) is <= ``delta``, by bisection; the losses enter the
    WSR bound in a random order drawn with ``seed`` (None: as given).
    """
    method = checked_choice(method, METHODS, "method")
    loss_type = checked_choice(loss_type, LOSS_TYPES, "loss_type")
    check("delta", delta)
    values = _ordered(losses, seed)
    if not values.size:
        return math.nan
    method, binary = resolve_test(method, values, loss_type, "the losses")
    return inverted_bound(method, values, np.ones((1, values.size), dtype=bool), delta, binary=binary)


def inverted_bound(method: str, losses: np.ndarray, mask: np.ndarray, delta: float, binary: bool = False) -> float:
    """The smallest risk level rejected at ``delta`` (1.0 when even that is not): a grid search refined
    :data:`_GRID_ROUNDS` times, each round on :data:`_GRID` levels (the p-values fall as the level rises)."""
    kept = losses[mask[0]]
    if method == "ltt-binomial" or (binary and method == "ltt-hb"):  # exact: P(Binomial(m, b) <= k) = delta
        from scipy.special import bdtri

        k = round(float(kept.sum()))
        return 1.0 if k >= kept.size else float(bdtri(k, kept.size, delta))
    if method == "ltt-wsr":  # the bets do not depend on the risk level: compute them once
        bets = _wsr_bets(kept, np.ones((1, kept.size), dtype=bool), delta)[0]

        def rejected(levels: np.ndarray) -> np.ndarray:
            return _log_wealth(kept, bets, levels) >= math.log(1.0 / delta)
    else:
        def rejected(levels: np.ndarray) -> np.ndarray:
            return p_from_summary(method, kept.size, kept.mean() if kept.size else 1.0, levels,
                                   binary=binary) <= delta
    return _smallest_rejected(rejected)


def _smallest_rejected(rejected: Callable[[np.ndarray], np.ndarray]) -> float:
    """The smallest level in [0, 1] that ``rejected`` (monotone: once true, true above) accepts, 1.0 when not even
    1 is: a grid search refined :data:`_GRID_ROUNDS` times on :data:`_GRID` levels each."""
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


def required_target(target_risk, where: str):
    """``target_risk``, which ``where`` requires."""
    if target_risk is None:
        raise InvalidOption(f"{where} needs target_risk: the mean loss to certify, in (0, 1)")
    return target_risk


def is_binary(losses) -> bool:
    """Whether every loss is exactly 0 or 1 (then the exact binomial tail tests them: no factor e)."""
    values = np.asarray(losses, dtype=float)
    return bool(values.size) and bool(np.isin(values, (0.0, 1.0)).all())


def auto_test(binary: bool) -> str:
    """The test ``method="auto"`` runs: the exact binomial tail for 0/1 losses, WSR for other losses in [0, 1]."""
    return "ltt-binomial" if binary else "ltt-wsr"


def resolve_test(method: str, losses: np.ndarray, loss_type: str, name: str) -> tuple[str, bool]:
    """The test for one risk's losses and whether they count as 0/1 (``loss_type`` auto: detected)."""
    binary = is_binary(losses)
    if loss_type == "binary" and not binary:
        odd = int(np.flatnonzero(~np.isin(losses, (0.0, 1.0)))[0])
        raise InvalidInput(f"loss_type='binary' needs losses in {{0, 1}}; {name} has {losses[odd]:g} at position "
                           f"{odd}")
    binary = binary and loss_type != "bounded"
    if method == "auto":
        method = auto_test(binary)
    if method == "ltt-binomial" and not binary:
        raise InvalidInput(f"method ltt-binomial (the exact binomial test) needs 0/1 losses, and {name} has others "
                           "(use ltt-hb or ltt-wsr for losses in [0, 1])")
    return method, binary


def family_wise(p: np.ndarray, multiple_testing: str, delta: float, family: int,
               order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(valid, level): which candidates the procedure certifies and the level each was tested at.

    ``family`` is the number of hypotheses Bonferroni and Holm correct for; ``order`` the test order of the
    (split) fixed sequence, increasing thresholds by default.
    """
    valid = np.zeros(p.size, dtype=bool)
    if multiple_testing in ("fixed-sequence", "split-fixed-sequence"):
        sequence = np.arange(p.size) if order is None else order
        passed = p[sequence] <= delta
        stop = int(np.argmin(passed)) if not passed.all() else p.size
        valid[sequence[:stop]] = True
        return valid, np.full(p.size, delta)
    if multiple_testing == "bonferroni":
        return p <= delta / family, np.full(p.size, delta / family)
    ranked = np.argsort(p, kind="stable")  # holm: the i-th smallest p at delta / (family - i), stop at the first failure
    levels = delta / (family - np.arange(p.size))
    passed = p[ranked] <= levels
    stop = int(np.argmin(passed)) if not passed.all() else p.size
    valid[ranked[:stop]] = True
    level = np.full(p.size, delta / family)
    level[ranked] = levels
    return valid, level


@functools.lru_cache(maxsize=1024)
def abstention_count(n: int, target: float, level: float) -> int:
    """The fewest of n examples a threshold must accept for the abstention test at ``target`` to pass."""
    counts = np.arange(1, n + 1)
    passing = np.flatnonzero(binomial_at_least(counts, n, 1.0 - target) <= level)
    return int(counts[passing[0]]) if passing.size else n + 1
