"""Normalisers: uncertainties -> confidences in [0, 1], fitted on a calibration set (LM-Polygraph's four).

Uncertainty scores live on estimator-specific scales (EigV counts clusters, LexSim is a distance);
a normaliser learns, on calibration examples, a decreasing map to a confidence that can be read,
thresholded or checked for calibration (ECE, :mod:`.ue_metrics`). Names as in LM-Polygraph:

- ``minmax``: ``(u_max - u) / (u_max - u_min)`` over the calibration uncertainties, clipped to [0, 1];
- ``quantile``: the share of calibration uncertainties that are >= u (the empirical CDF of the
  confidence -u), so confidences are uniform on the calibration set;
- ``binned_pcc``: equal-frequency bins of the calibration uncertainties; the confidence is the mean
  calibration quality of the bin u falls in (a "performance-calibrated confidence", Vashurin et
  al. 2025);
- ``isotonic_pcc``: a decreasing centred isotonic regression (Oron & Flournoy 2017) of quality on
  uncertainty, clipped to [0, 1]: constant stretches of the isotonic fit are collapsed to one point
  at their mean uncertainty (stretches at 0 or 1 keep both ends) and joined linearly.

The last two need the calibration qualities (higher = better, in [0, 1]). Each normaliser is a
small object: ``fit(uncertainties, qualities=None)`` returns it fitted, ``transform(uncertainties)``
gives the confidences; :func:`fit_normalizer` does both steps by name.

Differences from LM-Polygraph 0.7.0 (measured by ``benchmarks/vs_lm_polygraph.py``): its
BinnedPCC puts an uncertainty equal to the smallest bin edge, or outside the calibration range, in
the *last* bin and an uncertainty equal to an inner edge in the bin below (here: the bin the edges
define when fitting, and the first / last bin outside the range); its IsotonicPCC extrapolates
outside the calibration range with two points taken in set order (here: the nearest end's value);
a constant calibration set makes its min-max give 0 and its isotonic fit fail (here: 0.5 with a
warning, and the constant fit).
"""

from __future__ import annotations

import logging
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from lsplits.errors import InvalidInput, InvalidOption
from lsplits.params import check_choice

logger = logging.getLogger(__name__)

DEFAULT_BINS = 10
DEFAULT_NORMALIZER = "minmax"
"""The normaliser of uncertainties into confidences (for ECE) when none is named."""


class DegenerateCalibrationWarning(RuntimeWarning):
    """The calibration set cannot separate examples (all uncertainties equal)."""


