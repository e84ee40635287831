"""SemBLEU (Song & Gildea 2019, "SemBleu: A Robust Metric for AMR Parsing Evaluation"): BLEU on graph n-grams.

Following the authors' evaluation script (freesunshine0316/sembleu, ``eval.py``):

- the graph has one node per variable (its concept) and one per attribute occurrence (its
  constant), edges with their roles, inverse roles turned around;
- n-grams (n <= 3) are the paths that follow edge directions, started from every node:
  ``(node,)``, ``(node, role, node)`` and ``(node, role, node, role, node)``, no edge used twice;
- modified precision p_n: hypothesis n-gram counts clipped by the reference's counts;
- weights (0.34, 0.33, 0.34) for n = 1, 2, 3 (the script's values), re-weighted uniformly over
  the orders the hypothesis has when it has no trigram (or no bigram);
- NIST geometric smoothing: the k-th order with no match gets p_n = 1 / (2^k * count);
- brevity penalty exp(1 - r / c) when c <= r, with the graph size c, r = nodes + edges;
- 0 when no node matches.

The sentence score is the corpus score of one pair, as the reference's ``sentence_bleu``; the corpus
score sums clipped counts and sizes over all pairs before combining. SemBLEU is a precision-based
metric: ``score(hypothesis, reference)`` is not symmetric.

Deliberate differences from the script: ``:ARG0-of`` edges are turned around *and* renamed
``:arg0`` (the script turns them around but keeps the ``-of`` label, a bug), and n-grams start from
every node rather than from the nodes a breadth-first walk from the parentless nodes reaches
(these differ only for cycles that no parentless node leads to).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from lsplits.errors import InvalidInput
from lsplits.similarity.amr.graph import EMPTY_AMR, AmrGraph, labelled_graph, parse_amr
from lsplits.similarity.registry import Similarity

DEFAULT_WEIGHTS = (0.34, 0.33, 0.34)


@dataclass(frozen=True)
class SemBleuGraph:
    """N-gram counts (``ngrams[n - 1]`` for order n) and size (nodes + edges) of one graph."""

    ngrams: tuple[Counter, ...]
    size: int


def graph_ngrams(graph: AmrGraph, max_order: int = 3) -> SemBleuGraph:
    """Count the graph's n-grams up to ``max_order`` (paths along edge directions)."""
    labels, edges = labelled_graph(graph)
    outgoing: list[list[tuple[int, str, int]]] = [[] for _ in labels]
    for index, (source, role, target) in enumerate(edges):
        outgoing[source].append((index, role, target))
    counts = tuple(Counter() for _ in range(max_order))

    def extend(path: tuple[str, ...], node: int, used: frozenset) -> None:
        counts[len(path) // 2][path] += 1
        if len(path) // 2 + 1 >= max_order:
            return
        for index, role, target in outgoing[node]:
            if index not in used:
                extend(path + (role, labels[target]), target, used | {index})

    for node, label in enumerate(labels):
        extend((label,), node, frozenset())
    return SemBleuGraph(ngrams=counts, size=len(labels) + len(edges))


def prepare_sembleu(text: str) -> SemBleuGraph:
    """Parse a PENMAN string (raises InvalidOutput) into its SemBLEU n-gram counts."""
    return graph_ngrams(parse_amr(text))


def corpus_sembleu(hypotheses: Sequence[SemBleuGraph], references: Sequence[SemBleuGraph],
                   weights: Sequence[float] = DEFAULT_WEIGHTS) -> float:
    """Corpus SemBLEU in [0, 1] of hypotheses against references (one reference each)."""
    if len(hypotheses) != len(references):
        raise InvalidInput(f"{len(hypotheses)} hypotheses but {len(references)} references")
    orders = len(weights)
    matches, totals = [0] * orders, [0] * orders
    hypothesis_size = reference_size = 0
    for hypothesis, reference in zip(hypotheses, references):
        for n in range(min(orders, len(hypothesis.ngrams))):
            counts = hypothesis.ngrams[n]
            reference_counts = reference.ngrams[n] if n < len(reference.ngrams) else Counter()
            matches[n] += sum((counts & reference_counts).values())
            totals[n] += sum(counts.values())
        hypothesis_size += hypothesis.size
        reference_size += reference.size
    if not matches or matches[0] == 0:
        return 0.0
    highest = max(n + 1 for n in range(orders) if totals[n] > 0)
    if highest < orders:
        weights = (1.0 / highest,) * highest
    log_precision, zero_matches = 0.0, 0
    for n, weight in enumerate(weights):
        if matches[n] > 0:
            precision = matches[n] / totals[n]
        else:
            zero_matches += 1
            precision = 1.0 / (2**zero_matches * totals[n])
        log_precision += weight * math.log(precision)
    return brevity_penalty(hypothesis_size, reference_size) * math.exp(log_precision)


def brevity_penalty(hypothesis_size: int, reference_size: int) -> float:
    """BLEU's brevity penalty: 1 if the hypothesis is larger, else exp(1 - r / c) (0 if empty)."""
    if hypothesis_size > reference_size:
        return 1.0
    if hypothesis_size == 0:
        return 0.0
    return math.exp(1.0 - reference_size / hypothesis_size)


def sembleu(hypothesis: SemBleuGraph, reference: SemBleuGraph) -> float:
    """Sentence SemBLEU in [0, 1] (the corpus score of one pair)."""
    return corpus_sembleu([hypothesis], [reference])


SEMBLEU = Similarity(
    invalid_stand_in=EMPTY_AMR,
    name="sembleu",
    display_name="SemBLEU",
    prepare=prepare_sembleu,
    score=sembleu,
    symmetric=False,
    description="SemBLEU (Song & Gildea 2019): BLEU over graph n-grams (n <= 3), NIST smoothing",
    corpus_score=corpus_sembleu,
    options={"weights": DEFAULT_WEIGHTS, "max_order": 3},
)
