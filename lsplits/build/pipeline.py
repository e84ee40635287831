"""Build a Likelihood-Split dataset: score every example, split per config, export in Hub layout.

Flow: :func:`~lsplits.data.loading.load_examples` -> :func:`build_splits` (scores via
:mod:`lsplits.lm.pipeline`, then :func:`split_configs`: each config's strategy from
:mod:`lsplits.build.configs` through the dataset's :class:`~lsplits.splits.strategy.SplitPolicy`) -> a
:class:`BuildResult` (one base table plus index arrays per config and split) -> :func:`export_dataset`
(frames materialised one config at a time, written in Hub layout by :mod:`lsplits.build.export`) ->
optional push.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lsplits.build.card import CardInfo, render_card
from lsplits.build.configs import DEFAULT_CONFIGS, available_configs, resolve_configs
from lsplits.build.export import unify_types
from lsplits.data.loading import ID_FIELD, LoadedData
from lsplits.data.tasks import Setting, Task
from lsplits.data.text import word_count
from lsplits.errors import ConfigError
from lsplits.splits.engine import Partition, check_label_quotas, resolve_eval_size, split_eval
from lsplits.splits.strategy import PLAIN_POLICY, SplitInputs, SplitPolicy, SplitStrategy
from lsplits.stages import stage

logger = logging.getLogger(__name__)


@dataclass
class DatasetSpec:
    """Everything dataset-specific about a build: the task, its configs, split policy and card metadata."""

    task: Task
    card: CardInfo
    configs: Sequence[str] = DEFAULT_CONFIGS
    policy: SplitPolicy = PLAIN_POLICY  # extra inputs, a constraint on every partition, statistics, notes
    paper_sizes: tuple[int, int, int] | None = None  # (train, validation, test) on the full data
    method_note: str = ""
    max_steps: int | None = None  # the paper's fine-tuning steps for this dataset (pretrained LMs only)
    categorical_columns: Sequence[str] = ()  # extra columns whose distribution the card reports (Spider: hardness)

    @property
    def available_configs(self) -> dict[str, SplitStrategy]:
        """The configs this dataset's split policy supports."""
        return available_configs(self.policy)

    def default_eval_size(self, n: int) -> int:
        """Eval size in the paper's proportion (validation + test over all), or 20% without one."""
        if self.paper_sizes:
            train, validation, test = self.paper_sizes
            return max(2, round(n * (validation + test) / (train + validation + test)))
        return max(2, round(0.2 * n))


@dataclass(frozen=True)
class BuiltConfig:
    """One built config: its strategy, the LM setting whose scores fill ``ll_score``, the partition,
    and the rows of each split (positions in :attr:`BuildResult.table`)."""

    strategy: SplitStrategy
    setting: str
    partition: Partition
    indices: dict[str, np.ndarray]


@dataclass
class BuildResult:
    """A build: one base table of every example plus index arrays per config; frames only on demand.

    ``table`` holds every example's fields (one type per field); ``scores`` the ``ll_score`` and
    ``ll_tokens`` arrays of each LM setting; ``configs`` the built configs by name.
    """

    table: pd.DataFrame
    scores: dict[str, tuple[np.ndarray, np.ndarray]]
    configs: dict[str, BuiltConfig]
    inputs: SplitInputs
    skipped: dict[str, str]
    eval_size: int

    @property
    def partitions(self) -> dict[str, Partition]:
        """config -> its train/eval partition."""
        return {name: built.partition for name, built in self.configs.items()}

    def config_table(self, name: str) -> pd.DataFrame:
        """Every example with the config's ``ll_score``, ``ll_tokens`` and ``length`` columns (the exported columns)."""
        scores, tokens = self.scores[self.configs[name].setting]
        return self.table.assign(ll_score=scores, ll_tokens=tokens, length=self.inputs.lengths)

    def frames(self) -> ConfigFrames:
        """config -> split -> DataFrame, each config materialised when it is read."""
        return ConfigFrames(self)


class ConfigFrames(Mapping[str, dict[str, pd.DataFrame]]):
    """The splits of a build's configs as DataFrames, built from the base table one config at a time."""

    def __init__(self, result: BuildResult) -> None:
        self._result = result

    def __getitem__(self, name: str) -> dict[str, pd.DataFrame]:
        table = self._result.config_table(name)
        return {split: table.iloc[rows] for split, rows in self._result.configs[name].indices.items()}

    def __iter__(self) -> Iterator[str]:
        return iter(self._result.configs)

    def __len__(self) -> int:
        return len(self._result.configs)


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
    """What a build will compute: its configs (name -> strategy), the ones skipped (with reasons), and
    one settled LM run (:class:`~lsplits.lm.plan.RunPlan`) per scoring setting the configs need."""

    configs: dict[str, SplitStrategy]
    skipped: dict[str, str]
    runs: dict[str, Any]

    @property
    def settings(self) -> list[str]:
        """The scoring settings ("ft", "pt") in the order the configs first need them."""
        return list(self.runs)


