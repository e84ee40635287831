"""Risk-controlled selective prediction: an uncertainty threshold with a finite-sample guarantee.

PRR says how well an estimator ranks outputs; this module says where to cut. From a calibration set
of (uncertainty, quality) pairs, :func:`calibrate_threshold` returns a threshold ``t`` such that, with
probability at least ``1 - delta`` over the calibration draw, the *selective risk* of new outputs, the
mean loss over those accepted (``uncertainty <= t``), is at most ``target_risk``. The loss is
``1 - quality`` on qualities in [0, 1] by default (any callable mapping qualities to losses in [0, 1]
also works). This is Learn-then-Test (Angelopoulos, Bates, Candès, Jordan and Lei 2021): one test of
``H_t: risk(t) > target_risk`` per candidate threshold, each by a p-value, combined by a multiple-testing
procedure that controls the family-wise error at ``delta``: every threshold it certifies (``valid``)
holds at once, so any of them may be chosen (``objective``: the largest coverage by default).

The tests (``method``), their p-values and the upper confidence bounds are those of
:mod:`lsplits.uncertainty.bounds`.

Procedures (``multiple_testing``), all valid for the family-wise error at ``delta``:

- ``fixed-sequence`` (default): in increasing threshold order (most certain outputs first, fixed before
  any loss is seen), each at ``delta``, stopping at the first failure. Valid for any risk curve because
  the order does not depend on the data; powerful when the risk grows with the threshold, as it
  typically does (a non-monotone curve only stops it early).
- ``bonferroni``: each candidate at ``delta / J`` (J the grid's size), all that pass are valid. Valid
  for any dependence and any curve; the weakest.
- ``holm``: Holm's step-down over the same J: the i-th smallest p-value at ``delta / (J - i + 1)`` until
  the first failure. Valid whenever Bonferroni is and certifies at least what it does.
- ``split-fixed-sequence``: a seeded random ``order_fraction`` of the examples learns the order (their
  p-values, smallest first, at candidates taken from their uncertainties); the rest tests the fixed
  sequence in that order. Valid because the order and the candidates are independent of the testing
  part (LTT's theorem for fixed thresholds); worth it when the risk curve is not monotone (for example
  with an abstention target, below). Learning the order on the same data would not be valid: on a
  near-null population it can violate more often than delta.

Several risks: ``qualities`` may map names to per-example losses in [0, 1], with ``target_risk`` a mapping
of their targets, for example the mean loss and the rate of bad outputs; the value :data:`ABSTENTION`
is the share of examples rejected (tested exactly: the number accepted is Binomial(n, 1 - abstention),
also at order-statistic candidates). They are certified jointly by the intersection-union test: the
p-value of a candidate is the largest of its per-risk p-values, valid for "some risk exceeds its target"
with no split of delta; the result holds a bound per risk (``risks``).

Candidate thresholds. By default the candidates are the calibration uncertainties at a fixed grid of
coverage levels (:data:`DEFAULT_COVERAGES`: 10%, 11%, ..., 100%; a first test on a handful of examples
fails and would stop the sequence, so it starts at 10%, or later, at the first level that keeps twice
the examples that would certify ``target_risk`` were all their losses 0 (:func:`smallest_certifiable`),
and that an abstention target lets pass: both depend on n, the test, the targets and ``delta`` only,
not on the data); ``thresholds=`` gives a grid in uncertainty units instead. With a data-independent
``thresholds`` grid the guarantee is exact (LTT's theorem: given how many examples a fixed threshold
accepts, their losses are i.i.d. with the selective risk as mean). With the coverage grid a threshold is
an order statistic ``t = u_(m)``; given ``t``, the other accepted calibration examples are i.i.d. draws
from the population below ``t``, so each p-value stays valid for ``risk(t)`` (exactly for continuous
uncertainties; the one example at ``t`` itself shifts it by at most 1/m). ``tests/test_selective.py``
checks the guarantee of every test and procedure by simulation, also on a near-null population.

When no threshold is certified the result says so (``certified`` False) and rejects everything: its
threshold is ``-inf``, so :func:`accept` accepts nothing; :func:`calibration_size_needed` estimates how
many calibration examples the target would need. Ties in uncertainty are accepted or rejected together.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from lsplits.errors import InvalidInput, InvalidOption
from lsplits.params import check
from lsplits.uncertainty.bounds import (
    DEFAULT_DELTA,
    DEFAULT_METHOD,
    LOSS_TYPES,
    METHODS,
    abstention_count,
    binomial_at_least,
    checked_choice,
    family_wise,
    inverted_bound,
    masked_p_values,
    p_from_summary,
    required_target,
    resolve_test,
    smallest_certifiable,
)
from lsplits.uncertainty.losses import Loss, losses_of
from lsplits.uncertainty.prr import as_inputs, numeric_vector

MULTIPLE_TESTING = ("fixed-sequence", "bonferroni", "holm", "split-fixed-sequence")
DEFAULT_MULTIPLE_TESTING = "fixed-sequence"  # the whole delta on each level, in a fixed order
DEFAULT_COVERAGES = tuple(round(0.01 * i, 2) for i in range(10, 101))
START_FACTOR = 2  # the default sequence starts where twice the examples an all-correct sample needs are kept

ABSTENTION = "abstention"  # the risk name whose value is the share of examples rejected (a marginal 0/1 risk)
OBJECTIVES = ("coverage", "p-value")
DEFAULT_RISK_NAME = "risk"


@dataclass(frozen=True)
class RiskBound:
    """One controlled risk at the chosen threshold: its ``target``, calibration value ``risk`` (NaN when nothing is
    accepted), upper confidence ``bound`` (NaN when nothing is certified), the test used (``method``) and whether
    its losses were treated as 0/1 (``binary``: the exact binomial tail, no factor e)."""

    name: str
    target: float
    risk: float
    bound: float
    method: str
    binary: bool


@dataclass(frozen=True)
class SelectiveThreshold:
    """A calibrated rejection rule: accept an output when its uncertainty is <= ``threshold``.

    ``coverage`` and ``risk`` are measured on the calibration set (risk NaN when nothing is accepted);
    ``bound`` is the upper confidence bound on the selective risk at the threshold (NaN when nothing is
    certified). ``certified`` False means no tested threshold passed: ``threshold`` is then ``-inf``
    (:func:`calibration_size_needed` says how many calibration examples the target would take). With several risks, ``risk``/``bound``/``target_risk`` are the first one's and
    ``risks`` holds each. ``candidates`` (tested thresholds, increasing), ``p_values`` (the joint p-value of
    each: the largest over the risks), ``candidate_coverages`` and ``valid`` (certified by the procedure) are
    the p-value curve; the chosen threshold is the valid one best by ``objective``.
    """

    threshold: float
    coverage: float
    risk: float
    bound: float
    n: int
    method: str
    target_risk: float
    delta: float
    certified: bool
    multiple_testing: str = DEFAULT_MULTIPLE_TESTING
    accepted: int = 0
    risks: tuple[RiskBound, ...] = ()
    objective: str = "coverage"
    candidates: tuple[float, ...] = field(default=(), repr=False)
    p_values: tuple[float, ...] = field(default=(), repr=False)
    candidate_coverages: tuple[float, ...] = field(default=(), repr=False)
    valid: tuple[bool, ...] = field(default=(), repr=False)

    @property
    def valid_thresholds(self) -> tuple[float, ...]:
        """Every candidate threshold the procedure certified (all of them hold jointly with probability 1 - delta)."""
        return tuple(t for t, ok in zip(self.candidates, self.valid) if ok)

    def accept(self, uncertainties) -> np.ndarray:
        """The mask of the outputs this rule keeps (:func:`accept`)."""
        return accept(self.threshold, uncertainties)

    def predict(self, uncertainties) -> np.ndarray:
        """The accept mask of new outputs (True: keep), as scikit-learn's ``predict``: :meth:`accept`."""
        return self.accept(uncertainties)


