"""GPU scoring throughput on one H100/H200: the reference's way vs lsplits with a gpt2-medium-sized LM.

Runs benchmarks/scoring.py's comparison on CUDA with GPT-2 medium's shape (24 layers x 1024, 16
heads, vocabulary 50,257; random weights from its config, nothing is downloaded) on synthetic
token ids of BoolQ's and SNLI's lengths under the GPT-2 tokenizer (BoolQ: a ~140-token passage
prompt, long-tailed, and a ~11-token question; SNLI: a ~24-token premise prompt and a ~10-token
hypothesis). Rows, all on the same model and data:
  naive fp32       the reference script: batches of 8 in dataset order, padded, fp32, full logits
                   and log-softmax everywhere (the baseline of every ratio);
  naive bf16       the same under bf16 autocast, to separate precision from the rest;
  ours             lsplits.lm.scoring.score_encoded: bf16 autocast, SDPA causal attention without a
                   padding mask, length-sorted token-budget batches, head only on scored positions;
  ours, budget N   the same with a larger token budget;
  ours + compile   with torch.compile (on a copy of the model; compilation time not counted).

Model FLOP utilisation (MFU) = useful FLOPs / time / peak, where useful FLOPs of one example of L
tokens with S scored are 2 * 12 * n_layer * d^2 * L (dense layers) + 2 * n_layer * d * L * (L + 1)
(causal attention scores and values) + 2 * d * V * S (vocabulary projection of scored positions);
padding and unneeded projections are not counted, so MFU compares methods on the same work. Peak:
989.4 TFLOP/s, the dense bf16 tensor-core peak of an H100 SXM / H200 SXM (NVIDIA data sheets; the
2x "with sparsity" figure is not used); pass --peak-tflops for another GPU.

    benchmarks/gpu_scoring.sh [--boolq-n 6000] [--snli-n 20000] [--big-budget 65536]
        [--no-compile] [--peak-tflops 989.4]

Every row is timed once, after a warm-up on the first examples. Sized to finish in about 3-5
minutes on an H200 (the shell script stops it at 8).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import sys
import time

import numpy as np
import torch
from scoring import compare, naive_scores

from lsplits.lm.encode import EncodedPair
from lsplits.lm.scoring import GPU_TOKEN_BUDGET, score_encoded

H100_H200_BF16_DENSE_TFLOPS = 989.4


def gpt2_medium_shaped() -> torch.nn.Module:
    """GPT-2 medium's architecture with random weights, fp32 on the GPU, loaded as lsplits loads LMs."""
    from transformers import AutoModelForCausalLM, GPT2Config

    config = GPT2Config(n_layer=24, n_embd=1024, n_head=16, vocab_size=50257, n_positions=1024,
                        activation_function="gelu_pytorch_tanh")
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa")
    return model.to("cuda", dtype=torch.float32).eval()


def synthetic_pairs(n: int, prompt_lengths: np.ndarray, query_lengths: np.ndarray, vocab: int,
                    rng: np.random.Generator) -> list[EncodedPair]:
    """Random token ids with the given prompt and query lengths: ``[BOS] + prompt + query + [EOS]``."""
    bos = eos = vocab - 1
    pairs = []
    for p, q in zip(prompt_lengths[:n], query_lengths[:n], strict=True):
        body = rng.integers(0, vocab - 1, size=int(p + q))
        pairs.append(EncodedPair(np.concatenate([[bos], body, [eos]]).astype(np.int32), 1 + int(p)))
    return pairs


def boolq_lengths(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    prompt = np.clip(rng.lognormal(np.log(140), 0.45, n), 25, 1024 - 40).astype(int)
    return prompt, np.clip(rng.normal(11, 3, n), 4, 30).astype(int)


def snli_lengths(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return np.clip(rng.normal(24, 7, n), 12, 80).astype(int), np.clip(rng.normal(10, 4, n), 3, 40).astype(int)


def useful_flops(pairs: list[EncodedPair], n_layer: int, d: int, vocab: int) -> float:
    """Forward FLOPs the scores need (see the module docstring)."""
    lengths = np.array([len(p.input_ids) for p in pairs], dtype=np.float64)
    scored = np.array([p.n_scored for p in pairs], dtype=np.float64)
    return float((2 * 12 * n_layer * d * d * lengths + 2 * n_layer * d * lengths * (lengths + 1)).sum()
                 + (2 * d * vocab * scored).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boolq-n", type=int, default=6000)
    parser.add_argument("--snli-n", type=int, default=20000)
    parser.add_argument("--big-budget", type=int, default=65536, help="the larger token budget tried")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile row")
    parser.add_argument("--peak-tflops", type=float, default=H100_H200_BF16_DENSE_TFLOPS)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("error: no CUDA GPU; this benchmark is for one H100/H200 (benchmarks/scoring.py runs on CPU)")

    started = time.perf_counter()
    model = gpt2_medium_shaped()
    config = model.config
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}; GPT-2 medium shape "
          f"({sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters, random weights); "
          f"peak {args.peak_tflops} TFLOP/s bf16 dense")
    bf16 = lambda: torch.autocast("cuda", dtype=torch.bfloat16)  # noqa: E731
    compiled = None
    if not args.no_compile:
        compiled = copy.deepcopy(model)
    rng = np.random.default_rng(0)
    for name, n, lengths in (("BoolQ-shaped", args.boolq_n, boolq_lengths), ("SNLI-shaped", args.snli_n, snli_lengths)):
        pairs = synthetic_pairs(n, *lengths(n, rng), config.vocab_size, rng)
        flops = useful_flops(pairs, config.n_layer, config.n_embd, config.vocab_size)

        def mfu(label: str, seconds: float, flops: float = flops) -> str:
            return f"   MFU {flops / seconds / (args.peak_tflops * 1e12):6.1%}"

        runs = {
            "naive fp32": lambda pairs=pairs: naive_scores(model, pairs, 8),
            "naive bf16": lambda pairs=pairs: naive_scores(model, pairs, 8, autocast=bf16),
            f"ours (budget {GPU_TOKEN_BUDGET})": lambda pairs=pairs: score_encoded(model, pairs, progress=False)[0],
            f"ours (budget {args.big_budget})": lambda pairs=pairs: score_encoded(
                model, pairs, token_budget=args.big_budget, progress=False)[0],
        }
        warm = pairs[:256]
        naive_scores(model, warm, 8, autocast=bf16)
        score_encoded(model, warm, progress=False)
        if compiled is not None:
            compile_start = time.perf_counter()
            score_encoded(compiled, pairs[:2000], progress=False, compile=True)  # compiles for the shapes seen
            print(f"({name}: compiling and a 2,000-example warm-up took {time.perf_counter() - compile_start:.0f} s)")
            runs["ours + compile"] = lambda pairs=pairs: score_encoded(compiled, pairs, progress=False)[0]
        compare(name, pairs, runs, repeats=1, extra=mfu)
        with contextlib.suppress(RuntimeError):
            torch.cuda.empty_cache()
    print(f"\ntotal wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
