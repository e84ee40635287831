"""``lsplits difficulty`` on real data: SNLI dev and BoolQ dev re-split by the scratch LM, MiniLM-L6 as task model.

Usage (from the repository root; runs one dataset after the other):

    PYTHONPATH=$PWD HF_HUB_OFFLINE=1 nice python benchmarks/difficulty.py [--datasets snli boolq] [--out DIR]

For each dataset: ``lsplits build`` with the scratch LM (3 folds, ``--build-steps`` steps per fold) into
the configs random, ll_split, ll_split_len and ll_split_reverse, then ``lsplits difficulty`` with the
offline MiniLM-L6 on those four configs. It prints the difficulty table (accuracy with 95% intervals,
relative error increase against random) and the wall time of each stage. As the baseline of the
speed figure it counts, on the tokenised train split of ``random``, the tokens an epoch pads to with
length-grouped batches against batches in shuffled order (what the training loop saves).

Settings chosen so one dataset fits in 30 minutes on a quiet 2-core CPU (see README "Difficulty"):

- SNLI dev (9,842 pairs after the standard filter): eval 2,000 (train 7,842, validation 1,000,
  test 1,000), inputs (premise, hypothesis) cut at 64 tokens, 1 epoch.
- BoolQ dev (3,270): the paper's eval proportion (40%: train 1,962, validation 654, test 654),
  inputs (question, passage) cut at 128 tokens (the passage is cut), 1 epoch.

The data comes from ``../shared/data`` (the development machine's real samples), never from the tests.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
from data_paths import data_argument

from lsplits.cli.parser import main as lsplits

REPO = Path(__file__).resolve().parents[1]
CONFIGS = ("random", "ll_split", "ll_split_len", "ll_split_reverse")
SETTINGS = {
    "snli": {"file": "snli/snli_1.0_dev.jsonl", "eval_size": "2000", "max_length": 64, "epochs": 1},
    "boolq": {"file": "boolq/boolq_dev.jsonl", "eval_size": "0.4", "max_length": 128, "epochs": 1},
}


def padding_ratio(folder: Path, dataset: str, max_length: int, batch_size: int = 32) -> tuple[int, int, int]:
    """Tokens of one epoch of ``random``'s train split: real, padded length-grouped, padded shuffled."""
    from transformers import AutoTokenizer

    from lsplits.building.dataset import open_dataset
    from lsplits.difficulty.run import default_model_path
    from lsplits.difficulty.tasks import task_kind
    from lsplits.lm.finetune import length_grouped_batches

    built = open_dataset(str(folder))
    train = built.load("random")["train"]
    kind = task_kind(built.record.task, train.columns)
    tokenizer = AutoTokenizer.from_pretrained(default_model_path())
    columns = list(zip(*kind.input_texts(train)))
    lengths = np.array([len(ids) for ids in tokenizer(*[list(c) for c in columns], truncation=True,
                                                      max_length=max_length)["input_ids"]])

    def padded(batches: list[np.ndarray]) -> int:
        return int(sum(lengths[b].max() * len(b) for b in batches))

    rng = np.random.default_rng(0)
    grouped = length_grouped_batches(lengths.tolist(), batch_size, rng)
    order = np.random.default_rng(0).permutation(len(lengths))
    shuffled = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    return int(lengths.sum()), padded(grouped), padded(shuffled)


def run(dataset: str, out: Path, data_dir: Path, build_steps: int, max_train_examples: int | None) -> dict:
    settings = SETTINGS[dataset]
    built, report = out / f"{dataset}-likelihood", out / f"{dataset}-difficulty"
    started = time.perf_counter()
    if not (built / "lsplits.json").is_file():
        code = lsplits(["build", dataset, "--data-files", str(data_dir / settings["file"]), "--lm", "scratch",
                        "--max-steps", str(build_steps), "--configs", *CONFIGS, "--eval-size", settings["eval_size"],
                        "--out", str(built), "--cache-dir", str(out / "cache"), "--no-progress"])
        assert code == 0, f"lsplits build {dataset} failed"
    build_s = time.perf_counter() - started
    tokens, grouped, shuffled = padding_ratio(built, dataset, settings["max_length"])
    started = time.perf_counter()
    argv = ["difficulty", str(built), "--configs", *CONFIGS, "--epochs", str(settings["epochs"]),
            "--max-length", str(settings["max_length"]), "--out", str(report), "--no-progress"]
    if max_train_examples:
        argv += ["--max-train-examples", str(max_train_examples)]
    assert lsplits(argv) == 0, f"lsplits difficulty {dataset} failed"
    difficulty_s = time.perf_counter() - started
    rows = json.loads((report / "difficulty.json").read_text())
    runs = sorted((report / "runs").glob("*/*/result.json"))
    train_s = sum(json.loads(p.read_text())["train_seconds"] for p in runs)
    return {"dataset": dataset, "rows": rows, "build_s": build_s, "difficulty_s": difficulty_s, "train_s": train_s,
            "tokens": tokens, "grouped": grouped, "shuffled": shuffled, "report": report}


def print_result(result: dict) -> None:
    from lsplits.difficulty.report import accuracy_cell, rei_cell

    print(f"\n== {result['dataset']}: MiniLM-L6 ==")
    print("| config | n | accuracy (95% CI) | error vs random (95% CI) | direction |")
    print("|---|---:|---:|---:|---|")
    for row in result["rows"]:
        print(f"| {row['config']} | {row['n']} | {accuracy_cell(row)} | {rei_cell(row)} | {row['direction'] or '-'} |")
    print(f"wall time: build {result['build_s'] / 60:.1f} min, difficulty {result['difficulty_s'] / 60:.1f} min "
          f"(training and prediction {result['train_s'] / 60:.1f} min), total "
          f"{(result['build_s'] + result['difficulty_s']) / 60:.1f} min")
    print(f"padding baseline (one epoch of random/train): {result['tokens']:,} real tokens; length-grouped batches "
          f"pad to {result['grouped']:,}, shuffled batches to {result['shuffled']:,} "
          f"({result['shuffled'] / result['grouped']:.2f}x more)")
    print(f"report: {result['report'] / 'difficulty.md'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", choices=sorted(SETTINGS), default=["snli", "boolq"])
    parser.add_argument("--out", type=Path, default=Path("out/bench-difficulty"))
    parser.add_argument("--build-steps", type=int, default=200, help="scratch-LM steps per fold (default 200)")
    parser.add_argument("--max-train-examples", type=int, default=None, help="cap on train examples per config")
    data_argument(parser, "--data-dir", ".", "folder of the real samples (snli/, boolq/, spider/)")
    args = parser.parse_args()
    for dataset in args.datasets:
        if not (args.data_dir / SETTINGS[dataset]["file"]).is_file():
            raise SystemExit(f"{args.data_dir / SETTINGS[dataset]['file']}: not found (the real samples of ../shared/data)")
    results = []
    for dataset in args.datasets:
        results.append(run(dataset, args.out, args.data_dir, args.build_steps, args.max_train_examples))
        print_result(results[-1])
    total = sum(r["build_s"] + r["difficulty_s"] for r in results)
    print(f"\nall datasets: {total / 60:.1f} min ({math.ceil(total)} s)")


if __name__ == "__main__":
    main()