def accept(threshold: float | SelectiveThreshold, uncertainties) -> np.ndarray:
    """Boolean mask ``uncertainty <= threshold`` (ties kept together; a ``-inf`` threshold keeps nothing)."""
    value = threshold.threshold if isinstance(threshold, SelectiveThreshold) else float(threshold)
    if math.isnan(value):
        raise InvalidInput("a selective threshold must not be NaN")
    u = numeric_vector(uncertainties, "uncertainties", "a selective rule")
    if np.isnan(u).any():
        raise InvalidInput("uncertainties must not be NaN")
    return u <= value


def selective_risk(threshold: float | SelectiveThreshold, uncertainties, qualities,
                   loss: Loss | None = None) -> tuple[float, float]:
    """(coverage, selective risk) of ``threshold`` on a set of outputs; risk NaN when nothing is accepted."""
    u, q = as_inputs(uncertainties, qualities, what="a selective risk")
    kept = accept(threshold, u)
    losses = losses_of(q, loss)
    return float(kept.mean()), float(losses[kept].mean()) if kept.any() else math.nan


def oracle_threshold(uncertainties, qualities, target_risk: float | None = None,
                     loss: Loss | None = None) -> tuple[float, float]:
    """(threshold, coverage) of the largest threshold whose selective risk on these very outputs is <= ``target_risk``.

    No guarantee: it looks at the losses it is judged on. Benchmarks compare calibrated thresholds with it;
    ``(-inf, 0.0)`` when no threshold qualifies.
    """
    target_risk = check("target_risk", required_target(target_risk, "oracle_threshold"))
    u, q = as_inputs(uncertainties, qualities, what="an oracle threshold")
    losses = losses_of(q, loss)
    values, ends = _tie_ends(u)
    order = np.argsort(u, kind="stable")
    risks = np.cumsum(losses[order])[ends - 1] / ends
    ok = np.flatnonzero(risks <= target_risk)
    if not ok.size:
        return -math.inf, 0.0
    return float(values[ok[-1]]), float(ends[ok[-1]] / u.size)


