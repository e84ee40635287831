"""Risk-controlled selective prediction (lsplits.uncertainty.selective): the bounds against hand computations,
the threshold rule on small hand-made sets, and the finite-sample guarantee by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lsplits.errors import InvalidInput, InvalidOption
from lsplits.uncertainty.selective import (
    SelectiveThreshold,
    accept,
    calibrate_threshold,
    oracle_threshold,
    p_value,
    selective_risk,
    smallest_certifiable,
    upper_bound,
)

# --- bounds against hand computations ---------------------------------------------------------------------


def test_hoeffding_bound_and_p_value_by_hand():
    losses = np.array([1.0] * 20 + [0.0] * 80)  # mean 0.2, m = 100
    assert upper_bound(losses, delta=0.1, method="ltt-hoeffding") == pytest.approx(
        0.2 + math.sqrt(math.log(10) / 200), abs=1e-8)  # 0.30730
    assert p_value(losses, 0.35, method="ltt-hoeffding") == pytest.approx(math.exp(-2 * 100 * 0.15 ** 2))
    assert p_value(losses, 0.15, method="ltt-hoeffding") == 1.0  # the mean is above the target


def test_hoeffding_bentkus_p_value_by_hand():
    losses = [1.0] + [0.0] * 9  # mean 0.1, m = 10, target 0.5
    kl = 0.1 * math.log(0.1 / 0.5) + 0.9 * math.log(0.9 / 0.5)  # 0.36806
    hoeffding = math.exp(-10 * kl)  # 0.02521
    bentkus = math.e * 11 / 1024  # e * P(Bin(10, 0.5) <= 1) = 0.02920
    assert p_value(losses, 0.5, method="ltt-hb") == pytest.approx(min(hoeffding, bentkus))
    assert p_value(losses, 0.5, method="ltt-hb") == pytest.approx(0.025207, abs=1e-6)
    # a large sample with a small mean: the binomial term is the smaller one
    many = [1.0] * 5 + [0.0] * 95
    from scipy.stats import binom
    assert p_value(many, 0.12, method="ltt-hb") == pytest.approx(math.e * binom.cdf(5, 100, 0.12))


def test_wsr_two_losses_by_hand():
    # delta 0.5, losses (0, 1) in this order, R = 0.5: sigma2_0 = 1/4 so nu_1 = min(1, sqrt(2 ln 2 / (2/4))) = 1,
    # K_1 = 1 - 1 * (0 - 0.5) = 1.5; mu_1 = 0.25, sigma2_1 = (0.25 + 0.0625) / 2, nu_2 = 1, K_2 = 1.5 * 0.5.
    assert p_value([0.0, 1.0], 0.5, delta=0.5, method="ltt-wsr", seed=None) == pytest.approx(1 / 1.5)


def _wsr_p_by_recurrence(losses, risk, delta):
    """The WSR p-value written out as the recurrence of Waudby-Smith & Ramdas / RCPS, one loss at a time."""
    m = len(losses)
    total, squares, wealth, best = 0.0, 0.0, 1.0, 1.0
    variance = 0.25
    for i, loss in enumerate(losses, start=1):
        bet = min(1.0, math.sqrt(2 * math.log(1 / delta) / (m * variance)))
        wealth *= 1 - bet * (loss - risk)
        best = max(best, wealth)
        total += loss
        mean = (0.5 + total) / (1 + i)
        squares += (loss - mean) ** 2
        variance = (0.25 + squares) / (1 + i)
    return min(1.0, 1 / best)


def test_wsr_matches_the_recurrence_with_bets_below_one():
    losses = list(np.random.default_rng(3).random(200))  # variance ~1/12
    assert 2 * math.log(10) / (200 * np.var(losses)) < 0.5  # so the bets settle well under 1
    for risk in (0.45, 0.55, 0.6):
        assert p_value(losses, risk, delta=0.1, method="ltt-wsr", seed=None) == pytest.approx(
            _wsr_p_by_recurrence(losses, risk, 0.1), rel=1e-10)
    assert p_value(losses, 0.6, delta=0.1, method="ltt-wsr", seed=None) < 0.1 < p_value(losses, 0.5, seed=None)


def test_smallest_certifiable_sample_by_hand():
    # Hoeffding with zero losses certifies R once exp(-2 m R^2) <= delta: m >= ln(1/delta) / (2 R^2)
    assert smallest_certifiable("ltt-hoeffding", 0.05, 0.1, 10_000) == math.ceil(math.log(10) / (2 * 0.05 ** 2)) == 461
    assert smallest_certifiable("ltt-hoeffding", 0.08, 0.1, 100) == 101  # 180 needed: more than the limit
    # WSR: the first m whose recurrence p-value on m zeros is <= delta
    wsr = next(m for m in range(1, 200) if _wsr_p_by_recurrence([0.0] * m, 0.05, 0.1) <= 0.1)
    assert smallest_certifiable("ltt-wsr", 0.05, 0.1, 10_000) == wsr
    assert wsr >= math.log(10) / math.log(1.05)  # each zero loss multiplies the wealth by at most 1 + R


def test_small_targets_start_the_sequence_later():
    # 400 outputs, the 60% most certain right, the rest wrong: at target 0.05 a sequence starting at 10%
    # (40 examples, fewer than the 48 WSR needs even when all are right) would stop at once
    u = np.arange(400.0)
    q = np.r_[np.ones(240), np.zeros(160)]
    rule = calibrate_threshold(u, q, max_risk=0.05)
    assert rule.certified and 0.5 <= rule.coverage <= 0.65
    stopped = calibrate_threshold(u, q, max_risk=0.05, coverages=[round(0.01 * i, 2) for i in range(10, 101)])
    assert not stopped.certified  # the same grid given explicitly is tested from its first level


def test_bounds_are_inverse_of_the_p_values():
    losses = np.random.default_rng(0).beta(2, 8, size=200)
    for method in ("ltt-wsr", "ltt-hoeffding", "ltt-hb"):
        bound = upper_bound(losses, delta=0.1, method=method)
        assert losses.mean() < bound < 1
        assert p_value(losses, min(bound + 1e-6, 0.999), method=method) <= 0.1
        assert p_value(losses, bound - 1e-6, method=method) > 0.1


def test_wsr_is_tighter_than_hoeffding_on_low_variance_losses():
    losses = np.random.default_rng(1).beta(20, 80, size=300)  # mean 0.2, sd 0.04
    wsr, hoeffding = (upper_bound(losses, delta=0.1, method=m) for m in ("ltt-wsr", "ltt-hoeffding"))
    assert wsr - losses.mean() < 0.5 * (hoeffding - losses.mean())


# --- the threshold rule on hand-made sets --------------------------------------------------------------------


def test_threshold_on_a_hand_made_set():
    u = [0.1, 0.2, 0.3, 0.4] * 50
    q = [1.0, 0.9, 0.5, 0.0] * 50  # losses 0, 0.1, 0.5, 1: selective risks 0, 0.05, 0.2, 0.4
    rule = calibrate_threshold(u, q, max_risk=0.2)
    assert isinstance(rule, SelectiveThreshold)
    assert (rule.certified, rule.threshold, rule.coverage, rule.accepted, rule.n) == (True, 0.2, 0.5, 100, 200)
    assert rule.risk == pytest.approx(0.05)
    assert 0.05 < rule.bound <= 0.2
    assert (rule.method, rule.max_risk, rule.delta, rule.multiple_testing) == ("ltt-wsr", 0.2, 0.1, "fixed-sequence")
    assert accept(rule, [0.05, 0.2, 0.2000001, 5]).tolist() == [True, True, False, False]
    assert rule.accept([0.3]).tolist() == [False]


def test_ties_are_accepted_or_rejected_together():
    u = [0.0] * 50 + [1.0] * 150  # one tie group of certain outputs, one of uncertain ones
    q = [1.0] * 50 + [0.6] * 150
    rule = calibrate_threshold(u, q, max_risk=0.15, coverages=[0.1, 0.2, 0.5, 1.0])
    assert rule.threshold == 0.0 and rule.accepted == 50  # coverage 10% and 20% both mean the whole first group


def test_nothing_certified_rejects_everything():
    rule = calibrate_threshold(np.arange(40.0), [0.5] * 40, max_risk=0.1)
    assert not rule.certified
    assert rule.threshold == -math.inf and rule.coverage == 0.0 and rule.accepted == 0
    assert math.isnan(rule.risk) and math.isnan(rule.bound)
    assert not accept(rule, [-1e300, 0.0]).any()


def test_fixed_sequence_stops_at_the_first_failure_bonferroni_does_not():
    # the 20 most certain outputs are wrong, the next 380 right: the risk first rises above the target
    u = np.arange(400.0)
    q = np.r_[np.zeros(20), np.ones(380)]
    fixed = calibrate_threshold(u, q, max_risk=0.2, coverages=[0.05, 0.5, 1.0])
    assert not fixed.certified  # coverage 5% has risk 1
    bonferroni = calibrate_threshold(u, q, max_risk=0.2, coverages=[0.05, 0.5, 1.0], multiple_testing="bonferroni")
    assert bonferroni.certified and bonferroni.coverage == 1.0 and bonferroni.risk == pytest.approx(0.05)


def test_data_independent_thresholds_and_a_custom_loss():
    u = np.linspace(0, 1, 300)
    q = np.where(u < 0.5, 10.0, 0.0)  # qualities on a 0-10 scale
    rule = calibrate_threshold(u, q, max_risk=0.3, thresholds=[0.25, 0.45, 0.75], loss=lambda v: 1 - v / 10,
                               method="ltt-hoeffding")
    assert rule.threshold == 0.45 and rule.risk == 0.0
    below_all = calibrate_threshold(u, q, max_risk=0.3, thresholds=[-1.0, 0.45], loss=lambda v: 1 - v / 10,
                                    method="ltt-hoeffding")  # a threshold that accepts nothing fails the sequence
    assert not below_all.certified
    assert selective_risk(rule, u, q, loss=lambda v: 1 - v / 10) == (pytest.approx(rule.coverage), 0.0)


def test_oracle_threshold():
    u = [0.1, 0.2, 0.3, 0.4]
    q = [1.0, 0.8, 0.6, 0.0]  # selective risks 0, 0.1, 0.2, 0.4
    assert oracle_threshold(u, q, 0.2) == (0.3, 0.75)
    assert oracle_threshold(u, [0.0] * 4, 0.2) == (-math.inf, 0.0)


@pytest.mark.parametrize("kwargs, error, text", [
    ({"max_risk": 0.0}, InvalidOption, "max_risk must be in (0, 1)"),
    ({"max_risk": math.nan}, InvalidOption, "max_risk"),
    ({"max_risk": 0.2, "delta": 1.0}, InvalidOption, "delta must be in (0, 1)"),
    ({"max_risk": 0.2, "method": "ltt-crc"}, InvalidOption, "method must be one of ltt-wsr"),
    ({"max_risk": 0.2, "multiple_testing": "holm"}, InvalidOption, "multiple_testing"),
    ({"max_risk": 0.2, "coverages": [0.0, 0.5]}, InvalidOption, "coverages"),
    ({"max_risk": 0.2, "loss": lambda q: q * 2}, InvalidInput, "loss must map every quality"),
])
def test_bad_settings_are_refused_in_one_line(kwargs, error, text):
    with pytest.raises(error, match=None) as caught:
        calibrate_threshold([0.1, 0.2, 0.3], [0.2, 0.9, 0.8], **kwargs)
    assert text in str(caught.value) and "\n" not in str(caught.value)


def test_bad_values_are_refused():
    with pytest.raises(InvalidInput, match="qualities in \\[0, 1\\]"):
        calibrate_threshold([0.1, 0.2], [0.5, 1.5], max_risk=0.2)
    with pytest.raises(InvalidInput, match="finite"):
        calibrate_threshold([0.1, math.nan], [0.5, 0.5], max_risk=0.2)
    with pytest.raises(InvalidInput, match="2 uncertainties but 3 qualities"):
        calibrate_threshold([0.1, 0.2], [0.5, 0.5, 0.5], max_risk=0.2)
    with pytest.raises(InvalidInput, match="NaN"):
        accept(math.nan, [0.1])


# --- the guarantee, by simulation ----------------------------------------------------------------------------
# Population: u ~ Uniform(0, 1); given u, the loss ~ Beta(20 p, 20 (1 - p)) with mean p(u) = 0.1 + 0.6 u. The
# selective risk of threshold t is then exactly R(t) = 0.1 + 0.3 t (for t in [0, 1]), so at the target 0.25 the
# oracle threshold is 0.5 with coverage 0.5, and a calibrated threshold violates the target iff it is above 0.5.
# 1,000 calibration draws: the violation rate must stay under delta + 0.03 (3 Monte Carlo standard errors of a
# rate of 0.1 over 1,000 draws is 0.028); the mean coverage must lie within the stated distance of 0.5.

DRAWS = 1000
TARGET = 0.25
COARSE = [round(0.05 * i, 2) for i in range(2, 21)]  # 20 coverage levels keep the simulation to a few seconds


def _violations_and_coverage(n: int, method: str, multiple_testing: str) -> tuple[float, float]:
    rng = np.random.default_rng(2026)
    u = rng.random((DRAWS, n))
    p = 0.1 + 0.6 * u
    losses = rng.beta(20 * p, 20 * (1 - p))
    thresholds = np.array([calibrate_threshold(u[d], 1 - losses[d], max_risk=TARGET, delta=0.1, method=method,
                                               multiple_testing=multiple_testing, coverages=COARSE,
                                               seed=d).threshold for d in range(DRAWS)])
    coverage = np.clip(thresholds, 0.0, 1.0)  # P(U <= t) for U uniform; -inf (nothing certified) keeps 0
    risk = np.where(coverage > 0, 0.1 + 0.3 * coverage, 0.0)
    return float((risk > TARGET).mean()), float(coverage.mean())


@pytest.mark.parametrize("method, multiple_testing, n, distance", [
    ("ltt-wsr", "fixed-sequence", 400, 0.15),
    ("ltt-hoeffding", "fixed-sequence", 2000, 0.2),
    ("ltt-wsr", "bonferroni", 400, 0.2),
])
def test_guarantee_by_simulation(method, multiple_testing, n, distance):
    violation, coverage = _violations_and_coverage(n, method, multiple_testing)
    assert violation <= 0.1 + 0.03
    assert 0.5 - distance <= coverage <= 0.5 + 0.01  # oracle coverage 0.5; above it would mean violations
