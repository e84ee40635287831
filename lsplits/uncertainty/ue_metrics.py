"""Uncertainty-evaluation metrics beside PRR: how well per-example uncertainties u track qualities q.

Inputs are one uncertainty (higher = less trustworthy) and one quality (higher = better) per
example. Every metric is order-independent (ties are averaged over, never broken by input order):

- ``prr``: the Prediction Rejection Ratio, :mod:`.prr`.
- ``roc_auc``, ``pr_auc``: how well u detects bad predictions, bad meaning ``q < bad_below`` (the
  positive class). ROC-AUC is the probability that a bad example has a higher u than a good one
  (ties count 1/2; the Mann-Whitney statistic); PR-AUC is the average precision
  ``sum_n (R_n - R_{n-1}) P_n`` over the distinct thresholds of u (as scikit-learn's
  ``average_precision_score``).
- ``aurc``: area under the risk-coverage curve (Geifman & El-Yaniv 2017) with risk ``1 - q``:
  the mean, over coverages c = 1..n, of the mean risk of the c least uncertain examples. It is
  ``1 - AUC`` of PRR's rejection curve. ``e_aurc``: AURC minus the oracle's (u = -q), >= 0.
- ``rpp``: reversed-pairs proportion, the share of the n^2 ordered pairs (i, j) in which i is less
  uncertain *and* worse (``u_i < u_j`` and ``q_i < q_j``), as LM-Polygraph; 0 is perfect, at most
  (n - 1) / (2n). Counted exactly: they are the pairs concordant between u and q.
- ``spearman``, ``kendall``: rank correlation (Spearman's rho; Kendall's tau-b) between u and -q;
  1 is perfect. RPP and Kendall share one exact O(n log n) count of concordant, discordant and tied
  pairs (Knight 1966; SciPy's compiled merge count of discordant pairs when available).
- ``ece``: expected calibration error of the confidences from a normaliser (:mod:`.normalization`,
  ``minmax`` by default) against q in [0, 1]: 20 equal-width bins ([0, 1/20], then (lo, hi]),
  ``sum_b n_b / n * |mean q_b - mean confidence_b|``. The normaliser is fitted on ``calibration``
  when given; else unsupervised normalisers (minmax, quantile) are fitted on the evaluated examples
  (as LM-Polygraph's ``ECE(normalize=True)``) and supervised ones (the PCC normalisers, which see
  q) are cross-fitted over 5 folds, so no example's confidence was fitted on its own quality.

Beside the metrics, ``selective_threshold`` (:func:`selective_threshold`, keys ``selective_threshold``,
``selective_bound``, ``selective_coverage``) turns the ranking into a decision: the rejection threshold
certified by :mod:`.selective` to keep the mean loss ``1 - q`` of the accepted examples <= ``target_risk``
with probability >= ``1 - delta``.

Undefined values are NaN with an :class:`UndefinedMetricWarning`, never a silent number: ROC-AUC
without both bad and good examples, PR-AUC without a bad one, rank correlations of a constant u or q.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from lsplits.errors import InvalidInput, InvalidOption
from lsplits.params import Each, Options, Param, check
from lsplits.uncertainty.bounds import DEFAULT_DELTA, DEFAULT_METHOD
from lsplits.uncertainty.losses import DEFAULT_LOSS
from lsplits.uncertainty.normalization import DEFAULT_NORMALIZER, get_normalizer
from lsplits.uncertainty.prr import DEFAULT_MAX_REJECTION, RejectionCurve, as_inputs, prr, rejection_curve
from lsplits.uncertainty.selective import DEFAULT_MULTIPLE_TESTING, calibrate_threshold

try:  # SciPy's compiled merge count of discordant pairs (behind scipy.stats.kendalltau); numpy if absent
    from scipy.stats._stats import _kendall_dis
except ImportError:  # pragma: no cover - depends on the SciPy build
    _kendall_dis = None

METRICS = ("prr", "roc_auc", "pr_auc", "aurc", "e_aurc", "rpp", "spearman", "kendall", "ece")
PAPER_METRICS = ("prr",)
NEEDS_BAD_BELOW = ("roc_auc", "pr_auc")
METRIC_NAME = Options(METRICS, fold_case=True)
"""The rule of one metric name (case-insensitive), for settings that list metrics."""
SELECTIVE = "selective_threshold"  # not a ranking metric: three values, computed on request (compute_metrics)
HIGHER_IS_BETTER = {"prr": True, "roc_auc": True, "pr_auc": True, "aurc": False, "e_aurc": False, "rpp": False,
                    "spearman": True, "kendall": True, "ece": False}
DISPLAY_NAMES = {"prr": "PRR", "roc_auc": "ROC-AUC", "pr_auc": "PR-AUC", "aurc": "AURC", "e_aurc": "E-AURC",
                 "rpp": "RPP", "spearman": "Spearman", "kendall": "Kendall", "ece": "ECE"}
ECE_BINS = 20
CROSS_FIT_FOLDS = 5


class UndefinedMetricWarning(RuntimeWarning):
    """A metric is undefined for this input (for instance ROC-AUC without any bad prediction)."""


def _inputs(uncertainties, qualities) -> tuple[np.ndarray, np.ndarray]:
    return as_inputs(uncertainties, qualities, what="an uncertainty metric")


def _undefined(metric: str, reason: str) -> float:
    warnings.warn(f"{metric} is undefined: {reason}; returning NaN", UndefinedMetricWarning, stacklevel=3)
    return math.nan


def _bad(q: np.ndarray, bad_below: float | None, metric: str) -> np.ndarray:
    """Which predictions are bad (``q < bad_below``), with ``bad_below`` checked as ``lsplits ue --bad-below`` is."""
    if bad_below is None:
        raise InvalidOption(f"{metric} needs bad_below: the quality under which a prediction counts "
                                     "as bad (the positive class)")
    return q < check("bad_below", bad_below)


def roc_auc(uncertainties, qualities, *, bad_below: float) -> float:
    """P(u_bad > u_good) + P(tie) / 2 over bad (q < bad_below) x good pairs.

    Example:
        >>> roc_auc([0.9, 0.2, 0.5], [0.1, 0.9, 0.8], bad_below=0.5)
        1.0
    """
    u, q = _inputs(uncertainties, qualities)
    bad = _bad(q, bad_below, "roc_auc")
    n_bad = int(bad.sum())
    n_good = bad.size - n_bad
    if n_bad == 0 or n_good == 0:
        return _undefined("roc_auc", f"{n_bad} bad and {n_good} good predictions at bad_below={bad_below} "
                                     "(it needs both)")
    ranks = average_ranks(u)
    return float((ranks[bad].sum() - n_bad * (n_bad + 1) / 2) / (n_bad * n_good))


def pr_auc(uncertainties, qualities, *, bad_below: float) -> float:
    """Average precision of u at finding the bad predictions (q < bad_below).

    Example:
        >>> pr_auc([0.9, 0.2, 0.5, 0.4], [0.1, 0.9, 0.8, 0.3], bad_below=0.5)
        0.8333333333333333
    """
    u, q = _inputs(uncertainties, qualities)
    bad = _bad(q, bad_below, "pr_auc")
    if not bad.any():
        return _undefined("pr_auc", f"no prediction has quality below bad_below={bad_below}")
    order = np.argsort(-u, kind="stable")
    sorted_u, sorted_bad = u[order], bad[order]
    last_of_threshold = np.r_[np.flatnonzero(np.diff(sorted_u)), u.size - 1]
    true_positives = np.cumsum(sorted_bad)[last_of_threshold]
    precision = true_positives / (last_of_threshold + 1)
    recall = true_positives / true_positives[-1]
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def _areas(u: np.ndarray, q: np.ndarray, curve: RejectionCurve | None = None) -> tuple[float, float]:
    """Areas under the rejection curves (mean kept quality over coverages n..1) of u and of the oracle.

    ``curve``: the whole rejection curve of (u, q), when the caller has it already (PRR's).
    """
    curve = curve if curve is not None else rejection_curve(u, q)
    return float(curve.uncertainty.mean()), float(curve.oracle.mean())


def aurc(uncertainties, qualities, *, curve: RejectionCurve | None = None) -> float:
    """Area under the risk-coverage curve, risk = 1 - quality (lower = better).

    Example:
        >>> round(aurc([0.1, 0.9], [1.0, 0.0]), 6)  # coverage 1: risk 0; coverage 2: risk 1/2
        0.25
    """
    u, q = _inputs(uncertainties, qualities)
    return 1.0 - _areas(u, q, curve)[0]


def e_aurc(uncertainties, qualities, *, curve: RejectionCurve | None = None) -> float:
    """Excess AURC: AURC of u minus AURC of the oracle order (0 = oracle)."""
    u, q = _inputs(uncertainties, qualities)
    area, oracle = _areas(u, q, curve)
    return oracle - area


def _inversions(values: np.ndarray) -> int:
    """Number of index pairs i < j with values[i] > values[j] (merge counting, one numpy pass per level)."""
    n = values.size
    x = values.max() - values  # an inversion of values is an increasing pair of x
    span = int(x.max()) + 1 if n else 1
    index = np.arange(n)
    total = 0
    width = 1
    while width < n:
        block = index // (2 * width)
        right = (index // width) % 2 == 1
        key = x + block * span  # blocks of `width` are sorted; offsets keep pairs of blocks apart
        left_keys = key[~right]
        right_keys, right_block = key[right], block[right]
        below = np.searchsorted(left_keys, right_keys, side="left")
        start = np.searchsorted(left_keys, right_block * span, side="left")
        total += int((below - start).sum())
        x = np.sort(key) - block * span
        width *= 2
    return total


def _dense_ranks(values: np.ndarray) -> np.ndarray:
    """1 for the smallest value, 2 for the next distinct one, ... (as integers)."""
    order = np.argsort(values)
    ordered = values[order]
    ranks = np.empty(values.size, dtype=np.intp)
    ranks[order] = np.cumsum(np.r_[True, ordered[1:] != ordered[:-1]])
    return ranks


def _tied_pairs(group_sizes: np.ndarray) -> int:
    sizes = group_sizes[group_sizes > 1].astype(np.int64)
    return int((sizes * (sizes - 1) // 2).sum())


def _pair_counts(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int, int, int]:
    """Over the n(n-1)/2 pairs: (pairs, tied in a, tied in b, tied in both, discordant), exactly (Knight 1966).

    Sorted by (a, b), the discordant pairs are the inversions of b; SciPy's compiled merge count
    (the one behind ``scipy.stats.kendalltau``) counts them when available, numpy otherwise.
    """
    n = a.size
    y = _dense_ranks(b)
    order = np.argsort(a)
    ordered = a[order]
    xs = np.cumsum(np.r_[True, ordered[1:] != ordered[:-1]]).astype(np.intp)
    ys = y[order]
    keys = None
    if xs[-1] < n:  # ties in a: sort each tied run by b (equal (a, b) pairs may stay in any order)
        keys = xs.astype(np.int64) * (int(y.max()) + 1) + ys
        again = np.argsort(keys)
        xs, ys, keys = xs[again], ys[again], keys[again]
    discordant = int(_kendall_dis(xs, ys)) if _kendall_dis is not None else _inversions(ys)
    tied_a = _tied_pairs(np.diff(np.r_[np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]]), n]))
    tied_both = 0 if keys is None else _tied_pairs(np.diff(np.r_[np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]), n]))
    return n * (n - 1) // 2, tied_a, _tied_pairs(np.bincount(y)), tied_both, discordant


def rpp(uncertainties, qualities) -> float:
    """Share of ordered pairs (i, j), out of n^2, with u_i < u_j and q_i < q_j (lower = better).

    Those are the pairs concordant between u and q: pairs - tied in u - tied in q + tied in both - discordant.

    Example:
        >>> rpp([0.1, 0.2, 0.3], [0.5, 0.9, 0.1])  # only (0, 1) is reversed: 1 of 9
        0.1111111111111111
    """
    u, q = _inputs(uncertainties, qualities)
    pairs, tied_u, tied_q, tied_both, discordant = _pair_counts(u, q)
    return (pairs - tied_u - tied_q + tied_both - discordant) / u.size**2


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, tied values sharing their mean rank (as ``scipy.stats.rankdata``; any sort order will do)."""
    order = np.argsort(values)  # not stable on purpose: tie order cannot matter, and the default sort is fastest
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], values.size]
    ranks = np.empty(values.size)
    ranks[order] = np.repeat((starts + ends + 1) / 2, ends - starts)
    return ranks


