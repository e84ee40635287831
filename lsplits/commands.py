"""Implementations of the core CLI subcommands (score, build, push, demo, analyze).

Each takes the parsed ``argparse.Namespace`` and returns an exit code; errors are raised as
:class:`~lsplits.errors.LsplitsError` and printed by :func:`lsplits.cli.main` as one line.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
from pathlib import Path

from .build import DatasetSpec, build_splits, export_dataset, score_records
from .card import CardInfo
from .data import LoadedData, load_examples
from .errors import ConfigError
from .tasks import generic_task

logger = logging.getLogger(__name__)

BUILDER_NAMES = ("snli", "boolq", "spider")


def resolve_dataset(args: argparse.Namespace) -> tuple[DatasetSpec, LoadedData]:
    """The dataset spec and loaded examples for DATA / --data-files and the generic-task flags."""
    if args.data in BUILDER_NAMES:
        builder = importlib.import_module(f"builders.{args.data}")
        return builder.SPEC, builder.load(data_files=args.data_files)
    if not args.query_field:
        raise ConfigError("generic datasets need --query-field (the text the LM scores)")
    task = generic_task(args.query_field, args.prompt_template, args.label_field)
    name = Path(args.data_files[0]).stem if args.data_files else str(args.data)
    spec = DatasetSpec(task=task, card=CardInfo(pretty_name=f"{name} (Likelihood Splits)"),
                       configs=("ll_split", "ll_split_len", "ll_split_pt", "ll_split_pt_len",
                                "ll_split_reverse", "ll_split_len_reverse", "random"))
    return spec, load_examples(task, data=args.data, data_files=args.data_files)


def train_config_from(args: argparse.Namespace):
    """A TrainConfig with --max-steps applied (scratch or fine-tuning defaults), or None for the defaults."""
    if getattr(args, "max_steps", None) is None:
        return None
    from .lm.finetune import TrainConfig

    if args.lm == "scratch":
        return TrainConfig.scratch(max_steps=args.max_steps)
    return TrainConfig(max_steps=args.max_steps)


def score(args: argparse.Namespace) -> int:
    """``lsplits score``: write per-example scores to a parquet file."""
    from .io import atomic_write_parquet
    from .lm.pipeline import compute_scores

    spec, loaded = resolve_dataset(args)
    if args.setting == "pt" and args.lm == "scratch":
        raise ConfigError("--setting pt needs a pretrained LM (--lm gpt2 or a local folder), not scratch")
    frame = compute_scores(score_records(loaded.examples, spec.task, args.setting), lm=args.lm,
                           setting=args.setting, folds=args.folds, seed=args.seed, cache_dir=args.cache_dir,
                           train_config=train_config_from(args), progress=not args.no_progress)
    if _is_main_process():
        atomic_write_parquet(args.out, frame)
        logger.info("wrote %d scores to %s", len(frame), args.out)
    return 0


def _is_main_process() -> bool:
    """False on the non-zero ranks of an ``accelerate launch`` / ``torchrun`` run (they only score)."""
    return os.environ.get("RANK", "0") == "0"


def build(args: argparse.Namespace) -> int:
    """``lsplits build``: score, split, export and optionally push."""
    spec, loaded = resolve_dataset(args)
    result = build_splits(spec, loaded, lm=args.lm, configs=args.configs, eval_size=args.eval_size,
                          seed=args.seed, folds=args.folds, cache_dir=args.cache_dir,
                          train_config=train_config_from(args), progress=not args.no_progress)
    if not _is_main_process():
        return 0
    out = export_dataset(spec, result, args.out, lm=args.lm, folds=args.folds, seed=args.seed,
                         repo_hint=args.push_to_hub)
    for name, reason in result.skipped.items():
        print(f"skipped {name}: {reason}")
    print(f"wrote {len(result.frames)} configs ({', '.join(result.frames)}) to {out}")
    if args.push_to_hub:
        from .hub import push_folder

        url = push_folder(out, args.push_to_hub, repo_type="dataset", private=args.private)
        print(f"pushed to {url}")
    return 0


def push(args: argparse.Namespace) -> int:
    """``lsplits push``: upload a built folder in one commit."""
    from .hub import push_folder

    if not (args.folder / "README.md").exists():
        raise ConfigError(f"{args.folder}: no README.md; is this a folder written by `lsplits build`?")
    print(f"pushed to {push_folder(args.folder, args.repo_id, repo_type='dataset', private=args.private)}")
    return 0


def demo(args: argparse.Namespace) -> int:
    """``lsplits demo``: the offline end-to-end run."""
    from .demo import run_demo

    run_demo(out=args.out, n=args.n, seed=args.seed, cache_dir=args.cache_dir, progress=not args.no_progress)
    return 0


def analyze(args: argparse.Namespace) -> int:
    """``lsplits analyze``: print the statistics of every config in a built folder."""
    from .dataset_report import analyze_folder

    print(analyze_folder(args.folder, configs=args.configs))
    return 0