def calibration_mask(ids: Sequence[str], fraction: float, seed: int = 0) -> np.ndarray:
    """Which examples calibrate (True) and which are held out: a seeded random ``fraction`` of the distinct ids.

    Decided by id, not position, so two lists of the same ids (two systems' outputs) split alike. At least one
    example falls on each side; InvalidInput with fewer than two ids.
    """
    check("calibration_fraction", fraction)
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


@dataclass(frozen=True)
class _Risk:
    """One risk to control: its per-example losses (None: abstention, the share rejected) and its test."""

    name: str
    target: float
    losses: np.ndarray | None
    method: str
    binary: bool

    def p_values(self, u: np.ndarray, grid: np.ndarray, level: float) -> np.ndarray:
        """The p-value of ``H: risk(t) > target`` at every candidate ``t`` of ``grid`` from the examples (u, losses)."""
        counts = np.searchsorted(np.sort(u), grid, side="right")
        if self.losses is None:  # accepted ~ Binomial(n, 1 - abstention): exact, also for order-statistic candidates
            return binomial_at_least(counts, u.size, 1.0 - self.target)
        if self.method == "ltt-wsr":  # the bets see the accepted losses in their (random) order: one mask per threshold
            return masked_p_values(self.method, self.losses, u[None, :] <= grid[:, None], self.target, level)
        sums = np.r_[0.0, np.cumsum(self.losses[np.argsort(u, kind="stable")])][counts]
        return p_from_summary(self.method, counts, sums / np.maximum(counts, 1), self.target, binary=self.binary)

    def risk_at(self, u: np.ndarray, threshold: float) -> float:
        """The calibration risk at ``threshold`` (NaN when no example is kept)."""
        kept = u <= threshold
        if self.losses is None:
            return 1.0 - int(kept.sum()) / u.size
        return float(self.losses[kept].mean()) if kept.any() else math.nan

    def bound_at(self, u: np.ndarray, threshold: float, level: float) -> float:
        """The upper confidence bound at ``level`` of the risk at ``threshold`` (a search of levels for WSR: the
        costly part of a calibration, so computed only for the chosen threshold)."""
        kept = u <= threshold
        if self.losses is None:
            from scipy.special import bdtri

            accepted = int(kept.sum())  # the exact bound: P(Binomial(n, 1 - a) >= accepted) = level
            return 1.0 if accepted == 0 else 1.0 - float(bdtri(accepted - 1, u.size, 1.0 - level))
        return inverted_bound(self.method, self.losses, kept[None, :], level, binary=self.binary)


