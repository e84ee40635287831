"""Turn finished runs (per-example correctness per model and config) into the report's numbers.

One :class:`DifficultySummary` holds everything the markdown, the PNG, ``difficulty.json`` and the
card show; the statistics themselves are in :mod:`lsplits.difficulty.evaluate`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from lsplits.data.text import word_count
from lsplits.difficulty import evaluate as ev
from lsplits.difficulty.tasks import SEQ2SEQ, TaskKind
from lsplits.difficulty.train import ConfigRun
from lsplits.uncertainty.prr import DEFAULT_BOOTSTRAP

logger = logging.getLogger(__name__)

LENGTH, RARE_WORDS, HARDNESS, NOVEL_COMPOUNDS = "query length", "rare words", "SQL hardness", "novel compounds"


@dataclass
class DifficultySummary:
    """The report of one ``lsplits difficulty`` run.

    ``rows`` is what ``difficulty.json`` holds: one object per model and config with ``model, config,
    metric, accuracy, ci_low, ci_high, n, relative_error_increase`` (None for ``random``) and more.
    ``buckets[model][bucketing][config][bucket]`` is a :class:`~lsplits.difficulty.evaluate.BucketStat`;
    ``projections[model][bucketing][config]`` holds ``projected`` and ``measured`` accuracy;
    ``split_lm`` (when the split LM is one of the models) the gap of every other model to it.
    """

    dataset: str
    task: str
    metric: str
    models: list[str]
    configs: list[str]
    rows: list[dict[str, Any]]
    buckets: dict[str, dict[str, dict[str, dict[str, ev.BucketStat]]]]
    bucket_orders: dict[str, list[str]]
    projections: dict[str, dict[str, dict[str, dict[str, float | None]]]]
    split_lm: dict[str, Any] | None
    settings: dict[str, Any] = field(default_factory=dict)

    def row(self, model: str, config: str) -> dict[str, Any]:
        return next(r for r in self.rows if r["model"] == model and r["config"] == config)

    def buckets_json(self) -> dict[str, Any]:
        """Buckets, projections and the split-LM check as plain JSON."""
        return {
            "buckets": {m: {b: {c: {k: vars(s) for k, s in per.items()} for c, per in by_config.items()}
                            for b, by_config in by_bucketing.items()} for m, by_bucketing in self.buckets.items()},
            "bucket_orders": self.bucket_orders,
            "projections": self.projections,
            "split_lm": self.split_lm,
        }


def _bucketings(kind: TaskKind, frames: Mapping[str, Mapping[str, pd.DataFrame]],
                configs: Sequence[str]) -> tuple[dict[str, dict[str, pd.Series]], dict[str, list[str]]]:
    """Bucket labels of every config's test examples (indexed by id) per bucketing, and bucket orders."""
    query = kind.query_field

    def lengths(test: pd.DataFrame) -> np.ndarray:
        if "length" in test.columns:
            return test["length"].to_numpy(dtype=int)
        return np.array([word_count(str(t)) for t in test[query]])

    tests = {c: frames[c]["test"].assign(id=frames[c]["test"]["id"].astype(str)) for c in configs}
    edges = ev.length_edges(np.concatenate([lengths(t) for t in tests.values()]))
    labels: dict[str, dict[str, pd.Series]] = {LENGTH: {}, RARE_WORDS: {}}
    orders = {LENGTH: ev.length_order(edges), RARE_WORDS: [ev.RARE, ev.NOT_RARE]}
    if kind.kind == SEQ2SEQ:
        labels[HARDNESS], labels[NOVEL_COMPOUNDS] = {}, {}
        orders[HARDNESS] = list(ev.HARDNESS_ORDER)
        orders[NOVEL_COMPOUNDS] = [ev.NOVEL, ev.NOT_NOVEL]
    for config, test in tests.items():
        index = test["id"]
        labels[LENGTH][config] = pd.Series(ev.length_labels(lengths(test), edges), index=index)
        labels[RARE_WORDS][config] = pd.Series(ev.rare_word_labels(test[query].astype(str).tolist()), index=index)
        if kind.kind == SEQ2SEQ:
            sqls = test[kind.target_field].astype(str).tolist()
            hardness = test["hardness"].tolist() if "hardness" in test.columns else None
            labels[HARDNESS][config] = pd.Series(ev.hardness_labels(sqls, hardness), index=index)
            train_sqls = frames[config]["train"][kind.target_field].astype(str).tolist()
            labels[NOVEL_COMPOUNDS][config] = pd.Series(ev.novel_compound_labels(sqls, train_sqls), index=index)
    return labels, orders


