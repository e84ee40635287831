"""Smatch++: the same F1 as smatchpp's own pipeline (ILP solver, AMR standardisation), computed faster."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import numpy as np
import pytest
from amr_edits import degrade, sample_gold
from smatchpp import Smatchpp, eval_statistics, solvers
from smatchpp.formalism.amr import tools as amr_tools

from lsplits.errors import InvalidOutput
from lsplits.similarity.amr import smatchpp_metric
from lsplits.similarity.amr.smatchpp_metric import (
    SMATCHPP,
    BoundedAlignmentSolver,
    corpus_f1,
    f1,
    match_counts,
    prepare,
)
from lsplits.similarity.registry import get


@pytest.fixture(scope="module")
def reference_pipeline() -> Smatchpp:
    """smatchpp used as its documentation shows: ILP alignment, AMR standardisation."""
    return Smatchpp(alignmentsolver=solvers.ILP(), graph_standardizer=amr_tools.AMRStandardizer())


def reference_f1(pipeline: Smatchpp, a: str, b: str) -> float:
    match, _status, _alignment = pipeline.process_pair(a, b)
    return float(eval_statistics.f1_score(match["main"]))


def test_identical_to_smatchpp_on_edited_real_graphs(reference_pipeline):
    rng = random.Random(3)
    pairs = []
    for _example, gold in sample_gold():
        for _ in range(3):
            pairs.append((degrade(gold, rng.randint(0, 4), rng), degrade(gold, rng.randint(0, 4), rng)))
    gold_graphs = [g for _, g in sample_gold()]
    pairs += list(zip(gold_graphs, gold_graphs[1:], strict=False))  # unrelated graphs: the bound rarely holds
    for a, b in pairs:
        assert f1(prepare(a), prepare(b)) == pytest.approx(reference_f1(reference_pipeline, a, b), abs=1e-12)


def test_hand_computed_pair():
    # Standardised triples: (w :instance want-01) (b :instance boy) (w :arg0 b) (w :root want-01), and
    # for the second graph the same with :arg1: 3 of 4 triples match each way, F1 = 0.75.
    a = prepare("(w / want-01 :ARG0 (b / boy))")
    b = prepare("(x / want-01 :ARG1 (y / boy))")
    assert list(match_counts(a, b)) == [3.0, 3.0, 4.0, 4.0]
    assert f1(a, b) == pytest.approx(0.75)
    assert f1(b, a) == pytest.approx(0.75)
    assert f1(a, a) == 1.0


def test_standardisation_turns_inverse_roles_around():
    # :ARG0-of is read as :ARG0 in the other direction, so only the root triple differs:
    # (b :root boy) against (w :root want-01); 3 of 4 triples match, F1 = 0.75.
    assert f1(prepare("(b / boy :ARG0-of (w / want-01))"), prepare("(w / want-01 :ARG0 (b / boy))")) == 0.75
    # variable names do not matter
    assert f1(prepare("(w / want-01 :ARG0 (b / boy))"), prepare("(w2 / want-01 :ARG0 (b2 / boy))")) == 1.0


def test_corpus_score_is_micro_average():
    pairs = [("(w / want-01 :ARG0 (b / boy))", "(x / want-01 :ARG1 (y / boy))"),  # 3 of 4 each way
             ("(d / dog)", "(c / cat)")]  # 0 of 2 each way
    predictions = [prepare(p) for p, _ in pairs]
    references = [prepare(r) for _, r in pairs]
    assert corpus_f1(predictions, references) == pytest.approx(3 / 6)
    with pytest.raises(ValueError):
        corpus_f1(predictions, references[:1])


@pytest.mark.parametrize("text", ["", "garbage", "(a / b :x (c / d)", "(a / b))", "(a :x (b / c))"])
def test_malformed_graphs_are_invalid(text):
    with pytest.raises(InvalidOutput):
        prepare(text)


def test_registered():
    assert get("smatchpp") is SMATCHPP
    assert SMATCHPP.symmetric and SMATCHPP.corpus_score is corpus_f1


def objective(alignment, unary: Counter, binary: Counter) -> float:
    """Matched unary plus binary weight under an alignment (-1 = unaligned)."""
    value = sum(unary.get((i, int(j)), 0) for i, j in enumerate(alignment) if j >= 0)
    return value + sum(w for (i, j, k, m), w in binary.items() if alignment[i] == j and alignment[k] == m)


def brute_force_optimum(unary: Counter, binary: Counter, size: int) -> float:
    """Best alignment objective over every permutation (tiny tables only)."""
    return max(objective(alignment, unary, binary) for alignment in itertools.permutations(range(size)))


def random_tables(rng: random.Random, size: int) -> tuple[Counter, Counter]:
    unary: Counter = Counter()
    binary: Counter = Counter()
    for i, j in itertools.product(range(size), repeat=2):
        if rng.random() < 0.3:
            unary[i, j] += 1
    for _ in range(rng.randint(0, 3 * size)):
        i, j, k, m = (rng.randrange(size) for _ in range(4))
        binary[i, j, k, m] += 0.5
        binary[k, m, i, j] += 0.5
    return unary, binary


def test_solver_is_optimal_on_both_paths():
    rng = random.Random(11)
    solver = BoundedAlignmentSolver()
    for _ in range(60):
        size = rng.randint(1, 6)
        unary, binary = random_tables(rng, size)
        alignment, value, _bound = solver.solve(unary, binary, size)
        optimum = brute_force_optimum(unary, binary, size)
        assert value == pytest.approx(optimum)
        assert objective(alignment, unary, binary) == pytest.approx(optimum)
    assert solver.stats["assignment"] > 0 and solver.stats["ilp"] > 0, solver.stats


def test_upper_bound_never_below_optimum():
    rng = random.Random(5)
    for _ in range(60):
        size = rng.randint(1, 6)
        unary, binary = random_tables(rng, size)
        tables = smatchpp_metric._MatchTables(unary, binary, size)
        assert tables.upper_bound() >= brute_force_optimum(unary, binary, size) - 1e-9
        exact = tables.solve_ilp(10)
        assert exact is not None
        assert tables.values(exact[None, :])[0] == pytest.approx(brute_force_optimum(unary, binary, size))
        assert sorted(np.asarray(exact)[exact >= 0]) == sorted(set(exact[exact >= 0]))
