"""Build a Likelihood-Split dataset: score every example, split per config, export in Hub layout.

Flow: :func:`~lsplits.data.loading.load_examples` -> :func:`build_splits` (scores via
:mod:`lsplits.lm.pipeline`, then :func:`split_configs`: each config's strategy from
:mod:`lsplits.building.configs` through the dataset's :class:`~lsplits.splits.strategy.SplitPolicy`) -> a
:class:`BuildResult` (one base table plus index arrays per config and split) -> :func:`export_dataset`
(frames materialised one config at a time, written in Hub layout by :mod:`lsplits.building.export`) ->
optional push.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lsplits.building.card import CardInfo, method_text, placeholder_repo, render_card
from lsplits.building.configs import DEFAULT_CONFIGS, available_configs, resolve_configs
from lsplits.building.export import unify_types
from lsplits.building.provenance import input_fingerprint, recorded_settings
from lsplits.building.record import BuildRecord, TaskRecord
from lsplits.building.settings import (
    DEFAULT_EVAL_FRACTION,
    MIN_EVAL_SIZE,
    SMALL_EVAL_HALF,
    BuildSettings,
)
from lsplits.data.loading import ID_FIELD, LoadedData
from lsplits.data.tasks import DEFAULT_SETTING, Setting, Task
from lsplits.data.text import word_count
from lsplits.errors import ConfigError, InvalidOption
from lsplits.runtime.stages import stage
from lsplits.runtime.tempfolders import temporary_folder
from lsplits.splits.engine import Partition, check_label_quotas, resolve_eval_size, split_eval
from lsplits.splits.strategy import PLAIN_POLICY, ConstraintEffect, SplitInputs, SplitPolicy, SplitStrategy

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
        """Eval size in the paper's proportion (validation + test over all), or :data:`DEFAULT_EVAL_FRACTION`."""
        if self.paper_sizes:
            train, validation, test = self.paper_sizes
            return max(MIN_EVAL_SIZE, round(n * (validation + test) / (train + validation + test)))
        return max(MIN_EVAL_SIZE, round(DEFAULT_EVAL_FRACTION * n))


@dataclass(frozen=True)
class BuiltConfig:
    """One built config: its strategy, the LM setting whose scores fill ``ll_score``, the partition,
    the rows of each split (positions in :attr:`BuildResult.table`) and what the policy's constraint did to
    the strategy's partition (None without a constraint)."""

    strategy: SplitStrategy
    setting: str
    partition: Partition
    indices: dict[str, np.ndarray]
    effect: ConstraintEffect | None = None


@dataclass
class BuildResult:
    """A build: one base table of every example plus index arrays per config; frames only on demand.

    ``table`` holds every example's fields (one type per field); ``scores`` the ``ll_score`` and
    ``ll_tokens`` arrays of each LM setting; ``configs`` the built configs by name; ``dtypes`` the
    compute dtype (``fp32`` / ``bf16``) each LM setting's scores were computed in (empty when the
    scores came from elsewhere).
    """

    table: pd.DataFrame
    scores: dict[str, tuple[np.ndarray, np.ndarray]]
    configs: dict[str, BuiltConfig]
    inputs: SplitInputs
    skipped: dict[str, str]
    eval_size: int
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> examples dropped when loading
    runs: dict[str, Any] = field(default_factory=dict)  # setting -> the RunPlan that scored it (empty: scored elsewhere)
    dtypes: dict[str, str] = field(default_factory=dict)  # setting -> the dtype its scores were computed in
    training: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # setting -> where each fold stopped, why
    features: Any = None  # the input's datasets.Features, which every output keeps (None: types from the values)
    input: dict[str, Any] | None = None  # input_fingerprint of the examples as loaded (None: the table's)
    read: list[dict[str, Any]] = field(default_factory=list)  # what was read, source by source (LoadedData.read)

    @property
    def partitions(self) -> dict[str, Partition]:
        """config -> its train/eval partition."""
        return {name: built.partition for name, built in self.configs.items()}

    @property
    def constraint_effects(self) -> dict[str, ConstraintEffect]:
        """config -> what the policy's constraint did to it (configs of a policy without a constraint: none)."""
        return {name: built.effect for name, built in self.configs.items() if built.effect is not None}

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