def summarise(dataset: str, kind: TaskKind, task: str, frames: Mapping[str, Mapping[str, pd.DataFrame]],
              runs: Mapping[tuple[str, str], ConfigRun], models: Sequence[str], configs: Sequence[str], *,
              split_lm: str | None = None, n_bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0,
              settings: Mapping[str, Any] | None = None) -> DifficultySummary:
    """Accuracy with intervals, relative error increase, buckets, projections and the split-LM check."""
    labels, orders = _bucketings(kind, frames, configs)
    rows, buckets, projections = [], {}, {}
    correct: dict[tuple[str, str], np.ndarray] = {}
    for model in models:
        buckets[model] = {name: {} for name in labels}
        for config in configs:
            run = runs[(model, config)]
            test = run.predictions[run.predictions["split"] == "test"]
            values = test["correct"].to_numpy(dtype=float)
            correct[(model, config)] = values
            ids = test["id"].astype(str)
            for name, per_config in labels.items():
                buckets[model][name][config] = ev.bucket_accuracy(values, per_config[config].loc[ids].tolist(),
                                                                  orders[name])
        for config in configs:
            accuracy = ev.bootstrap_accuracy(correct[(model, config)], n_bootstrap=n_bootstrap, seed=seed)
            rei = ev.Interval(None, None, None, accuracy.n)
            if config != ev.RANDOM and ev.RANDOM in configs:
                rei = ev.relative_error_increase(correct[(model, config)], correct[(model, ev.RANDOM)],
                                                 n_bootstrap=n_bootstrap, seed=seed)
            run = runs[(model, config)]
            test = run.predictions[run.predictions["split"] == "test"]  # the examples the table's n counts
            constant = constant_prediction(test)
            if constant is not None:
                logger.warning("%s predicts %r for every one of the %d test examples of %s: its accuracy is that "
                               "answer's share, not a measure of difficulty (train longer or use a stronger model)",
                               model, constant, len(test), config)
            rows.append({
                "model": model, "config": config, "metric": kind.metric,
                "accuracy": accuracy.value, "ci_low": accuracy.low, "ci_high": accuracy.high, "n": accuracy.n,
                "relative_error_increase": rei.value, "relative_error_increase_ci_low": rei.low,
                "relative_error_increase_ci_high": rei.high,
                "direction": ev.direction(rei) if rei.value is not None else None,
                "eval_accuracy": float(run.correct("eval").mean()), "eval_n": int(run.correct("eval").size),
                "best_step": run.summary.get("best_step"), "best_validation": run.summary.get("best_validation"),
                "constant_prediction": constant,
                "majority_baseline": _majority_share(kind, frames[config]),
            })
        projections[model] = _projections(buckets[model], configs)
    split = _split_lm_check(correct, models, configs, split_lm, n_bootstrap, seed) if split_lm else None
    return DifficultySummary(dataset=dataset, task=task, metric=kind.metric, models=list(models),
                             configs=list(configs), rows=rows, buckets=buckets, bucket_orders=orders,
                             projections=projections, split_lm=split, settings=dict(settings or {}))


def constant_prediction(predictions: pd.DataFrame) -> Any:
    """The one answer a model gave to every eval example (several examples), else None: such a model has
    learnt nothing, and its accuracy is only the share of that answer in each split."""
    answers = predictions["prediction"]
    if len(answers) < 2 or answers.astype(str).nunique() != 1:
        return None
    value = answers.iloc[0]
    return value.item() if hasattr(value, "item") else value


def _majority_share(kind: TaskKind, frames: Mapping[str, pd.DataFrame]) -> float | None:
    """The accuracy of always answering the test split's most frequent label (a classifier's chance line); None for
    seq2seq tasks, whose targets rarely repeat."""
    test = frames.get("test")
    if kind.kind != SEQ2SEQ and test is not None and len(test) and kind.target_field in test:
        return float(test[kind.target_field].astype(str).value_counts(normalize=True).iloc[0])
    return None


def _projections(buckets: Mapping[str, Mapping[str, Mapping[str, ev.BucketStat]]],
                 configs: Sequence[str]) -> dict[str, dict[str, dict[str, float | None]]]:
    """Per bucketing and non-random config: random's accuracy re-weighted by its bucket mix, and measured."""
    if ev.RANDOM not in configs:
        return {}
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for name, per_config in buckets.items():
        out[name] = {}
        for config in configs:
            if config == ev.RANDOM:
                continue
            stats = per_config[config]
            measured = sum(s.accuracy * s.share for s in stats.values())
            reference = per_config[ev.RANDOM]
            thin = {bucket: reference[bucket].n for bucket, stat in stats.items()
                    if stat.share > 0 and bucket in reference and reference[bucket].n < ev.MIN_BUCKET_EXAMPLES}
            out[name][config] = {"projected": ev.projected_accuracy(reference, stats), "measured": measured,
                                 "thin_buckets": thin}
    return out


def _split_lm_check(correct: Mapping[tuple[str, str], np.ndarray], models: Sequence[str], configs: Sequence[str],
                    split_lm: str, n_bootstrap: int, seed: int) -> dict[str, Any] | None:
    """Gap of every other model to the split LM per config, and its change from random (Table 2's Delta)."""
    others = [m for m in models if m != split_lm]
    if split_lm not in models or not others or ev.RANDOM not in configs:
        return None
    result: dict[str, Any] = {"split_lm": split_lm, "models": {}}
    for model in others:
        per_config = {}
        for config in configs:
            gap, change = ev.gap_change(correct[(model, config)], correct[(split_lm, config)],
                                        correct[(model, ev.RANDOM)], correct[(split_lm, ev.RANDOM)],
                                        n_bootstrap=n_bootstrap if config != ev.RANDOM else 0, seed=seed)
            per_config[config] = {"gap": gap, "change": change.value if config != ev.RANDOM else None,
                                  "change_ci_low": change.low, "change_ci_high": change.high,
                                  "adversarial": None if change.low is None else bool(change.low > 0)}
        result["models"][model] = per_config
    return result
