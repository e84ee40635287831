"""AMR graph similarity of predictions against references (Smatch++, Smatch, S2Match, SEMA, WLK, SemBLEU).

A thin evaluate wrapper over :mod:`lsplits.uncertainty.quality`; see README.md for the metric card.
The config name is the metric.
"""

import evaluate

from lsplits.hub.metric_common import citation, metric_info
from lsplits.similarity.registry import DEFAULT_SIMILARITY, from_config_name
from lsplits.uncertainty.quality import similarity_outputs

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

_CITATION = citation("opitz-2023-smatch", "cai-knight-2013-smatch")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class AmrSimilarity(evaluate.Metric):
    """Per-example and corpus AMR similarity; the config name is the metric."""

    def _info(self):
        from_config_name(self.config_name, DEFAULT_SIMILARITY, what="metric")  # an unknown one is refused at load
        return metric_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION,
                           {"predictions": "string", "references": "string"}, ["https://github.com/flipz357/smatchpp"])

    def _compute(self, predictions, references):
        return similarity_outputs(self.config_name, predictions, references, default=DEFAULT_SIMILARITY)
