"""Statistics and plots of a whole built dataset (every config), for cards, the CLI, the demo and the Space.

Per-split numbers come from :mod:`lsplits.building.analysis` and figures from :mod:`lsplits.building.plots`; this
module runs them over every config of a build, reusing one rare-word count per example, and
analyses built folders (``lsplits analyze DIR``) as :mod:`lsplits.building.export` reads them back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lsplits.building import analysis, plots
from lsplits.building.export import METADATA_FILE, Frames, plot_path

__all__ = ["METADATA_FILE", "analyze_folder", "config_plots", "config_statistics", "eval_mask_frame",
           "extra_statistics_markdown", "statistics_markdown", "statistics_text"]
# METADATA_FILE is lsplits.building.export's; it stays importable here for modules that read it from this one.


def config_statistics(frames: Frames, *, query_field: str, label_field: str | None = None,
                      categorical_columns: Sequence[str] = (), progress: bool = False,
                      examples: pd.DataFrame | None = None,
                      class_labels: Mapping[str, Sequence[str]] | None = None) -> dict[str, dict[str, Any]]:
    """``split_statistics`` for every config, tokenising each distinct example once.

    ``examples`` (every example once, with ``id`` and the query field) spares gathering them from
    the frames; ``frames`` is read one config at a time, so a lazy mapping works. ``class_labels`` (column ->
    names) counts a column of class ids by name, as a reader of the written data sees it (the card at build time,
    ``lsplits analyze`` after).
    """
    if examples is None:
        examples = pd.concat([frame for splits in frames.values() for frame in splits.values()])
    every = examples.drop_duplicates("id")
    counted = analysis.add_rare_word_counts(every, query_field, progress=progress).set_index("id")
    columns = [analysis.RARE_WORDS_COLUMN, analysis.WORD_TOKENS_COLUMN]
    stats = {}
    for name, splits in frames.items():
        annotated = {split: _named_labels(frame, class_labels or {}).join(counted[columns], on="id")
                     for split, frame in splits.items()}
        stats[name] = analysis.split_statistics(annotated, query_field=query_field, label_field=label_field,
                                                categorical_columns=categorical_columns, progress=False)
    return stats


def _named_labels(frame: pd.DataFrame, class_labels: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """``frame`` with each ClassLabel column of ``class_labels`` it has as names instead of class ids."""
    from lsplits.data.labels import decode_labels

    named = {column: decode_labels(frame[column], names) for column, names in class_labels.items()
             if column in frame.columns}
    return frame.assign(**named) if named else frame


def statistics_markdown(stats_by_config: Mapping[str, Mapping[str, Any]]) -> str:
    """One markdown section per config: the statistics table and the rare-word sentence."""
    parts = []
    for name, stats in stats_by_config.items():
        parts += [f"### `{name}`", "", analysis.statistics_markdown(stats).rstrip(), ""]
    return "\n".join(parts).rstrip()


def extra_statistics_markdown(extra: Mapping[str, Mapping[str, float]]) -> str:
    """A markdown table of per-config numbers (rows: configs; columns: the numbers' names)."""
    columns = list(dict.fromkeys(key for values in extra.values() for key in values))
    lines = ["| config | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    for name, values in extra.items():
        lines.append(f"| `{name}` | " + " | ".join(f"{values[c]:.4f}" if c in values else "-" for c in columns) + " |")
    return "\n".join(lines)


def statistics_text(stats_by_config: Mapping[str, Mapping[str, Any]]) -> str:
    """Plain-text statistics of every config (for the terminal)."""
    parts = []
    for name, stats in stats_by_config.items():
        parts += [f"== {name} ==", analysis.statistics_text(stats)]
    return "\n".join(parts).rstrip()


def eval_mask_frame(splits: Mapping[str, pd.DataFrame]) -> tuple[pd.DataFrame, np.ndarray]:
    """All examples of a config in one frame, and a mask of those in validation or test."""
    frame = pd.concat([splits[s] for s in splits], ignore_index=True)
    mask = np.concatenate([np.full(len(splits[s]), s != "train") for s in splits])
    return frame, mask


def config_plots(frames: Frames, stats_by_config: Mapping[str, Mapping[str, Any]],
                 out_dir: Path) -> list[tuple[str, str, Path]]:
    """Write the card's PNGs; returns (caption, path in repo, local file) for each."""
    written = []
    for name, splits in frames.items():
        frame, mask = eval_mask_frame(splits)
        repo_path = plot_path(f"{name}_score_vs_length")
        plots.plot_score_vs_length(frame, mask, out_dir / repo_path, title=f"{name}: score vs length")
        written.append((f"{name}: ll_score against query length, eval highlighted", repo_path, out_dir / repo_path))
        repo_path = plot_path(f"{name}_lengths")
        plots.plot_length_histograms(frame.loc[~mask, "length"], frame.loc[mask, "length"], out_dir / repo_path,
                                     title=f"{name}: query length, train vs eval")
        written.append((f"{name}: query length distribution, train vs eval", repo_path, out_dir / repo_path))
    repo_path = plot_path("rare_words")
    plots.plot_rare_words(analysis.rare_word_fractions(stats_by_config), out_dir / repo_path)
    written.append(("Share of examples with a rare word, train vs eval, per config", repo_path, out_dir / repo_path))
    return written


def analyze_folder(folder: str | Path, configs: Sequence[str] | None = None) -> str:
    """The statistics of a built dataset (a folder or a Hub id, :func:`~lsplits.building.dataset.open_dataset`)
    as text (``lsplits analyze``)."""
    from lsplits.building.dataset import open_dataset

    dataset = open_dataset(folder)
    frames, task = dataset.frames(configs), dataset.record.task
    stats = config_statistics(frames, query_field=task.query_field, label_field=task.label_field,
                              categorical_columns=task.categorical_columns)
    text = statistics_text(stats)
    extra = dataset.record.extra_statistics
    if extra:
        text = extra_statistics_markdown({k: v for k, v in extra.items() if k in frames}) + "\n\n" + text
    effects = constraint_text({k: v for k, v in dataset.record.constraint_effects.items() if k in frames})
    return f"{effects}\n\n{text}" if effects else text


def constraint_text(effects: Mapping[str, Mapping[str, Any]]) -> str:
    """One line per config of what the split policy's constraint did (``lsplits.json``'s ``constraint_effects``),
    "" when there is none."""
    from lsplits.splits.strategy import ConstraintEffect

    return "\n".join(f"{name}: {ConstraintEffect.from_dict(values).describe()}" for name, values in effects.items())
