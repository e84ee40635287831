"""Smatch++ (Opitz 2023) through the ``smatchpp`` package: AMR standardisation and optimal alignment.

Each graph is read and standardised once (``prepare``: smatchpp's PENMAN reader and AMR
standardizer); a pair is then aligned and scored with smatchpp's pipeline parts (pair preparer,
aligner, triple scorer), so the F1 is smatchpp's with its optimal (ILP) alignment. Three parts are
replaced by exact, faster equivalents (the tests check equality with smatchpp's own pipeline):

- the alignment solver first tries the Hungarian method plus pairwise swaps, and keeps that
  alignment when it reaches an upper bound on the alignment objective (no alignment can do better,
  so it is optimal); only otherwise does it solve smatchpp's integer program, with HiGHS through
  SciPy (CBC through ``mip``, smatchpp's choice, costs a second to load in every process). Beam
  candidates of one sentence are near copies of each other, so the integer program is rarely needed.
- the unary/binary match tables are built by joining triples on their labels instead of comparing
  every triple with every other (identity triple matching only, which is what Smatch++ uses).
- the matched-triple count is a multiset intersection (same reason).

Under a caller's time budget (:mod:`lsplits.runtime.cancel`: the Space's requests) the integer program gets no
more time than is left, and with under :data:`MIN_ILP_SECONDS` left a pair keeps its hill-climbing alignment,
noted for the caller to report; the solver runs in a helper thread, so a stop or a signal (the CLI's Ctrl-C,
SIGTERM) takes effect at once instead of when the solver returns.

A string that is not one well-formed AMR graph raises :class:`InvalidOutput`: validity is decided by
:func:`lsplits.similarity.amr.graph.parse_amr`, as for every AMR metric here (smatchpp's own reader silently
repairs broken graphs), and a graph that smatchpp cannot standardise is invalid too.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, linear_sum_assignment, milp
from smatchpp import align, data_helpers, eval_statistics, interfaces, preprocess, score
from smatchpp.formalism.amr import tools as amr_tools

from lsplits.errors import InvalidInput, InvalidOutput, Stopped
from lsplits.runtime.cancel import check_stop, note, time_left, wait_stoppable
from lsplits.similarity.amr.graph import EMPTY_AMR, parse_amr
from lsplits.similarity.registry import Similarity

logger = logging.getLogger(__name__)

Triple = tuple[str, str, str]
MIN_ILP_SECONDS = 1.0
"""Below this much of a caller's time budget the integer program is not started (see
:meth:`BoundedAlignmentSolver._solve_within_budget`)."""
HILL_CLIMBING_NOTE = ("Smatch++ alignment(s) kept the hill-climbing solution, not the proven optimum (their F1 may "
                      "be a little low)")
"""What :func:`lsplits.runtime.cancel.note` counts for each pair that kept its hill-climbing alignment (the
caller shows it after the count)."""
_SWAP_SEARCH_BUDGET = 5_000_000  # array cells per swap-search step


@dataclass(frozen=True)
class StandardGraph:
    """An AMR graph as smatchpp's standardised triples (variables renamed, edges de-inverted...)."""

    triples: tuple[Triple, ...]