def spearman(uncertainties, qualities) -> float:
    """Spearman's rho between u and -q: Pearson correlation of the average ranks."""
    u, q = _inputs(uncertainties, qualities)
    ru, rq = average_ranks(u), average_ranks(-q)
    ru -= ru.mean()
    rq -= rq.mean()
    scale = math.sqrt(float(ru @ ru) * float(rq @ rq))
    if scale == 0:
        return _undefined("spearman", "the uncertainties or the qualities are constant")
    return float(ru @ rq) / scale


def kendall(uncertainties, qualities) -> float:
    """Kendall's tau-b between u and -q: (concordant - discordant) / sqrt((pairs - tied u)(pairs - tied q))."""
    u, q = _inputs(uncertainties, qualities)
    pairs, tied_u, tied_q, tied_both, discordant = _pair_counts(u, -q)
    if tied_u == pairs or tied_q == pairs:
        return _undefined("kendall", "the uncertainties or the qualities are constant")
    difference = pairs - tied_u - tied_q + tied_both - 2 * discordant
    return difference / math.sqrt(pairs - tied_u) / math.sqrt(pairs - tied_q)


def calibration_error(confidences, qualities, *, n_bins: int = ECE_BINS) -> float:
    """ECE of confidences in [0, 1] against qualities in [0, 1] over equal-width bins ([0, h], then (lo, hi])."""
    c, q = _inputs(confidences, qualities)
    check("n_bins", n_bins)
    for name, values in (("confidences", c), ("qualities", q)):
        if values.min() < 0 or values.max() > 1:
            raise InvalidInput(f"ece needs {name} in [0, 1], got values from {values.min():g} to {values.max():g}")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.clip(np.searchsorted(edges, c, side="left") - 1, 0, n_bins - 1)
    counts = np.bincount(bins, minlength=n_bins)
    gap = np.bincount(bins, weights=q, minlength=n_bins) - np.bincount(bins, weights=c, minlength=n_bins)
    return float(np.abs(gap).sum() / c.size) if counts.any() else math.nan


