"""Black-box uncertainty estimation over beam candidates and its evaluation with PRR (METHOD B).

Flow: :mod:`.matrix` builds one similarity matrix per example from any registered similarity
function (:mod:`lsplits.similarity`; ROUGE-L is in :mod:`.lexical`, the AMR metrics in
:mod:`lsplits.amr`), :mod:`.estimators` turns each matrix into an uncertainty score (:mod:`.beam`
does both for a list of examples), :mod:`.quality` scores top-1 predictions against references, and
:mod:`.prr` measures how well the uncertainties rank the qualities. :mod:`.report` runs the paper's
whole grid on parser outputs read by :mod:`.inputs` and :mod:`.render` writes it up;
:mod:`.publish` uploads the evaluate modules in ``metrics/`` as Hub Spaces.
"""
