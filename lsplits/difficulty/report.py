"""Write the difficulty report: ``difficulty.md``, ``difficulty.png``, ``difficulty.json``, ``buckets.json``,
and the shorter "Difficulty" section of the dataset card (:mod:`lsplits.difficulty.card` places it).

Tables follow the paper: Tables 2/3 (one column per model, one row per config, here with 95%
intervals and the relative error increase against ``random``), Table 4 (the reverse split is one of
the rows), Tables 5/14 (accuracy per bucket, with the bucket's share, and the projection of
``random``'s per-bucket accuracy onto each config's mix).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from lsplits.building.plots import save_figure
from lsplits.difficulty import evaluate as ev
from lsplits.difficulty.summary import DifficultySummary
from lsplits.difficulty.tasks import EXACT_MATCH
from lsplits.figure_style import RANDOM_STYLE, legend_right
from lsplits.io.atomic import atomic_write_text

logger = logging.getLogger(__name__)

JSON_FILE = "difficulty.json"
BUCKETS_FILE = "buckets.json"
MARKDOWN_FILE = "difficulty.md"
PLOT_FILE = "difficulty.png"
CARD_PLOT = "plots/difficulty.png"
"""Where the card's copy of the figure goes inside the dataset folder."""


def metric_name(metric: str) -> str:
    return "exact match of normalised SQL" if metric == EXACT_MATCH else "accuracy"


def short_model(name: str) -> str:
    """The last part of a model id or path (table headers)."""
    return str(name).rstrip("/").rsplit("/", 1)[-1]