class BoundedAlignmentSolver(interfaces.Solver):
    """Optimal variable alignment: a fast search when it provably reaches the optimum, else the ILP.

    The objective (as in smatchpp) is the number of matched triples under an alignment. Its upper
    bound is the best assignment of per-pair weights ``M[i, j] = unary[i, j] + sum_k max_l
    binary[i, j, k, l]`` (each binary match is counted once per end), tightened with a second,
    decoupled bound and rounded down because the objective of identity matching is an integer.
    ``stats`` counts how often each path was taken.
    """

    def __init__(self, ilp_max_seconds: int = 240) -> None:
        self.ilp_max_seconds = ilp_max_seconds
        self.stats: Counter[str] = Counter()

    def _solve(self, unary: Counter, binary: Counter, V: int) -> tuple[np.ndarray, float, float]:  # noqa: N803
        tables = _MatchTables(unary, binary, V)
        bound = tables.upper_bound()
        alignment, value = tables.best_assignment()
        if value < bound:
            alignment, value = tables.improve_by_swaps(alignment, value, bound)
        if value >= bound:
            self.stats["assignment"] += 1
            return alignment, float(value), float(bound)
        self.stats["ilp"] += 1
        exact = self._solve_within_budget(tables)
        if exact is None:
            return alignment, float(value), float(bound)
        return exact, float(tables.values(exact[None, :])[0]), float(bound)

    def _solve_within_budget(self, tables: _MatchTables) -> np.ndarray | None:
        """The ILP's alignment, solved within :attr:`ilp_max_seconds` and the caller's time budget
        (:func:`~lsplits.runtime.cancel.time_left`); None: keep the hill-climbing alignment (a lower bound).

        With less than :data:`MIN_ILP_SECONDS` of the budget left the ILP is not started and the hill-climbing
        alignment is used, noted for the caller to report (:data:`HILL_CLIMBING_NOTE`); where that note cannot
        reach the caller (a forked similarity worker, which its parent ends at the deadline) the ILP runs on
        with what is left. An ILP cut short by the budget ends the work (:class:`~lsplits.errors.Stopped`)
        unless the note reaches the caller. The solve runs in a helper thread (:func:`wait_stoppable`), so a
        stop or a signal takes effect at once, not when the solver returns.
        """
        left = time_left()
        if left is not None and left < MIN_ILP_SECONDS:
            check_stop()
            if self._hill_climbing(left):
                return None
        limit = self.ilp_max_seconds if left is None else min(self.ilp_max_seconds, left)
        exact = wait_stoppable(tables.solve_ilp, limit)
        if exact is not None:
            return exact
        if limit < self.ilp_max_seconds:  # the budget cut it short
            check_stop()
            if not self._hill_climbing(time_left() or 0.0):
                raise Stopped("stopped: the time budget ran out while Smatch++ solved an alignment")
            return None
        logger.warning("no optimal alignment within %s s; using the best one found (F1 may be low)", limit)
        return None

    def _hill_climbing(self, left: float) -> bool:
        """Note (:func:`~lsplits.runtime.cancel.note`) that a pair keeps its hill-climbing alignment; whether the
        note reached the caller."""
        if not note(HILL_CLIMBING_NOTE):
            return False
        self.stats["hill_climbing"] += 1
        logger.warning("%.1f s of the time budget left: a Smatch++ alignment keeps its hill-climbing solution, "
                       "not proven optimal (F1 may be low)", left)
        return True