def checked_eval_size(eval_size: int | float | None, n: int, *, default: int | None = None,
                      option: str = "eval_size") -> int:
    """``eval_size`` (or ``default`` when None) as a count; InvalidOption naming ``option`` (the caller's
    word: ``eval_size``, the CLI's ``--eval-size``, the Space's label) and the bounds, when train, validation or
    test would be empty.

    The one eval-size validator of every path that splits (``lsplits build``, :func:`split_scored`, the
    Space); the shape's rule is :data:`lsplits.params.PARAMS`' (checked by the settings before n is known).
    """
    if eval_size is None and default is None:
        raise InvalidOption(name=option, problem=": give an eval size (a count, or a fraction of the examples)")
    given = f"{eval_size}" if eval_size is not None else f"(the default, {default})"
    if n < MIN_EVAL_SIZE + 1:
        raise InvalidOption(name=option, problem=f"{given}: the dataset has {n} example(s); train, validation and "
                            f"test need at least {MIN_EVAL_SIZE + 1}")
    bounds = f"give between {MIN_EVAL_SIZE} and {n - 1} examples (or a fraction that gives as many)"
    try:
        size = resolve_eval_size(eval_size if eval_size is not None else default, n)
    except InvalidOption as exc:
        raise InvalidOption(name=option, problem=f"{given}: {exc.problem or exc}; {bounds}") from None
    except ConfigError as exc:
        raise InvalidOption(name=option, problem=f"{given}: {exc}; {bounds}") from None
    if size < MIN_EVAL_SIZE:
        raise InvalidOption(name=option, problem=f"{given} gives {size} eval example of {n}, which leaves the test "
                            f"split empty (validation and test get half each); the minimum is {MIN_EVAL_SIZE}")
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


def plan_build(spec: DatasetSpec, settings: BuildSettings, *, train_config: Any = None) -> BuildPlan:
    """Decide configs, skipped configs and the LM run of each setting; ConfigError if nothing is left.

    A config whose setting the LM cannot score (prompting with the scratch LM) is skipped, not failed;
    pretrained LMs train for the dataset's paper steps unless ``train_config`` / ``settings.max_steps`` say
    otherwise.
    """
    from lsplits.lm.plan import PRETRAINED_ONLY, RunPlan, runs_with

    lm = settings.lm
    chosen = resolve_configs(list(settings.configs or spec.configs), spec.available_configs)
    skipped = {name: PRETRAINED_ONLY for name, strategy in chosen.items()
               if not runs_with(lm, strategy.setting or DEFAULT_SETTING)}
    chosen = {name: strategy for name, strategy in chosen.items() if name not in skipped}
    if not chosen:
        raise ConfigError("no config left to build: " + "; ".join(f"{k} {v}" for k, v in skipped.items()))
    runs = {setting: RunPlan.make(lm, setting, folds=settings.folds, seed=settings.seed, train_config=train_config,
                                  max_steps=settings.max_steps, paper_steps=spec.max_steps, patience=settings.patience,
                                  dtype=settings.dtype)
            for setting in dict.fromkeys(s.setting or DEFAULT_SETTING for s in chosen.values())}
    return BuildPlan(configs=chosen, skipped=skipped, runs=runs)


