"""Uncertainty-evaluation metrics beside PRR, each against a hand computation, with ties and undefined cases."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from lsplits.errors import ConfigError, InvalidOption
from lsplits.uncertainty.ue_metrics import (
    METRICS,
    UndefinedMetricWarning,
    aurc,
    calibration_error,
    check_metrics,
    compute_metrics,
    confidences,
    e_aurc,
    ece,
    kendall,
    pr_auc,
    roc_auc,
    rpp,
    spearman,
)

U = [0.9, 0.2, 0.5, 0.4]
Q = [0.1, 0.9, 0.8, 0.3]  # bad below 0.5: examples 0 and 3


def test_roc_auc_by_hand():
    # bad x good pairs: (0.9 > 0.2), (0.9 > 0.5), (0.4 > 0.2), (0.4 < 0.5) -> 3 / 4
    assert roc_auc(U, Q, bad_below=0.5) == pytest.approx(0.75)
    assert roc_auc([0.5, 0.5], [0.1, 0.9], bad_below=0.5) == pytest.approx(0.5)  # a tie counts one half
    assert roc_auc([0.1, 0.9], [0.1, 0.9], bad_below=0.5) == 0.0


def test_pr_auc_by_hand():
    # by decreasing u: bad, good, bad, good -> (recall, precision) steps (1/2, 1), (1/2, 1/2), (1, 2/3), (1, 1/2)
    assert pr_auc(U, Q, bad_below=0.5) == pytest.approx(0.5 * 1 + 0.5 * 2 / 3)
    assert pr_auc([0.5, 0.5], [0.1, 0.9], bad_below=0.5) == pytest.approx(0.5)  # one threshold: P = 1/2 at R = 1
    assert pr_auc([0.3, 0.2], [0.1, 0.2], bad_below=0.5) == pytest.approx(1.0)  # everything bad


def test_aurc_and_excess_by_hand():
    # coverage 1 keeps the least uncertain (risk 0), coverage 2 both (risk 1/2): AURC = 1/4 = the oracle's
    assert aurc([0.1, 0.9], [1.0, 0.0]) == pytest.approx(0.25)
    assert e_aurc([0.1, 0.9], [1.0, 0.0]) == pytest.approx(0.0)
    assert aurc([0.9, 0.1], [1.0, 0.0]) == pytest.approx(0.75)  # reversed: risk 1, then 1/2
    assert e_aurc([0.9, 0.1], [1.0, 0.0]) == pytest.approx(0.5)
    assert aurc([0.5, 0.5], [1.0, 0.0]) == pytest.approx(0.5)  # tied: coverage 1 has the mean risk 1/2
    # three examples by hand: least uncertain first q = 0.5, 1.0, 0.0 -> risks 0.5, 0.25, 0.5
    assert aurc([0.2, 0.1, 0.3], [1.0, 0.5, 0.0]) == pytest.approx((0.5 + 0.25 + 0.5) / 3)


def naive_rpp(u, q) -> float:
    n = len(u)
    return sum(u[i] < u[j] and q[i] < q[j] for i in range(n) for j in range(n)) / n**2


def test_rpp_by_hand_and_against_the_definition():
    assert rpp([0.1, 0.2, 0.3], [0.5, 0.9, 0.1]) == pytest.approx(1 / 9)
    assert rpp([0.1, 0.2, 0.3], [0.9, 0.5, 0.1]) == 0.0
    assert rpp([0.1, 0.2, 0.3], [0.1, 0.5, 0.9]) == pytest.approx(3 / 9)  # every pair reversed: (n-1)/(2n)
    assert rpp([0.2, 0.2], [0.1, 0.9]) == 0.0  # ties are never reversed
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 33, 130):
        for _ in range(5):
            u = rng.integers(0, 6, n).astype(float)
            q = rng.integers(0, 4, n) / 3
            assert rpp(u, q) == pytest.approx(naive_rpp(u, q), abs=1e-15)


def test_rank_correlations_by_hand():
    assert spearman([1, 2, 3], [0.9, 0.5, 0.1]) == pytest.approx(1.0)
    assert kendall([1, 2, 3], [0.1, 0.5, 0.9]) == pytest.approx(-1.0)
    # u = 1, 2, 2 against -q increasing: concordant 2, discordant 0, one pair tied in u -> tau_b = 2 / sqrt(2 * 3)
    assert kendall([1, 2, 2], [0.3, 0.2, 0.1]) == pytest.approx(2 / math.sqrt(6))
    # average ranks 1, 2.5, 2.5 against 1, 2, 3: covariance 1.5 over sqrt(1.5 * 2)
    assert spearman([1, 2, 2], [0.3, 0.2, 0.1]) == pytest.approx(1.5 / math.sqrt(3))


def test_ece_by_hand():
    # min-max confidences 1, 2/3, 1/3, 0 fall in four bins: gaps 0, 1/3, 1/3, 0 -> 1/6
    assert ece([0, 1, 2, 3], [1, 1, 0, 0]) == pytest.approx(1 / 6)
    # quantile confidences (share of calibration u >= u): 1, 3/4, 1/2, 1/4
    assert ece([0, 1, 2, 3], [1, 1, 0, 0], normalizer="quantile") == pytest.approx((0 + 0.25 + 0.5 + 0.25) / 4)
    # bins are [0, 1/2] and (1/2, 1]: 0.5 and 0.5 + 1e-12 are apart, 0.5 and 0.5 together
    assert calibration_error([0.5, 0.5 + 1e-12], [1.0, 0.0], n_bins=2) == pytest.approx(0.5)
    assert calibration_error([0.5, 0.5], [1.0, 0.0], n_bins=2) == pytest.approx(0.0)
    with pytest.raises(ValueError, match=r"qualities in \[0, 1\]"):
        calibration_error([0.5], [2.0])


def test_supervised_normalisers_are_cross_fitted_or_use_the_calibration_set():
    # one bin: each held-out example gets the mean quality of the other folds (5 folds of one example each)
    q = [1.0, 0.0, 0.0, 0.0, 0.0]
    u = [0.0, 1.0, 2.0, 3.0, 4.0]
    fitted = confidences(u, q, normalizer="binned_pcc", num_bins=1)
    assert fitted == pytest.approx([0.0, 0.25, 0.25, 0.25, 0.25])
    # ECE: example 0 alone in bin 0 (gap 1); the other four in (0.2, 0.25] (gap 0.25 each)
    assert ece(u, q, normalizer="binned_pcc", num_bins=1) == pytest.approx((1 + 4 * 0.25) / 5)
    calibrated = confidences(u, q, normalizer="minmax", calibration=([0.0, 8.0], None))
    assert calibrated == pytest.approx([1.0, 0.875, 0.75, 0.625, 0.5])


def test_undefined_values_warn_and_give_nan():
    cases = [(roc_auc, dict(bad_below=0.05)), (roc_auc, dict(bad_below=1.0)), (pr_auc, dict(bad_below=0.1)),
             (spearman, {}), (kendall, {})]
    for function, options in cases:
        with pytest.warns(UndefinedMetricWarning, match="undefined"):
            u = [1.0, 1.0, 1.0] if function in (spearman, kendall) else [0.1, 0.2, 0.3]
            assert math.isnan(function(u, [0.1, 0.5, 0.9], **options))


@pytest.mark.parametrize("bad_below", [0.0, 2.0, -0.5, float("nan"), "0.5"])
def test_bad_below_outside_the_quality_range_is_refused_as_the_cli_refuses_it(bad_below):
    from lsplits.cli.parser import in_cli_words
    from lsplits.uncertainty.study_config import StudyConfig

    for call in (lambda: roc_auc([0.1, 0.2], [0.3, 0.9], bad_below=bad_below),
                 lambda: pr_auc([0.1, 0.2], [0.3, 0.9], bad_below=bad_below),
                 lambda: compute_metrics([0.1, 0.2], [0.3, 0.9], ["prr", "roc_auc"], bad_below=bad_below)):
        with pytest.raises(InvalidOption, match=r"^bad_below must be a number in \(0, 1\]"):
            call()
    with pytest.raises(InvalidOption) as caught:
        StudyConfig(bad_below=bad_below)
    assert str(in_cli_words(caught.value, "ue")).startswith("--bad-below must be a number in (0, 1]")


def test_results_do_not_depend_on_the_order_of_the_inputs():
    rng = np.random.default_rng(5)
    u = rng.integers(0, 4, 40).astype(float)  # many ties
    q = rng.integers(0, 5, 40) / 4
    first = compute_metrics(u, q, METRICS, bad_below=0.5)
    for seed in range(3):
        order = np.random.default_rng(seed).permutation(40)
        again = compute_metrics(u[order], q[order], METRICS, bad_below=0.5)
        for name in METRICS:
            assert again[name] == pytest.approx(first[name], abs=1e-12), name


def test_metric_names_and_bad_below_are_checked_first():
    assert check_metrics(["PRR", "kendall"]) == ("prr", "kendall")
    with pytest.raises(ConfigError, match="metrics item 0 must be one of prr, .*, got 'auroc'"):
        check_metrics(["auroc"])
    with pytest.raises(ConfigError, match="roc_auc and pr_auc need bad_below"):
        compute_metrics([0.1, 0.2], [0.5, 0.6], ["roc_auc", "pr_auc"])
    with pytest.raises(ConfigError, match="normalizer must be one of minmax, .*, got 'platt'"):
        compute_metrics([0.1, 0.2], [0.5, 0.6], ["ece"], normalizer="platt")
    with pytest.raises(ValueError, match="2 uncertainties but 1 qualities"):
        compute_metrics([0.1, 0.2], [0.5], ["prr"])


def test_prr_and_aurc_are_one_curve():
    rng = np.random.default_rng(9)
    u, q = rng.random(25), rng.random(25)
    values = compute_metrics(u, q, ["prr", "aurc", "e_aurc"])
    oracle = aurc(-q, q)
    random_aurc = 1 - q.mean()  # random rejection keeps the mean quality at every coverage
    assert values["prr"] == pytest.approx((random_aurc - values["aurc"]) / (random_aurc - oracle))
    assert values["e_aurc"] == pytest.approx(values["aurc"] - oracle)


def test_all_pairs_kendall_matches_a_direct_count():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        u = [0.3, 0.1, 0.4, 0.1, 0.5]
        q = [0.2, 0.7, 0.1, 0.8, 0.6]
        concordant = discordant = 0
        for i, j in itertools.combinations(range(5), 2):
            sign = np.sign(u[i] - u[j]) * np.sign(q[j] - q[i])
            concordant += sign > 0
            discordant += sign < 0
        tied_u = 1  # the pair (1, 3)
        assert kendall(u, q) == pytest.approx((concordant - discordant) / math.sqrt((10 - tied_u) * 10))


@pytest.mark.parametrize("compiled", [True, False])
def test_pair_counting_with_and_without_scipys_merge_count(compiled, monkeypatch):
    from scipy.stats import kendalltau

    from lsplits.uncertainty import ue_metrics

    if not compiled:
        monkeypatch.setattr(ue_metrics, "_kendall_dis", None)  # the numpy merge counting
    rng = np.random.default_rng(3)
    for n in (2, 3, 40, 257):
        for _ in range(4):
            u = rng.integers(0, 7, n).astype(float)
            q = rng.integers(0, 5, n) / 4
            if np.ptp(u) and np.ptp(q):
                assert kendall(u, q) == pytest.approx(kendalltau(u, -q).statistic, abs=1e-12)
            assert rpp(u, q) == pytest.approx(naive_rpp(u, q), abs=1e-15)


def test_without_metrics_every_metric_the_arguments_allow_and_calibration_pairs():
    u, q = [0.1, 0.5, 0.9, 0.3], [0.9, 0.5, 0.1, 0.6]
    assert set(compute_metrics(u, q)) == set(METRICS) - {"roc_auc", "pr_auc"}  # no bad_below
    assert set(compute_metrics(u, q, bad_below=0.4)) == set(METRICS)
    calibrated = compute_metrics(u, q, ["ece"], calibration_uncertainties=[0.0, 1.0], calibration_qualities=[1.0, 0.0])
    assert calibrated["ece"] == pytest.approx(calibration_error([1 - x for x in u], q))  # min-max over [0, 1]
    with pytest.raises(ConfigError, match="give both calibration_uncertainties and calibration_qualities"):
        compute_metrics(u, q, ["ece"], calibration_uncertainties=[0.0, 1.0])


def test_selective_threshold_takes_the_bad_rate_loss_and_the_procedure():
    # 300 examples, uncertainty = rank; quality 1.0 for the 150 most certain, then 0.3 / 0.9 alternating: the
    # "bad" loss (quality < 0.5) is 0/1 and is tested by the exact binomial tail, P(Bin(m, R) <= bad) <= delta
    from scipy.stats import binom

    u = np.arange(300.0)
    q = np.r_[np.ones(150), np.tile([0.3, 0.9], 75)]
    values = compute_metrics(u, q, ["selective_threshold"], target_risk=0.2, bad_below=0.5, selective_loss="bad",
                             multiple_testing="holm")
    bad = (q < 0.5).astype(float)
    kept = u <= values["selective_threshold"]
    # the bad rate at coverage c > 0.5 is (c - 0.5) / (2 c): at most 0.2 up to c = 0.833 (the oracle)
    assert 0.5 < kept.mean() == values["selective_coverage"] <= 0.834
    assert binom.cdf(bad[kept].sum(), kept.sum(), 0.2) <= 0.1  # passed at a Holm level, all of which are <= delta
    level = binom.cdf(bad[kept].sum(), kept.sum(), values["selective_bound"])  # the exact bound: the tail at it = level
    assert 0.1 / 91 - 1e-9 <= level <= 0.1 + 1e-9
    plain = compute_metrics(u, q, ["selective_threshold"], target_risk=0.2)  # 1 - quality: (c - 0.5) * 0.4 / c
    assert plain["selective_coverage"] > values["selective_coverage"]  # a lower risk than the bad rate here
    with pytest.raises(InvalidOption, match="bad_below"):
        compute_metrics(u, q, ["selective_threshold"], target_risk=0.2, selective_loss="bad")
    with pytest.raises(InvalidOption, match="multiple_testing must be one of"):
        compute_metrics(u, q, ["selective_threshold"], target_risk=0.2, multiple_testing="closed")
