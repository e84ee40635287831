"""PRR: oracle 1, random about 0, reversed negative, affine invariance, ties, max_rejection, NaN, bootstrap."""

from __future__ import annotations

import itertools
import re
import warnings

import numpy as np
import pytest

from lsplits.errors import ConfigError, InvalidOption
from lsplits.uncertainty import prr as prr_module
from lsplits.uncertainty.prr import UndefinedPRRWarning, prr, prr_with_ci, rejection_curve


def naive_auc(order_of_rejection: list[int], qualities: list[float], steps: int) -> float:
    """Mean kept quality, rejecting examples in the given order (most uncertain first), r = 0..steps-1."""
    values = []
    for r in range(steps):
        kept = [qualities[i] for i in order_of_rejection[r:]]
        values.append(sum(kept) / len(kept))
    return sum(values) / steps


def naive_prr(u, q, max_rejection=1.0):
    """Independent statement of B4 for inputs without ties."""
    n = len(q)
    steps = min(n, int(max_rejection * n + 1e-9) + 1)
    by_uncertainty = sorted(range(n), key=lambda i: -u[i])
    by_quality = sorted(range(n), key=lambda i: q[i])
    auc_u = naive_auc(by_uncertainty, q, steps)
    auc_o = naive_auc(by_quality, q, steps)
    auc_r = sum(q) / n
    return (auc_u - auc_r) / (auc_o - auc_r)


def test_hand_computed_three_examples():
    # u orders examples as q = 0.9, 0.1, 0.5 (from least uncertain); rejecting 0, 1, 2 most uncertain keeps
    # means 0.5, 0.5, 0.9 -> AUC 19/30; oracle keeps 0.5, 0.7, 0.9 -> 21/30; random 0.5 -> PRR = (4/30)/(6/30)
    result = prr_with_ci([0.1, 0.9, 0.5], [0.9, 0.5, 0.1], n_bootstrap=0)
    assert result.auc_uncertainty == pytest.approx(19 / 30)
    assert result.auc_oracle == pytest.approx(21 / 30)
    assert result.auc_random == pytest.approx(0.5)
    assert result.prr == pytest.approx(2 / 3)
    curve = rejection_curve([0.1, 0.9, 0.5], [0.9, 0.5, 0.1])
    assert curve.rates.tolist() == pytest.approx([0, 1 / 3, 2 / 3])
    assert curve.uncertainty.tolist() == pytest.approx([0.5, 0.5, 0.9])
    assert curve.oracle.tolist() == pytest.approx([0.5, 0.7, 0.9])
    assert curve.random.tolist() == pytest.approx([0.5, 0.5, 0.5])


def test_matches_naive_definition_without_ties():
    rng = np.random.default_rng(0)
    for n, rejections in ((2, (1.0, 0.5)), (5, (1.0, 0.5, 0.25)), (17, (1.0, 0.3)), (60, (1.0, 0.5, 0.1))):
        q = rng.random(n)
        u = -q + rng.normal(0, 0.5, n)
        for max_rejection in rejections:
            assert prr(u, q, max_rejection=max_rejection) == pytest.approx(naive_prr(u, q, max_rejection))


def test_oracle_random_reversed():
    rng = np.random.default_rng(1)
    q = rng.random(200)
    assert prr(-q, q) == pytest.approx(1.0)
    assert prr(1 - q, q) == pytest.approx(1.0)  # any decreasing function of quality is the oracle
    assert prr(q, q) < -0.9  # the worst order
    randoms = [prr(rng.permutation(200), q) for _ in range(300)]
    assert abs(np.mean(randoms)) < 0.03  # random uncertainties average out to 0


def test_invariant_under_affine_rescaling_of_qualities():
    rng = np.random.default_rng(2)
    q = rng.random(50)
    u = -q + rng.normal(0, 0.3, 50)
    base = prr(u, q)
    for scale, shift in ((100.0, 0.0), (0.01, 3.0), (2.5, -7.0)):
        assert prr(u, scale * q + shift) == pytest.approx(base)


def test_all_equal_qualities_give_nan_with_a_warning():
    with pytest.warns(UndefinedPRRWarning, match="undefined"):
        assert np.isnan(prr([0.1, 0.2, 0.3], [0.7, 0.7, 0.7]))
    with pytest.warns(UndefinedPRRWarning):
        assert np.isnan(prr([0.1], [0.3]))


def test_ties_are_averaged_over_every_order():
    # examples 0 and 1 share the top uncertainty: rejecting one of them at random
    u = [0.9, 0.9, 0.1, 0.2]
    q = [0.0, 1.0, 0.8, 0.4]
    orders = []
    for first, second in itertools.permutations([0, 1]):
        rejection = [first, second, 3, 2]
        orders.append(naive_auc(rejection, q, 4))
    expected_auc = sum(orders) / len(orders)
    assert prr_with_ci(u, q, n_bootstrap=0).auc_uncertainty == pytest.approx(expected_auc)
    # and the input order does not matter
    for permutation in itertools.permutations(range(4)):
        p = list(permutation)
        assert prr([u[i] for i in p], [q[i] for i in p]) == pytest.approx(prr(u, q))


def test_all_tied_uncertainties_equal_random():
    assert prr([0.5] * 6, [0.1, 0.9, 0.3, 0.5, 0.2, 0.8]) == pytest.approx(0.0, abs=1e-12)