def plan_build(spec: DatasetSpec, *, lm: str, configs: Sequence[str] | None = None, folds: int = 3, seed: int = 0,
               train_config: Any = None, max_steps: int | None = None) -> BuildPlan:
    """Decide configs, skipped configs and the LM run of each setting; ConfigError if nothing is left.

    A config whose setting the LM cannot score (prompting with the scratch LM) is skipped, not failed;
    pretrained LMs train for the dataset's paper steps unless ``train_config`` / ``max_steps`` say otherwise.
    """
    from lsplits.lm.plan import PRETRAINED_ONLY, RunPlan, runs_with

    chosen = resolve_configs(list(configs or spec.configs), spec.available_configs)
    skipped = {name: PRETRAINED_ONLY for name, strategy in chosen.items()
               if not runs_with(lm, strategy.setting or "ft")}
    chosen = {name: strategy for name, strategy in chosen.items() if name not in skipped}
    if not chosen:
        raise ConfigError("no config left to build: " + "; ".join(f"{k} {v}" for k, v in skipped.items()))
    runs = {setting: RunPlan.make(lm, setting, folds=folds, seed=seed, train_config=train_config,
                                  max_steps=max_steps, paper_steps=spec.max_steps)
            for setting in dict.fromkeys(s.setting or "ft" for s in chosen.values())}
    return BuildPlan(configs=chosen, skipped=skipped, runs=runs)


def build_splits(spec: DatasetSpec, loaded: LoadedData, *, lm: str, configs: Sequence[str] | None = None,
                 eval_size: int | float | None = None, seed: int = 0, folds: int = 3,
                 cache_dir: str | Path | None = None, train_config: Any = None, max_steps: int | None = None,
                 progress: bool = True, compile: bool = False) -> BuildResult:
    """Score the examples as the requested configs need and compute every config's split."""
    from lsplits.lm.pipeline import check_lm, compute_scores

    examples = loaded.examples
    task = spec.task
    plan = plan_build(spec, lm=lm, configs=configs, folds=folds, seed=seed, train_config=train_config,
                      max_steps=max_steps)
    n = len(examples)
    size = checked_eval_size(eval_size, n, default=spec.default_eval_size(n))
    with stage("split"):
        inputs = split_inputs(spec, examples)
    check_label_quotas(inputs.labels, size, field=task.label_field)  # cheap checks before any scoring
    for kind in plan.settings:
        check_lm(lm, score_records(examples, task, kind))
    with stage("type unification"):
        base = unify_types(pd.DataFrame(examples), loaded.source)  # one type per field, decided before splitting
    scores: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for kind, run in plan.runs.items():
        logger.info("scoring %d examples (%s setting) with %s", n, kind, lm)
        frame = compute_scores(score_records(examples, task, kind), plan=run, cache_dir=cache_dir,
                               progress=progress, compile=compile)
        scores[kind] = (frame["ll_score"].to_numpy(dtype=np.float64), frame["ll_tokens"].to_numpy(dtype=np.int64))
    with stage("split"):
        result = split_configs(spec.policy, plan.configs, base, inputs, scores, eval_size=size, seed=seed,
                               skipped=plan.skipped)
    for name, reason in plan.skipped.items():
        logger.warning("skipping config %s: %s", name, reason)
    return result


def split_inputs(spec: DatasetSpec, examples: Sequence[Mapping[str, Any]]) -> SplitInputs:
    """What the split strategies read: ids, query lengths (NLTK words), labels and the policy's extras."""
    task = spec.task
    labels = [str(ex[task.label_field]) for ex in examples] if task.label_field else None
    return spec.policy.inputs(examples, ids=[ex[ID_FIELD] for ex in examples],
                              lengths=[word_count(task.length_text(ex)) for ex in examples], labels=labels)


def split_configs(policy: SplitPolicy, configs: Mapping[str, SplitStrategy], table: pd.DataFrame,
                  inputs: SplitInputs, scores: Mapping[str, tuple[np.ndarray, np.ndarray]], *, eval_size: int,
                  seed: int = 0, skipped: Mapping[str, str] | None = None) -> BuildResult:
    """Split scored examples with each config's strategy (through ``policy``): a pure function of its inputs.

    ``scores`` maps each LM setting to its (``ll_score``, ``ll_tokens``) arrays; ``inputs.scores`` is
    filled from it. Train rows are listed in dataset order; validation and test are the seeded halves
    of eval (:func:`~lsplits.splits.engine.split_eval`).
    """
    inputs.scores.update({kind: values for kind, (values, _) in scores.items()})
    built: dict[str, BuiltConfig] = {}
    for name, strategy in configs.items():
        partition = policy.split(strategy, inputs, eval_size, seed)
        setting = strategy.setting or ("ft" if "ft" in scores else next(iter(scores)))
        validation, test = split_eval(partition.eval, seed=seed)
        built[name] = BuiltConfig(strategy=strategy, setting=setting, partition=partition,
                                  indices={"train": np.sort(partition.train), "validation": validation, "test": test})
    return BuildResult(table=table, scores=dict(scores), configs=built, inputs=inputs, skipped=dict(skipped or {}),
                       eval_size=eval_size)


