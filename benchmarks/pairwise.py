"""Pairwise AMR similarity on k-candidate beams: our engine vs a naive smatchpp loop, on real graphs.

No AMR parser runs here, so each real gold graph becomes a beam of k candidates by controlled edits
(:mod:`lsplits.similarity.amr.edits`): the example gets a level L in [--min-level, 4] and each candidate is the
gold graph after L-1 or L random edits, so easy examples have identical candidates, as real beams do.

In one run it measures
  (a) the loop a user would write: smatchpp's documented ``score_pair`` (ILP solver, AMR
      standardisation) on every ordered pair of candidates, k(k-1) per example;
  (b) :func:`lsplits.uncertainty.matrix.build_matrices` for Smatch++ on the same examples, counting
      the same k(k-1) ordered pairs per example (the engine itself scores fewer: one triangle, and
      identical candidates once), in one process and with --workers processes;
and checks that both give the same Smatch++ scores. It then times the engine for the paper's four
similarity functions (Smatch, S2Match, SEMA, WLK) on all beams and projects the paper's grid.

    .venv/bin/python benchmarks/pairwise.py [--data ../shared/data/amr/lpp_amr_v1.6_test.jsonl]
        [--limit N] [--naive-limit N] [--k 10] [--workers 2] [--min-level 0] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from data_paths import data_argument

from lsplits.similarity.amr.edits import degrade
from lsplits.similarity.amr.smatchpp_metric import SOLVER
from lsplits.uncertainty.matrix import SimilarityMatrix, build_matrices

REPO = Path(__file__).resolve().parents[1]
PAPER_SENTENCES = 1898
PAPER_FUNCTIONS = ("smatch", "s2match", "sema", "wlk")
PAPER_SECONDS = 22_000  # the paper's grid time per parser and beam size, on 4 cores
SMATCHPP_DECIMALS = 2  # smatchpp rounds its percentages to 2 decimals (np.round in eval_statistics)


def load_gold(path: Path, limit: int | None) -> list[str]:
    """The PENMAN graphs (field ``amr``) of a JSONL file, or a clear exit if it is missing."""
    if not path.is_file():
        sys.exit(f"error: AMR data file not found: {path} (pass --data PATH to a JSONL file with an 'amr' field)")
    graphs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            row = json.loads(line)
            if "amr" not in row:
                sys.exit(f"error: {path}:{number}: no 'amr' field")
            graphs.append(row["amr"])
    return graphs[:limit] if limit else graphs


def make_beams(graphs: list[str], k: int, seed: int, min_level: int) -> list[list[str]]:
    """k candidates per gold graph: a level L in [min_level, 4] per example, each candidate L-1 or L edits."""
    rng = random.Random(seed)
    beams = []
    for text in graphs:
        level = rng.randint(min_level, 4)
        beams.append([degrade(text, rng.randint(max(0, level - 1), level), rng) for _ in range(k)])
    return beams


def naive_scores(beams: list[list[str]]) -> list[np.ndarray]:
    """smatchpp ``score_pair`` on every ordered pair: per example, the (k, k) F1 in percent (NaN diagonal)."""
    from smatchpp import Smatchpp, solvers
    from smatchpp.formalism.amr import tools as amr_tools

    measure = Smatchpp(alignmentsolver=solvers.ILP(), graph_standardizer=amr_tools.AMRStandardizer())
    results = []
    for candidates in beams:
        k = len(candidates)
        percent = np.full((k, k), np.nan)
        for j in range(k):
            for m in range(k):
                if j != m:
                    percent[j, m] = measure.score_pair(candidates[j], candidates[m])["main"]["F1"]
        results.append(percent)
    return results


def timed(function: Callable[[], object]) -> tuple[object, float]:
    """The function's result and its wall-clock seconds."""
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def compare(naive: list[np.ndarray], engine: list[SimilarityMatrix]) -> tuple[float, int, int]:
    """Largest |engine - smatchpp| over ordered pairs, and how many pairs differ after smatchpp's rounding."""
    largest, differing, total = 0.0, 0, 0
    for percent, matrix in zip(naive, engine, strict=True):
        off_diagonal = ~np.eye(len(percent), dtype=bool)
        ours = matrix.values[off_diagonal]
        theirs = percent[off_diagonal]
        largest = max(largest, float(np.abs(ours - theirs / 100).max()))
        differing += int((np.round(ours * 100, SMATCHPP_DECIMALS) != theirs).sum())
        total += len(ours)
    return largest, differing, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    data_argument(parser, "--data", "amr/lpp_amr_v1.6_test.jsonl", "JSONL of gold AMR graphs")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N graphs (default all)")
    parser.add_argument("--naive-limit", type=int, default=None,
                        help="time the naive loop on N randomly chosen examples only (default all)")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-level", type=int, default=0, choices=range(5),
                        help="fewest edits of an example's candidates (higher: fewer identical candidates)")
    args = parser.parse_args()
    data = args.data if args.data.is_absolute() else REPO / args.data
    beams = make_beams(load_gold(data, args.limit), args.k, args.seed, args.min_level)
    chosen = range(len(beams))
    if args.naive_limit and args.naive_limit < len(beams):
        chosen = sorted(random.Random(args.seed).sample(range(len(beams)), args.naive_limit))
    subset = [beams[i] for i in chosen]
    pairs = sum(len(c) * (len(c) - 1) for c in beams)
    subset_pairs = sum(len(c) * (len(c) - 1) for c in subset)
    distinct = sum(len(set(c)) for c in beams) / sum(len(c) for c in beams)
    print(f"data {data}: {len(beams)} examples, k = {args.k}, {pairs} ordered pairs, "
          f"{distinct:.0%} of candidates distinct within their beam")

    # warm-up outside the timings: smatchpp's ILP library, and every similarity's imports
    naive_scores([beams[0][:2]])
    for name in ("smatchpp", *PAPER_FUNCTIONS):
        build_matrices([beams[0][:2]], name, progress=False)

    naive, naive_seconds = timed(lambda: naive_scores(subset))
    naive_rate = subset_pairs / naive_seconds
    print(f"(a) naive smatchpp score_pair loop, 1 process, {len(subset)} examples"
          f"{' (random subset)' if len(subset) < len(beams) else ''}: {naive_seconds:.1f} s, "
          f"{naive_rate:.0f} pairs/s")

    SOLVER.stats.clear()
    serial, serial_seconds = timed(lambda: build_matrices(subset, "smatchpp", workers=1, progress=False))
    stats = dict(SOLVER.stats)
    pooled, pooled_seconds = timed(lambda: build_matrices(subset, "smatchpp", workers=args.workers, progress=False))
    for label, seconds in (("1 process", serial_seconds), (f"{args.workers} processes", pooled_seconds)):
        rate = subset_pairs / seconds
        print(f"(b) engine Smatch++, {label}, same examples: {seconds:.2f} s, {rate:.0f} pairs/s "
              f"-> {rate / naive_rate:.1f}x the naive loop")
    print(f"    alignments proved optimal without the ILP: {stats.get('assignment', 0)}, "
          f"ILP solved: {stats.get('ilp', 0)}")
    ratio = subset_pairs / pooled_seconds / naive_rate
    print(f"RATIO engine ({args.workers} processes) / naive: {ratio:.1f}x (target >= 10x: "
          f"{'met' if ratio >= 10 else 'NOT met'})")

    largest, differing, total = compare(naive, serial)
    same_pool = all(np.array_equal(a.values, b.values) for a, b in zip(serial, pooled, strict=True))
    print(f"Smatch++ scores: largest |engine - smatchpp| = {largest:.1e} over {total} ordered pairs "
          f"(smatchpp rounds F1 to {SMATCHPP_DECIMALS} decimals of a percent, so up to 5e-5 is rounding); "
          f"after the same rounding {differing} differ; pool == 1 process: {same_pool}")
    assert differing == 0 and same_pool, "the engine's Smatch++ scores differ from smatchpp's"

    print(f"engine, {args.workers} processes, all {len(beams)} examples (k = {args.k}):")
    per_example = {}
    for name in ("smatchpp", *PAPER_FUNCTIONS):
        _, seconds = timed(lambda name=name: build_matrices(beams, name, workers=args.workers, progress=False))
        per_example[name] = seconds / len(beams)
        print(f"  {name:9s} {seconds:7.2f} s  {pairs / seconds:8.0f} pairs/s  "
              f"{1000 * per_example[name]:7.1f} ms per example")
    grid = PAPER_SENTENCES * sum(per_example[name] for name in PAPER_FUNCTIONS)
    with_smatchpp = grid + PAPER_SENTENCES * per_example["smatchpp"]
    print(f"projected paper grid ({PAPER_SENTENCES} sentences, k = {args.k}, {', '.join(PAPER_FUNCTIONS)}; "
          f"smaller k are truncations of these matrices): {grid:.0f} s = {grid / 60:.1f} min on "
          f"{args.workers} processes (paper: about {PAPER_SECONDS} s per beam size on 4 cores); "
          f"with Smatch++ as a fifth similarity: {with_smatchpp:.0f} s")


if __name__ == "__main__":
    main()