def test_max_rejection_limits_the_area():
    q = [0.9, 0.8, 0.1, 0.2]
    u = [0.1, 0.2, 0.3, 0.4]  # rejects 0.2 first, then 0.1
    # rates 0 and 1/4 only: kept means 0.5 and 0.6 (AUC 0.55); oracle 0.5 and 0.6333 (AUC 0.56667)
    result = prr_with_ci(u, q, max_rejection=0.25, n_bootstrap=0)
    assert result.auc_uncertainty == pytest.approx(0.55)
    assert result.auc_oracle == pytest.approx((0.5 + 1.9 / 3) / 2)
    assert len(rejection_curve(u, q, max_rejection=0.25).rates) == 2
    with pytest.raises(ValueError):
        prr(u, q, max_rejection=1.5)


def test_bootstrap_interval_is_reproducible_and_brackets_the_estimate():
    rng = np.random.default_rng(3)
    q = rng.random(300)
    u = -q + rng.normal(0, 0.4, 300)
    first = prr_with_ci(u, q, n_bootstrap=500, seed=4)
    assert first.ci_low < first.prr < first.ci_high
    assert first.ci_high - first.ci_low < 0.3
    assert prr_with_ci(u, q, n_bootstrap=500, seed=4) == first
    assert prr_with_ci(u, q, n_bootstrap=500, seed=5).ci_low != first.ci_low
    assert first.n == 300


def test_bad_inputs():
    with pytest.raises(ValueError):
        prr([0.1, 0.2], [0.3])
    with pytest.raises(ValueError):
        prr([], [])
    with pytest.raises(ValueError, match="finite"):
        prr([0.1, float("nan")], [0.2, 0.3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prr([0.2, 0.1], [0.3, 0.4])  # a defined PRR never warns


def test_bootstrap_in_chunks_equals_one_draw_of_all_resamples(monkeypatch):
    """The chunked bootstrap resamples exactly what one (n_bootstrap, n) draw gives, for any chunk size."""
    rng = np.random.default_rng(7)
    n, resamples = 37, 64
    q = rng.random(n)
    u = np.round(-q + rng.normal(0, 0.5, n), 1)  # rounded: ties in uncertainty too
    draws = np.random.default_rng(11).integers(0, n, size=(resamples, n))  # every resample at once
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedPRRWarning)
        each = np.array([prr(u[d], q[d]) for d in draws])  # and the PRR of each computed on its own
    expected = np.quantile(each[~np.isnan(each)], [0.05, 0.95])
    results = []
    for chunk in (1, 5 * n, 7 * n, resamples * n, 10**9):  # 1, 5, 7 (not dividing 64), 64 rows, one chunk
        monkeypatch.setattr(prr_module, "_CHUNK_ELEMENTS", chunk)
        result = prr_with_ci(u, q, n_bootstrap=resamples, seed=11, confidence=0.9)
        assert [result.ci_low, result.ci_high] == pytest.approx(expected.tolist(), rel=1e-12)
        results.append(result)
    assert all(result == results[0] for result in results)  # bit for bit, whatever the chunk size


@pytest.mark.parametrize("options, message", [
    ({"max_rejection": 0.0}, "max_rejection must be a number in (0, 1] (a rejection rate; 1 = the whole curve), got 0.0"),
    ({"max_rejection": 1.5}, "max_rejection must be a number in (0, 1]"),
    ({"max_rejection": float("nan")}, "max_rejection must be a number in (0, 1]"),
    ({"confidence": 1.0}, "confidence must be a number in (0, 1) (for example 0.95), got 1.0"),
    ({"confidence": 0.0}, "confidence must be a number in (0, 1)"),
    ({"confidence": float("nan")}, "confidence must be a number in (0, 1)"),
    ({"confidence": "high"}, "confidence must be a number in (0, 1) (for example 0.95), got 'high'"),
    ({"n_bootstrap": -1}, "n_bootstrap must be a whole number >= 0 (bootstrap resamples; 0 = no interval), got -1"),
    ({"n_bootstrap": 2.5}, "n_bootstrap must be a whole number >= 0"),
    ({"seed": -3}, "seed must be a whole number >= 0 (a random seed), got -3"),
])
def test_options_out_of_range_are_refused(options, message):
    with pytest.raises(InvalidOption, match=re.escape(message)) as error:
        prr_with_ci([0.1, 0.2, 0.3], [0.3, 0.2, 0.1], **options)
    assert isinstance(error.value, ValueError) and isinstance(error.value, ConfigError)


def test_options_in_range_are_accepted():
    with pytest.warns(UndefinedPRRWarning):  # a rate below 1/n is allowed, and leaves PRR undefined
        result = prr_with_ci([0.1, 0.2, 0.3], [0.3, 0.2, 0.1], max_rejection=1e-9, n_bootstrap=np.int64(3),
                             confidence=0.5, seed=np.int64(0))
    assert result.n == 3 and np.isnan(result.prr)
    assert prr_with_ci([0.1, 0.2, 0.3], [0.3, 0.2, 0.1], n_bootstrap=0, seed=0).prr == pytest.approx(1.0)
    with pytest.raises(InvalidOption, match="max_rejection"):
        rejection_curve([0.1, 0.2], [0.3, 0.4], max_rejection=-0.1)


def test_prr_and_curve_share_one_tie_averaged_curve():
    from lsplits.uncertainty.prr import prr_and_curve

    u = [0.2, 0.2, 0.5, 0.9, 0.1, 0.5]
    q = [0.8, 0.4, 0.6, 0.0, 1.0, 0.3]
    result, curve = prr_and_curve(u, q, max_rejection=0.8, n_bootstrap=50, seed=3)
    assert result == prr_with_ci(u, q, max_rejection=0.8, n_bootstrap=50, seed=3)
    expected = rejection_curve(u, q, max_rejection=0.8)
    for field in ("rates", "uncertainty", "oracle", "random"):
        np.testing.assert_array_equal(getattr(curve, field), getattr(expected, field))
    assert result.auc_uncertainty == pytest.approx(curve.uncertainty.mean())
