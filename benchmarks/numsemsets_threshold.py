"""The semantic-set threshold for graph similarities, measured on real AMR graphs (NumSemSets, LabelProb, SemEnt).

Two candidates share a semantic set when their similarity is >= a threshold both ways. What value
separates "the same meaning" from "a different meaning" for AMR similarities? On every real gold
graph of the sample this script builds three kinds of pairs:

  (a) same meaning: the graph against an isomorphic rewrite of itself (variables renamed, triples
      shuffled, so PENMAN re-lays the tree out, with inverted roles where needed);
  (b) one edit: the graph against itself after one controlled edit (lsplits.similarity.amr.edits: a concept,
      a role, a deleted branch or an added negation);
  (c) two edits;

and prints, per similarity (Smatch, Smatch++, S2match, SEMA, WLK; symmetrised as in the report), the
share of each kind at or above each threshold. Then, on the parser-like beams of
benchmarks/ue_report_demo.py (same simulation, same seed), it prints the PRR (quality: Smatch++ of
the top-1 against gold) of NumSemSets, LabelProb and semantic entropy per threshold and beam size.

    .venv/bin/python benchmarks/numsemsets_threshold.py [--gold ../shared/data/amr/lpp_amr_v1.6_test.jsonl]
        [--cache /tmp/ue-demo/cache] [--workers 2] [--seed 0]

Measured (143 graphs of The Little Prince test split, seed 0): isomorphic rewrites score 1.000 under
all five; one-edit pairs at >= 0.85: 86% Smatch, 85% Smatch++, 86% S2match, 64% SEMA, 50% WLK; mean
PRR on the even / odd sentences peaks at 0.85 (0.712) / 0.9 (0.702; 0.699 at 0.85); thresholds 0.99
and 1.0 are worse than random. Hence the default 0.85 (``lsplits/uncertainty/semantic_sets.py``).
About 25 s on the shared 2-core machine with the matrix cache of ue_report_demo.py, 90 s without.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np
import penman

from lsplits.similarity import registry
from lsplits.similarity.amr.edits import degrade, edit_once
from lsplits.uncertainty.estimators import estimate_many
from lsplits.uncertainty.matrix import build_matrices
from lsplits.uncertainty.prr import prr
from lsplits.uncertainty.quality import placeholder_for, score_predictions

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data_paths import data_argument  # noqa: E402
from ue_report_demo import GOLD, simulate  # noqa: E402

SIMILARITIES = ("smatch", "smatchpp", "s2match", "sema", "wlk")
THRESHOLDS = (0.8, 0.85, 0.9, 0.925, 0.95, 0.97, 0.99, 1.0)
SET_ESTIMATORS = ("numsemsets", "labelprob", "semantic_entropy")


def isomorphic_rewrite(text: str, rng: random.Random) -> str:
    """The same graph written differently: fresh variable names and shuffled triples (the top is kept)."""
    graph = penman.decode(text)
    variables = sorted(graph.variables())
    fresh = [f"z{i}" for i in range(len(variables))]
    rng.shuffle(fresh)
    rename = dict(zip(variables, fresh, strict=True))
    triples = [(rename.get(s, s), role, rename.get(t, t) if role != ":instance" else t) for s, role, t in graph.triples]
    rng.shuffle(triples)
    return penman.encode(penman.Graph(triples, top=rename[graph.top]))


def pair_scores(similarity, pairs: list[tuple[str, str]]) -> np.ndarray:
    """Symmetrised similarity of each pair, (s(a, b) + s(b, a)) / 2 as the report's matrices."""
    values = []
    for a, b in pairs:
        pa, pb = similarity.prepare(a), similarity.prepare(b)
        forward = similarity.score(pa, pb)
        values.append((forward + (forward if similarity.symmetric else similarity.score(pb, pa))) / 2)
    return np.clip(np.array(values, dtype=float), 0.0, 1.0)


