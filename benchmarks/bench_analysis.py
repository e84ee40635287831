"""Time the split statistics on real SNLI dev hypotheses against a naive rare-word count.

Baseline (same run): tokenise every text and ask wordfreq for every token, no caching.
Usage: python benchmarks/bench_analysis.py [path/to/snli_1.0_dev.jsonl]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from data_paths import default_data
from nltk.tokenize import NLTKWordTokenizer
from wordfreq import word_frequency

from lsplits.building.analysis import add_rare_word_counts, split_statistics, statistics_text

DEFAULT = default_data("snli/snli_1.0_dev.jsonl")  # None in a clone without ../shared/data: pass the path


def naive_rare_examples(texts: list[str]) -> float:
    tokenizer = NLTKWordTokenizer()
    rare = 0
    for text in texts:
        tokens = [t.lower() for t in tokenizer.tokenize(text) if t.isalpha()]
        rare += any(word_frequency(t, "en") <= 1e-6 for t in tokens)
    return rare / len(texts)


def main(path: str | None = DEFAULT) -> None:
    if path is None or not Path(path).exists():
        raise SystemExit(f"{path or 'no data file'}: not found; usage: python benchmarks/bench_analysis.py [SNLI_JSONL] "
                         "(the real sample is not in a clone)")
    df = pd.read_json(path, lines=True)
    df = df[df["gold_label"] != "-"].reset_index(drop=True)
    tokenizer = NLTKWordTokenizer()
    df["length"] = [len(tokenizer.tokenize(t)) for t in df["sentence2"]]
    df["ll_score"] = -2.5 * df["length"] + np.random.default_rng(0).normal(0, 3, len(df))  # stand-in score
    order = np.argsort(df["ll_score"].to_numpy(), kind="stable")
    n_eval = len(df) // 10
    splits = {"train": df.iloc[order[2 * n_eval:]], "validation": df.iloc[order[:n_eval]],
              "test": df.iloc[order[n_eval:2 * n_eval]]}

    start = time.perf_counter()
    baseline = naive_rare_examples(df["sentence2"].tolist())
    naive_s = time.perf_counter() - start
    start = time.perf_counter()
    stats = split_statistics(splits, query_field="sentence2", label_field="gold_label", progress=False)
    one_config_s = time.perf_counter() - start
    # Seven configs of one dataset: count rare words once, then reuse the columns.
    start = time.perf_counter()
    annotated = add_rare_word_counts(df, "sentence2", progress=False)
    for _ in range(7):
        split_statistics({name: annotated.loc[part.index] for name, part in splits.items()},
                         query_field="sentence2", label_field="gold_label", progress=False)
    seven_s = time.perf_counter() - start

    print(statistics_text(stats))
    whole = (stats["splits"]["train"]["rare_examples"] * len(splits["train"])
             + stats["splits"]["eval"]["rare_examples"] * 2 * n_eval) / len(df)
    print(f"rows {len(df):,}; rare-example share, whole set: ours {whole:.4f} vs naive {baseline:.4f}")
    print(f"naive rare-word pass over the whole set: {naive_s:.2f}s")
    print(f"split_statistics, one config: {one_config_s:.2f}s ({naive_s / one_config_s:.2f}x the naive speed)")
    print(f"seven configs with add_rare_word_counts once: {seven_s:.2f}s "
          f"vs {7 * one_config_s:.2f}s for seven plain calls ({7 * one_config_s / seven_s:.1f}x)")


if __name__ == "__main__":
    main(*sys.argv[1:])
