"""Classic Smatch (Cai & Knight 2013): triple F1 under a variable alignment found by hill climbing.

Triples are Smatch's: one instance triple per node, attribute triples, relation triples and the TOP
triple, on graphs normalised by :func:`lsplits.amr.graph.parse_amr` (inverse roles turned around,
lower-cased, quotes dropped). The alignment search (smart start + 4 random restarts, as the
reference implementation's default of 5 rounds) is in :mod:`lsplits.amr.align`; it is seeded, so a
score is reproducible, but as a heuristic it can fall short of the optimum and may differ with the
order of the two graphs, hence ``symmetric=False``. Smatch++ (``smatchpp``) gives the optimum.

The corpus score is micro-averaged like Smatch's: matched and total triples are summed over the
pairs before the F1 is taken.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InvalidInput
from ..similarity import Similarity
from .align import MatchCounts, exact_concept_match, match_graphs, micro_f1
from .graph import EMPTY_AMR, AmrGraph, parse_amr

DEFAULT_RESTARTS = 4
DEFAULT_SEED = 0


def smatch_counts(prediction: AmrGraph, reference: AmrGraph, *, restarts: int = DEFAULT_RESTARTS,
                  seed: int = DEFAULT_SEED) -> MatchCounts:
    """Matched triples of a prediction against a reference, and each graph's triple count."""
    return match_graphs(prediction, reference, exact_concept_match, restarts=restarts, seed=seed)


def smatch_f1(prediction: AmrGraph, reference: AmrGraph) -> float:
    """Smatch F1 in [0, 1] of two parsed graphs (1.0 for identical graphs)."""
    return smatch_counts(prediction, reference).f1


def corpus_smatch(predictions: Sequence[AmrGraph], references: Sequence[AmrGraph]) -> float:
    """Micro-averaged corpus Smatch F1 (summed triple counts)."""
    if len(predictions) != len(references):
        raise InvalidInput(f"{len(predictions)} predictions but {len(references)} references")
    return micro_f1([smatch_counts(p, r) for p, r in zip(predictions, references)])


SMATCH = Similarity(
    invalid_stand_in=EMPTY_AMR,
    name="smatch",
    prepare=parse_amr,
    score=smatch_f1,
    symmetric=False,
    description="Smatch triple F1 (Cai & Knight 2013), hill-climbing alignment, 5 seeded starts",
    corpus_score=corpus_smatch,
    options={"restarts": DEFAULT_RESTARTS, "seed": DEFAULT_SEED},
)