def _vector(values, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    if array.size == 0:
        raise InvalidInput(f"{name}: need at least one value")
    if not np.isfinite(array).all():
        raise InvalidInput(f"{name} must be finite (drop NaN examples first)")
    return array


def _pair(uncertainties, qualities, who: str) -> tuple[np.ndarray, np.ndarray]:
    u = _vector(uncertainties, "calibration uncertainties")
    if qualities is None:
        raise InvalidInput(f"{who} is fitted on qualities too: pass the calibration qualities")
    q = _vector(qualities, "calibration qualities")
    if q.shape != u.shape:
        raise InvalidInput(f"{u.size} calibration uncertainties but {q.size} qualities")
    return u, q


@dataclass
class MinMaxNormalizer:
    """Confidence ``(u_max - u) / (u_max - u_min)``, clipped to [0, 1]."""

    low: float = math.nan
    high: float = math.nan
    supervised = False

    def fit(self, uncertainties, qualities=None) -> MinMaxNormalizer:
        u = _vector(uncertainties, "calibration uncertainties")
        self.low, self.high = float(u.min()), float(u.max())
        if self.low == self.high:
            warnings.warn("min-max normaliser: every calibration uncertainty is equal; all confidences "
                          "will be 0.5", DegenerateCalibrationWarning, stacklevel=2)
        return self

    def transform(self, uncertainties) -> np.ndarray:
        u = _vector(uncertainties, "uncertainties")
        if self.low == self.high:
            return np.full(u.shape, 0.5)
        return np.clip((self.high - u) / (self.high - self.low), 0.0, 1.0)


@dataclass
class QuantileNormalizer:
    """Confidence = share of the calibration uncertainties that are >= u."""

    calibration: np.ndarray = field(default_factory=lambda: np.empty(0))
    supervised = False

    def fit(self, uncertainties, qualities=None) -> QuantileNormalizer:
        self.calibration = np.sort(_vector(uncertainties, "calibration uncertainties"))
        return self

    def transform(self, uncertainties) -> np.ndarray:
        u = _vector(uncertainties, "uncertainties")
        n = self.calibration.size
        return (n - np.searchsorted(self.calibration, u, side="left")) / n


def equal_frequency_edges(sorted_values: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin edges at the order statistics that cut n values into n_bins nearly equal groups.

    The smaller groups (floor(n / n_bins) values) come first, as LM-Polygraph's BinnedPCC; repeated
    values merge edges, so there can be fewer bins.
    """
    n = sorted_values.size
    small = n // n_bins
    large = -(-n // n_bins)
    n_small = large * n_bins - n
    cuts = [i * small for i in range(n_small)] + [n_small * small + i * large for i in range(n_bins - n_small)]
    return np.unique(sorted_values[[*cuts, n - 1]])


@dataclass
class BinnedPCCNormalizer:
    """Confidence = mean calibration quality of the equal-frequency uncertainty bin that u falls in."""

    num_bins: int = DEFAULT_BINS
    edges: np.ndarray = field(default_factory=lambda: np.empty(0))
    means: np.ndarray = field(default_factory=lambda: np.empty(0))
    supervised = True

    def fit(self, uncertainties, qualities=None) -> BinnedPCCNormalizer:
        if self.num_bins < 1:
            raise InvalidOption(f"binned_pcc: num_bins must be at least 1, got {self.num_bins}")
        u, q = _pair(uncertainties, qualities, "binned_pcc")
        order = np.argsort(u, kind="stable")
        self.edges = equal_frequency_edges(u[order], self.num_bins)
        bins = self._bins(u)
        counts = np.bincount(bins, minlength=max(1, self.edges.size - 1))
        totals = np.bincount(bins, weights=q, minlength=counts.size)
        with np.errstate(invalid="ignore"):
            self.means = totals / counts
        if np.isnan(self.means).any():  # an empty bin cannot happen with these edges; guard anyway
            self.means = np.where(np.isnan(self.means), np.nanmean(self.means), self.means)
        return self

    def _bins(self, u: np.ndarray) -> np.ndarray:
        """Bin of each value: [e_i, e_i+1) with the last bin closed; outside the edges the end bins."""
        last = max(0, self.edges.size - 2)
        return np.clip(np.searchsorted(self.edges, u, side="right") - 1, 0, last)

    def transform(self, uncertainties) -> np.ndarray:
        return self.means[self._bins(_vector(uncertainties, "uncertainties"))]


def _isotonic_decreasing(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct sorted x, their counts and the decreasing isotonic fit of the mean y at each, clipped to [0, 1]."""
    from scipy.optimize import isotonic_regression

    distinct, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=y) / counts
    fitted = isotonic_regression(means, weights=counts.astype(float), increasing=False).x
    return distinct, counts, np.clip(fitted, 0.0, 1.0)


@dataclass
class IsotonicPCCNormalizer:
    """Confidence from a decreasing centred isotonic regression of quality on uncertainty, in [0, 1]."""

    points_x: np.ndarray = field(default_factory=lambda: np.empty(0))
    points_y: np.ndarray = field(default_factory=lambda: np.empty(0))
    supervised = True

    def fit(self, uncertainties, qualities=None) -> IsotonicPCCNormalizer:
        u, q = _pair(uncertainties, qualities, "isotonic_pcc")
        distinct, counts, fitted = _isotonic_decreasing(u, q)
        starts = np.flatnonzero(np.r_[True, fitted[1:] != fitted[:-1]])
        ends = np.r_[starts[1:], fitted.size]
        xs: list[float] = []
        ys: list[float] = []
        for step, (start, end) in enumerate(zip(starts, ends, strict=True)):
            level = float(fitted[start])
            first, last = float(distinct[start]), float(distinct[end - 1])
            if level in (0.0, 1.0):  # stretches at the bounds are not collapsed (as the CIR paper)
                xs += [first, last]
                ys += [level, level]
            elif step == 0:
                xs.append(first)
                ys.append(level)
            elif step == starts.size - 1:
                xs.append(last)
                ys.append(level)
            else:
                weights = counts[start:end]
                xs.append(float(np.average(distinct[start:end], weights=weights)))
                ys.append(level)
        x, keep = np.unique(np.array(xs), return_index=True)
        self.points_x, self.points_y = x, np.array(ys)[keep]
        return self

    def transform(self, uncertainties) -> np.ndarray:
        u = _vector(uncertainties, "uncertainties")
        return np.interp(u, self.points_x, self.points_y)


NORMALIZERS = {DEFAULT_NORMALIZER: MinMaxNormalizer, "quantile": QuantileNormalizer, "binned_pcc": BinnedPCCNormalizer,
               "isotonic_pcc": IsotonicPCCNormalizer}


def get_normalizer(name: str, **options):
    """A fresh normaliser by name (``num_bins`` for binned_pcc, as LM-Polygraph); InvalidOption lists the choices."""
    key = check_choice("normalizer", name, tuple(NORMALIZERS), fold_case=True)
    if options and key != "binned_pcc":
        raise InvalidOption(f"normaliser {key!r} takes no options, got {', '.join(options)}")
    unknown = set(options) - {"num_bins"}
    if unknown:
        raise InvalidOption(f"normaliser 'binned_pcc' takes only num_bins, got {', '.join(sorted(unknown))}")
    return NORMALIZERS[key](**options)


def fit_normalizer(name: str, uncertainties, qualities=None, **options):
    """The normaliser named ``name`` fitted on calibration uncertainties (and qualities for the PCC ones).

    Example:
        >>> fit_normalizer("minmax", [0.0, 2.0, 4.0]).transform([1.0, 5.0]).tolist()
        [0.75, 0.0]
    """
    return get_normalizer(name, **options).fit(uncertainties, qualities)
