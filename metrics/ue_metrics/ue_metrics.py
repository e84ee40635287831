"""Uncertainty-evaluation metrics (PRR, ROC-AUC, PR-AUC, AURC, E-AURC, RPP, Spearman, Kendall, ECE) and the
risk-controlled selective threshold.

A thin evaluate wrapper over :mod:`lsplits.uncertainty.ue_metrics`; see README.md for the metric card.
"""

import evaluate

from lsplits.hub.metric_common import check_no_config, citation, metric_info
from lsplits.uncertainty.bounds import DEFAULT_DELTA, DEFAULT_METHOD, METHODS
from lsplits.uncertainty.losses import DEFAULT_LOSS, QUALITY_LOSSES
from lsplits.uncertainty.normalization import DEFAULT_NORMALIZER, NORMALIZERS
from lsplits.uncertainty.prr import DEFAULT_MAX_REJECTION
from lsplits.uncertainty.selective import DEFAULT_MULTIPLE_TESTING, MULTIPLE_TESTING
from lsplits.uncertainty.ue_metrics import ECE_BINS, compute_metrics

_DESCRIPTION = """\
How well per-example uncertainty scores track the quality of the predictions, by every measure
LM-Polygraph offers for black-box estimators: the Prediction Rejection Ratio; ROC-AUC and PR-AUC of
the uncertainty at detecting bad predictions (quality below a threshold); the area under the
risk-coverage curve (AURC) and its excess over the oracle (E-AURC); the reversed-pairs proportion;
Spearman and Kendall correlations between uncertainty and -quality; and the expected calibration
error of the confidences from a named normaliser. Ties are averaged over, so no result depends on
the order of the inputs. Given a target risk, it also returns the rejection threshold certified
(Learn-then-Test with a Waudby-Smith-Ramdas betting bound) to keep the mean loss 1 - quality of the
accepted predictions at most that target with probability at least 1 - delta.
"""

_KWARGS_DESCRIPTION = f"""
Args:
    uncertainties (list of float): one score per example, higher = less trustworthy.
    qualities (list of float): quality of each example's prediction, higher = better (in [0, 1] for
        AURC's risk 1 - q and for ECE).
    metrics (list of str, default: every metric the arguments allow): any of "prr", "roc_auc",
        "pr_auc", "aurc", "e_aurc", "rpp", "spearman", "kendall", "ece", "selective_threshold".
    bad_below (float, default None): quality under which a prediction is bad, the positive class
        of roc_auc and pr_auc (required by them).
    normalizer (str, default "{DEFAULT_NORMALIZER}"): for ece, one of {", ".join(map(repr, NORMALIZERS))}.
    calibration_uncertainties, calibration_qualities (list of float, default None): fit the normaliser
        on these instead (else minmax / quantile are fitted on the inputs, the PCC ones cross-fitted).
    max_rejection (float, default {DEFAULT_MAX_REJECTION}): PRR's largest rejection rate.
    n_bins (int, default {ECE_BINS}): ECE's equal-width bins.
    target_risk (float in (0, 1), default None): the selective risk (mean of 1 - quality over the accepted
        predictions) to certify; required by, and by default adds, "selective_threshold".
    delta (float in (0, 1), default {DEFAULT_DELTA}): allowed probability that the certified risk is exceeded.
    selective_method (str, default "{DEFAULT_METHOD}"): the test, one of {", ".join(map(repr, METHODS))}
        ("auto": the exact binomial tail for 0/1 losses, Waudby-Smith-Ramdas betting for others).
    multiple_testing (str, default "{DEFAULT_MULTIPLE_TESTING}"): how the candidate thresholds are tested, one of
        {", ".join(map(repr, MULTIPLE_TESTING))}.
    selective_loss (str, default "{DEFAULT_LOSS}"): the loss whose mean is certified, one of
        {", ".join(map(repr, QUALITY_LOSSES))}; "bad": 1 when the quality is below bad_below, else 0 (the rate of
        bad outputs, tested by the exact binomial tail).
Returns:
    one float per requested metric, under its name; NaN (with a warning) where undefined.
    "selective_threshold" gives three keys: selective_threshold (accept u <= it; -inf when no threshold
    is certified), selective_bound (the risk's upper confidence bound there) and selective_coverage.
Examples:
    >>> ue = evaluate.load("metrics/ue_metrics")
    >>> ue.compute(uncertainties=[0.1, 0.5, 0.9], qualities=[0.9, 0.5, 0.1], metrics=["prr", "kendall"])
    {{'prr': 1.0, 'kendall': 1.0}}
"""

_CITATION = citation("vashurin2025benchmarking", "malinin-etal-2017-incorporating", "geifman2017selective",
                     "angelopoulos2021learn", "waudbysmith2023estimating")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class UEMetrics(evaluate.Metric):
    """Evaluation metrics of uncertainty scores against qualities, one key per metric."""

    def _info(self):
        check_no_config("ue_metrics", self.config_name)
        return metric_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION,
                           {"uncertainties": "float64", "qualities": "float64"},
                           ["https://github.com/IINemo/lm-polygraph", "https://aclanthology.org/P17-2008/"])

    def _compute(self, uncertainties, qualities, metrics=None, bad_below=None, normalizer=DEFAULT_NORMALIZER,
                 calibration_uncertainties=None, calibration_qualities=None, max_rejection=DEFAULT_MAX_REJECTION, n_bins=ECE_BINS,
                 target_risk=None, delta=DEFAULT_DELTA, selective_method=DEFAULT_METHOD,
                 multiple_testing=DEFAULT_MULTIPLE_TESTING, selective_loss=DEFAULT_LOSS):
        return compute_metrics(uncertainties, qualities, metrics, bad_below=bad_below, normalizer=normalizer,
                               calibration_uncertainties=calibration_uncertainties,
                               calibration_qualities=calibration_qualities, max_rejection=max_rejection, n_bins=n_bins,
                               target_risk=target_risk, delta=delta, selective_method=selective_method,
                               multiple_testing=multiple_testing, selective_loss=selective_loss)
