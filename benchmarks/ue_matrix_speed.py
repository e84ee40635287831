"""Similarity-matrix engine vs the naive loop a user would write with smatchpp, on real AMR graphs.

Beam candidates are built from real gold graphs by controlled edits (tests/amr_edits.py), since
no parser runs here. The baseline calls smatchpp's documented ``score_pair`` (ILP solver, AMR
standardisation) on every ordered pair of distinct candidates; the engine is
:func:`lsplits.uncertainty.matrix.build_matrices` with the ``smatchpp`` similarity. Both are timed in
the same run, and their matrices are compared.

    .venv/bin/python benchmarks/ue_matrix_speed.py [--gold ../shared/data/amr/lpp_amr_v1.6_test.jsonl]
        [--examples 40] [--k 10] [--workers 2] [--min-level 0]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from amr_edits import degrade  # noqa: E402

from lsplits.amr.smatchpp_metric import SOLVER  # noqa: E402
from lsplits.uncertainty.matrix import build_matrices  # noqa: E402

DEFAULT_GOLD = Path(__file__).resolve().parents[2] / "shared" / "data" / "amr" / "lpp_amr_v1.6_test.jsonl"


def make_beams(gold_path: Path, examples: int, k: int, seed: int, min_level: int) -> list[list[str]]:
    """k candidates per gold graph: a level L in [min_level, 4] per example, each candidate L-1 or L edits."""
    rng = random.Random(seed)
    graphs = [json.loads(line)["amr"] for line in gold_path.read_text(encoding="utf-8").splitlines()]
    beams = []
    for text in graphs[:examples]:
        level = rng.randint(min_level, 4)
        beams.append([degrade(text, rng.randint(max(0, level - 1), level), rng) for _ in range(k)])
    return beams


def naive(beams: list[list[str]]) -> list[np.ndarray]:
    """What a user would write: smatchpp score_pair on every ordered pair, then symmetrise."""
    from smatchpp import Smatchpp, solvers
    from smatchpp.formalism.amr import tools as amr_tools

    measure = Smatchpp(alignmentsolver=solvers.ILP(), graph_standardizer=amr_tools.AMRStandardizer())
    matrices = []
    for candidates in beams:
        k = len(candidates)
        s = np.eye(k)
        for j in range(k):
            for m in range(k):
                if j != m:
                    s[j, m] = measure.score_pair(candidates[j], candidates[m])["main"]["F1"] / 100
        matrices.append(np.clip((s + s.T) / 2, 0, 1))
    return matrices


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, default=DEFAULT_GOLD)
    parser.add_argument("--examples", type=int, default=40)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-level", type=int, default=0,
                        help="fewest edits of an example's candidates (higher: fewer identical candidates)")
    args = parser.parse_args()
    beams = make_beams(args.gold, args.examples, args.k, args.seed, args.min_level)
    pairs = sum(len(c) * (len(c) - 1) for c in beams)
    naive([beams[0][:2]])  # load smatchpp's solver library outside the timing
    start = time.perf_counter()
    reference = naive(beams)
    baseline = time.perf_counter() - start
    start = time.perf_counter()
    serial = build_matrices(beams, "smatchpp", workers=1, progress=False)
    one_core = time.perf_counter() - start
    stats = dict(SOLVER.stats)
    start = time.perf_counter()
    pooled = build_matrices(beams, "smatchpp", workers=args.workers, progress=False)
    many_cores = time.perf_counter() - start
    difference = max(float(np.abs(a - b.values).max()) for a, b in zip(reference, serial, strict=True))
    same = all(np.array_equal(a.values, b.values) for a, b in zip(serial, pooled, strict=True))
    distinct = sum(len(set(c)) for c in beams) / sum(len(c) for c in beams)
    print(f"examples {len(beams)}, k = {args.k}, ordered candidate pairs {pairs}, distinct candidates {distinct:.0%}")
    print(f"naive smatchpp score_pair loop: {baseline:.2f} s ({1000 * baseline / pairs:.2f} ms per pair)")
    print(f"engine, 1 process:  {one_core:.2f} s  -> {baseline / one_core:.1f}x faster")
    print(f"engine, {args.workers} processes: {many_cores:.2f} s  -> {baseline / many_cores:.1f}x faster")
    print(f"alignments proved optimal without the ILP: {stats.get('assignment', 0)}, ILP solved: {stats.get('ilp', 0)}")
    print(f"largest difference to smatchpp (which rounds F1 to 0.01%): {difference:.2e}; pool == serial: {same}")


if __name__ == "__main__":
    main()