def _risks(qualities, target_risk, loss: Loss | None, method: str, loss_type: str, n: int) -> list[_Risk]:
    """The risks to control: one from ``qualities`` (losses ``1 - q`` or ``loss(q)``), or one per entry of a
    mapping name -> per-example losses in [0, 1] (or :data:`ABSTENTION`), each with its target."""
    if not isinstance(qualities, Mapping):
        if isinstance(target_risk, Mapping):
            raise InvalidOption("a target_risk per risk needs the risks as a mapping name -> losses")
        target = check("target_risk", target_risk)
        losses = losses_of(qualities, loss)
        return [_Risk(DEFAULT_RISK_NAME, target, losses, *resolve_test(method, losses, loss_type, "the losses"))]
    if loss is not None:
        raise InvalidOption("loss= maps qualities to losses; with a mapping of risks give the losses themselves")
    if not isinstance(target_risk, Mapping) or set(target_risk) != set(qualities) or not qualities:
        raise InvalidOption(f"target_risk must map each risk ({', '.join(map(str, qualities))}) to its target, got "
                            f"{target_risk!r}")
    risks = []
    for name, values in qualities.items():
        target = check("target_risk", target_risk[name], called=f"target_risk[{name!r}]")
        if isinstance(values, str):
            if values != ABSTENTION:
                raise InvalidOption(f"risk {name!r} must be per-example losses or {ABSTENTION!r}, got {values!r}")
            risks.append(_Risk(name, target, None, "exact-binomial", True))
            continue
        losses = numeric_vector(values, f"qualities[{name!r}]", "a selective threshold")
        if losses.size != n:
            raise InvalidInput(f"risk {name!r} has {losses.size} losses for {n} uncertainties")
        if not np.isfinite(losses).all() or losses.min() < 0 or losses.max() > 1:
            raise InvalidInput(f"risk {name!r}: losses must be finite values in [0, 1]")
        risks.append(_Risk(name, target, losses, *resolve_test(method, losses, loss_type, f"risk {name!r}")))
    return risks


def _permuted(risks: list[_Risk], rows: np.ndarray) -> list[_Risk]:
    return [_Risk(r.name, r.target, None if r.losses is None else r.losses[rows], r.method, r.binary) for r in risks]


def _joint_p_values(risks: list[_Risk], u: np.ndarray, grid: np.ndarray, level: float) -> np.ndarray:
    """Per candidate, the largest p-value over the risks: a valid p-value of "some risk exceeds its target"
    (intersection-union: rejecting it certifies every risk at once, with no split of delta)."""
    return np.max([r.p_values(u, grid, level) for r in risks], axis=0)


def _test_plan(u: np.ndarray, risks: list[_Risk], coverages: Sequence[float] | None,
               thresholds: Sequence[float] | None, split: bool, order_fraction: float, delta: float,
               level: float) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, list[_Risk]]:
    """(candidates, their test order, the testing part's uncertainties and risks): with ``split`` the order is
    learnt on the first ``order_fraction`` of the examples and the rest tests; else all test, in increasing order,
    from the first candidate that could pass at ``level``."""
    if split:  # learn the order on the first part, test the fixed sequence on the rest
        cut = min(u.size - 1, max(1, round(order_fraction * u.size)))
        learn_u, test_u = u[:cut], u[cut:]
        learn, test = _permuted(risks, np.arange(cut)), _permuted(risks, np.arange(cut, u.size))
        grid = _candidates(learn_u, coverages, thresholds, 1)
        sequence = np.argsort(_joint_p_values(learn, learn_u, grid, delta), kind="stable")
    else:
        test_u, test = u, risks
        start = 1
        if coverages is None:  # skip the levels that could not pass even with every loss 0 (data-independent)
            start = max(START_FACTOR * smallest_certifiable(r.method, r.target, level, u.size, binary=r.binary)
                        for r in risks if r.losses is not None) if any(r.losses is not None for r in risks) else 1
            start = max(start, _abstention_start(risks, u.size, level))
        grid = _candidates(u, coverages, thresholds, start)
        sequence = None
    if not grid.size:  # too few examples for this target at all
        grid = np.array([-math.inf])
    return grid, sequence, test_u, test


@dataclass(frozen=True)
class _Tested:
    """What a calibration tested: the permuted examples and risks, the candidates, their p-values, which are valid
    and at which level, and the testing part (all examples, or the part ``split-fixed-sequence`` keeps to test)."""

    u: np.ndarray
    risks: list[_Risk]
    grid: np.ndarray
    p: np.ndarray
    valid: np.ndarray
    tested_at: np.ndarray
    test_u: np.ndarray
    test: list[_Risk]
    multiple_testing: str


