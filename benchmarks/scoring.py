"""Scoring throughput: the reference implementation's way vs lsplits, same model and data, one run.

(a) naive, as the reference code scores (``lm_analysis/compute_lls.py``: batches of 8 in dataset
    order, padded to the longest with an attention mask, the full logits of every position and a
    full log-softmax over the vocabulary (its cross-entropy), the query positions summed);
(b) ours, :func:`lsplits.lm.scoring.score_encoded`: length-sorted token-budget batches, the
    vocabulary projection only at the positions that predict a scored token, no padding mask.
Both get the same encoded pairs (tokenising is not timed) and must agree on every score.

Data: BoolQ-shaped (``Passage: ... Ask a question about the passage:`` then the question) from
../shared/data/boolq/boolq_dev.jsonl and SNLI-shaped (premise prompt, hypothesis) from
../shared/data/snli/snli_1.0_dev.jsonl, each through its builder's prompts; synthetic texts of the
same shape when a file is missing. Model: the scratch LM (default sizes) with a tokenizer trained
on the data and random weights (speed does not depend on the weights).

    .venv/bin/python benchmarks/scoring.py [--limit N] [--repeats 2] [--batch-size 8]
        [--token-budget 4096] [--data-dir ../shared/data]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from data_paths import data_argument  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lsplits.lm.encode import EncodedPair, encode_pairs, pair_lengths  # noqa: E402
from lsplits.lm.scoring import CPU_TOKEN_BUDGET, score_encoded  # noqa: E402
from lsplits.lm.scratch import ScratchConfig, init_scratch_model, train_tokenizer, window_for  # noqa: E402

REFERENCE_BATCH_SIZE = 8  # the reference script's --batch_size default


def naive_scores(model: torch.nn.Module, pairs: Sequence[EncodedPair], batch_size: int,
                 autocast: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext) -> np.ndarray:
    """Scores the reference way: fixed batches in dataset order, full logits and log-softmax everywhere."""
    device = next(model.parameters()).device
    scores = np.zeros(len(pairs))
    with torch.inference_mode():
        for start in range(0, len(pairs), batch_size):
            chunk = pairs[start:start + batch_size]
            width = max(len(p.input_ids) for p in chunk)
            input_ids = torch.zeros((len(chunk), width), dtype=torch.long)
            attention_mask = torch.zeros_like(input_ids)
            labels = torch.full_like(input_ids, -100)
            for row, pair in enumerate(chunk):
                n = len(pair.input_ids)
                input_ids[row, :n] = torch.from_numpy(pair.input_ids)
                attention_mask[row, :n] = 1
                labels[row, pair.prompt_len:n] = input_ids[row, pair.prompt_len:n]
            input_ids, attention_mask, labels = (t.to(device) for t in (input_ids, attention_mask, labels))
            with autocast():
                logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
            logprobs = torch.log_softmax(logits[:, :-1].float(), dim=-1)  # [batch, time, vocab] in fp32
            targets = labels[:, 1:]
            picked = logprobs.gather(-1, targets.clamp(min=0)[..., None]).squeeze(-1)
            scores[start:start + len(chunk)] = (picked * (targets != -100)).sum(1).double().cpu().numpy()
    return scores


def best_time(run: Callable[[], np.ndarray], repeats: int) -> tuple[float, np.ndarray]:
    """Fastest of ``repeats`` timed calls (the GPU is synchronised), and the last result."""
    times, result = [], None
    for _ in range(repeats):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        start = time.perf_counter()
        result = run()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return min(times), result


def compare(name: str, pairs: Sequence[EncodedPair], runs: dict[str, Callable[[], np.ndarray]], repeats: int,
            extra: Callable[[str, float], str] | None = None) -> dict[str, float]:
    """Time every run on ``pairs`` (one untimed warm-up on a slice first), print a table, return seconds."""
    tokens = sum(len(p.input_ids) for p in pairs)
    print(f"\n{name}: {len(pairs):,} examples, {tokens:,} tokens "
          f"(mean {tokens / len(pairs):.0f}, longest {max(len(p.input_ids) for p in pairs)})")
    seconds, results = {}, {}
    for label, run in runs.items():
        seconds[label], results[label] = best_time(run, repeats)
    baseline = next(iter(runs))
    for label in runs:
        line = (f"  {label:<22} {len(pairs) / seconds[label]:>10,.0f} ex/s {tokens / seconds[label]:>12,.0f} tok/s"
                f"   x{seconds[baseline] / seconds[label]:.2f} vs {baseline}"
                f"   max |score diff| {np.abs(results[label] - results[baseline]).max():.1e}")
        print(line + (extra(label, seconds[label]) if extra else ""))
    return seconds


def boolq_shaped(data_dir: Path, limit: int | None, rng: np.random.Generator) -> tuple[list[str], list[str], str]:
    """BoolQ prompts and questions from the dev file through the BoolQ builder, or synthetic ones."""
    path = data_dir / "boolq" / "boolq_dev.jsonl"
    if path.is_file():
        from lsplits.builders import boolq

        return (*_records(boolq, path, limit), str(path))
    n = limit or 3270
    passages = [_words(rng, int(rng.integers(40, 260))) for _ in range(n)]
    return ([f"Passage: {p} Ask a question about the passage:" for p in passages],
            [" " + _words(rng, int(rng.integers(5, 14))) + "?" for _ in range(n)], "synthetic")


def snli_shaped(data_dir: Path, limit: int | None, rng: np.random.Generator) -> tuple[list[str], list[str], str]:
    """SNLI prompts and hypotheses from the dev file through the SNLI builder, or synthetic ones."""
    path = data_dir / "snli" / "snli_1.0_dev.jsonl"
    if path.is_file():
        from lsplits.builders import snli

        return (*_records(snli, path, limit), str(path))
    n = limit or 9842
    return ([f"Premise: {_words(rng, int(rng.integers(6, 25)))}. This hypothesis is entailed:" for _ in range(n)],
            [" " + _words(rng, int(rng.integers(3, 12))) + "." for _ in range(n)], "synthetic")


def _records(builder, path: Path, limit: int | None) -> tuple[list[str], list[str]]:
    from lsplits.building.pipeline import score_records

    records = score_records(builder.load(data_files=[str(path)]).examples, builder.SPEC.task, "pt")[:limit]
    return [r["prompt"] for r in records], [r["query"] for r in records]


_VOCABULARY = [f"{a}{b}" for a in ("ta", "ko", "mi", "ren", "sul", "ba", "dor", "ve") for b in
               ("n", "st", "la", "mo", "ri", "ck", "ed", "ing", "y", "er")]


def _words(rng: np.random.Generator, n: int) -> str:
    return " ".join(rng.choice(_VOCABULARY, size=n))


def scratch_model(texts: list[str], prompts: list[str], queries: list[str], folder: Path):
    """The default-size scratch LM with a tokenizer trained on ``texts`` and a window fitting the pairs."""
    config = ScratchConfig()
    tokenizer = train_tokenizer(texts, folder / "tokenizer", vocab_size=config.vocab_size,
                                min_frequency=config.min_frequency)
    window = window_for(pair_lengths(tokenizer, prompts, queries), config.max_positions)
    return init_scratch_model(tokenizer, folder / "model", config, n_positions=window)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data_argument(parser, "--data-dir", ".", "folder with boolq/boolq_dev.jsonl and snli/snli_1.0_dev.jsonl")
    parser.add_argument("--limit", type=int, default=None, help="examples per dataset (default: all)")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs of each method (fastest counts)")
    parser.add_argument("--batch-size", type=int, default=REFERENCE_BATCH_SIZE, help="naive batch size")
    parser.add_argument("--token-budget", type=int, default=CPU_TOKEN_BUDGET)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    print(f"device: cpu, {torch.get_num_threads()} threads; naive batch {args.batch_size}, "
          f"token budget {args.token_budget}, best of {args.repeats}")
    for name, load in (("BoolQ-shaped", boolq_shaped), ("SNLI-shaped", snli_shaped)):
        bench_dataset(name, *load(args.data_dir, args.limit, rng), args)


def bench_dataset(name: str, prompts: list[str], queries: list[str], source: str, args: argparse.Namespace) -> None:
    """Build the scratch LM on one dataset's texts and compare the naive scoring with ours on it."""
    with tempfile.TemporaryDirectory() as tmp:
        model, tokenizer = scratch_model(prompts + queries, prompts, queries, Path(tmp))
    model.eval()
    pairs = encode_pairs(tokenizer, prompts, queries, max_length=model.config.n_positions)
    print(f"\n[{name} from {source}; scratch GPT-2 {model.config.n_layer} layers x {model.config.n_embd}, "
          f"vocab {model.config.vocab_size}, window {model.config.n_positions}]")
    warm = pairs[:64]
    naive_scores(model, warm, args.batch_size)
    score_encoded(model, warm, token_budget=args.token_budget, progress=False)
    compare(name, pairs, {
        "naive (reference)": lambda: naive_scores(model, pairs, args.batch_size),
        "ours": lambda: score_encoded(model, pairs, token_budget=args.token_budget, progress=False)[0],
    }, args.repeats)

if __name__ == "__main__":
    main()
