"""The whole ``lsplits build snli --lm scratch`` at paper-like sizes, stage by stage.

SNLI-sized data is made from the official SNLI dev file (``--snli``, required to exist) by word
substitution: copy c of each gold-labelled pair has a few of its words replaced by other words of the
same file (seeded), so every pair is distinct and the lengths, labels and vocabulary stay SNLI's. Each
size is built in its own process (``lsplits.cli.parser.main``, as ``lsplits build`` runs), whose stage
figures come from the library's own instrumentation (:mod:`lsplits.runtime.stages`: wall time and peak RSS of
load, type unification, tokenizer, folds, scoring, split, export, card and plots). Printed: a table of
wall seconds, CPU seconds and peak RSS per stage and size, the growth exponent of each stage between
consecutive sizes (time ~ n^e, from CPU time, which moves little with the load of shared cores; n log n
gives about 1.1 here), and the process's peak RSS.

The scratch LM trains ``--max-steps`` steps per fold (default 20) so that training, which does not
grow with n, does not hide how the rest grows; scoring still scores every example. The figures are
for this machine as loaded at the time (shared CPU cores): rerun for your own.

    nice -n 10 .venv/bin/python benchmarks/build_scale.py --snli ../shared/data/snli/snli_1.0_dev.jsonl \\
        --sizes 10000 100000 550000 --work /tmp/build-scale [--max-steps 20] [--dry-run]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import subprocess
import sys
import time
from pathlib import Path

STAGES = ("load", "type unification", "tokenizer", "folds", "scoring", "split", "export", "card and plots")

# Runs in the child: collects the lsplits.runtime.stages records of one `lsplits build` and writes them as JSON.
CHILD = r'''
import json, logging, resource, sys, time
from lsplits.cli.parser import main

class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.rows = []
    def emit(self, record):
        timing = getattr(record, "stage_time", None)
        if timing is not None:
            self.rows.append({"name": timing.name, "seconds": timing.seconds, "cpu": timing.cpu_seconds,
                              "peak_rss": timing.peak_rss, "own_peak": timing.own_peak})

handler = Collect()
stages = logging.getLogger("lsplits.runtime.stages")
stages.setLevel(logging.DEBUG)
stages.addHandler(handler)
start, cpu = time.perf_counter(), time.process_time()
code = main(sys.argv[2:])
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "wall": wall, "cpu": cpu, "stages": handler.rows,
               "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}, out)
'''

WORD = re.compile(r"[A-Za-z]+")


def read_pairs(path: Path) -> list[dict]:
    """The gold-labelled pairs of an official SNLI JSONL file, or a clear exit if it is missing."""
    if not path.is_file():
        sys.exit(f"error: --snli {path}: no such file (give the official snli_1.0_dev.jsonl, one pair a line)")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [row for row in rows if row.get("gold_label") in ("entailment", "neutral", "contradiction")]
    if not rows or "sentence2" not in rows[0]:
        sys.exit(f"error: --snli {path}: no gold-labelled SNLI pairs (fields sentence1, sentence2, gold_label)")
    return rows


def substituted(text: str, vocabulary: list[str], rng: random.Random, rate: float) -> str:
    """``text`` with each word replaced, with probability ``rate``, by a random word of ``vocabulary``."""
    return WORD.sub(lambda m: rng.choice(vocabulary) if rng.random() < rate else m.group(0), text)


def make_data(pairs: list[dict], n: int, path: Path, seed: int) -> None:
    """Write ``n`` SNLI-format pairs: the originals first, then word-substituted copies (new pairIDs)."""
    rng = random.Random(seed)
    vocabulary = sorted({w for row in pairs for w in WORD.findall(row["sentence1"] + " " + row["sentence2"])})
    with path.open("w", encoding="utf-8") as out:
        for k in range(n):
            row = dict(pairs[k % len(pairs)])
            copy = k // len(pairs)
            if copy:
                row["sentence1"] = substituted(row["sentence1"], vocabulary, rng, 0.15)
                row["sentence2"] = substituted(row["sentence2"], vocabulary, rng, 0.25)
                row["pairID"] = f"{row['pairID']}#{copy}"
            out.write(json.dumps(row) + "\n")


def run_size(n: int, data: Path, work: Path, args: argparse.Namespace) -> dict:
    """Build (or dry-run) one size in a child process; its stage records, wall time and peak RSS
    (with ``--reuse``, those of an earlier run in ``work`` where there is one)."""
    figures = work / f"{'dry-run' if args.dry_run else 'stages'}-{n}.json"
    if args.reuse and figures.exists():
        result = json.loads(figures.read_text())
        return {"n": n, "wall": result["wall"], "cpu": result.get("cpu", float("nan")), "peak_rss": result["peak_rss"],
                "stages": result["stages"]}
    argv = ["build", "snli", "--data-files", f"train={data}", "--lm", "scratch", "--max-steps", str(args.max_steps),
            "--out", str(work / f"out-{n}"), "--cache-dir", str(work / f"cache-{n}"), "--no-progress"]
    if args.dry_run:
        argv.append("--dry-run")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, str(figures), *argv], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"error: the build of {n:,} pairs failed ({done.returncode}):\n{done.stderr[-3000:]}")
    result = json.loads(figures.read_text())
    if args.dry_run:
        print(done.stdout.strip())
    result["wall"] = wall
    figures.write_text(json.dumps(result))
    return {"n": n, "wall": wall, "cpu": result.get("cpu", float("nan")), "peak_rss": result["peak_rss"],
            "stages": result["stages"]}


def totals(rows: list[dict]) -> dict[str, tuple[float, float, int]]:
    """Stage -> (wall seconds and CPU seconds summed over its entries, largest peak RSS)."""
    out: dict[str, tuple[float, float, int]] = {}
    for row in rows:
        seconds, cpu, peak = out.get(row["name"], (0.0, 0.0, 0))
        out[row["name"]] = (seconds + row["seconds"], cpu + row.get("cpu", float("nan")), max(peak, row["peak_rss"]))
    return out


def exponent(a: float, b: float, n_a: int, n_b: int) -> float:
    """e in time ~ n^e between two sizes (nan when the smaller time is under 0.05 s)."""
    return math.log(b / a) / math.log(n_b / n_a) if a > 0.05 and b > 0 else float("nan")


def gib(size: float) -> str:
    return f"{size / 2**30:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snli", type=Path, required=True, help="the official SNLI dev JSONL (snli_1.0_dev.jsonl)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 550_000])
    parser.add_argument("--work", type=Path, required=True, help="folder for the data, caches and outputs")
    parser.add_argument("--max-steps", type=int, default=20, help="scratch LM training steps per fold")
    parser.add_argument("--dry-run", action="store_true", help="time `lsplits build --dry-run` instead")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reuse", action="store_true", help="report the sizes already run in --work, run the rest")
    args = parser.parse_args()
    pairs = read_pairs(args.snli)
    args.work.mkdir(parents=True, exist_ok=True)
    results = []
    for n in sorted(args.sizes):
        data = args.work / f"snli-{n}.jsonl"
        if not data.exists():
            make_data(pairs, n, data, args.seed)
        print(f"building {n:,} pairs ...", flush=True)
        results.append(run_size(n, data, args.work, args))
        results[-1]["totals"] = totals(results[-1]["stages"])

    mode = "lsplits build --dry-run" if args.dry_run else f"lsplits build snli --lm scratch --max-steps {args.max_steps}"
    print(f"\n{mode} on SNLI-sized pairs made from {args.snli} by word substitution")
    if not args.dry_run:
        print(f"(training is {args.max_steps} steps per fold, so it does not grow with n; scoring scores every pair)")
    names = [s for s in STAGES if any(s in r["totals"] for r in results)]
    names += [s for r in results for s in r["totals"] if s not in names]
    steps = list(zip(results, results[1:]))
    print(f"{'stage':18}" + "".join(f"{r['n']:>9,}: wall s   CPU s    GiB" for r in results)
          + "".join(f"  e {a['n'] // 1000}k->{b['n'] // 1000}k CPU (wall)" for a, b in steps))
    rows = {name: [r["totals"].get(name, (float("nan"), float("nan"), 0)) for r in results] for name in names}
    rows["whole build"] = [(r["wall"], r.get("cpu", float("nan")), r["peak_rss"]) for r in results]
    for name, figures in rows.items():
        line = f"{name:18}" + "".join(f"{wall:18.1f} {cpu:7.1f} {gib(peak):>6}" for wall, cpu, peak in figures)
        for (a, b), (fa, fb) in zip(steps, zip(figures, figures[1:])):
            line += f"  {exponent(fa[1], fb[1], a['n'], b['n']):>14.2f} ({exponent(fa[0], fb[0], a['n'], b['n']):.2f})"
        print(line)
    nlogn = "  ".join(f"{a['n'] // 1000}k->{b['n'] // 1000}k "
                      f"{1 + math.log(math.log(b['n']) / math.log(a['n'])) / math.log(b['n'] / a['n']):.2f}"
                      for a, b in steps)
    print(f"(e: time ~ n^e between the two sizes, from CPU time (wall time in brackets: it moves with the load "
          f"of the shared cores); n log n gives {nlogn}. GiB: the stage's peak RSS; whole build: the process's)")


if __name__ == "__main__":
    main()
