"""Smatch-style variable alignment by hill climbing, shared by Smatch and S2Match.

Smatch (Cai & Knight 2013) scores two AMR graphs by the number of triples that match under the
best one-to-one mapping of the variables of graph A onto those of graph B. The search is the
reference implementation's: a "smart" start (each node takes a free node with the best own score;
the reference uses concept equality only), then random restarts; from each start, hill climbing
moves one node to a free node or swaps two nodes' targets, always taking the move with the largest
gain, until no move gains. The best result over all starts is kept. Two changes: a random start
visits the nodes in random order (the reference always lets node 0 choose first), and at a local
optimum the climb also tries moving both ends of a relation at once (a relation triple matches only
when both ends are in place, so neither single move gains); both escape local optima the reference
stays in. Random choices come from ``random.Random(seed)``, so a score is reproducible.
``benchmarks/smatch_official.py`` compares the matched counts with the official scorer's.

The objective is::

    matched(f) = sum_i node_score(i, f(i)) + #{relation pairs (r, i, k) in A, (r, f(i), f(k)) in B}

where ``node_score(i, j)`` = concept score (given by the caller: 1/0 for Smatch, graded for
S2Match) + the number of equal attributes (same role, same constant) + 1 if both are the root
(Smatch's TOP triple). Graph A has ``|concepts| + |attributes| + |relations| + 1`` triples, and
Smatch's F1 is ``2 * matched / (triples(A) + triples(B))``.

The search stops as soon as a mapping reaches :func:`matched_upper_bound` (then no restart can do better),
so raising the restarts costs little on near-identical pairs such as a beam's candidates.

Implementation: a table ``gain[i][j]`` holds what node i would contribute if mapped to j given the
other nodes' current targets; it is updated incrementally when a node changes target, so each move
or swap is scored in O(1) and only candidate targets (those that can score) are examined.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from lsplits.similarity.amr.graph import AmrGraph

ConceptScore = Callable[[str, str], float]

# Gains at or below this are treated as no gain (S2Match's graded scores are floats).
_EPSILON = 1e-9


def exact_concept_match(concept_a: str, concept_b: str) -> float:
    """Smatch's concept score: 1 for the same concept, else 0."""
    return 1.0 if concept_a == concept_b else 0.0


def triple_count(graph: AmrGraph) -> int:
    """Number of Smatch triples of a graph: instances + attributes + relations + TOP."""
    return graph.size + len(graph.attributes) + len(graph.relations) + 1


@dataclass(frozen=True)
class AlignmentProblem:
    """Scores of all node pairs for one (A, B) graph pair.

    Attributes:
        size_a, size_b: node counts.
        node_scores: per node i of A, {node j of B: node_score(i, j)} for the positive ones.
        neighbours: (i, j) -> [(i2, j2, weight)]: mapping i->j and i2->j2 together matches
            ``weight`` relation triples (stored in both directions).
        pair_weight: (i, j, i2, j2) -> the same weight, for direct look-up.
    """

    size_a: int
    size_b: int
    node_scores: list[dict[int, float]]
    neighbours: dict[tuple[int, int], list[tuple[int, int, float]]]
    pair_weight: dict[tuple[int, int, int, int], float]

    def candidates(self) -> list[list[int]]:
        """For each node of A, the nodes of B it can score with (sorted, for reproducibility)."""
        result = [set(scores) for scores in self.node_scores]
        for i, j in self.neighbours:
            result[i].add(j)
        return [sorted(targets) for targets in result]


