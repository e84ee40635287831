"""SEMA (Anchieta et al. 2019, "SEMA: an Extended Semantic Evaluation Metric for AMR").

SEMA avoids Smatch's variable alignment search: it compares triples through the concepts at their
ends, and a triple only counts when what it depends on is right. Triples are instances, relations
and attributes (no TOP triple: the root is scored by comparing the two root concepts). Matches:

- a relation matches one with the same role, the same parent concept and the same child concept;
- an attribute matches one with the same role, the same parent concept and the same constant;
- a node (instance triple) counts when it is the root and both roots have the same concept, or
  when it is an end of a relation that matches.

The reference script pairs every test triple with every equal gold triple, so one test triple can
be credited several times and precision can exceed 1 (e.g. ``(w / want-01 :ARG0 (b / boy))``
against a gold graph with two such want-boy pairs). Here matching is one-to-one by counting: per
relation or attribute signature the matches are the smaller of the two counts, and per concept the
matched nodes are the smaller of the two graphs' counts of credited nodes. So the match count is at
most each graph's triple count, F1 = 2 m / (|A| + |B|) is in [0, 1], order plays no part and the
score is symmetric. When every concept occurs on one node only in each graph and no two relations
join the same two nodes, the count equals the reference script's.
The corpus score sums matches and triple counts, as the reference script does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from lsplits.errors import InvalidInput
from lsplits.similarity.amr.graph import EMPTY_AMR, parse_amr
from lsplits.similarity.registry import Similarity

RelationKey = tuple[str, str, str]  # (parent concept, role, child concept)
AttributeKey = tuple[str, str, str]  # (parent concept, role, constant)


@dataclass(frozen=True)
class SemaGraph:
    """What SEMA needs of a graph, computed once in ``prepare``.

    Attributes:
        concepts: concept per node.
        root: root node.
        relation_keys: count of each (parent concept, role, child concept).
        attribute_keys: count of each (parent concept, role, constant).
        node_relations: per node, the keys of the relations it is an end of.
        triples: number of SEMA triples (instances + relations + attributes).
    """

    concepts: tuple[str, ...]
    root: int
    relation_keys: Counter
    attribute_keys: Counter
    node_relations: tuple[frozenset, ...]
    triples: int


def prepare_sema(text: str) -> SemaGraph:
    """Parse a PENMAN string (raises InvalidOutput) and index it for SEMA."""
    graph = parse_amr(text)
    concepts = graph.concepts
    node_relations: list[set[RelationKey]] = [set() for _ in concepts]
    relation_keys: Counter = Counter()
    for role, source, target in graph.relations:
        key = (concepts[source], role, concepts[target])
        relation_keys[key] += 1
        node_relations[source].add(key)
        node_relations[target].add(key)
    attribute_keys = Counter((concepts[source], role, constant) for role, source, constant in graph.attributes)
    return SemaGraph(
        concepts=concepts,
        root=graph.top,
        relation_keys=relation_keys,
        attribute_keys=attribute_keys,
        node_relations=tuple(frozenset(keys) for keys in node_relations),
        triples=graph.size + len(graph.relations) + len(graph.attributes),
    )


def _credited_concepts(graph: SemaGraph, matched_relations: set, root_matches: bool) -> Counter:
    """Count, per concept, the nodes that are the matched root or an end of a matched relation."""
    credited: Counter = Counter()
    for node, keys in enumerate(graph.node_relations):
        if (root_matches and node == graph.root) or not keys.isdisjoint(matched_relations):
            credited[graph.concepts[node]] += 1
    return credited


def sema_matches(first: SemaGraph, second: SemaGraph) -> int:
    """Number of SEMA triple matches between two graphs (symmetric; at most either's triple count)."""
    relations = first.relation_keys & second.relation_keys  # Counter & = per-key minimum
    attributes = first.attribute_keys & second.attribute_keys
    root_matches = first.concepts[first.root] == second.concepts[second.root]
    matched_keys = set(relations)
    nodes = (_credited_concepts(first, matched_keys, root_matches)
             & _credited_concepts(second, matched_keys, root_matches))
    return sum(relations.values()) + sum(attributes.values()) + sum(nodes.values())


def sema_f1(prediction: SemaGraph, reference: SemaGraph) -> float:
    """SEMA F1 in [0, 1]: precision = matches / prediction triples, recall = matches / reference triples."""
    matches = sema_matches(prediction, reference)
    return 2.0 * matches / (prediction.triples + reference.triples) if matches else 0.0


def corpus_sema(predictions: Sequence[SemaGraph], references: Sequence[SemaGraph]) -> float:
    """Corpus SEMA F1 from matches and triple counts summed over the pairs."""
    if len(predictions) != len(references):
        raise InvalidInput(f"{len(predictions)} predictions but {len(references)} references")
    matches = sum(sema_matches(p, r) for p, r in zip(predictions, references))
    total = sum(p.triples + r.triples for p, r in zip(predictions, references))
    return 2.0 * matches / total if matches else 0.0


SEMA = Similarity(
    invalid_stand_in=EMPTY_AMR,
    name="sema",
    display_name="SEMA",
    prepare=prepare_sema,
    score=sema_f1,
    symmetric=True,
    description="SEMA (Anchieta et al. 2019): alignment-free triple F1, triples matched by their concepts",
    corpus_score=corpus_sema,
)
