"""``lsplits ue`` on parser-like beams built from real gold AMR graphs: the paper's full grid, timed.

No AMR parser runs here, so beams are simulated from gold graphs (lsplits/similarity/amr/edits.py): each sentence
gets a difficulty d (0 to 4 edits, easy ones more frequent); the top-1 candidate is the gold graph
with d edits, each further candidate is the top-1 with 1 to d + 1 more edits, and about 1% of
candidates are cut short (invalid PENMAN). Writes the inputs and the report under --out and prints
the report's main table and the time taken.

    .venv/bin/python benchmarks/ue_report_demo.py [--gold ../shared/data/amr/lpp_amr_v1.6_test.jsonl]
        [--out /tmp/ue-demo] [--k 10] [--workers 2] [any further ``lsplits ue`` option, e.g. --estimators ...]

Every estimator and evaluation metric (the issue-13 acceptance run):

    ... ue_report_demo.py --estimators lexsim,eigv,ecc,degmat,numsemsets,labelprob,semantic_entropy,luq,kle
        --lexical-similarities rougel,rouge1,rouge2,bleu,rougel_stem,rouge1_stem,rouge2_stem
        --metrics prr,roc_auc,pr_auc,aurc,e_aurc,rpp,spearman,kendall,ece --bad-below 0.8
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from data_paths import data_argument

from lsplits.cli.parser import parse_args
from lsplits.cli.ue import run as run_ue
from lsplits.similarity.amr.edits import degrade

GOLD = "amr/lpp_amr_v1.6_test.jsonl"  # under the benchmarks' data root (data_paths)


def simulate(gold_path: Path, k: int, seed: int,
             weights: tuple[int, ...] = (30, 30, 20, 12, 8)) -> tuple[list[dict], list[dict]]:
    """Beam rows and gold rows, as ``lsplits ue`` reads them from JSONL (``weights``: of difficulties 0-4)."""
    rng = random.Random(seed)
    beams, gold = [], []
    for line in gold_path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        difficulty = rng.choices(range(5), weights=weights)[0]
        top1 = degrade(row["amr"], difficulty, rng)
        candidates = [top1] + [degrade(top1, rng.randint(1, difficulty + 1), rng) for _ in range(k - 1)]
        for rank in range(1, k):
            if rng.random() < 0.01:
                candidates[rank] = candidates[rank][: rng.randint(5, len(candidates[rank]) - 1)]
        beams.append({"id": row["id"], "candidates": candidates})
        gold.append({"id": row["id"], "amr": row["amr"]})
    return beams, gold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    data_argument(parser, "--gold", GOLD, "JSONL of gold AMR graphs")
    parser.add_argument("--out", type=Path, default=Path("/tmp/ue-demo"))
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args, ue_options = parser.parse_known_args()
    args.out.mkdir(parents=True, exist_ok=True)
    beams, gold = simulate(args.gold, args.k, args.seed)
    for name, rows in (("beams.jsonl", beams), ("gold.jsonl", gold)):
        (args.out / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    start = time.perf_counter()
    run_ue(parse_args(["ue", str(args.out / "beams.jsonl"), "--gold", str(args.out / "gold.jsonl"),
                       "--out", str(args.out / "report"), "--cache-dir", str(args.out / "cache"),
                       "--workers", str(args.workers), "--no-progress", *ue_options]))
    grid = "paper grid" if not ue_options else "grid with " + " ".join(ue_options)
    print(f"\n{len(beams)} sentences x {args.k} candidates, {grid}: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
