"""The paper's full grid, projected from a measured multi-system ``lsplits ue`` run on this machine.

The paper (appendix B.5, Table 2) reports about 22,000 s per parser per beam size on 4 CPU cores
(6 parsers x 4 beam sizes x 1,898 AMR 3.0 test sentences, 5 similarity functions, 3 quality metrics;
its figure also includes generating the beams). No parser runs here, so --systems systems are simulated
from the 143 real gold graphs of The Little Prince with controlled edits (benchmarks/ue_report_demo.py's
``simulate``; each system has its own mix of difficulties, so different top-1 quality and candidates).

It measures, with --workers processes (1 by default: the cost per core), wall and CPU time of
  1. the similarity matrices of one system at k, per similarity function (ROUGE-L for LexSim, Smatch,
     Smatch++, S2match, SEMA, WLK), counting the candidate pairs actually scored;
  2. the study of ``lsplits ue --system ...`` on all systems with an empty matrix cache;
  3. the same again with the cache warm: everything but the similarity matrices (top-1 quality,
     estimators, PRR with bootstrap intervals, the paired bootstrap between systems), and writing the
     per-system and cross-system reports (under --out/report);
and projects the paper's grid from the CPU time per scored pair (1) and the rest (3; the computation
scaled to 1,898 sentences as n log n, the report writing as is). Two settings: one beam search per beam size, as in the paper (sum over k of all pairs), and
one k=10 beam truncated to 3, 5, 8 (what ``lsplits ue`` does with one beam file: only the k=10 pairs).
The machine is shared with other jobs (run it under ``nice``): wall time is inflated by them, so the
projection uses CPU time. Four cores are assumed to divide CPU time by 4 (not measurable here).

    nice .venv/bin/python benchmarks/grid_time.py [--gold ../shared/data/amr/lpp_amr_v1.6_test.jsonl]
        [--out /tmp/grid-time] [--systems 3] [--k 10] [--workers 1] [--bootstrap 1000] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import time
from pathlib import Path

import penman
from data_paths import data_argument
from ue_report_demo import GOLD, simulate

from lsplits.similarity import registry
from lsplits.uncertainty.beam import LEXICAL_SIMILARITY
from lsplits.uncertainty.matrix import build_matrices
from lsplits.uncertainty.study_config import (
    PAPER_BEAM_SIZES,
    PAPER_QUALITIES,
    PAPER_SIMILARITIES,
    StudyConfig,
)
from lsplits.uncertainty.systems import parse_systems, run_systems
from lsplits.uncertainty.systems_report import summary_markdown, write_systems_report

PAPER_PARSERS = 6
PAPER_SENTENCES = 1898
PAPER_SECONDS = 22_000  # per parser per beam size, 4 cores, beam generation included
PAPER_CORES = 4
# difficulty mixes (weights of 0..4 edits in the top-1): a strong, a middling and a weak system, then more
MIXES = ((55, 25, 12, 5, 3), (30, 30, 20, 12, 8), (10, 20, 30, 25, 15), (40, 30, 15, 10, 5), (20, 20, 20, 20, 20))


def cpu_seconds() -> float:
    """CPU time of this process and of its finished child processes (pool workers)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def measure(action) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = action()
    return time.perf_counter() - wall, cpu_seconds() - cpu, result


def scored_pairs(candidates: list[list[str]], matrices, symmetric: bool) -> int:
    """Pairs the matrix engine scored: distinct valid candidate strings, one triangle if symmetric."""
    total = 0
    for texts, matrix in zip(candidates, matrices, strict=True):
        d = len({text for text, bad in zip(texts, matrix.invalid, strict=True) if not bad})
        total += d * (d - 1) // (2 if symmetric else 1)
    return total


