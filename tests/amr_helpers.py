"""Helpers shared by the AMR metric tests: the sample of real graphs and a brute-force Smatch optimum."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from lsplits.similarity.amr.graph import AmrGraph
from lsplits.similarity.amr.smatchpp_metric import f1, prepare
from lsplits.similarity.registry import Similarity

FIXTURE = Path(__file__).parent / "fixtures" / "amr_sample.jsonl"


def sample_graphs() -> list[str]:
    """PENMAN strings of the real AMR graphs in tests/fixtures/amr_sample.jsonl."""
    return [json.loads(line)["amr"] for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def brute_force_matches(a: AmrGraph, b: AmrGraph,
                        concept_score: Callable[[str, str], float] | None = None) -> float:
    """Best Smatch match count over *every* one-to-one partial mapping (tiny graphs only).

    Written independently of lsplits.similarity.amr.align: map A's triples through the mapping and count those
    found in B's triple set; instance triples score ``concept_score`` (default: equality).
    """
    score = concept_score or (lambda x, y: float(x == y))
    b_triples = ({("rel", role, s, t) for role, s, t in b.relations}
                 | {("attr", role, s, v) for role, s, v in b.attributes} | {("top", b.top)})
    targets = list(range(b.size)) + [None] * a.size
    best = 0.0
    for mapping in set(itertools.permutations(targets, a.size)):
        total = sum(score(a.concepts[i], b.concepts[j]) for i, j in enumerate(mapping) if j is not None)
        total += sum(("rel", role, mapping[s], mapping[t]) in b_triples for role, s, t in a.relations)
        total += sum(("attr", role, mapping[s], v) in b_triples for role, s, v in a.attributes)
        total += ("top", mapping[a.top]) in b_triples
        best = max(best, total)
    return best


CALLS: Counter = Counter()
"""How many pairs :data:`COUNTING` scored since the ``counting_similarity`` fixture (tests/conftest.py) cleared it."""


def _counted_f1(a, b):
    CALLS["score"] += 1
    return f1(a, b)


COUNTING = Similarity("test-counting-smatchpp", prepare, _counted_f1, symmetric=True)
"""Smatch++ that counts the pairs it scores, so a test sees what a cache spared."""