def _folds(n: int, folds: int) -> np.ndarray:
    """Fold of each example: interleaved by position (deterministic, no seed needed)."""
    return np.arange(n) % max(2, min(folds, n))


def confidences(uncertainties, qualities=None, *, normalizer: str = DEFAULT_NORMALIZER, calibration=None,
                folds: int = CROSS_FIT_FOLDS, **options) -> np.ndarray:
    """Confidences of the examples from the named normaliser (see the module docstring for the fitting)."""
    u = np.asarray(uncertainties, dtype=float).ravel()
    model = get_normalizer(normalizer, **options)
    if calibration is not None:
        calibration_u, calibration_q = calibration
        return model.fit(calibration_u, calibration_q).transform(u)
    if not model.supervised:
        return model.fit(u, qualities).transform(u)
    q = np.asarray(qualities, dtype=float).ravel()
    fold = _folds(u.size, folds)
    result = np.empty(u.size)
    if u.size < 2:
        raise InvalidInput(f"cross-fitting the {normalizer} normaliser needs at least 2 examples")
    for f in np.unique(fold):
        held = fold == f
        result[held] = get_normalizer(normalizer, **options).fit(u[~held], q[~held]).transform(u[held])
    return result


def ece(uncertainties, qualities, *, normalizer: str = DEFAULT_NORMALIZER, calibration=None, n_bins: int = ECE_BINS,
        **options) -> float:
    """Expected calibration error of the normalised confidences against qualities in [0, 1].

    Example:
        >>> round(ece([0.0, 1.0], [1.0, 0.0]), 6)  # min-max: confidences 1 and 0, perfectly calibrated
        0.0
    """
    u, q = _inputs(uncertainties, qualities)
    return calibration_error(confidences(u, q, normalizer=normalizer, calibration=calibration, **options), q,
                             n_bins=n_bins)