def build_problem(graph_a: AmrGraph, graph_b: AmrGraph, concept_score: ConceptScore) -> AlignmentProblem:
    """Collect node scores and relation-pair weights of a graph pair under a concept score."""
    node_scores: list[dict[int, float]] = [defaultdict(float) for _ in range(graph_a.size)]
    for i, concept_a in enumerate(graph_a.concepts):
        for j, concept_b in enumerate(graph_b.concepts):
            value = concept_score(concept_a, concept_b)
            if value > 0:
                node_scores[i][j] += value
    attributes_b: dict[tuple[str, str], list[int]] = defaultdict(list)
    for role, node, constant in graph_b.attributes:
        attributes_b[role, constant].append(node)
    for role, i, constant in graph_a.attributes:
        for j in attributes_b.get((role, constant), ()):
            node_scores[i][j] += 1.0
    node_scores[graph_a.top][graph_b.top] += 1.0  # TOP triple

    relations_b: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for role, source, target in graph_b.relations:
        relations_b[role].append((source, target))
    pair_weight: dict[tuple[int, int, int, int], float] = defaultdict(float)
    for role, i, i2 in graph_a.relations:
        for j, j2 in relations_b.get(role, ()):
            if i == i2 and j == j2:  # a self-loop matching a self-loop depends on one node only
                node_scores[i][j] += 1.0
            elif i != i2 and j != j2:
                pair_weight[i, j, i2, j2] += 1.0
                pair_weight[i2, j2, i, j] += 1.0
    neighbours: dict[tuple[int, int], list[tuple[int, int, float]]] = defaultdict(list)
    for (i, j, i2, j2), weight in pair_weight.items():
        neighbours[i, j].append((i2, j2, weight))
    return AlignmentProblem(
        size_a=graph_a.size,
        size_b=graph_b.size,
        node_scores=[dict(scores) for scores in node_scores],
        neighbours=dict(neighbours),
        pair_weight=dict(pair_weight),
    )


class _Climber:
    """Hill climbing from one start mapping, with the incremental gain table."""

    def __init__(self, problem: AlignmentProblem, candidates: list[list[int]], start: list[int | None]):
        self.problem = problem
        self.candidates = candidates
        self.mapping = list(start)
        self.owner: list[int | None] = [None] * problem.size_b
        self.gain = [[0.0] * problem.size_b for _ in range(problem.size_a)]
        for i, scores in enumerate(problem.node_scores):
            row = self.gain[i]
            for j, value in scores.items():
                row[j] = value
        for i, j in enumerate(self.mapping):
            if j is not None:
                self.owner[j] = i
                self._shift(i, j, 1.0)

    def _shift(self, node: int, target: int, sign: float) -> None:
        """Add (sign=1) or remove (sign=-1) the relation matches enabled by node -> target."""
        for other, other_target, weight in self.problem.neighbours.get((node, target), ()):
            self.gain[other][other_target] += sign * weight

    def _assign(self, node: int, target: int | None) -> None:
        old = self.mapping[node]
        if old is not None:
            self._shift(node, old, -1.0)
            if self.owner[old] == node:
                self.owner[old] = None
        self.mapping[node] = target
        if target is not None:
            self._shift(node, target, 1.0)
            self.owner[target] = node

    def _current(self, node: int) -> float:
        target = self.mapping[node]
        return 0.0 if target is None else self.gain[node][target]

    def _swap_gain(self, first: int, second: int) -> float:
        """Gain of exchanging the targets of two nodes (either target may be None)."""
        a, b = self.mapping[first], self.mapping[second]
        weight = self.problem.pair_weight
        gain = -self._current(first) - self._current(second)
        if b is not None:
            gain += self.gain[first][b]
        if a is not None:
            gain += self.gain[second][a]
        if a is not None and b is not None:
            gain += weight.get((first, a, second, b), 0.0) + weight.get((first, b, second, a), 0.0)
        return gain

    def _pair_gain(self, first: int, target: int, second: int, second_target: int) -> float:
        """Gain of moving two nodes at once (first -> target, second -> second_target), the targets free
        or held by these two nodes: what a relation matched by both ends needs when neither move alone gains."""
        weight = self.problem.pair_weight
        a, b = self.mapping[first], self.mapping[second]
        new = self.gain[first][target] + self.gain[second][second_target] + weight.get(
            (first, target, second, second_target), 0.0)
        if b is not None:
            new -= weight.get((first, target, second, b), 0.0)
        if a is not None:
            new -= weight.get((second, second_target, first, a), 0.0)
        old = self._current(first) + self._current(second)
        if a is not None and b is not None:
            old -= weight.get((first, a, second, b), 0.0)
        return new - old

    def _single_step(self) -> bool:
        """Apply the best move or swap; False when none gains."""
        best_gain, best_node, best_target = _EPSILON, -1, -1
        for node, targets in enumerate(self.candidates):
            current = self._current(node)
            row = self.gain[node]
            for target in targets:
                if target == self.mapping[node]:
                    continue
                owner = self.owner[target]
                gain = row[target] - current if owner is None else self._swap_gain(node, owner)
                if gain > best_gain:
                    best_gain, best_node, best_target = gain, node, target
        if best_node < 0:
            return False
        owner = self.owner[best_target]
        if owner is None:
            self._assign(best_node, best_target)
        else:
            previous = self.mapping[best_node]
            self._assign(owner, None)
            self._assign(best_node, best_target)
            self._assign(owner, previous)
        return True

    def _pair_step(self) -> bool:
        """Apply the best two-node move (see :meth:`_pair_gain`); False when none gains."""
        best_gain, best = _EPSILON, None
        owner, mapping = self.owner, self.mapping
        for (first, target), partners in self.problem.neighbours.items():
            holder = owner[target]
            for second, second_target, _ in partners:
                if second < first or holder not in (None, first, second) or \
                        owner[second_target] not in (None, first, second):
                    continue
                if mapping[first] == target and mapping[second] == second_target:
                    continue
                gain = self._pair_gain(first, target, second, second_target)
                if gain > best_gain:
                    best_gain, best = gain, (first, target, second, second_target)
        if best is None:
            return False
        first, target, second, second_target = best
        self._assign(first, None)
        self._assign(second, None)
        self._assign(first, target)
        self._assign(second, second_target)
        return True

    def climb(self) -> None:
        """Apply the best move or swap until none gains, then the best two-node move, and so on."""
        while self._single_step() or self._pair_step():
            pass