def check_build(spec: DatasetSpec, examples: Sequence[Mapping[str, Any]], settings: BuildSettings,
                plan: BuildPlan) -> tuple[int, SplitInputs]:
    """Every check a build makes before training (eval size, label quotas, the LM's files and tokens): the
    eval count and the split inputs. ``--dry-run`` runs it too, so it refuses what the build would refuse."""
    from lsplits.lm.pipeline import check_lm

    n = len(examples)
    size = checked_eval_size(settings.eval_size, n, default=spec.default_eval_size(n))
    if settings.eval_size is None and size // 2 < SMALL_EVAL_HALF:
        logger.warning("the default eval size gives %d eval examples of %d (%s): validation and test get about %d "
                       "each, too few to measure a model on; give a larger eval size (a count or a fraction)", size, n,
                       "the paper's proportion" if spec.paper_sizes else f"{DEFAULT_EVAL_FRACTION:.0%}", size // 2)
    with stage("split"):
        inputs = split_inputs(spec, examples)
    check_label_quotas(inputs.labels, size, field=spec.task.label_field)
    for kind in plan.settings:
        check_lm(settings.lm, score_records(examples, spec.task, kind))
    return size, inputs


def build_splits(spec: DatasetSpec, loaded: LoadedData, settings: BuildSettings, *,
                 cache_dir: str | Path | None = None, train_config: Any = None, progress: bool = True,
                 compile: bool = False) -> BuildResult:
    """Score the examples as the requested configs need and compute every config's split.

    ``settings`` decide the result; ``cache_dir``, ``progress`` and ``compile`` only how the run goes;
    ``train_config`` replaces the LM's training recipe (the demo Space's short one); it is recorded with
    the run plans. The dtype (``settings.dtype``, :mod:`lsplits.lm.dtype`) is settled once per LM run for
    this process's device; :attr:`BuildResult.dtypes` records what each setting computed in.
    """
    from lsplits.lm.distributed import process_device
    from lsplits.lm.pipeline import STOPPED_ATTR, compute_scores
    from lsplits.lm.scoring import resolve_device

    examples = loaded.examples
    task = spec.task
    lm = settings.lm
    plan = plan_build(spec, settings, train_config=train_config)
    n = len(examples)
    size, inputs = check_build(spec, examples, settings, plan)
    with stage("type unification"):
        base = unify_types(pd.DataFrame(examples), loaded.source)  # one type per field, decided before splitting
    scores: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    training: dict[str, list[dict[str, Any]]] = {}
    dtypes = {kind: run.resolved_dtype(resolve_device(process_device())) for kind, run in plan.runs.items()}
    for kind, run in plan.runs.items():
        logger.info("scoring %d examples (%s setting) with %s in %s", n, kind, lm, dtypes[kind])
        frame = compute_scores(score_records(examples, task, kind), plan=run, cache_dir=cache_dir,
                               progress=progress, compile=compile)
        scores[kind] = (frame["ll_score"].to_numpy(dtype=np.float64), frame["ll_tokens"].to_numpy(dtype=np.int64))
        if STOPPED_ATTR in frame.attrs:
            training[kind] = list(frame.attrs[STOPPED_ATTR])
    with stage("split"):
        result = split_configs(spec.policy, plan.configs, base, inputs, scores, eval_size=size, seed=settings.seed,
                               skipped=plan.skipped)
    result.dtypes = dtypes
    result.training = training
    result.dropped = dict(loaded.dropped)
    result.read = list(loaded.read)
    result.features = loaded.features
    result.input = input_fingerprint(task, examples)  # of the examples as loaded, as --from-record compares
    result.runs = dict(plan.runs)
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
    of eval (:func:`~lsplits.splits.engine.split_eval`), each label class halved when the task has labels.
    """
    inputs.scores.update({kind: values for kind, (values, _) in scores.items()})
    built: dict[str, BuiltConfig] = {}
    for name, strategy in configs.items():
        partition, effect = policy.split_with_effect(strategy, inputs, eval_size, seed)
        warning = effect.warning(name) if effect is not None else None
        if warning:
            logger.warning(warning)
        elif effect is not None and effect.swaps:
            logger.info("config %s: %s", name, effect.describe())
        setting = strategy.setting or (DEFAULT_SETTING if DEFAULT_SETTING in scores else next(iter(scores)))
        validation, test = split_eval(partition.eval, seed=seed, labels=inputs.labels)
        built[name] = BuiltConfig(strategy=strategy, setting=setting, partition=partition, effect=effect,
                                  indices={"train": np.sort(partition.train), "validation": validation, "test": test})
    return BuildResult(table=table, scores=dict(scores), configs=built, inputs=inputs, skipped=dict(skipped or {}),
                       eval_size=eval_size)


def split_scored(task: Task, examples: Sequence[Mapping[str, Any]], scores: Mapping[str, tuple[np.ndarray, np.ndarray]],
                 *, configs: Sequence[str], eval_size: int | float, seed: int = 0,
                 policy: SplitPolicy = PLAIN_POLICY, option: str = "eval_size") -> BuildResult:
    """Split examples that are already scored with the named configs, exactly as ``lsplits build`` does after
    scoring (:func:`split_inputs`, then :func:`split_configs`); for callers that score themselves (the Space).

    ``scores`` maps each LM setting to its (``ll_score``, ``ll_tokens``) arrays in example order;
    ``eval_size`` is a count or a fraction of the examples, checked as the build checks it
    (:func:`checked_eval_size`: train, validation and test all keep examples); ``option`` names it in errors.
    """
    spec = DatasetSpec(task=task, card=CardInfo(pretty_name=task.name), policy=policy)
    chosen = resolve_configs(list(configs), spec.available_configs)
    size = checked_eval_size(eval_size, len(examples), option=option)
    return split_configs(policy, chosen, pd.DataFrame(list(examples)), split_inputs(spec, examples), scores,
                         eval_size=size, seed=seed)


def build_record(spec: DatasetSpec, result: BuildResult, settings: BuildSettings, *,
                 extra_statistics: Mapping[str, Mapping[str, float]]) -> BuildRecord:
    """The build's ``lsplits.json`` (``lsplits analyze``, the Space and ``lsplits build --from-record`` read it
    back), each value once: the settings as asked, and what the build found and made beside them; the data files
    and the files written are added when they are written (:func:`lsplits.building.export.write_hub_folder`)."""
    task = spec.task
    recorded = recorded_settings(settings, result.runs, result.dtypes)
    return BuildRecord(
        settings=settings, task=TaskRecord(task.name, task.query_field, task.label_field,
                                           tuple(spec.categorical_columns)),
        eval_examples=result.eval_size, skipped=dict(result.skipped), dropped=dict(result.dropped),
        read=list(result.read),
        notes=spec.policy.notes_of(result.inputs), split_policy=spec.policy.name,
        strategies={name: built.strategy.record() for name, built in result.configs.items()},
        constraint_effects={name: effect.to_dict() for name, effect in result.constraint_effects.items()},
        extra_statistics={name: dict(values) for name, values in extra_statistics.items()},
        input=result.input if result.input is not None else input_fingerprint(task, result.table.to_dict("records")),
        runs=recorded["runs"], training=dict(result.training),
        dtypes_used=recorded["dtypes_used"], lm_identity=recorded["lm_identity"],
        lsplits_version=recorded["lsplits_version"], class_labels=label_classes(task, result.table, result.features))


def settings_markdown(recorded: Mapping[str, Any]) -> str:
    """The card's "Settings" section body: every recorded setting, as JSON, and how to rebuild with them."""
    return "\n".join([
        "Every setting that changes the numbers of this dataset (also in `lsplits.json`); "
        "`lsplits build --from-record lsplits.json --data-files ... --out NEW` rebuilds it from the same data:",
        "", "```json", json.dumps(dict(recorded), indent=2, sort_keys=False, default=str), "```"])


