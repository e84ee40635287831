"""Build a Likelihood-Split dataset: score every example, split per config, export in Hub layout.

Flow: :func:`~lsplits.data.load_examples` -> :func:`build_splits` (scores via
:mod:`lsplits.lm.pipeline`, partitions via :mod:`lsplits.configs`) -> :func:`export_dataset`
(parquet per config and split, dataset card, plots) -> optional push.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .card import CardInfo, render_card
from .configs import DEFAULT_CONFIGS, GENERIC_CONFIGS, SplitConfig, SplitInputs, resolve_configs
from .data import ID_FIELD, LoadedData
from .errors import ConfigError
from .export import unify_types
from .splits.engine import Partition, check_label_quotas, resolve_eval_size, split_eval
from .tasks import Setting, Task
from .text import word_count

logger = logging.getLogger(__name__)

SCORE_COLUMNS = ("ll_score", "ll_tokens", "length")


@dataclass
class DatasetSpec:
    """Everything dataset-specific about a build: the task, its configs, hooks and card metadata."""

    task: Task
    card: CardInfo
    configs: Sequence[str] = DEFAULT_CONFIGS
    extra_configs: Mapping[str, SplitConfig] = field(default_factory=dict)
    extras: Callable[[list[dict[str, Any]]], dict[str, Any]] | None = None
    partition_hook: Callable[[Partition, SplitInputs], Partition] | None = None
    paper_sizes: tuple[int, int, int] | None = None  # (train, validation, test) on the full data
    method_note: str = ""
    max_steps: int | None = None  # the paper's fine-tuning steps for this dataset (pretrained LMs only)
    categorical_columns: Sequence[str] = ()  # extra columns whose distribution the card reports (Spider: hardness)
    # more per-config numbers for the card and `lsplits analyze` (Spider: atom/compound divergence)
    extra_statistics: Callable[[BuildResult], dict[str, dict[str, float]]] | None = None
    # facts about one build for the card's method section and lsplits.json (Spider: unparsable queries)
    build_notes: Callable[[BuildResult], dict[str, Any]] | None = None

    @property
    def available_configs(self) -> dict[str, SplitConfig]:
        """Generic configs plus this dataset's own."""
        return {**GENERIC_CONFIGS, **self.extra_configs}

    def default_eval_size(self, n: int) -> int:
        """Eval size in the paper's proportion (validation + test over all), or 20% without one."""
        if self.paper_sizes:
            train, validation, test = self.paper_sizes
            return max(2, round(n * (validation + test) / (train + validation + test)))
        return max(2, round(0.2 * n))


@dataclass
class BuildResult:
    """The built configs (config -> split -> DataFrame), their partitions, and skipped configs with reasons."""

    frames: dict[str, dict[str, pd.DataFrame]]
    partitions: dict[str, Partition]
    inputs: SplitInputs
    skipped: dict[str, str]
    eval_size: int


MIN_EVAL_SIZE = 2
"""Validation and test get half of eval each, so eval needs at least 2 examples."""


def checked_eval_size(eval_size: int | float | None, n: int, *, default: int) -> int:
    """``--eval-size`` (or ``default`` when None) as a count; ConfigError, naming the option and the
    bounds, when train, validation or test would be empty."""
    option = f"--eval-size {eval_size}" if eval_size is not None else f"the default eval size ({default})"
    if n < MIN_EVAL_SIZE + 1:
        raise ConfigError(f"{option}: the dataset has {n} example(s); train, validation and test need at least "
                          f"{MIN_EVAL_SIZE + 1}")
    bounds = f"give between {MIN_EVAL_SIZE} and {n - 1} examples (or a fraction that gives as many)"
    try:
        size = resolve_eval_size(eval_size if eval_size is not None else default, n)
    except ConfigError as exc:
        raise ConfigError(f"{option}: {exc}; {bounds}") from None
    if size < MIN_EVAL_SIZE:
        raise ConfigError(f"{option} gives {size} eval example of {n}, which leaves the test split empty "
                          f"(validation and test get half each); the minimum is {MIN_EVAL_SIZE}")
    return size


