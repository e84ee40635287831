"""Peak memory and time of ``lsplits score`` on 100,000 SNLI-sized examples with the scratch model.

Prepares, in a work folder: a JSONL of N SNLI-sized pairs (the SNLI dev premises and hypotheses,
repeated with their words shuffled so no two examples are equal; synthetic sentences when the file
is missing) and a saved scratch model folder (default sizes, random weights, tokenizer trained on
the texts). Then runs, under ``/usr/bin/time -v``,

    python -m lsplits score --data-files pairs.jsonl --query-field hypothesis
        --prompt-template "Premise: {premise} This hypothesis is {relation}:" --lm MODEL --setting pt
        --cache-dir CACHE --out scores.parquet --no-progress

and prints its peak resident memory and wall time, plus the number of shards written. The
baseline for the figure is the 2 GiB the issue allows.

    .venv/bin/python benchmarks/scoring_memory.py [--n 100000] [--work /tmp/lsplits-memory]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from data_paths import data_argument  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lsplits.lm.scratch import build_scratch_lm  # noqa: E402

RELATIONS = ("entailed", "neutral", "a contradiction")


def snli_sized_rows(n: int, data: Path, rng: np.random.Generator) -> list[dict[str, str]]:
    """``n`` rows of premise, hypothesis and relation: SNLI dev, repeated with words shuffled."""
    base = []
    if data.is_file():
        for line in data.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            base.append((row["sentence1"], row["sentence2"]))
    else:
        words = "a man woman dog child is are the on in with playing sitting outside red blue street".split()
        base = [(" ".join(rng.choice(words, 13)) + ".", " ".join(rng.choice(words, 7)) + ".") for _ in range(9842)]
    rows = []
    for i in range(n):
        premise, hypothesis = base[i % len(base)]
        if i >= len(base):  # later copies: the same words in another order
            premise, hypothesis = (" ".join(rng.permutation(text.split())) for text in (premise, hypothesis))
        rows.append({"id": f"ex{i:07d}", "premise": premise, "hypothesis": hypothesis,
                     "relation": RELATIONS[i % 3]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/lsplits-memory"))
    data_argument(parser, "--data", "snli/snli_1.0_dev.jsonl", "SNLI JSONL")
    args = parser.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    rows = snli_sized_rows(args.n, args.data, np.random.default_rng(0))
    with (args.work / "pairs.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(row) + "\n" for row in rows)
    texts = [row[field] for row in rows[:20_000] for field in ("premise", "hypothesis")]
    build_scratch_lm(texts, args.work / "lm", n_positions=128)

    command = ["/usr/bin/time", "-v", sys.executable, "-m", "lsplits", "score",
               "--data-files", str(args.work / "pairs.jsonl"), "--query-field", "hypothesis",
               "--prompt-template", "Premise: {premise} This hypothesis is {relation}:",
               "--lm", str(args.work / "lm" / "model"), "--setting", "pt", "--cache-dir", str(args.work / "cache"),
               "--out", str(args.work / "scores.parquet"), "--no-progress"]
    print(" ".join(command))
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    if result.returncode != 0:
        sys.exit(result.stderr[-3000:])
    peak_kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", result.stderr).group(1)
    shards = len(list((args.work / "cache").glob("*/pretrained/scores-*.parquet")))
    print(f"{args.n:,} SNLI-sized examples, setting pt, scratch model: peak RSS {peak_kib / 1024**2:.2f} GiB "
          f"({peak_kib / 1024:,.0f} MiB; limit 2 GiB), wall {wall}, {shards} shards")


if __name__ == "__main__":
    main()