def mapping_score(problem: AlignmentProblem, mapping: Sequence[int | None]) -> float:
    """Objective value of a mapping (node i of A -> mapping[i] of B, or None), computed from scratch."""
    total = sum(problem.node_scores[i].get(j, 0.0) for i, j in enumerate(mapping) if j is not None)
    for (i, j, i2, j2), weight in problem.pair_weight.items():
        if i < i2 and mapping[i] == j and mapping[i2] == j2:
            total += weight
    return total


def _smart_start(problem: AlignmentProblem, candidates: list[list[int]], rng: random.Random) -> list[int | None]:
    """Each node in order takes the free node with its best own score; the rest a random free candidate."""
    mapping: list[int | None] = [None] * problem.size_a
    taken: set[int] = set()
    for i, scores in enumerate(problem.node_scores):
        free = [(value, -j) for j, value in scores.items() if j not in taken]
        if free:
            mapping[i] = -max(free)[1]
            taken.add(mapping[i])
    for i in range(problem.size_a):
        if mapping[i] is None:
            free = [j for j in candidates[i] if j not in taken]
            if free:
                mapping[i] = rng.choice(free)
                taken.add(mapping[i])
    return mapping


def _random_start(problem: AlignmentProblem, candidates: list[list[int]], rng: random.Random) -> list[int | None]:
    """Nodes in random order each take a random free candidate (a random order lets any node win)."""
    mapping: list[int | None] = [None] * problem.size_a
    taken: set[int] = set()
    order = list(range(problem.size_a))
    rng.shuffle(order)
    for i in order:
        free = [j for j in candidates[i] if j not in taken]
        if free:
            mapping[i] = rng.choice(free)
            taken.add(mapping[i])
    return mapping


