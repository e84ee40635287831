"""fp32 vs bf16 autocast on this machine, in one run: scoring and fine-tuning speed, and what bf16 does to the scores.

For two models, each trained on real SNLI dev text (../shared/data/snli/snli_1.0_dev.jsonl, through the
SNLI builder's prompts: premise and label as the prompt, the hypothesis scored):

- ``scratch``: the scratch LM at its default sizes (2 x 128), tokenizer trained on the text;
- ``gpt2-medium size``: 24 layers x 1024, 16 heads, GPT-2's vocabulary size (50,257) so that the vocabulary
  projection costs what it costs in gpt2-medium, random init then fine-tuned briefly (``--medium-steps``);
  its tokenizer is a BPE trained on the text (no Hub download here).

each figure from lsplits' own code (``lsplits.lm.finetune.finetune`` and ``lsplits.lm.scoring.score_pairs`` with
``dtype="fp32"`` / ``"bf16"``):

- fine-tuning: examples/s of the same steps from the same initial weights, fp32 vs bf16, and the ratio;
- scoring: examples/s (best of ``--repeats`` interleaved runs), the ratio, the Spearman correlation and the
  largest relative difference of ``ll_score`` between the two (same trained model), and for each config
  (``ll_split``, ``ll_split_len``, ``ll_split_reverse``: label-balanced, eval = ``--eval-fraction``) how many
  examples are in eval under one dtype and not under the other.

Then a size sweep (random-init GPT-2s from 0.5M to 90M parameters, scoring only) places the line below which
``--dtype auto`` keeps fp32 on a CPU (:data:`lsplits.lm.dtype.CPU_BF16_MIN_PARAMETERS`).

    nice -n 10 .venv/bin/python benchmarks/dtype.py [--scratch-examples 3000] [--medium-examples 192]
        [--medium-steps 16] [--repeats 2] [--out out/bench-dtype]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import spearmanr

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from data_paths import data_argument  # noqa: E402

from lsplits.data.text import word_count  # noqa: E402
from lsplits.lm.dtype import CPU_BF16_MIN_PARAMETERS, count_parameters, host_cpu_flags  # noqa: E402
from lsplits.lm.finetune import finetune  # noqa: E402
from lsplits.lm.scoring import load_causal_lm, score_pairs  # noqa: E402
from lsplits.lm.scratch import ScratchConfig, scratch_model, scratch_tokenizer  # noqa: E402
from lsplits.lm.training import TrainConfig  # noqa: E402
from lsplits.splits.engine import likelihood_partition  # noqa: E402

CONFIGS = {"ll_split": {}, "ll_split_len": {"length_control": True}, "ll_split_reverse": {"reverse": True}}


def snli_records(path: Path) -> tuple[list[str], list[str], list[str]]:
    """Prompts, queries and labels of SNLI dev as ``lsplits build snli`` scores them (paper filters applied)."""
    from builders.snli import SPEC, from_official

    task = SPEC.task
    prompts, queries, labels = [], [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        example = from_official(json.loads(line))
        if not all(keep(example) for _, keep in task.filters):
            continue
        prompts.append(task.prompt_text(example, "ft"))
        queries.append(task.query_text(example, "ft"))
        labels.append(str(example["label"]))
    return prompts, queries, labels


def timed(function, *args, **kwargs) -> tuple[float, object]:
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


def score_both(model, tokenizer, prompts, queries, repeats: int) -> dict:
    """Interleaved fp32 / bf16 scoring runs: the best time of each and the scores of the last."""
    times = {"fp32": [], "bf16": []}
    scores = {}
    score_pairs(model, tokenizer, prompts[:16], queries[:16], progress=False, dtype="bf16")  # warm both paths
    score_pairs(model, tokenizer, prompts[:16], queries[:16], progress=False, dtype="fp32")
    for _ in range(repeats):
        for dtype in ("fp32", "bf16"):
            seconds, (values, _) = timed(score_pairs, model, tokenizer, prompts, queries, progress=False, dtype=dtype)
            times[dtype].append(seconds)
            scores[dtype] = values
    return {"seconds": {k: min(v) for k, v in times.items()}, "scores": scores}


def membership(fp32: np.ndarray, bf16: np.ndarray, lengths: list[int], labels: list[str], fraction: float) -> dict:
    """Per config: examples in eval under exactly one of the two dtypes (moved into eval + moved out)."""
    changed = {}
    for name, options in CONFIGS.items():
        kwargs = dict(labels=labels, reverse=options.get("reverse", False),
                      lengths=lengths if options.get("length_control") else None)
        a = set(likelihood_partition(fp32, fraction, **kwargs).eval.tolist())
        b = set(likelihood_partition(bf16, fraction, **kwargs).eval.tolist())
        changed[name] = len(a ^ b)
    return changed


def compare_scores(result: dict, lengths, labels, fraction: float, n: int) -> dict:
    fp32, bf16 = result["scores"]["fp32"], result["scores"]["bf16"]
    seconds = result["seconds"]
    return {"score_ex_per_s_fp32": n / seconds["fp32"], "score_ex_per_s_bf16": n / seconds["bf16"],
            "score_ratio": seconds["fp32"] / seconds["bf16"],
            "spearman": float(spearmanr(fp32, bf16).statistic),
            "max_rel_diff": float(np.max(np.abs(bf16 - fp32) / np.maximum(np.abs(fp32), 1e-9))),
            "changed": membership(fp32, bf16, lengths, labels, fraction)}


def train_both(make_model, tokenizer, prompts, queries, config: TrainConfig, work: Path) -> tuple[dict, Path]:
    """The same training (same initial weights, steps and batches) in fp32 and in bf16; examples/s of each."""
    figures = {}
    for dtype in ("fp32", "bf16"):
        model = make_model()
        seconds, best = timed(finetune, model, tokenizer, prompts, queries, config, work / dtype, progress=False,
                              dtype=dtype)
        figures[dtype] = config.max_steps * config.batch_size / seconds
        summary = json.loads((work / dtype / "training.json").read_text())
        figures[f"val_ppl_{dtype}"] = summary["best_val_ppl"]
        del model
    figures["ratio"] = figures["bf16"] / figures["fp32"]
    return figures, work / "fp32" / "best"


def run_model(name: str, make_model, tokenizer, prompts, queries, labels, config: TrainConfig, args, work: Path) -> dict:
    lengths = [word_count(q) for q in queries]
    train, trained = train_both(make_model, tokenizer, prompts, queries, config, work / name)
    model, tokenizer = load_causal_lm(trained)
    params = count_parameters(model)
    result = compare_scores(score_both(model, tokenizer, prompts, queries, args.repeats), lengths, labels,
                            args.eval_fraction, len(queries))
    del model
    row = {"model": name, "parameters": params, "n": len(queries), "train_steps": config.max_steps,
           "train_ex_per_s_fp32": train["fp32"], "train_ex_per_s_bf16": train["bf16"], "train_ratio": train["ratio"],
           "val_ppl_fp32": train["val_ppl_fp32"], "val_ppl_bf16": train["val_ppl_bf16"], **result}
    print(json.dumps(row), flush=True)
    return row


def sweep(tokenizer, prompts, queries, repeats: int) -> list[dict]:
    """Scoring speed of random-init GPT-2s of growing size, fp32 vs bf16 (where bf16 starts to pay)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    rows = []
    for layers, width in ((2, 128), (4, 256), (6, 384), (6, 512), (8, 768), (12, 768)):
        torch.manual_seed(0)
        config = GPT2Config(vocab_size=len(tokenizer), n_positions=256, n_layer=layers, n_embd=width,
                            n_head=max(2, width // 64), activation_function="gelu_pytorch_tanh",
                            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
        model = GPT2LMHeadModel(config).eval()
        result = score_both(model, tokenizer, prompts, queries, repeats)
        row = {"layers": layers, "width": width, "parameters": count_parameters(model),
               "ratio": result["seconds"]["fp32"] / result["seconds"]["bf16"],
               "ex_per_s_fp32": len(queries) / result["seconds"]["fp32"]}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    data_argument(parser, "--data", "snli/snli_1.0_dev.jsonl", "SNLI dev, official JSONL")
    parser.add_argument("--scratch-examples", type=int, default=3000)
    parser.add_argument("--scratch-steps", type=int, default=120)
    parser.add_argument("--medium-examples", type=int, default=192)
    parser.add_argument("--medium-steps", type=int, default=16)
    parser.add_argument("--sweep-examples", type=int, default=128)
    parser.add_argument("--eval-fraction", type=float, default=0.2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--skip", nargs="*", default=[], choices=["scratch", "medium", "sweep"])
    parser.add_argument("--out", type=Path, default=Path("out/bench-dtype"), help="where dtype.json is written")
    args = parser.parse_args()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    flags = sorted(host_cpu_flags() & {"amx_bf16", "amx_tile", "avx512_bf16", "avx512f"})
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, CPU flags {flags}", flush=True)
    prompts, queries, labels = snli_records(args.data)
    rows, started = [], time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lsplits-dtype-") as tmp:
        work = Path(tmp)
        tokenizer = scratch_tokenizer(prompts, queries, work / "tokenizer", ScratchConfig())
        if "scratch" not in args.skip:
            n = args.scratch_examples
            p, q, y = prompts[:n], queries[:n], labels[:n]

            def make_scratch():
                return scratch_model(tokenizer, p, q, work / "scratch-init", ScratchConfig(), seed=0)[0]

            config = TrainConfig.scratch(max_steps=args.scratch_steps, eval_every=args.scratch_steps,
                                         max_val_examples=64)
            rows.append(run_model("scratch", make_scratch, tokenizer, p, q, y, config, args, work))
        if "medium" not in args.skip:
            from transformers import GPT2Config, GPT2LMHeadModel

            n = args.medium_examples
            p, q, y = prompts[:n], queries[:n], labels[:n]
            medium_config = GPT2Config(vocab_size=50257, n_positions=128, n_layer=24, n_embd=1024, n_head=16,
                                       activation_function="gelu_pytorch_tanh", bos_token_id=tokenizer.bos_token_id,
                                       eos_token_id=tokenizer.eos_token_id)

            def make_medium():
                torch.manual_seed(0)
                return GPT2LMHeadModel(medium_config)

            config = TrainConfig(batch_size=8, lr=1e-3, warmup_steps=4, max_steps=args.medium_steps,
                                 eval_every=args.medium_steps, max_val_examples=16, weight_decay=0.01)
            rows.append(run_model("gpt2-medium size", make_medium, tokenizer, p, q, y, config, args, work))
        sweep_rows = [] if "sweep" in args.skip else sweep(tokenizer, prompts[:args.sweep_examples],
                                                           queries[:args.sweep_examples], args.repeats)
    print(f"\nfp32 vs bf16 autocast on this CPU ({time.perf_counter() - started:.0f} s in all)")
    print("| model | params | train ex/s fp32 -> bf16 (x) | score ex/s fp32 -> bf16 (x) | Spearman | max rel diff "
          "| changed ll_split / _len / _reverse |")
    print("|---|---:|---|---|---:|---:|---|")
    for row in rows:
        changed = " / ".join(str(row["changed"][c]) for c in CONFIGS)
        print(f"| {row['model']} | {row['parameters'] / 1e6:.1f}M | {row['train_ex_per_s_fp32']:.1f} -> "
              f"{row['train_ex_per_s_bf16']:.1f} ({row['train_ratio']:.2f}x) | {row['score_ex_per_s_fp32']:.1f} -> "
              f"{row['score_ex_per_s_bf16']:.1f} ({row['score_ratio']:.2f}x) | {row['spearman']:.5f} | "
              f"{row['max_rel_diff']:.2e} | {changed} of {row['n']} |")
    if sweep_rows:
        print(f"\nscoring speed-up of bf16 by model size (auto picks bf16 from {CPU_BF16_MIN_PARAMETERS / 1e6:.0f}M):")
        for row in sweep_rows:
            print(f"  {row['layers']:>2} x {row['width']:<4} {row['parameters'] / 1e6:6.1f}M  {row['ratio']:.2f}x")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "dtype.json").write_text(json.dumps({"models": rows, "sweep": sweep_rows}, indent=1))


if __name__ == "__main__":
    main()