class _MatchTables:
    """smatchpp's unary and binary match tables as arrays, with the bound and search used above."""

    def __init__(self, unary: Counter, binary: Counter, V: int) -> None:  # noqa: N803
        self.size = V
        self.unary = np.zeros((V, V))
        for (i, j), value in unary.items():
            self.unary[i, j] += value
        keys = np.array(list(binary.keys()), dtype=int).reshape(-1, 4)
        self.i, self.j, self.k, self.l = keys.T  # noqa: E741
        self.weight = np.fromiter(binary.values(), dtype=float, count=len(binary))

    def upper_bound(self) -> int:
        """An integer that no alignment's objective exceeds (the objective of identity matching is integral).

        The tighter of: the best assignment of ``unary[i, j] + sum_k max_l binary[i, j, k, l]`` (each
        edge match credited at both ends, half each, as the table stores it), and the best unary
        assignment plus, for each edge of the sparser side, its best possible edge match.
        """
        V = self.size  # noqa: N806
        best_neighbour = np.zeros((V, V, V))
        np.maximum.at(best_neighbour, (self.i, self.j, self.k), self.weight)
        coupled = self.unary + best_neighbour.sum(axis=2)
        best_edge1 = np.zeros((V, V))
        np.maximum.at(best_edge1, (self.i, self.k), self.weight)
        best_edge2 = np.zeros((V, V))
        np.maximum.at(best_edge2, (self.j, self.l), self.weight)
        rows, cols = linear_sum_assignment(self.unary, maximize=True)
        decoupled = self.unary[rows, cols].sum() + min(best_edge1.sum(), best_edge2.sum())
        rows, cols = linear_sum_assignment(coupled, maximize=True)
        return math.floor(min(decoupled, coupled[rows, cols].sum()) + 1e-9)

    def values(self, alignments: np.ndarray) -> np.ndarray:
        """Objective of each row of ``alignments`` (shape (n, V), -1 = unaligned): unary plus binary matches."""
        aligned = alignments >= 0
        unary = np.where(aligned, self.unary[np.arange(self.size), np.where(aligned, alignments, 0)], 0.0).sum(axis=1)
        active = (alignments[:, self.i] == self.j) & (alignments[:, self.k] == self.l)
        return unary + active @ self.weight

    def best_assignment(self) -> tuple[np.ndarray, float]:
        """The assignment maximising unary plus best-case binary weights (a good start, often optimal)."""
        coupled = self.unary.copy()
        np.add.at(coupled, (self.i, self.j), self.weight)
        rows, cols = linear_sum_assignment(coupled, maximize=True)
        alignment = np.empty(self.size, dtype=int)
        alignment[rows] = cols
        return alignment, float(self.values(alignment[None, :])[0])

    def solve_ilp(self, max_seconds: float) -> np.ndarray | None:
        """Optimal alignment from the same integer program as smatchpp's ILP, solved with HiGHS.

        Variables: x[i, j] = 1 when variable i of graph 1 is aligned with j of graph 2, and one y per
        pair of alignments that matches an edge (y <= both x). Each variable is aligned at most once.
        Returns None when no optimum is proven within ``max_seconds``.
        """
        V = self.size  # noqa: N806
        edges: dict[tuple[int, int], float] = defaultdict(float)
        for i, j, k, l, value in zip(self.i, self.j, self.k, self.l, self.weight, strict=True):  # noqa: E741
            first, second = i * V + j, k * V + l
            edges[min(first, second), max(first, second)] += value
        pairs = np.array(list(edges), dtype=int).reshape(-1, 2)
        n_x, n_y = V * V, len(pairs)
        objective = -np.concatenate([self.unary.ravel(), np.fromiter(edges.values(), float, n_y)])
        cells = np.arange(n_x)
        rows = [cells // V, V + cells % V]  # one row per graph-1 variable, one per graph-2 variable
        columns = [cells, cells]
        entries = [np.ones(n_x), np.ones(n_x)]
        for side in (0, 1):  # y_e - x_side(e) <= 0
            constraint = 2 * V + side * n_y + np.arange(n_y)
            rows += [constraint, constraint]
            columns += [n_x + np.arange(n_y), pairs[:, side]]
            entries += [np.ones(n_y), -np.ones(n_y)]
        matrix = sparse.csr_array((np.concatenate(entries), (np.concatenate(rows), np.concatenate(columns))),
                                  shape=(2 * V + 2 * n_y, n_x + n_y))
        upper = np.concatenate([np.ones(2 * V), np.zeros(2 * n_y)])
        result = milp(objective, integrality=np.ones(n_x + n_y), bounds=Bounds(0, 1),
                      constraints=LinearConstraint(matrix, -np.inf, upper),
                      options={"time_limit": max_seconds})
        if result.status != 0 or result.x is None:
            return None
        chosen = result.x[:n_x].reshape(V, V) > 0.5
        alignment = np.full(V, -1, dtype=int)
        rows_aligned, cols_aligned = np.nonzero(chosen)
        alignment[rows_aligned] = cols_aligned
        return alignment

    def improve_by_swaps(self, alignment: np.ndarray, value: float, bound: int) -> tuple[np.ndarray, float]:
        """Steepest ascent over exchanges of two variables' partners; stops at the bound or a peak.

        Skipped for very large graphs, where one step would cost more than the integer program.
        """
        first, second = np.triu_indices(self.size, 1)
        if len(first) * (len(self.weight) + self.size) > _SWAP_SEARCH_BUDGET:
            return alignment, value
        rows = np.arange(len(first))
        for _ in range(2 * self.size):
            candidates = np.repeat(alignment[None, :], len(first), axis=0)
            candidates[rows, first] = alignment[second]
            candidates[rows, second] = alignment[first]
            scores = self.values(candidates)
            best = int(scores.argmax())
            if scores[best] <= value + 1e-9:
                break
            alignment, value = candidates[best], float(scores[best])
            if value >= bound:
                break
        return alignment, value


class JoinGraphAligner(align.GraphAligner):
    """smatchpp's aligner with the match tables built by joining on labels (identity matching only)."""

    def align(self, triples1, triples2, var1, var2) -> tuple[np.ndarray, dict[str, int], tuple[float, float]]:
        """Same result as smatchpp's ``GraphAligner.align``, without its eagerly formatted debug logs."""
        if not var1 or not var2:
            return np.array([]), {}, (0, 0)
        var_index = {var: i for i, var in enumerate(sorted(var1))}
        var_index.update({var: i for i, var in enumerate(sorted(var2))})
        unary, binary = self._compute_match_dicts(triples1, triples2, var1, var2, var_index)
        alignment, lower, upper = self.solver.solve(unary, binary, max(len(var1), len(var2)))
        return alignment, var_index, (lower, upper)

    def _make_unary_match_dict(self, triples1, triples2, var1, var2, var_index) -> Counter:
        data: Counter = Counter()
        by_relation_target: dict[tuple[str, str], list[int]] = defaultdict(list)  # i2 known
        by_source_relation: dict[tuple[str, str], list[int]] = defaultdict(list)  # i2 unknown, j2 known
        by_source_relation_all: dict[tuple[str, str], list[int]] = defaultdict(list)
        for s, r, t in triples2:
            if (s in var2) == (t in var2):
                continue
            i2, j2 = var_index.get(s), var_index.get(t)
            if i2 is not None:
                by_relation_target[r, t].append(i2)
            if j2 is not None:
                by_source_relation_all[s, r].append(j2)
                if i2 is None:
                    by_source_relation[s, r].append(j2)
        for s, r, t in triples1:
            if (s in var1) == (t in var1):
                continue
            i1, j1 = var_index.get(s), var_index.get(t)
            if i1 is not None:
                for i2 in by_relation_target.get((r, t), ()):
                    data[i1, i2] += 1
            if j1 is not None:
                # smatchpp compares source+relation only for partners whose source is not a variable,
                # or for every partner when this triple's source is not a variable.
                partners = by_source_relation if i1 is not None else by_source_relation_all
                for j2 in partners.get((s, r), ()):
                    data[j1, j2] += 1
        return data

    def _make_binary_match_dict(self, triples1, triples2, var1, var2, var_index) -> Counter:
        data: Counter = Counter()
        edges1 = Counter(tr for tr in triples1 if tr[0] in var1 and tr[2] in var1)
        edges2 = Counter(tr for tr in triples2 if tr[0] in var2 and tr[2] in var2)
        by_relation: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
        for (s, r, t), count in edges2.items():
            by_relation[r].append((var_index[s], var_index[t], count))
        for (s, r, t), count in edges1.items():
            i, j = var_index[s], var_index[t]
            for i2, j2, count2 in by_relation.get(r, ()):
                half = min(count, count2) / 2
                data[i, i2, j, j2] += half
                data[j, j2, i, i2] += half
        return data


class IntersectionTripleScorer(score.TripleScorer):
    """smatchpp's triple scorer with identity matching computed as a multiset intersection."""

    def _get_matchsum_possibly_asymmetric(self, triplecountdict1: Counter, triplecountdict2: Counter) -> float:
        return float(sum(min(count, triplecountdict2[t]) for t, count in triplecountdict1.items()
                         if t in triplecountdict2))


_READER = data_helpers.PenmanReader()
_STANDARDIZER = amr_tools.AMRStandardizer()
_PAIR_PREPARER = preprocess.BasicGraphPairPreparer()
SOLVER = BoundedAlignmentSolver()
_ALIGNER = JoinGraphAligner(score.IDTripleMatcher(), SOLVER)
_SCORER = IntersectionTripleScorer(triplematcher=score.IDTripleMatcher())


def prepare(text: str) -> StandardGraph:
    """Parse and standardise one PENMAN graph; raises InvalidOutput if it is not well-formed AMR."""
    parse_amr(text)  # the validity check shared by every AMR metric; raises InvalidOutput
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    try:
        triples = _STANDARDIZER.standardize(_READER.string2graph(body))
    except (KeyError, IndexError, ValueError) as exc:
        raise InvalidOutput(f"smatchpp cannot standardise this graph ({type(exc).__name__}: {exc})") from exc
    if not triples:
        raise InvalidOutput("the graph has no triples")
    return StandardGraph(tuple(triples))


def match_counts(prediction: StandardGraph, reference: StandardGraph) -> np.ndarray:
    """Matched triples under the optimal alignment: [matched in prediction, matched in reference,
    prediction size, reference size] (smatchpp's match statistic)."""
    g1, g2, var1, var2 = _PAIR_PREPARER.prepare_get_vars(list(prediction.triples), list(reference.triples))
    alignment, var_index, _status = _ALIGNER.align(g1, g2, var1, var2)
    return np.asarray(_SCORER.score(g1, g2, alignment, var_index), dtype=float)


def f1(prediction: StandardGraph, reference: StandardGraph) -> float:
    """Smatch++ F1 in [0, 1] of one pair (smatchpp reports the same number times 100)."""
    return float(eval_statistics.f1_score(match_counts(prediction, reference)))


def corpus_f1(predictions: Sequence[StandardGraph], references: Sequence[StandardGraph]) -> float:
    """Corpus Smatch++ F1: micro average, i.e. F1 of the match statistics summed over all pairs."""
    if len(predictions) != len(references):
        raise InvalidInput(f"{len(predictions)} predictions but {len(references)} references")
    if not predictions:
        return float("nan")
    total = np.zeros(4)
    for prediction, reference in zip(predictions, references, strict=True):
        check_stop()  # a caller's time budget, between pairs
        total += match_counts(prediction, reference)
    return float(eval_statistics.f1_score(total))


SMATCHPP = Similarity(
    invalid_stand_in=EMPTY_AMR,
    name="smatchpp",
    display_name="Smatch++",
    prepare=prepare,
    score=f1,
    symmetric=True,
    description="Smatch++ F1: standardised AMR triples, optimal (ILP-exact) variable alignment",
    corpus_score=corpus_f1,
)
