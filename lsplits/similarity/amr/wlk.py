"""WLK (Opitz et al. 2021, "Weisfeiler-Leman in the Bamboo"): a Weisfeiler-Leman kernel for AMR graphs.

The graph: one node per variable, labelled with its concept, and one node per attribute
occurrence, labelled with its constant (``:polarity -`` becomes an edge to a node ``-``); edges keep
their roles. Weisfeiler-Leman relabelling then gives every node, at iteration t + 1, a label made
of its label at t and the sorted labels of its neighbourhood (role + neighbour label, with the
edge's direction). The graph's features are the counts of its labels at iterations 0..K
(K = 2 by default); iteration t's counts are weighted 1 / (1 + t) and the blocks concatenated.
The similarity is the cosine of the two feature vectors: 1 for graphs equal up to variable
names, 0 for graphs with no concept or constant in common; symmetric.

Differences from the reference code (flipz357/weisfeiler-leman-amr-metrics, ``main_wlk.py``):
it uses 0/1 occurrence instead of counts, appends node-edge-node triple features to iteration 0,
suffixes repeated concepts with a number, and gathers neighbours without their direction, so
that reversing an edge is invisible to it; ``directed=False`` restores that last behaviour.
Labels after iteration 0 are short BLAKE2 digests, identical across processes.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass

from lsplits.similarity.amr.graph import EMPTY_AMR, AmrGraph, labelled_graph, parse_amr
from lsplits.similarity.registry import Similarity

DEFAULT_ITERATIONS = 2


@dataclass(frozen=True)
class WlFeatures:
    """Weighted WL label counts of one graph and the sum of their squares."""

    weights: dict[tuple[int, str], float]
    squared_norm: float


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


def wl_features(graph: AmrGraph, iterations: int = DEFAULT_ITERATIONS, directed: bool = True) -> WlFeatures:
    """Weisfeiler-Leman label counts of iterations 0..``iterations``, iteration t weighted 1/(1+t)."""
    labels, edges = labelled_graph(graph)
    weights: Counter = Counter()
    outgoing, incoming = (">", "<") if directed else ("", "")
    for iteration in range(iterations + 1):
        weight = 1.0 / (1 + iteration)
        for label in labels:
            weights[iteration, label] += weight
        if iteration == iterations:
            break
        neighbourhoods: list[list[str]] = [[] for _ in labels]
        for source, role, target in edges:
            neighbourhoods[source].append(f"{outgoing}{role} {labels[target]}")
            neighbourhoods[target].append(f"{incoming}{role} {labels[source]}")
        labels = [_digest(label + "\n" + "\n".join(sorted(neighbourhood)))
                  for label, neighbourhood in zip(labels, neighbourhoods)]
    squared_norm = math.fsum(value * value for value in weights.values())
    return WlFeatures(weights=dict(weights), squared_norm=squared_norm)


def prepare_wlk(text: str) -> WlFeatures:
    """Parse a PENMAN string (raises InvalidOutput) into its WL features."""
    return wl_features(parse_amr(text))


def wlk_similarity(first: WlFeatures, second: WlFeatures) -> float:
    """Cosine of two WL feature vectors, in [0, 1]."""
    if first.squared_norm == 0 or second.squared_norm == 0:
        return 0.0
    small, large = (first, second) if len(first.weights) <= len(second.weights) else (second, first)
    dot = math.fsum(value * large.weights.get(key, 0.0) for key, value in small.weights.items())
    return min(1.0, dot / math.sqrt(first.squared_norm * second.squared_norm))


WLK = Similarity(
    invalid_stand_in=EMPTY_AMR,
    name="wlk",
    display_name="WLK",
    prepare=prepare_wlk,
    score=wlk_similarity,
    symmetric=True,
    description="WLK (Opitz et al. 2021): cosine of Weisfeiler-Leman label counts, 2 iterations",
    options={"iterations": DEFAULT_ITERATIONS, "directed": True},
)
