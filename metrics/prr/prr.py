"""Prediction Rejection Ratio (PRR): how well uncertainty scores rank the quality of predictions.

A thin evaluate wrapper over :mod:`lsplits.uncertainty.prr`; see README.md for the metric card.
"""

import evaluate

from lsplits.hub.metric_common import check_no_config, citation, metric_info
from lsplits.params import DEFAULT_CONFIDENCE, MAX_BOOTSTRAP
from lsplits.uncertainty.prr import DEFAULT_BOOTSTRAP, DEFAULT_MAX_REJECTION, prr_outputs

_DESCRIPTION = """\
Prediction Rejection Ratio (Malinin et al., 2017). Examples are rejected from the most uncertain
down; the area under the curve of the mean quality of the kept examples is compared with random
rejection (0) and with an oracle that rejects the worst predictions first (1). Negative values mean
the uncertainty scores are worse than random. Ties in uncertainty are averaged over, so the result
does not depend on the order of the inputs.
"""

_KWARGS_DESCRIPTION = f"""
Args:
    uncertainties (list of float): one score per example, higher = less trustworthy.
    qualities (list of float): quality of each example's prediction, higher = better.
    max_rejection (float in (0, 1], default {DEFAULT_MAX_REJECTION}): largest rejection rate in the area (1.0 = whole curve).
    n_bootstrap (int in [0, {MAX_BOOTSTRAP}], default {DEFAULT_BOOTSTRAP}): bootstrap resamples for the confidence
        interval (0 = none).
    confidence (float in (0, 1), default {DEFAULT_CONFIDENCE}): confidence level of the interval.
    seed (int in [0, 2**32 - 1], default 0): seed of the bootstrap.
    A value out of range (or NaN) raises a ValueError naming the option.
Returns:
    prr (float): the ratio; NaN (with a warning) when all qualities are equal.
    prr_ci_low, prr_ci_high (float): bootstrap percentile interval.
    auc_uncertainty, auc_oracle, auc_random (float): the three areas.
Examples:
    >>> prr = evaluate.load("metrics/prr")
    >>> prr.compute(uncertainties=[0.1, 0.5, 0.9], qualities=[0.9, 0.5, 0.1], n_bootstrap=0)["prr"]
    1.0
"""

_CITATION = citation("malinin-etal-2017-incorporating")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class PRR(evaluate.Metric):
    """Prediction Rejection Ratio of uncertainty scores against qualities."""

    def _info(self):
        check_no_config("prr", self.config_name)
        return metric_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION,
                           {"uncertainties": "float64", "qualities": "float64"}, ["https://aclanthology.org/P17-2008/"])

    def _compute(self, uncertainties, qualities, max_rejection=DEFAULT_MAX_REJECTION, n_bootstrap=DEFAULT_BOOTSTRAP,
                 confidence=DEFAULT_CONFIDENCE, seed=0):
        return prr_outputs(uncertainties, qualities, max_rejection=max_rejection, n_bootstrap=n_bootstrap,
                           confidence=confidence, seed=seed)
