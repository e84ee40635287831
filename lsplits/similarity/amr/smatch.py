"""Classic Smatch (Cai & Knight 2013): triple F1 under a variable alignment found by hill climbing.

"Smatch" here is what the official scorer (PyPI ``smatch`` 1.0.4) computes: graphs are read into its
instance, attribute, relation and TOP triples by :func:`lsplits.similarity.amr.graph.parse_smatch` (its
``"official"`` dialect, the default), F1 = 2 * matched / (triples(A) + triples(B)), and the corpus
score is micro-averaged (matched and total triples summed over the pairs before the F1 is taken).
Where the official reading is wrong (a constant under ``:mod`` or an inverted role is dropped, a quoted
constant counts up to its first space, a repeated triple matches every copy of it, so a pair can score
above 1), ``dialect="corrected"`` (registered as ``smatch-corrected``) fixes it; see
``benchmarks/smatch_official.py`` for how often that matters on real graphs.

The alignment search (smart start + :data:`DEFAULT_RESTARTS` = 29 random restarts) is in
:mod:`lsplits.similarity.amr.align`; it is seeded, so a score is reproducible, but as a heuristic it can fall
short of the optimum and may differ with the order of the two graphs, hence ``symmetric=False``. With the
official scorer's own default of 4 restarts it found fewer matched triples than the official 20-restart
search on 8 of 1,570 pairs of ``benchmarks/smatch_official.py``; with 29 on none (nor on the pairs of
seeds 1 and 2). The search stops once a mapping reaches an upper bound (node assignment + relations per
role), so on edited pairs 29 restarts cost less CPU than 4 did with the old bound (0.27 against 0.43 ms a
pair); on unrelated graphs about 4.5x (1.24 against 0.28 ms).
Smatch++ (``smatchpp``) gives the optimum.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial

from lsplits.errors import InvalidInput, InvalidOption
from lsplits.similarity.amr.align import (
    MatchCounts,
    exact_concept_match,
    has_repeated_triples,
    match_graphs,
    micro_f1,
)
from lsplits.similarity.amr.graph import EMPTY_AMR, SMATCH_DIALECTS, AmrGraph, parse_smatch
from lsplits.similarity.registry import Similarity

logger = logging.getLogger(__name__)

DEFAULT_RESTARTS = 29
"""Random restarts after the smart start: the fewest that match at least as many triples as the official
smatch 1.0.4's 20-restart search on every pair of ``benchmarks/smatch_official.py`` (seeds 0, 1, 2)."""
DEFAULT_SEED = 0
DEFAULT_DIALECT = "official"


def smatch_counts(prediction: AmrGraph, reference: AmrGraph, *, restarts: int = DEFAULT_RESTARTS,
                  seed: int = DEFAULT_SEED) -> MatchCounts:
    """Matched triples of a prediction against a reference, and each graph's triple count."""
    return match_graphs(prediction, reference, exact_concept_match, restarts=restarts, seed=seed)


def smatch_f1(prediction: AmrGraph, reference: AmrGraph) -> float:
    """Smatch F1 of two parsed graphs (1.0 for identical graphs; above 1 only for repeated triples
    in the official reading)."""
    return smatch_counts(prediction, reference).f1


def corpus_smatch(predictions: Sequence[AmrGraph], references: Sequence[AmrGraph]) -> float:
    """Micro-averaged corpus Smatch F1 (summed triple counts)."""
    if len(predictions) != len(references):
        raise InvalidInput(f"{len(predictions)} predictions but {len(references)} references")
    repeated = sum(has_repeated_triples(p) or has_repeated_triples(r) for p, r in zip(predictions, references))
    if repeated:
        logger.warning("%d of %d pairs hold a repeated triple, which official Smatch counts once per copy "
                       "matched (a pair can score above 1); 'smatch-corrected' counts it once", repeated,
                       len(predictions))
    return micro_f1([smatch_counts(p, r) for p, r in zip(predictions, references)])


def make_smatch(dialect: str = DEFAULT_DIALECT, *, name: str = "smatch", display_name: str = "Smatch") -> Similarity:
    """A Smatch :class:`Similarity` reading graphs in ``dialect`` (``"official"`` or ``"corrected"``)."""
    if dialect not in SMATCH_DIALECTS:
        raise InvalidOption(f"unknown Smatch dialect {dialect!r}; use one of {', '.join(SMATCH_DIALECTS)}")
    reading = "as the official smatch 1.0.4" if dialect == "official" else "official, with its slips fixed"
    return Similarity(
        invalid_stand_in=EMPTY_AMR,
        name=name,
        display_name=display_name,
        prepare=partial(parse_smatch, dialect=dialect),
        score=smatch_f1,
        symmetric=False,
        description=f"Smatch triple F1 (Cai & Knight 2013), triples read {reading}, "
                    f"hill-climbing alignment, {DEFAULT_RESTARTS + 1} seeded starts",
        corpus_score=corpus_smatch,
        version="2",
        options={"restarts": DEFAULT_RESTARTS, "seed": DEFAULT_SEED, "dialect": dialect},
    )


SMATCH = make_smatch()
SMATCH_CORRECTED = make_smatch("corrected", name="smatch-corrected", display_name="smatch-corrected")