def _pct(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{100 * value:+.0f}%" if signed else f"{100 * value:.1f}"


def accuracy_cell(row: dict) -> str:
    """``66.0 [63.1, 68.9]``."""
    if row["ci_low"] is None:
        return _pct(row["accuracy"])
    return f"{_pct(row['accuracy'])} [{_pct(row['ci_low'])}, {_pct(row['ci_high'])}]"


def rei_cell(row: dict) -> str:
    """``+59% [+40%, +80%]`` (``-`` for random or when undefined)."""
    if row["relative_error_increase"] is None:
        return "-"
    text = _pct(row["relative_error_increase"], signed=True)
    if row["relative_error_increase_ci_low"] is not None:
        text += (f" [{_pct(row['relative_error_increase_ci_low'], True)}, "
                 f"{_pct(row['relative_error_increase_ci_high'], True)}]")
    return text


def main_table(summary: DifficultySummary) -> str:
    """Configs x models: the metric with its interval and the relative error increase against random."""
    header = ["config", "n (test)"]
    for model in summary.models:
        header += [f"{short_model(model)}: {metric_name(summary.metric)} (95% CI)", "error vs random (95% CI)"]
    lines = ["| " + " | ".join(header) + " |", "|---|---:|" + "---:|---:|" * len(summary.models)]
    for config in summary.configs:
        cells = [f"`{config}`", f"{summary.row(summary.models[0], config)['n']:,}"]
        for model in summary.models:
            row = summary.row(model, config)
            cells += [accuracy_cell(row), rei_cell(row)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def direction_lines(summary: DifficultySummary) -> list[str]:
    """One sentence per model and non-random config: harder, easier or not distinguishable from random."""
    lines = []
    if ev.RANDOM not in summary.configs:
        lines.append(f"- The error-vs-random column is empty: no `{ev.RANDOM}` config was evaluated, and each config "
                     f"is compared with it. Add it (`--configs {ev.RANDOM} {' '.join(summary.configs)}`) to read "
                     "directions and projections.")
    for model in summary.models:
        for config in summary.configs:
            row = summary.row(model, config)
            if row["relative_error_increase"] is None:
                continue
            verdict = {ev.HARDER: "harder than `random`", ev.EASIER: "easier than `random`",
                       ev.UNCLEAR: "not distinguishable from `random` at this size"}[row["direction"]]
            lines.append(f"- `{config}` with {short_model(model)}: {verdict} "
                         f"(error {rei_cell(row)} relative to `random`).")
    for model in summary.models:
        constant = [config for config in summary.configs if summary.row(model, config).get("constant_prediction")
                    is not None]
        if constant:
            answers = sorted({str(summary.row(model, c)["constant_prediction"]) for c in constant})
            lines.append(f"- **Warning:** {short_model(model)} gives the same answer ({', '.join(answers)}) to every "
                         f"eval example of {', '.join(f'`{c}`' for c in constant)}: it has learnt nothing, so its "
                         "accuracy there is only that answer's share and says nothing about difficulty. Train "
                         "longer (`--epochs`, `--lr`) or use a stronger `--model`.")
    return lines


def split_lm_table(summary: DifficultySummary) -> str:
    """Table 2's Delta: each model's gap to the split LM per config and its change from random."""
    check = summary.split_lm
    if not check:
        return ""
    lm = short_model(check["split_lm"])
    lines = [f"Split LM `{check['split_lm']}` is one of the models. A split adversarial to it would widen "
             f"the gap between another model and {lm} on the Likelihood Splits.", "",
             "| config | model | gap to split LM (points) | change from `random` (95% CI) | adversarial? |",
             "|---|---|---:|---:|---|"]
    for model, per_config in check["models"].items():
        for config, values in per_config.items():
            change = "-" if values["change"] is None else (
                f"{100 * values['change']:+.1f} [{100 * values['change_ci_low']:+.1f}, "
                f"{100 * values['change_ci_high']:+.1f}]" if values["change_ci_low"] is not None
                else f"{100 * values['change']:+.1f}")
            verdict = "-" if values["adversarial"] is None else ("yes" if values["adversarial"] else "no")
            lines.append(f"| `{config}` | {short_model(model)} | {100 * values['gap']:+.1f} | {change} | {verdict} |")
    return "\n".join(lines)


BUCKET_CELLS = ("Each bucket cell reads `78.6 (0.437)`: {metric} in % on that config's test examples in the bucket, "
                "then (in brackets) the bucket's share of the config's test split, from 0 to 1; `-`: no test example "
                "falls in the bucket.")
"""How the bucket tables' cells read, said once above the first of them."""


def bucket_table(summary: DifficultySummary, model: str, bucketing: str) -> str:
    """Table 5's shape: accuracy per bucket (share of test) per config, measured and projected accuracy."""
    per_config = summary.buckets[model][bucketing]
    lines = ["| bucket | " + " | ".join(f"`{c}`" for c in summary.configs) + " |",
             "|---|" + "---:|" * len(summary.configs)]
    for bucket in summary.bucket_orders[bucketing]:
        cells = []
        for config in summary.configs:
            stat = per_config[config].get(bucket)
            cells.append("-" if stat is None else f"{_pct(stat.accuracy)} ({stat.share:.3f})")
        lines.append(f"| {bucket} | " + " | ".join(cells) + " |")
    lines.append("| test accuracy | " + " | ".join(_pct(summary.row(model, c)["accuracy"]) for c in summary.configs)
                 + " |")
    projected = summary.projections.get(model, {}).get(bucketing)
    if projected:
        cells = ["" if c == ev.RANDOM else _pct(projected[c]["projected"]) for c in summary.configs]
        lines.append("| projected from `random` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def projection_lines(summary: DifficultySummary, model: str) -> list[str]:
    """Sentences on whether each bucket mix explains a config's drop (projection above measured: it does not)."""
    lines = []
    for bucketing, per_config in summary.projections.get(model, {}).items():
        for config, values in per_config.items():
            projected, measured = values["projected"], values["measured"]
            if projected is None:
                continue
            random_accuracy = summary.row(model, ev.RANDOM)["accuracy"]
            text = f"- `{config}`, {bucketing}: projected {_pct(projected)} vs measured {_pct(measured)}"
            drop = random_accuracy - measured
            if drop > 0 and projected >= random_accuracy:
                text += f": the {bucketing} mix predicts no drop from `random`, so it does not explain this one."
            elif drop > 0 and projected > measured:
                text += (f": the {bucketing} mix explains {100 * (random_accuracy - projected) / drop:.0f}% "
                         "of the drop from `random`; the rest has other causes.")
            elif drop > 0:
                text += f": the {bucketing} mix alone predicts the whole drop from `random`."
            else:
                text += f" (no drop from `random`, {_pct(random_accuracy)})."
            thin = values.get("thin_buckets") or {}
            if thin:
                text += (f" Caveat: it rests on `random` buckets of fewer than {ev.MIN_BUCKET_EXAMPLES} test examples "
                         f"({', '.join(f'{bucket}: {n}' for bucket, n in thin.items())}), whose accuracy is noisy.")
            lines.append(text)
    return lines


def settings_line(summary: DifficultySummary) -> str:
    s = summary.settings
    train = s.get("train", {})
    epochs = float(train.get("epochs") or 0)
    steps = f"{train['max_steps']} steps" if train.get("max_steps") else f"{epochs:g} epoch{'' if epochs == 1 else 's'}"
    cap = f", at most {train['max_train_examples']:,} train examples" if train.get("max_train_examples") else ""
    return (f"Fine-tuned {steps} per config (batch {train.get('batch_size')}, lr {s.get('lr', '?')}, "
            f"max length {train.get('max_length')} tokens{cap}, seed {train.get('seed')}), checkpoint chosen on "
            f"validation {metric_name(summary.metric)}; intervals: percentile bootstrap over test examples "
            f"({s.get('bootstrap', '?')} resamples)." + _dtypes_text(s.get("dtypes_used") or {}))


def _dtypes_text(dtypes: dict[str, str]) -> str:
    """`` Compute dtype: MODEL bf16 autocast (...)`` for the report, from what each model resolved to."""
    from lsplits.lm.dtype import dtype_text

    if not dtypes:
        return ""
    if len(set(dtypes.values())) == 1:
        return f" Compute dtype: {dtype_text(next(iter(dtypes.values())))}."
    return " Compute dtype: " + "; ".join(f"{name} {dtype_text(dtype)}" for name, dtype in dtypes.items()) + "."


def markdown_report(summary: DifficultySummary) -> str:
    """The full report: main table, directions, split-LM check, buckets and projections per model."""
    lines = [f"# Difficulty of `{summary.dataset}`", "",
             f"Task `{summary.task}`, metric: {metric_name(summary.metric)} on each config's test split. "
             "Error vs random = (error - error on `random`) / error on `random`, the paper's relative error increase.",
             "", settings_line(summary), "", main_table(summary), "", *direction_lines(summary), ""]
    lm = split_lm_table(summary)
    if lm:
        lines += ["## Split LM check", "", lm, ""]
    for index, model in enumerate(summary.models):
        lines += [f"## Buckets: {short_model(model)}", ""]
        if index == 0:
            lines += [BUCKET_CELLS.format(metric=metric_name(summary.metric)), ""]
        for bucketing in summary.buckets[model]:
            lines += [f"### {bucketing}", "", bucket_table(summary, model, bucketing), ""]
        projections = projection_lines(summary, model)
        if projections:
            lines += ["Projection test (Table 5): `random`'s per-bucket accuracy re-weighted by each config's bucket "
                      "mix. A projection above the measured accuracy means the mix alone does not explain the drop.",
                      "", *projections, ""]
    return "\n".join(lines)


def card_section(summary: DifficultySummary, plot_path: str | None = CARD_PLOT) -> str:
    """The card's "Difficulty" section: the main table, the directions and the figure."""
    lines = ["## Difficulty", "",
             f"How hard each config is for a task model: {metric_name(summary.metric)} on the test split of "
             "each config, with 95% bootstrap intervals, and the relative error increase against `random` "
             "(Godbole & Jia 2023, Tables 2-4). Written by `lsplits difficulty`.", "",
             settings_line(summary), "", main_table(summary), "", *direction_lines(summary), ""]
    lm = split_lm_table(summary)
    if lm:
        lines += [lm, ""]
    if plot_path:
        lines += [f"![{metric_name(summary.metric)} per config, with 95% intervals]({plot_path})", ""]
    return "\n".join(lines)


def difficulty_figure(summary: DifficultySummary) -> Figure:
    """Grouped bars: the metric per config (x) and model (colour) with 95% interval whiskers."""
    figure = Figure(figsize=(max(5.0, 1.3 * len(summary.configs) + 2), 4.0))
    axes = figure.add_subplot()
    width = 0.8 / len(summary.models)
    x = np.arange(len(summary.configs))
    for i, model in enumerate(summary.models):
        rows = [summary.row(model, c) for c in summary.configs]
        values = np.array([100 * r["accuracy"] for r in rows])
        low = np.array([100 * (r["accuracy"] - r["ci_low"]) if r["ci_low"] is not None else 0 for r in rows])
        high = np.array([100 * (r["ci_high"] - r["accuracy"]) if r["ci_high"] is not None else 0 for r in rows])
        bars = axes.bar(x + (i - (len(summary.models) - 1) / 2) * width, values, width, yerr=[low, high], capsize=3,
                        label=short_model(model))
        if ev.RANDOM in summary.configs:  # the reference every config is compared with, across the whole plot
            axes.axhline(100 * summary.row(model, ev.RANDOM)["accuracy"], color=bars.patches[0].get_facecolor(),
                         linewidth=1, linestyle=RANDOM_STYLE["linestyle"],
                         label=f"{ev.RANDOM} (reference)" + (f", {short_model(model)}" if len(summary.models) > 1 else ""))
    chance = [summary.row(summary.models[0], c).get("majority_baseline") for c in summary.configs]
    for position, share in zip(x, chance, strict=True):
        if share is not None:
            axes.hlines(100 * share, position - 0.45, position + 0.45, color="black", linewidth=1.5, linestyle=":",
                        label="chance: the most frequent test label" if position == x[0] else None)
    axes.set_xticks(x, summary.configs, rotation=20, ha="right")
    axes.set_ylabel(f"{metric_name(summary.metric)} (%)")
    axes.set_title(f"{summary.dataset}: test {metric_name(summary.metric)} per config")
    if axes.get_legend_handles_labels()[0]:
        legend_right(axes)
    figure.tight_layout()
    return figure


def write_report(summary: DifficultySummary, out: Path) -> Path:
    """Write the report files into ``out`` (each atomically); returns the markdown file."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / JSON_FILE, json.dumps(summary.rows, indent=1))
    atomic_write_text(out / BUCKETS_FILE, json.dumps(summary.buckets_json(), indent=1))
    save_figure(difficulty_figure(summary), out / PLOT_FILE)
    atomic_write_text(out / MARKDOWN_FILE, markdown_report(summary))
    logger.info("wrote the difficulty report to %s", out)
    return out / MARKDOWN_FILE
