"""AMR graph similarity of predictions against references (Smatch++, Smatch, S2Match, SEMA, WLK, SemBLEU).

A thin evaluate wrapper over :mod:`lsplits.uncertainty.quality`; see README.md for the metric card.
The config name is the metric.
"""

import datasets
import evaluate

from lsplits.uncertainty.quality import similarity_outputs

_DEFAULT_METRIC = "smatchpp"

_DESCRIPTION = """\
Similarity between predicted and reference AMR graphs in PENMAN notation, per example and for the
whole corpus. The config name chooses the metric: smatchpp (Smatch++: standardised graphs, optimal
alignment; the default), smatch (the official smatch 1.0.4 scorer's triples, hill climbing),
smatch-corrected (the same with its slips fixed), s2match, sema, wlk, sembleu. A prediction that
is not a well-formed AMR graph is scored as the empty graph "(a / amr-empty)" (about 0); an
invalid reference is an error.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): predicted graphs, PENMAN.
    references (list of str): reference graphs, PENMAN.
Returns (keys start with the metric name, so several configs combine without clashes):
    <metric> (float): corpus score (micro average of triple counts for Smatch-like metrics).
    <metric>_scores (list of float): one score per example, in [0, 1].
    <metric>_invalid_predictions (int): how many predictions did not parse.
Examples:
    >>> sim = evaluate.load("metrics/amr_similarity", "smatchpp")
    >>> sim.compute(predictions=["(w / want-01 :ARG0 (b / boy))"],
    ...             references=["(w / want-01 :ARG0 (b / boy))"])["smatchpp"]
    1.0
"""

_CITATION = """\
@inproceedings{opitz-2023-smatch,
  title = {{SMATCH}++: Standardized and Extended Evaluation of Semantic Graphs},
  author = {Opitz, Juri},
  booktitle = {Findings of the Association for Computational Linguistics: EACL 2023},
  pages = {1595--1607},
  year = {2023}
}
@inproceedings{cai-knight-2013-smatch,
  title = {Smatch: an Evaluation Metric for Semantic Feature Structures},
  author = {Cai, Shu and Knight, Kevin},
  booktitle = {Proceedings of the 51st Annual Meeting of the Association for Computational Linguistics (Volume 2: Short Papers)},
  pages = {748--752},
  year = {2013}
}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AmrSimilarity(evaluate.Metric):
    """Per-example and corpus AMR similarity; the config name is the metric."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "predictions": datasets.Value("string"),
                "references": datasets.Value("string"),
            }),
            reference_urls=["https://github.com/flipz357/smatchpp"],
        )

    def _compute(self, predictions, references):
        return similarity_outputs(self.config_name, predictions, references, default=_DEFAULT_METRIC)