def separation_table(gold: list[str], seed: int) -> None:
    rng = random.Random(seed)
    kinds = {"same meaning": [(g, isomorphic_rewrite(g, rng)) for g in gold],
             "1 edit": [(g, edit_once(g, rng)) for g in gold],
             "2 edits": [(g, degrade(g, 2, rng)) for g in gold]}
    header = "| similarity | pairs | min | median | " + " | ".join(f">= {t}" for t in THRESHOLDS) + " |"
    print(header)
    print("|" + "---|" * (4 + len(THRESHOLDS)))
    for name in SIMILARITIES:
        similarity = registry.get(name)
        for kind, pairs in kinds.items():
            scores = pair_scores(similarity, pairs)
            shares = " | ".join(f"{(scores >= t - 1e-12).mean():.0%}" for t in THRESHOLDS)
            print(f"| {name} | {kind} | {scores.min():.3f} | {np.median(scores):.3f} | {shares} |")


def prr_table(gold_path: Path, cache: Path, workers: int, seed: int) -> None:
    beams, gold_rows = simulate(gold_path, 10, seed)
    candidates = [row["candidates"] for row in beams]
    top1 = [c[0] for c in candidates]
    smatchpp = registry.get("smatchpp")
    quality = np.array(score_predictions(smatchpp, top1, [row["amr"] for row in gold_rows],
                                         placeholder=placeholder_for(smatchpp)).scores)
    print(f"\nPRR (quality Smatch++) on {len(beams)} simulated beams, by threshold; k = 3 / 5 / 10")
    print("| similarity | estimator | " + " | ".join(f"{t}" for t in THRESHOLDS) + " |")
    print("|" + "---|" * (2 + len(THRESHOLDS)))
    halves = {"even": np.arange(len(beams)) % 2 == 0, "odd": np.arange(len(beams)) % 2 == 1}
    by_half: dict[str, dict[float, list[float]]] = {h: {t: [] for t in THRESHOLDS} for h in halves}
    for name in SIMILARITIES:
        matrices = build_matrices(candidates, name, workers=workers, cache=cache, progress=False)
        for estimator in SET_ESTIMATORS:
            cells = []
            for threshold in THRESHOLDS:
                values = []
                for k in (3, 5, 10):
                    u = estimate_many(estimator, [m.truncate(k).values for m in matrices], sets_threshold=threshold)
                    values.append(_prr(u, quality))
                    for half, rows in halves.items():
                        by_half[half][threshold].append(_prr(u[rows], quality[rows]))
                cells.append(" / ".join(f"{v:.2f}" for v in values))
            print(f"| {name} | {estimator} | " + " | ".join(cells) + " |")
    print("\nMean PRR over the 5 similarities x 3 estimators x 3 beam sizes, on each half of the sentences")
    print("| sentences | " + " | ".join(f"{t}" for t in THRESHOLDS) + " |")
    print("|" + "---|" * (1 + len(THRESHOLDS)))
    for half, table in by_half.items():
        print(f"| {half} positions | " + " | ".join(f"{np.nanmean(v):.3f}" for v in table.values()) + " |")
    chosen = max(THRESHOLDS, key=lambda t: np.nanmean(by_half["even"][t]))
    print(f"best on the even half: {chosen}; on the odd half it gives {np.nanmean(by_half['odd'][chosen]):.3f} "
          f"(best there: {max(np.nanmean(v) for v in by_half['odd'].values()):.3f})")


def _prr(u: np.ndarray, q: np.ndarray) -> float:
    """PRR, NaN for a constant estimator (it cannot rank)."""
    return prr(u, q) if np.ptp(u) > 0 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    data_argument(parser, "--gold", GOLD, "JSONL of gold AMR graphs")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/ue-demo/cache"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not args.gold.is_file():
        sys.exit(f"error: AMR gold file not found: {args.gold} (pass --gold PATH to a JSONL file with 'amr')")
    gold = [json.loads(line)["amr"] for line in args.gold.read_text(encoding="utf-8").splitlines() if line.strip()]
    start = time.perf_counter()
    print(f"Similarity of graph pairs ({len(gold)} real gold graphs): share at or above each threshold\n")
    separation_table(gold, args.seed)
    prr_table(args.gold, args.cache, args.workers, args.seed)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
