"""Normalisers (min-max, quantile, binned PCC, isotonic PCC): fitted on a calibration set, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from lsplits.errors import ConfigError
from lsplits.uncertainty.normalization import (
    DegenerateCalibrationWarning,
    equal_frequency_edges,
    fit_normalizer,
    get_normalizer,
)


def test_minmax_by_hand():
    model = fit_normalizer("minmax", [0.0, 2.0, 4.0])
    assert model.transform([1.0, 5.0, -1.0, 4.0]).tolist() == [0.75, 0.0, 1.0, 0.0]
    with pytest.warns(DegenerateCalibrationWarning, match="equal"):
        flat = fit_normalizer("minmax", [3.0, 3.0])
    assert flat.transform([1.0, 3.0]).tolist() == [0.5, 0.5]


def test_quantile_by_hand():
    model = fit_normalizer("quantile", [4.0, 1.0, 3.0, 2.0])
    # share of calibration uncertainties >= u
    assert model.transform([2.5, 2.0, 0.0, 5.0, 4.0]).tolist() == [0.5, 0.75, 1.0, 0.0, 0.25]


def test_equal_frequency_edges():
    # 10 values in 3 bins: the smaller bins (3 values) first, then one of 4 -> edges at ranks 0, 3, 6 and 9
    assert equal_frequency_edges(np.arange(10.0), 3).tolist() == [0.0, 3.0, 6.0, 9.0]
    assert equal_frequency_edges(np.arange(8.0), 4).tolist() == [0.0, 2.0, 4.0, 6.0, 7.0]
    assert equal_frequency_edges(np.zeros(5), 3).tolist() == [0.0]


def test_binned_pcc_by_hand():
    u = np.arange(10.0)
    q = [1, 1, 1, 0.5, 0.5, 0.5, 0, 0, 0, 0]
    model = fit_normalizer("binned_pcc", u, q, num_bins=3)  # bins [0, 3), [3, 6), [6, 9]
    assert model.means.tolist() == [1.0, 0.5, 0.0]
    assert model.transform([1.5, 3.0, 8.5, 9.0, -1.0, 20.0]).tolist() == [1.0, 0.5, 0.0, 0.0, 1.0, 0.0]


def test_isotonic_pcc_by_hand():
    # decreasing isotonic fit of q = 1, 0.2, 0.6, 0 at u = 0..3 pools the middle pair to 0.4; the CIR points are
    # (0, 1) (a bound, kept), (1.5, 0.4) (the pooled stretch at its mean u) and (3, 0) (a bound)
    model = fit_normalizer("isotonic_pcc", [0, 1, 2, 3], [1, 0.2, 0.6, 0])
    assert model.points_x.tolist() == [0.0, 1.5, 3.0]
    assert model.points_y.tolist() == pytest.approx([1.0, 0.4, 0.0])
    assert model.transform([0.75, 2.25, -1.0, 5.0]).tolist() == pytest.approx([0.7, 0.2, 1.0, 0.0])
    # strictly decreasing qualities are their own fit; the ends keep their own uncertainty
    strict = fit_normalizer("isotonic_pcc", [0, 1, 2, 3], [0.9, 0.8, 0.3, 0.2])
    assert strict.transform([0.5, 2.5]).tolist() == pytest.approx([0.85, 0.25])
    # tied uncertainties are averaged first; qualities outside [0, 1] are clipped
    tied = fit_normalizer("isotonic_pcc", [0, 0, 1], [1.0, 0.0, 0.2])
    assert tied.transform([0.5]).tolist() == pytest.approx([0.35])
    clipped = fit_normalizer("isotonic_pcc", [0, 1], [1.7, -0.4])
    assert clipped.transform([0.0, 1.0]).tolist() == [1.0, 0.0]


def test_constant_quality_gives_a_constant_isotonic_map():
    model = fit_normalizer("isotonic_pcc", [0.1, 0.5, 0.9], [0.4, 0.4, 0.4])
    assert model.transform([0.0, 0.5, 2.0]).tolist() == pytest.approx([0.4, 0.4, 0.4])


def test_names_options_and_missing_qualities():
    with pytest.raises(ConfigError, match="normalizer must be one of minmax, .*, got 'platt'"):
        get_normalizer("platt")
    with pytest.raises(ConfigError, match="takes no options"):
        get_normalizer("minmax", num_bins=3)
    with pytest.raises(ValueError, match="calibration qualities"):
        fit_normalizer("binned_pcc", [0.1, 0.2])
    with pytest.raises(ValueError, match="finite"):
        fit_normalizer("quantile", [0.1, float("nan")])