def best_mapping(problem: AlignmentProblem, *, restarts: int = 4, seed: int = 0,
                 upper_bound: float | None = None) -> tuple[float, list[int | None]]:
    """Best (score, mapping) found by hill climbing from a smart start and ``restarts`` random ones.

    Stops early when a mapping reaches ``upper_bound`` (no mapping can score more).
    """
    rng = random.Random(seed)
    candidates = problem.candidates()
    best_score, best = -1.0, [None] * problem.size_a
    for attempt in range(restarts + 1):
        start = _smart_start(problem, candidates, rng) if attempt == 0 else _random_start(problem, candidates, rng)
        climber = _Climber(problem, candidates, start)
        climber.climb()
        score = mapping_score(problem, climber.mapping)
        if score > best_score + _EPSILON:
            best_score, best = score, climber.mapping
        if upper_bound is not None and best_score >= upper_bound - _EPSILON:
            break
    return best_score, best


@dataclass(frozen=True)
class MatchCounts:
    """Matched triples of a graph pair and each graph's triple count (F1 = 2m / (a + b))."""

    matched: float
    total_a: int
    total_b: int

    @property
    def f1(self) -> float:
        """Smatch F1; 0 when nothing matches."""
        return 2.0 * self.matched / (self.total_a + self.total_b) if self.matched > 0 else 0.0


def match_graphs(graph_a: AmrGraph, graph_b: AmrGraph, concept_score: ConceptScore = exact_concept_match,
                 *, restarts: int = 4, seed: int = 0) -> MatchCounts:
    """Matched triple count of two graphs under the best alignment found by hill climbing.

    A triple that a graph holds several times (the official Smatch reading keeps repeats) matches each
    copy in the other graph, as in the official scorer, so the count can then exceed either total.
    """
    total_a, total_b = triple_count(graph_a), triple_count(graph_b)
    problem = build_problem(graph_a, graph_b, concept_score)
    repeated = has_repeated_triples(graph_a) or has_repeated_triples(graph_b)
    bound = None if repeated else min(total_a, total_b, matched_upper_bound(problem, graph_a, graph_b))
    matched, _ = best_mapping(problem, restarts=restarts, seed=seed, upper_bound=bound)
    return MatchCounts(matched=matched if bound is None else min(matched, bound), total_a=total_a, total_b=total_b)


def matched_upper_bound(problem: AlignmentProblem, graph_a: AmrGraph, graph_b: AmrGraph) -> float:
    """A bound no mapping's score exceeds (graphs without repeated triples): the best one-to-one assignment of
    the node scores (concepts, attributes, TOP, self-loops) plus, per relation role, the fewer of the two graphs'
    relations between distinct nodes. Where the search reaches it, no further restart can do better."""
    from scipy.optimize import linear_sum_assignment

    nodes = 0.0
    if problem.size_a and problem.size_b:
        table = np.zeros((problem.size_a, problem.size_b))
        for i, scores in enumerate(problem.node_scores):
            for j, value in scores.items():
                table[i, j] = value
        rows, columns = linear_sum_assignment(table, maximize=True)
        nodes = float(table[rows, columns].sum())
    roles_a = Counter(role for role, source, target in graph_a.relations if source != target)
    roles_b = Counter(role for role, source, target in graph_b.relations if source != target)
    return nodes + sum(min(count, roles_b[role]) for role, count in roles_a.items())


def has_repeated_triples(graph: AmrGraph) -> bool:
    """Whether a relation or attribute triple occurs more than once (only in the official Smatch reading)."""
    return len(set(graph.relations)) < len(graph.relations) or len(set(graph.attributes)) < len(graph.attributes)


def micro_f1(counts: Sequence[MatchCounts]) -> float:
    """Corpus F1 from summed counts (Smatch's corpus score), 0 for no pairs or no matches."""
    matched = sum(count.matched for count in counts)
    total = sum(count.total_a + count.total_b for count in counts)
    return 2.0 * matched / total if matched > 0 else 0.0
