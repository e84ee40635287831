"""Uncertainty-evaluation metrics (PRR, ROC-AUC, PR-AUC, AURC, E-AURC, RPP, Spearman, Kendall, ECE).

A thin evaluate wrapper over :mod:`lsplits.uncertainty.ue_metrics`; see README.md for the metric card.
"""

import datasets
import evaluate

from lsplits.uncertainty.ue_metrics import ECE_BINS, compute_metrics

_DESCRIPTION = """\
How well per-example uncertainty scores track the quality of the predictions, by every measure
LM-Polygraph offers for black-box estimators: the Prediction Rejection Ratio; ROC-AUC and PR-AUC of
the uncertainty at detecting bad predictions (quality below a threshold); the area under the
risk-coverage curve (AURC) and its excess over the oracle (E-AURC); the reversed-pairs proportion;
Spearman and Kendall correlations between uncertainty and -quality; and the expected calibration
error of the confidences from a named normaliser. Ties are averaged over, so no result depends on
the order of the inputs.
"""

_KWARGS_DESCRIPTION = """
Args:
    uncertainties (list of float): one score per example, higher = less trustworthy.
    qualities (list of float): quality of each example's prediction, higher = better (in [0, 1] for
        AURC's risk 1 - q and for ECE).
    metrics (list of str, default: every metric the arguments allow): any of "prr", "roc_auc",
        "pr_auc", "aurc", "e_aurc", "rpp", "spearman", "kendall", "ece".
    bad_below (float, default None): quality under which a prediction is bad, the positive class
        of roc_auc and pr_auc (required by them).
    normalizer (str, default "minmax"): for ece, one of "minmax", "quantile", "binned_pcc", "isotonic_pcc".
    calibration_uncertainties, calibration_qualities (list of float, default None): fit the normaliser
        on these instead (else minmax / quantile are fitted on the inputs, the PCC ones cross-fitted).
    max_rejection (float, default 1.0): PRR's largest rejection rate.
    n_bins (int, default 20): ECE's equal-width bins.
Returns:
    one float per requested metric, under its name; NaN (with a warning) where undefined.
Examples:
    >>> ue = evaluate.load("metrics/ue_metrics")
    >>> ue.compute(uncertainties=[0.1, 0.5, 0.9], qualities=[0.9, 0.5, 0.1], metrics=["prr", "kendall"])
    {'prr': 1.0, 'kendall': 1.0}
"""

_CITATION = """\
@article{vashurin2025benchmarking,
  title = {Benchmarking Uncertainty Quantification Methods for Large Language Models with LM-Polygraph},
  author = {Vashurin, Roman and Fadeeva, Ekaterina and Vazhentsev, Artem and others},
  journal = {Transactions of the Association for Computational Linguistics},
  volume = {13},
  year = {2025}
}
@inproceedings{malinin-etal-2017-incorporating,
  title = {Incorporating Uncertainty into Deep Learning for Spoken Language Assessment},
  author = {Malinin, Andrey and Ragni, Anton and Knill, Kate and Gales, Mark},
  booktitle = {Proceedings of the 55th Annual Meeting of the Association for Computational Linguistics (Volume 2: Short Papers)},
  pages = {45--50},
  year = {2017}
}
@inproceedings{geifman2017selective,
  title = {Selective Classification for Deep Neural Networks},
  author = {Geifman, Yonatan and El-Yaniv, Ran},
  booktitle = {Advances in Neural Information Processing Systems},
  year = {2017}
}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class UEMetrics(evaluate.Metric):
    """Evaluation metrics of uncertainty scores against qualities, one key per metric."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "uncertainties": datasets.Value("float64"),
                "qualities": datasets.Value("float64"),
            }),
            reference_urls=["https://github.com/IINemo/lm-polygraph", "https://aclanthology.org/P17-2008/"],
        )

    def _compute(self, uncertainties, qualities, metrics=None, bad_below=None, normalizer="minmax",
                 calibration_uncertainties=None, calibration_qualities=None, max_rejection=1.0, n_bins=ECE_BINS):
        return compute_metrics(uncertainties, qualities, metrics, bad_below=bad_below, normalizer=normalizer,
                               calibration_uncertainties=calibration_uncertainties,
                               calibration_qualities=calibration_qualities, max_rejection=max_rejection, n_bins=n_bins)