def write_systems(args: argparse.Namespace) -> tuple[list[str], Path, list[list[str]]]:
    """Simulated beams of each system and the gold file; the ``--system`` values and system 1's candidates."""
    inputs = args.out / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    values, first = [], None
    for index in range(args.systems):
        beams, gold = simulate(args.gold, args.k, args.seed + index, MIXES[index % len(MIXES)])
        if args.limit:
            beams, gold = beams[:args.limit], gold[:args.limit]
        name = f"sys{index + 1}"
        path = inputs / f"{name}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in beams), encoding="utf-8")
        values.append(f"{name}={path}")
        first = first or [row["candidates"] for row in beams]
    gold_path = inputs / "gold.jsonl"
    gold_path.write_text("".join(json.dumps(row) + "\n" for row in gold), encoding="utf-8")
    return values, gold_path, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    data_argument(parser, "--gold", GOLD, "JSONL of gold AMR graphs")
    parser.add_argument("--out", type=Path, default=Path("/tmp/grid-time"))
    parser.add_argument("--systems", type=int, default=3)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--limit", type=int, default=0, help="only the first N sentences (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out / "cache", ignore_errors=True)
    systems, gold, candidates = write_systems(args)
    n = len(candidates)
    print(f"{args.systems} simulated systems x {n} real AMR graphs x k={args.k}, {args.workers} worker(s), "
          f"nice {os.nice(0)}, {os.cpu_count()} CPU cores visible (shared), load {os.getloadavg()[0]:.1f}\n")

    print("1. similarity matrices of one system (no cache)")
    per_pair = {}
    for name in (LEXICAL_SIMILARITY, *PAPER_SIMILARITIES):
        similarity = registry.get(name)
        wall, cpu, matrices = measure(lambda s=similarity: build_matrices(candidates, s, workers=args.workers,
                                                                          progress=False))
        pairs = scored_pairs(candidates, matrices, similarity.symmetric)
        per_pair[name] = (cpu / max(pairs, 1), similarity.symmetric)
        print(f"   {name:9s} wall {wall:7.1f} s  cpu {cpu:7.1f} s  {pairs:6d} pairs  {1e3 * cpu / max(pairs, 1):7.3f} "
              f"ms cpu/pair ({'symmetric' if similarity.symmetric else 'both orders'})")

    specs = parse_systems(systems)
    config = StudyConfig(n_bootstrap=args.bootstrap, workers=args.workers, cache_dir=args.out / "cache",
                         progress=False)
    print(f"\n2. lsplits ue on {args.systems} systems, empty cache ({len(config.similarities)} similarities, "
          f"{len(config.qualities)} qualities, k = {', '.join(map(str, config.beam_sizes))})")
    cold_wall, cold_cpu, _ = measure(lambda: run_systems(specs, gold, config))
    warm_wall, warm_cpu, study = measure(lambda: run_systems(specs, gold, config))
    render_wall, render_cpu, report = measure(lambda: write_systems_report(study, args.out / "report"))
    print(f"   computing, empty cache: wall {cold_wall:.1f} s, cpu {cold_cpu:.1f} s\n"
          f"3. computing, warm cache (all but the similarity matrices): wall {warm_wall:.1f} s, cpu {warm_cpu:.1f} s\n"
          f"   writing the {args.systems} per-system reports and the cross-system one: wall {render_wall:.1f} s, "
          f"cpu {render_cpu:.1f} s ({report})\n")
    print(summary_markdown(study))

    gold_graphs = [json.loads(line)["amr"] for line in gold.read_text(encoding="utf-8").splitlines()]
    triples = sum(len(penman.decode(text).triples) for text in gold_graphs) / len(gold_graphs)
    scale = PAPER_SENTENCES * math.log(PAPER_SENTENCES) / (n * math.log(n))  # bootstrap sorting: n log n
    # per parser and beam size: the computation scales with the sentences, writing a report does not
    rest = (warm_cpu * scale + render_cpu) / args.systems / len(PAPER_BEAM_SIZES)

    def pairs(k: int, symmetric: bool) -> int:
        return k * (k - 1) // (2 if symmetric else 1)

    def similarity_seconds(k: int) -> float:
        return sum(PAPER_SENTENCES * pairs(k, symmetric) * cost for cost, symmetric in per_pair.values())

    separate = {k: similarity_seconds(k) + rest for k in PAPER_BEAM_SIZES}
    truncated = similarity_seconds(max(PAPER_BEAM_SIZES)) + rest * len(PAPER_BEAM_SIZES)
    print(f"\nProjection to the paper's grid ({PAPER_PARSERS} parsers x {len(PAPER_BEAM_SIZES)} beam sizes x "
          f"{PAPER_SENTENCES} sentences, {len(PAPER_SIMILARITIES)} similarities + ROUGE-L, "
          f"{len(PAPER_QUALITIES)} qualities), from CPU time:\n")
    print("| | 1 core | 4 cores | paper (4 cores) |")
    print("|---|---|---|---|")
    for k, seconds in separate.items():
        print(f"| per parser, k={k} (own beam search) | {seconds:,.0f} s | {seconds / PAPER_CORES:,.0f} s | "
              f"{PAPER_SECONDS:,} s |")
    mean = sum(separate.values()) / len(separate)
    print(f"| per parser per beam size, mean | {mean:,.0f} s | {mean / PAPER_CORES:,.0f} s | {PAPER_SECONDS:,} s "
          f"(ratio {PAPER_SECONDS / (mean / PAPER_CORES):,.0f}x) |")
    grid = sum(separate.values()) * PAPER_PARSERS
    print(f"| full grid, one beam search per k | {grid:,.0f} s | {grid / PAPER_CORES:,.0f} s | "
          f"{PAPER_SECONDS * PAPER_PARSERS * len(PAPER_BEAM_SIZES):,} s (> 150 h wall) |")
    print(f"| full grid, one k=10 beam truncated | {truncated * PAPER_PARSERS:,.0f} s | "
          f"{truncated * PAPER_PARSERS / PAPER_CORES:,.0f} s | |")
    print(f"\nrest (top-1 quality, estimators, PRR + {args.bootstrap} bootstrap resamples, paired bootstrap, "
          f"reports) per parser and beam size: {rest:,.0f} s cpu at {PAPER_SENTENCES} sentences (computation "
          f"x{scale:.1f} from {n}, as n log n). The paper's "
          "time includes beam generation; ours does not. The projection assumes graphs of this sample's size "
          f"({triples:.1f} triples per gold graph on average); alignment cost grows faster than linearly with it.")


if __name__ == "__main__":
    main()