def split_scored(task: Task, examples: Sequence[Mapping[str, Any]], scores: Mapping[str, tuple[np.ndarray, np.ndarray]],
                 *, configs: Sequence[str], eval_size: int | float, seed: int = 0,
                 policy: SplitPolicy = PLAIN_POLICY) -> BuildResult:
    """Split examples that are already scored with the named configs, exactly as ``lsplits build`` does after
    scoring (:func:`split_inputs`, then :func:`split_configs`); for callers that score themselves (the Space).

    ``scores`` maps each LM setting to its (``ll_score``, ``ll_tokens``) arrays in example order;
    ``eval_size`` is a count or a fraction of the examples (at least one example stays in train).
    """
    spec = DatasetSpec(task=task, card=CardInfo(pretty_name=task.name), policy=policy)
    chosen = resolve_configs(list(configs), spec.available_configs)
    size = resolve_eval_size(eval_size, len(examples))
    return split_configs(policy, chosen, pd.DataFrame(list(examples)), split_inputs(spec, examples), scores,
                         eval_size=size, seed=seed)


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
    notes = spec.policy.notes_of(result.inputs)
    if notes:  # a list value reads as its length and its items: "unparsable SQL queries: 1 (train-7)"
        lines += [""] + [f"- {key}: {len(value)} ({', '.join(map(str, value))})" if isinstance(value, list) and value
                         else f"- {key}: {len(value) if isinstance(value, list) else value}"
                         for key, value in notes.items()]
    if result.skipped:
        lines += ["", "Not built: " + "; ".join(f"`{k}` ({v})" for k, v in result.skipped.items()) + "."]
    return "\n".join(lines)


def build_metadata(spec: DatasetSpec, result: BuildResult, *, lm: str, folds: int, seed: int,
                   extra_statistics: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """The build's settings as ``lsplits.json`` records them (``lsplits analyze`` and the Space read them back)."""
    task = spec.task
    return dict(task=task.name, query_field=task.query_field, label_field=task.label_field,
                categorical_columns=list(spec.categorical_columns), lm=lm, folds=folds, seed=seed,
                eval_size=result.eval_size, configs=list(result.configs), skipped=result.skipped,
                extra_statistics=extra_statistics, notes=spec.policy.notes_of(result.inputs),
                split_policy=spec.policy.name,
                strategies={name: built.strategy.record() for name, built in result.configs.items()})


def export_dataset(spec: DatasetSpec, result: BuildResult, out: str | Path, *, lm: str, folds: int, seed: int,
                   repo_hint: str | None = None, progress: bool = False) -> Path:
    """Write the Hub-layout folder with card, statistics, plots and ``lsplits.json``; returns the folder.

    The configs' frames are materialised from the base table one config at a time.
    """
    from lsplits.build import report as dataset_report
    from lsplits.build.export import write_hub_folder
    from lsplits.io import check_output

    check_output(out, expect="folder")  # before the statistics and plots
    frames = result.frames()
    task = spec.task
    descriptions = {name: built.strategy.description for name, built in result.configs.items()}
    strategies = {name: repr(built.strategy) for name, built in result.configs.items()}
    with tempfile.TemporaryDirectory() as tmp:
        with stage("card and plots"):
            stats = dataset_report.config_statistics(frames, query_field=task.query_field,
                                                     label_field=task.label_field,
                                                     categorical_columns=spec.categorical_columns,
                                                     progress=progress, examples=result.table)
            statistics = dataset_report.statistics_markdown(stats)
            extra_stats = spec.policy.statistics_of(result.inputs, result.partitions)
            if extra_stats:
                statistics = dataset_report.extra_statistics_markdown(extra_stats) + "\n\n" + statistics
            written = dataset_report.config_plots(frames, stats, Path(tmp))

        def card(folder) -> str:  # the card lists the content-named files
            return render_card(spec.card, folder, descriptions, repo_hint=repo_hint or f"your-org/{Path(out).name}",
                               method=method_text(spec, result, lm=lm, folds=folds, seed=seed),
                               statistics=statistics, plots={caption: path for caption, path, _ in written},
                               strategies=strategies)

        with stage("export"):
            return write_hub_folder(out, frames, card, {repo_path: local for _, repo_path, local in written},
                                    metadata=build_metadata(spec, result, lm=lm, folds=folds, seed=seed,
                                                            extra_statistics=extra_stats),
                                    examples=result.config_table(next(iter(result.configs))))
