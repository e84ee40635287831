"""Black-box uncertainty estimation over beam candidates and its evaluation with PRR.

Flow: :mod:`.matrix` builds one similarity matrix per example from any registered similarity
function (:mod:`lsplits.similarity.registry`; ROUGE-1/2/L and BLEU are in :mod:`lsplits.similarity.lexical`, the AMR metrics in
:mod:`lsplits.similarity.amr`), :mod:`.estimators` turns each matrix into an uncertainty score (the semantic-set
estimators are in :mod:`.semantic_sets`; :func:`estimate` applies any of them by name, to one
matrix or a stack; :mod:`.beam` does both steps for a list of examples), :mod:`.quality` scores
top-1 predictions against references, and :mod:`.prr` and :mod:`.ue_metrics` measure how well the
uncertainties rank the qualities (:mod:`.normalization` maps uncertainties to confidences first,
for ECE); :mod:`.selective` turns a ranking into a decision, the rejection threshold certified to keep the
risk of the kept outputs under a target. :mod:`.study` runs the paper's whole grid on parser outputs read by :mod:`.inputs`,
:mod:`.report` writes it up (figures by :mod:`.plots`); :mod:`lsplits.hub.metric_spaces` publishes the evaluate
modules in ``metrics/`` as Hub Spaces. Short public names: :func:`estimate`, :func:`estimate_many`,
:func:`calibrate_threshold` (``from lsplits.uncertainty import calibrate_threshold``).
"""

from lsplits.runtime.lazy import lazy_exports
from lsplits.uncertainty.estimators import estimate, estimate_many

__all__ = ["calibrate_threshold", "estimate", "estimate_many"]
_LAZY = {"calibrate_threshold": "lsplits.uncertainty.selective"}
"""Short public names -> the module defining them, imported on first use."""
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