def export_dataset(spec: DatasetSpec, result: BuildResult, out: str | Path, settings: BuildSettings, *,
                   repo_hint: str | None = None, progress: bool = False,
                   extra_settings: Mapping[str, Any] | None = None) -> Path:
    """Write the Hub-layout folder with card, statistics, plots and ``lsplits.json``; returns the folder.

    The configs' frames are materialised from the base table one config at a time. ``extra_settings``
    (field of :class:`~lsplits.building.record.BuildRecord` -> dict) records the settings of what made the data
    (the demo's :class:`DemoSettings`, its scratch LM) beside the build's.
    """
    from lsplits.building import report as dataset_report
    from lsplits.building.additions import check_rebuild
    from lsplits.building.export import write_hub_folder

    check_rebuild(out)  # before the statistics and plots
    frames = result.frames()
    task = spec.task
    with stage("card and plots"):
        extra_stats = spec.policy.statistics_of(result.inputs, result.partitions)
        record = build_record(spec, result, settings, extra_statistics=extra_stats).replace(**dict(extra_settings or {}))
        stats = dataset_report.config_statistics(frames, query_field=task.query_field, label_field=task.label_field,
                                                 categorical_columns=spec.categorical_columns, progress=progress,
                                                 examples=result.table, class_labels=record.class_labels)
        statistics = dataset_report.statistics_markdown(stats)
        if extra_stats:
            statistics = dataset_report.extra_statistics_markdown(extra_stats) + "\n\n" + statistics
    descriptions = {name: built.strategy.description for name, built in result.configs.items()}
    strategies = {name: repr(built.strategy) for name, built in result.configs.items()}
    with temporary_folder(prefix="lsplits-build-") as tmp:
        with stage("card and plots"):
            written = dataset_report.config_plots(frames, stats, Path(tmp))

        def card(folder) -> str:  # the card lists the content-named files
            return render_card(spec.card, folder, descriptions, repo_hint=repo_hint or placeholder_repo(out),
                               method=method_text(spec, result, settings), statistics=statistics,
                               plots={caption: path for caption, path, _ in written}, strategies=strategies,
                               settings=settings_markdown(record.recorded_settings()))

        with stage("export"):
            return write_hub_folder(out, frames, card, {repo_path: local for _, repo_path, local in written},
                                    record=record, examples=result.config_table(next(iter(result.configs))),
                                    class_labels=record.class_labels, features=result.features)


def label_classes(task: Task, table: pd.DataFrame, features: Mapping[str, Any] | None = None) -> dict[str, list[str]]:
    """column -> ClassLabel names of the task's label field (none when it stays as it is, e.g. BoolQ's bool);
    an input ``ClassLabel`` feature (``features``) keeps its own names."""
    from lsplits.data.labels import class_label_names

    field = task.label_field
    if not field or field not in table.columns:
        return {}
    if features and field in features:
        from datasets import ClassLabel

        if isinstance(features[field], ClassLabel):
            return {field: list(features[field].names)}
    names = class_label_names(table[field], task.label_names, field=field)
    return {field: list(names)} if names else {}
