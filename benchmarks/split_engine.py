"""Time the split engine on an SNLI-sized input against a pure-Python baseline in the same run.

Usage: python benchmarks/split_engine.py [--n 600000] [--snli PATH_TO_snli_1.0_dev.jsonl]

The baseline is the straightforward per-bucket loop (sort every bucket's list of (score, index)
and slice its quota), i.e. how the reference code works, minus its bugs. With --snli the script
also splits real SNLI hypotheses (NLTK word lengths, gold labels; random stand-in scores) and
prints how far each length bucket's eval share is from its exact proportional share.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict

import numpy as np

from lsplits.splits import bucket_quotas, likelihood_partition


def naive_length_controlled(scores: np.ndarray, lengths: np.ndarray, eval_count: int,
                            seed: int) -> list[int]:
    """Baseline: Python lists per bucket, quotas from the engine, no fix-up (so it is a lower bound)."""
    buckets: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for index, (score, length) in enumerate(zip(scores.tolist(), lengths.tolist(), strict=True)):
        buckets[length].append((score, index))
    chosen: list[int] = []
    for length, quota in bucket_quotas(lengths, eval_count, seed).items():
        members = sorted(buckets[length])
        chosen.extend(index for _, index in members[:quota])
    return chosen


def timed(function, *args, **kwargs) -> tuple[object, float]:
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def synthetic(n: int) -> None:
    rng = np.random.default_rng(0)
    scores, lengths, labels = rng.normal(size=n), rng.poisson(12, size=n), rng.integers(0, 3, size=n)
    eval_count = 20_000
    _, global_s = timed(likelihood_partition, scores, eval_count)
    _, length_s = timed(likelihood_partition, scores, eval_count, lengths=lengths, seed=1)
    _, both_s = timed(likelihood_partition, scores, eval_count, lengths=lengths, labels=labels, seed=1)
    _, naive_s = timed(naive_length_controlled, scores, lengths, eval_count, 1)
    print(f"n={n:,} E={eval_count:,}")
    print(f"  global                  {global_s:7.3f} s")
    print(f"  length-controlled       {length_s:7.3f} s")
    print(f"  length + label balance  {both_s:7.3f} s")
    print(f"  pure-Python baseline    {naive_s:7.3f} s   (length-controlled speed-up x{naive_s / length_s:.1f})")


def snli(path: str) -> None:
    from nltk.tokenize import NLTKWordTokenizer

    tokenizer = NLTKWordTokenizer()
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    rows = [r for r in rows if r["gold_label"] != "-"]
    lengths = np.array([len(tokenizer.tokenize(r["sentence2"])) for r in rows])
    labels = np.array([r["gold_label"] for r in rows])
    scores = np.random.default_rng(0).normal(size=len(rows))
    eval_count = len(rows) // 5
    partition, seconds = timed(likelihood_partition, scores, eval_count, lengths=lengths, labels=labels, seed=0)
    print(f"SNLI dev: {len(rows):,} examples, {np.unique(lengths).size} distinct lengths, "
          f"E={eval_count:,}, {seconds * 1000:.1f} ms")
    worst = 0.0
    for label in np.unique(labels):
        in_class = labels == label
        class_eval = partition.eval[labels[partition.eval] == label]
        for length in np.unique(lengths[in_class]):
            share = class_eval.size * np.sum(lengths[in_class] == length) / in_class.sum()
            worst = max(worst, abs(np.sum(lengths[class_eval] == length) - share))
        print(f"  {label:<14} eval {class_eval.size:5d}")
    print(f"  largest |eval count - exact proportional share| over (class, length) buckets: {worst:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=600_000)
    parser.add_argument("--snli", help="path to snli_1.0_dev.jsonl (optional real-data check)")
    args = parser.parse_args()
    synthetic(args.n)
    if args.snli:
        snli(args.snli)


if __name__ == "__main__":
    main()