def check_metrics(metrics: Sequence[str], bad_below: float | None = None) -> tuple[str, ...]:
    """The metric names, lower-cased and checked before any work (unknown name, missing bad_below)."""
    names = check("metrics", metrics, Param(Each(METRIC_NAME)))
    needing = [m for m in names if m in NEEDS_BAD_BELOW]
    check("bad_below", bad_below)
    if needing and bad_below is None:
        raise InvalidOption(name="metrics", problem=f": {' and '.join(needing)} need{'s' if len(needing) == 1 else ''} "
                            "{opt:bad_below}: the quality under which a prediction counts as bad")
    return names


def selective_threshold(uncertainties, qualities, *, target_risk: float | None = None, delta: float = DEFAULT_DELTA,
                        selective_method: str = DEFAULT_METHOD, multiple_testing: str = DEFAULT_MULTIPLE_TESTING,
                        selective_loss: str = DEFAULT_LOSS, bad_below: float | None = None) -> dict[str, float]:
    """The certified rejection threshold (:func:`lsplits.uncertainty.selective.calibrate_threshold`) as plain floats.

    ``selective_threshold`` (``-inf`` when none is certified: reject everything), ``selective_bound`` (the
    upper confidence bound on the selective risk there, NaN if none) and ``selective_coverage`` (share kept).
    ``multiple_testing`` is the Learn-then-Test procedure; ``selective_loss`` ``bad`` makes the risk the rate
    of outputs with quality below ``bad_below`` (0/1 losses: the exact binomial test, as 0/1 qualities get).

    >>> selective_threshold([0.1, 0.2, 0.3, 0.4] * 50, [1.0, 0.9, 0.5, 0.0] * 50, target_risk=0.2)["selective_coverage"]
    0.5
    """
    if target_risk is None:
        raise InvalidOption("selective_threshold needs target_risk: the mean loss 1 - quality to certify")
    from lsplits.uncertainty.losses import quality_loss

    rule = calibrate_threshold(uncertainties, qualities, target_risk=target_risk, delta=delta, method=selective_method,
                               multiple_testing=multiple_testing, loss=quality_loss(selective_loss, bad_below))
    return {"selective_threshold": rule.threshold, "selective_bound": rule.bound, "selective_coverage": rule.coverage}