def _tested(uncertainties, qualities, *, target_risk, delta: float, loss: Loss | None, method: str,
            multiple_testing: str, coverages: Sequence[float] | None, thresholds: Sequence[float] | None, seed: int,
            loss_type: str, order_fraction: float) -> _Tested:
    """The checks and tests of :func:`calibrate_threshold` (its arguments), without the chosen threshold's bounds:
    what :func:`calibration_size_needed` asks again and again."""
    target_risk = required_target(target_risk, "calibrate_threshold")
    check("delta", delta)
    method = checked_choice(method, METHODS, "method")
    multiple_testing = checked_choice(multiple_testing, MULTIPLE_TESTING, "multiple_testing")
    loss_type = checked_choice(loss_type, LOSS_TYPES, "loss_type")
    split = multiple_testing == "split-fixed-sequence"
    if split:
        check("calibration_fraction", order_fraction, called="order_fraction")
    check("seed", seed)
    if isinstance(qualities, Mapping):
        u = numeric_vector(uncertainties, "uncertainties", "a selective threshold")
        if not u.size or not np.isfinite(u).all():
            raise InvalidInput("a selective threshold needs finite uncertainties, at least one")
    else:
        u, qualities = as_inputs(uncertainties, qualities, what="a selective threshold")
    risks = _risks(qualities, target_risk, loss, method, loss_type, u.size)
    order = np.random.default_rng(seed).permutation(u.size)
    u, risks = u[order], _permuted(risks, order)
    levels = len(DEFAULT_COVERAGES if coverages is None else coverages) if thresholds is None else len(thresholds)
    spread = multiple_testing in ("bonferroni", "holm")
    level = delta / levels if spread else delta  # the level a single test may need to pass
    grid, sequence, test_u, test = _test_plan(u, risks, coverages, thresholds, split, order_fraction, delta, level)
    p = _joint_p_values(test, test_u, grid, level if spread else delta)
    valid, tested_at = family_wise(p, multiple_testing, delta, levels, sequence)
    return _Tested(u, risks, grid, p, valid, tested_at, test_u, test, multiple_testing)


def calibrate_threshold(uncertainties, qualities, *, target_risk: float | Mapping[str, float] | None = None,
                        delta: float = DEFAULT_DELTA, loss: Loss | None = None, method: str = DEFAULT_METHOD,
                        multiple_testing: str = DEFAULT_MULTIPLE_TESTING, coverages: Sequence[float] | None = None,
                        thresholds: Sequence[float] | None = None, seed: int = 0, loss_type: str = "auto",
                        objective: str = "coverage", order_fraction: float = 0.5) -> SelectiveThreshold:
    """The threshold certified to keep the selective risk <= ``target_risk`` with probability >= 1 - delta.

    ``uncertainties`` and ``qualities`` are the calibration set (finite, same length); ``qualities`` may instead
    map risk names to per-example losses (or :data:`ABSTENTION`), with ``target_risk`` a mapping of their
    targets: all are certified jointly. ``loss_type`` auto detects 0/1 losses (the exact binomial test),
    ``binary`` requires them, ``bounded`` treats them as [0, 1]. The candidates are the calibration
    uncertainties at ``coverages`` (default :data:`DEFAULT_COVERAGES`) or the given ``thresholds``; ``seed``
    draws the order in which the WSR bound sees the losses (and the split of ``split-fixed-sequence``, which
    learns its order on ``order_fraction`` of the examples). Among the valid thresholds ``objective`` picks
    the largest coverage (default) or the smallest p-value. InvalidInput (bad values) or InvalidOption (bad
    settings) before any computation.

    >>> rule = calibrate_threshold([0.1, 0.2, 0.3, 0.4] * 50, [1.0, 0.9, 0.5, 0.0] * 50, target_risk=0.2)
    >>> rule.certified, rule.threshold, rule.coverage
    (True, 0.2, 0.5)
    """
    objective = checked_choice(objective, OBJECTIVES, "objective")
    t = _tested(uncertainties, qualities, target_risk=target_risk, delta=delta, loss=loss, method=method,
                multiple_testing=multiple_testing, coverages=coverages, thresholds=thresholds, seed=seed,
                loss_type=loss_type, order_fraction=order_fraction)
    u, risks, grid, p, valid = t.u, t.risks, t.grid, t.p, t.valid
    curve = {"candidates": tuple(grid.tolist()), "p_values": tuple(p.tolist()),
             "candidate_coverages": tuple((np.searchsorted(np.sort(u), grid, side="right") / u.size).tolist()),
             "valid": tuple(valid.tolist())}
    common = {"n": int(u.size), "method": risks[0].method, "target_risk": risks[0].target, "delta": float(delta),
              "multiple_testing": t.multiple_testing, "objective": objective, **curve}
    if not valid.any():
        return SelectiveThreshold(
            threshold=-math.inf, coverage=0.0, risk=math.nan, bound=math.nan, certified=False, accepted=0,
            risks=tuple(RiskBound(r.name, r.target, math.nan, math.nan, r.method, r.binary) for r in risks), **common)
    chosen = np.flatnonzero(valid)
    best = chosen[-1] if objective == "coverage" else chosen[np.lexsort((-chosen, p[chosen]))[0]]
    threshold = float(grid[best])
    bounds = [RiskBound(r_all.name, r_all.target, r_all.risk_at(u, threshold),
                        r_test.bound_at(t.test_u, threshold, t.tested_at[best]), r_all.method, r_all.binary)
              for r_all, r_test in zip(risks, t.test)]
    kept = u <= threshold
    return SelectiveThreshold(threshold=threshold, coverage=float(kept.mean()), risk=bounds[0].risk,
                              bound=bounds[0].bound, certified=True, accepted=int(kept.sum()), risks=tuple(bounds),
                              **common)