def score_records(examples: Sequence[Mapping[str, Any]], task: Task, setting: Setting) -> list[dict[str, str]]:
    """The {id, prompt, query} records the LM scores for ``setting``."""
    return [{"id": ex[ID_FIELD], "prompt": task.prompt_text(ex, setting), "query": task.query_text(ex, setting)}
            for ex in examples]


@dataclass
class BuildPlan:
    """What a build will compute: its configs, the ones skipped (with reasons), the scoring settings
    ("ft"/"pt") they need, and the training config (the dataset's paper steps for pretrained LMs)."""

    configs: list[SplitConfig]
    skipped: dict[str, str]
    settings: list[str]
    train_config: Any


def plan_build(spec: DatasetSpec, *, lm: str, configs: Sequence[str] | None = None, train_config: Any = None,
               seed: int = 0) -> BuildPlan:
    """Decide configs, skipped configs, scoring settings and training config; ConfigError if nothing is left."""
    chosen = resolve_configs(list(configs or spec.configs), spec.available_configs)
    skipped: dict[str, str] = {}
    if lm == "scratch":
        for config in chosen:
            if config.needs == "pt":
                skipped[config.name] = "needs a pretrained LM for prompting; --lm scratch has none"
        chosen = [c for c in chosen if c.name not in skipped]
    if not chosen:
        raise ConfigError("no config left to build: " + "; ".join(f"{k} {v}" for k, v in skipped.items()))
    if train_config is None and spec.max_steps and lm != "scratch":
        from .lm.finetune import TrainConfig

        train_config = TrainConfig(max_steps=spec.max_steps, seed=seed)
    settings = list(dict.fromkeys(c.needs or "ft" for c in chosen))
    return BuildPlan(configs=chosen, skipped=skipped, settings=settings, train_config=train_config)


def build_splits(spec: DatasetSpec, loaded: LoadedData, *, lm: str, configs: Sequence[str] | None = None,
                 eval_size: int | float | None = None, seed: int = 0, folds: int = 3,
                 cache_dir: str | Path | None = None, train_config: Any = None,
                 progress: bool = True, compile: bool = False) -> BuildResult:
    """Score the examples as the requested configs need and compute every config's split."""
    from .lm.pipeline import check_lm, compute_scores

    examples = loaded.examples
    task = spec.task
    plan = plan_build(spec, lm=lm, configs=configs, train_config=train_config, seed=seed)
    chosen, skipped, train_config = plan.configs, plan.skipped, plan.train_config
    n = len(examples)
    size = checked_eval_size(eval_size, n, default=spec.default_eval_size(n))
    labels = None
    if task.label_field:
        labels = np.asarray([str(ex[task.label_field]) for ex in examples])
    check_label_quotas(labels, size, field=task.label_field)  # cheap checks before any scoring
    for kind in plan.settings:
        check_lm(lm, score_records(examples, task, kind))
    base = unify_types(pd.DataFrame(examples), loaded.source)  # one type per field, decided before splitting
    inputs = SplitInputs(ids=[ex[ID_FIELD] for ex in examples],
                         lengths=np.asarray([word_count(task.length_text(ex)) for ex in examples]),
                         labels=labels, extras=spec.extras(examples) if spec.extras else {})
    token_counts: dict[str, np.ndarray] = {}
    for kind in plan.settings:
        logger.info("scoring %d examples (%s setting) with %s", n, kind, lm)
        scores = compute_scores(score_records(examples, task, kind), lm=lm, setting=kind, folds=folds,
                                seed=seed, cache_dir=cache_dir, train_config=train_config, progress=progress,
                                compile=compile)
        inputs.scores[kind] = scores["ll_score"].to_numpy(dtype=np.float64)
        token_counts[kind] = scores["ll_tokens"].to_numpy(dtype=np.int64)
    frames: dict[str, dict[str, pd.DataFrame]] = {}
    partitions: dict[str, Partition] = {}
    for config in chosen:
        partition = config.make(inputs, size, seed)
        if spec.partition_hook is not None:
            partition = spec.partition_hook(partition, inputs)
        partitions[config.name] = partition
        kind = config.needs or ("ft" if "ft" in inputs.scores else next(iter(inputs.scores)))
        table = base.assign(ll_score=inputs.scores[kind], ll_tokens=token_counts[kind], length=inputs.lengths)
        validation, test = split_eval(partition.eval, seed=seed)
        frames[config.name] = {"train": table.iloc[np.sort(partition.train)],
                               "validation": table.iloc[validation], "test": table.iloc[test]}
    for name, reason in skipped.items():
        logger.warning("skipping config %s: %s", name, reason)
    return BuildResult(frames=frames, partitions=partitions, inputs=inputs, skipped=skipped, eval_size=size)