def compute_metrics(uncertainties, qualities, metrics: Sequence[str] | None = None, *, bad_below: float | None = None,
                    normalizer: str = DEFAULT_NORMALIZER, calibration_uncertainties=None, calibration_qualities=None,
                    max_rejection: float = DEFAULT_MAX_REJECTION, n_bins: int = ECE_BINS,
                    curve: RejectionCurve | None = None, target_risk: float | None = None,
                    delta: float = DEFAULT_DELTA, selective_method: str = DEFAULT_METHOD,
                    multiple_testing: str = DEFAULT_MULTIPLE_TESTING,
                    selective_loss: str = DEFAULT_LOSS) -> dict[str, float]:
    """Every requested metric of one (uncertainties, qualities) pair: ``{"prr": ..., "roc_auc": ...}``.

    ``metrics=None``: every metric the arguments allow (ROC-AUC and PR-AUC only with ``bad_below``, the
    selective threshold only with ``target_risk``). ``"selective_threshold"`` adds the three keys of
    :func:`selective_threshold` at ``target_risk``, ``delta`` and ``selective_method``.
    ``calibration_uncertainties`` and ``calibration_qualities`` (both or neither) fit ECE's normaliser.
    ``curve``: the whole (``max_rejection`` 1) rejection curve of the pair when the caller has it, for AURC.

    Example:
        >>> compute_metrics([0.1, 0.5, 0.9], [0.9, 0.5, 0.1], ["prr", "spearman", "rpp"])
        {'prr': 1.0, 'spearman': 1.0, 'rpp': 0.0}
    """
    if metrics is None:
        metrics = [m for m in METRICS if bad_below is not None or m not in NEEDS_BAD_BELOW]
        metrics += [SELECTIVE] if target_risk is not None else []
    metrics = check("metrics", metrics, Param(Each(Options(METRICS + (SELECTIVE,), fold_case=True))))
    selective = any(m.lower() == SELECTIVE for m in metrics)
    if selective and target_risk is None:
        raise InvalidOption(f"{SELECTIVE} needs target_risk: the mean loss 1 - quality to certify")
    names = [m for m in metrics if m.lower() != SELECTIVE]
    names = check_metrics(names, bad_below) if names or not selective else ()
    if (calibration_uncertainties is None) != (calibration_qualities is None):
        raise InvalidOption("give both calibration_uncertainties and calibration_qualities, or neither")
    calibration = None if calibration_uncertainties is None else (calibration_uncertainties, calibration_qualities)
    get_normalizer(normalizer)  # an unknown normaliser fails before any metric is computed
    u, q = _inputs(uncertainties, qualities)
    functions = {
        "prr": lambda: prr(u, q, max_rejection=max_rejection),
        "roc_auc": lambda: roc_auc(u, q, bad_below=bad_below),
        "pr_auc": lambda: pr_auc(u, q, bad_below=bad_below),
        "aurc": lambda: aurc(u, q, curve=curve),
        "e_aurc": lambda: e_aurc(u, q, curve=curve),
        "rpp": lambda: rpp(u, q),
        "spearman": lambda: spearman(u, q),
        "kendall": lambda: kendall(u, q),
        "ece": lambda: ece(u, q, normalizer=normalizer, calibration=calibration, n_bins=n_bins),
    }
    values = {name: float(functions[name]()) for name in names}
    if selective:
        values.update(selective_threshold(u, q, target_risk=target_risk, delta=delta,
                                          selective_method=selective_method, multiple_testing=multiple_testing,
                                          selective_loss=selective_loss, bad_below=bad_below))
    return values