def _abstention_start(risks: list[_Risk], n: int, level: float) -> int:
    """The fewest accepted examples with which every abstention target can pass at ``level`` (1 without one)."""
    return max([1, *(abstention_count(n, r.target, level) for r in risks if r.losses is None)])


def calibration_size_needed(uncertainties, qualities, *, target_risk, limit: int = 100_000, seed: int = 0,
                            **settings) -> int | None:
    """About how many calibration examples like these the target would need (what a report says when nothing is
    certified): the smallest size, found by doubling then bisection, at which these examples repeated (in a seeded
    random order) get a threshold certified by :func:`calibrate_threshold` with the same ``settings``; None when
    ``limit`` examples would not do (the risk is nowhere below the target, say). An estimate that assumes new
    examples look like these; not a guarantee.
    """
    if isinstance(qualities, Mapping):
        u = np.asarray(uncertainties, dtype=float).ravel()
    else:
        u, qualities = as_inputs(uncertainties, qualities, what="a calibration size")
    risks = _risks(qualities, target_risk, settings.get("loss"), checked_choice(settings.get("method", DEFAULT_METHOD),
                   METHODS, "method"), checked_choice(settings.get("loss_type", "auto"), LOSS_TYPES, "loss_type"), u.size)
    by_uncertainty = np.argsort(u, kind="stable")
    counts = np.arange(1, u.size + 1)
    below = np.ones(u.size, dtype=bool)  # per number kept: is every risk of these examples below its target?
    for r in risks:
        risk = (1.0 - counts / u.size if r.losses is None else np.cumsum(r.losses[by_uncertainty]) / counts)
        below &= risk < r.target
    if not below.any():  # repeating these examples never changes their risks: no size would do
        return None
    order = np.random.default_rng(seed).permutation(u.size)
    signature = inspect.signature(calibrate_threshold)

    def certifies(size: int) -> bool:
        rows = np.resize(order, size)
        values = ({name: v if isinstance(v, str) else np.asarray(v, dtype=float)[rows] for name, v in qualities.items()}
                  if isinstance(qualities, Mapping) else qualities[rows])
        arguments = signature.bind(u[rows], values, target_risk=target_risk, seed=seed, **settings)
        arguments.apply_defaults()  # calibrate_threshold's defaults; its objective picks among valid ones: not needed
        return bool(_tested(**{k: v for k, v in arguments.arguments.items() if k != "objective"}).valid.any())

    if certifies(u.size):
        return u.size
    high = u.size
    while not certifies(high):
        if high >= limit:
            return None
        high = min(2 * high, limit)
    low = max(u.size, high // 2)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if certifies(middle) else (middle, high)
    return high