def method_text(spec: DatasetSpec, result: BuildResult, *, lm: str, folds: int, seed: int) -> str:
    """A few lines on how this dataset was built (LM, folds, eval size, seed)."""
    lm_text = "a small GPT-2-style LM trained from scratch on the data (offline demo setting)" \
        if lm == "scratch" else f"`{lm}`"
    lines = [
        "Likelihood Splits (Godbole & Jia, 2023) re-split a dataset so that the examples a language model "
        "finds least likely form the evaluation set: the model must generalise to the long tail.",
        "",
        f"Each example was scored by {lm_text}: the score is the sum of log-probabilities of the query "
        f"tokens given the prompt; in the fine-tuned setting the data is cut into {folds} folds and each fold "
        "is scored by a model fine-tuned on the other folds, so no example is scored by a model trained on it.",
        f"Eval size: {result.eval_size:,} examples, halved into validation and test (seed {seed}).",
    ]
    if spec.method_note:
        lines += ["", spec.method_note]
    notes = spec.build_notes(result) if spec.build_notes is not None else {}
    if notes:  # a list value reads as its length and its items: "unparsable SQL queries: 1 (train-7)"
        lines += [""] + [f"- {key}: {len(value)} ({', '.join(map(str, value))})" if isinstance(value, list) and value
                         else f"- {key}: {len(value) if isinstance(value, list) else value}"
                         for key, value in notes.items()]
    if result.skipped:
        lines += ["", "Not built: " + "; ".join(f"`{k}` ({v})" for k, v in result.skipped.items()) + "."]
    return "\n".join(lines)


def export_dataset(spec: DatasetSpec, result: BuildResult, out: str | Path, *, lm: str, folds: int, seed: int,
                   repo_hint: str | None = None, progress: bool = False) -> Path:
    """Write the Hub-layout folder with card, statistics, plots and ``lsplits.json``; returns the folder."""
    from . import dataset_report
    from .export import write_hub_folder
    from .io import check_output

    check_output(out, expect="folder")  # before the statistics and plots
    descriptions = {name: spec.available_configs[name].description for name in result.frames}
    default = next(iter(result.frames))
    task = spec.task
    stats = dataset_report.config_statistics(result.frames, query_field=task.query_field,
                                             label_field=task.label_field,
                                             categorical_columns=spec.categorical_columns, progress=progress)
    statistics = dataset_report.statistics_markdown(stats)
    extra_stats = spec.extra_statistics(result) if spec.extra_statistics is not None else {}
    if extra_stats:
        statistics = dataset_report.extra_statistics_markdown(extra_stats) + "\n\n" + statistics
    with tempfile.TemporaryDirectory() as tmp:
        written = dataset_report.config_plots(result.frames, stats, Path(tmp))
        extra = {repo_path: local for _, repo_path, local in written}
        extra[dataset_report.METADATA_FILE] = dataset_report.write_metadata(
            Path(tmp) / dataset_report.METADATA_FILE, task=task.name, query_field=task.query_field,
            label_field=task.label_field, categorical_columns=list(spec.categorical_columns), lm=lm, folds=folds,
            seed=seed, eval_size=result.eval_size, configs=list(result.frames), skipped=result.skipped,
            extra_statistics=extra_stats,
            notes=spec.build_notes(result) if spec.build_notes is not None else {})

        def card(data_files: dict[str, dict[str, str]]) -> str:  # the card lists the content-named files
            return render_card(spec.card, result.frames, descriptions, default=default,
                               repo_hint=repo_hint or f"your-org/{Path(out).name}",
                               method=method_text(spec, result, lm=lm, folds=folds, seed=seed),
                               data_files=data_files, statistics=statistics,
                               plots={caption: path for caption, path, _ in written})

        return write_hub_folder(out, result.frames, card, extra)
