"""Run every AMR similarity on every real graph: each graph against itself and against the next one.

Proves robustness on real annotations (no crash, self-similarity 1, scores in [0, 1]) and prints the
time per pair of each metric next to a baseline measured in the same run: smatchpp's ``score_pair``
(ILP solver, no standardisation) on the same pairs.

Usage: python benchmarks/amr_metrics.py [path/to/amr.jsonl] [--minilm]
(``--minilm`` adds S2Match with all-MiniLM-L6-v2 embeddings; needs the ``embeddings`` extra).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from data_paths import default_data
from smatchpp import Smatchpp, solvers

from lsplits.similarity import registry as similarity

DEFAULT = default_data("amr/lpp_amr_v1.6_test.jsonl")  # None in a clone without ../shared/data: pass the path
METRICS = ["smatch", "s2match", "sema", "wlk", "sembleu"]


def time_metric(metric: similarity.Similarity, texts: list[str]) -> dict[str, float]:
    """Prepare all graphs, score self and next pairs; return timings and score summaries."""
    start = time.perf_counter()
    metric.prepare(texts[0])  # one-time costs (imports, loading an embedding model) are not per graph
    warm_up_s = time.perf_counter() - start
    start = time.perf_counter()
    graphs = [metric.prepare(text) for text in texts]
    prepare_s = time.perf_counter() - start
    start = time.perf_counter()
    self_scores = [metric.score(graph, graph) for graph in graphs]
    self_s = time.perf_counter() - start
    start = time.perf_counter()
    next_scores = [metric.score(a, b) for a, b in zip(graphs, graphs[1:])]
    next_s = time.perf_counter() - start
    if min(self_scores) != 1.0:
        raise AssertionError(f"{metric.name}: a graph is not similar to itself: {min(self_scores)}")
    if not all(0.0 <= value <= 1.0 for value in next_scores):
        raise AssertionError(f"{metric.name}: a score is outside [0, 1]")
    return {"warm_up_s": warm_up_s, "prepare_ms": 1000 * prepare_s / len(graphs), "self_ms": 1000 * self_s / len(graphs),
            "next_ms": 1000 * next_s / len(next_scores), "mean_next": sum(next_scores) / len(next_scores)}


def main(path: str | None = DEFAULT, minilm: bool = False) -> None:
    if path is None or not Path(path).exists():
        raise SystemExit(f"{path or 'no data file'}: not found; usage: python benchmarks/amr_metrics.py [AMR_JSONL] [--minilm] "
                         "(the real sample is not in a clone)")
    with open(path, encoding="utf-8") as handle:
        texts = [json.loads(line)["amr"] for line in handle]
    metrics = [similarity.get(name) for name in METRICS]
    if minilm:
        from lsplits.similarity.amr.embeddings import MiniLMBackend
        from lsplits.similarity.amr.s2match import make_s2match

        metrics.append(make_s2match(MiniLMBackend(), name="s2match-minilm"))

    baseline = Smatchpp(alignmentsolver=solvers.get_solver("ilp"))
    start = time.perf_counter()
    for a, b in zip(texts, texts[1:]):
        baseline.score_pair(a, b)
    baseline_ms = 1000 * (time.perf_counter() - start) / (len(texts) - 1)

    print(f"{len(texts)} graphs from {path}: each against itself and against the next ({len(texts) - 1} pairs)")
    print(f"baseline smatchpp score_pair (ILP, no standardisation): {baseline_ms:.3f} ms/pair")
    print(f"{'metric':16} {'warm-up s':>9} {'prepare ms/graph':>16} {'self ms/pair':>13} {'next ms/pair':>13} "
          f"{'x baseline':>11} {'mean next':>10}")
    for metric in metrics:
        result = time_metric(metric, texts)
        per_pair = result["prepare_ms"] * 2 + result["next_ms"]  # parse both graphs + score, as smatchpp
        print(f"{metric.name:16} {result['warm_up_s']:9.2f} {result['prepare_ms']:16.3f} {result['self_ms']:13.3f} "
              f"{result['next_ms']:13.3f} {baseline_ms / per_pair:10.1f}x {result['mean_next']:10.4f}")
    print("all metrics: no crash, self-similarity 1.0, scores in [0, 1]")


if __name__ == "__main__":
    arguments = [argument for argument in sys.argv[1:] if argument != "--minilm"]
    main(*arguments, minilm="--minilm" in sys.argv[1:])
