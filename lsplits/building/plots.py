"""Plots of a built split for the demo, dataset cards and the Gradio Space.

Each plot has two forms: ``*_figure(...)`` returns a matplotlib :class:`~matplotlib.figure.Figure`
(what a Gradio ``gr.Plot`` shows) and ``plot_*(..., path)`` writes it as a PNG atomically and
returns the path. Figures are built without pyplot, so nothing needs a display and no global
figure state is shared between threads.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from lsplits.building.analysis import Share
from lsplits.errors import InvalidInput
from lsplits.figure_style import legend_below
from lsplits.io.atomic import atomic_path
from lsplits.params import DEFAULT_CONFIDENCE

logger = logging.getLogger(__name__)

TRAIN_COLOR = "#9aa5b1"
EVAL_COLOR = "#d1495b"
_DPI = 120


def save_figure(figure: Figure, path: str | os.PathLike[str]) -> Path:
    """Write ``figure`` to ``path`` as a PNG, atomically, and return the path."""
    path = Path(path)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=_DPI, bbox_inches="tight")
    logger.debug("wrote plot %s", path)  # often a staging path: the final folder is logged by its writer
    return path


def _subsample(n: int, max_points: int | None, seed: int = 0) -> np.ndarray:
    """Sorted indices of at most ``max_points`` of ``n`` points (all when ``max_points`` is None)."""
    if max_points is None or n <= max_points:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=max_points, replace=False))


def score_vs_length_figure(df_all: pd.DataFrame, eval_mask: Sequence[bool] | np.ndarray, *,
                           score_column: str = "ll_score", length_column: str = "length",
                           title: str | None = None, max_points: int | None = 50_000) -> Figure:
    """Scatter of score against length for all examples, eval in colour over grey train.

    ``eval_mask`` is aligned with the rows of ``df_all``. Above ``max_points`` points of each
    group, a seeded sample of that many is drawn (large datasets stay readable and fast).
    """
    mask = np.asarray(eval_mask, dtype=bool)
    if len(mask) != len(df_all):
        raise InvalidInput(f"eval_mask has {len(mask)} entries for {len(df_all)} rows")
    lengths = df_all[length_column].to_numpy(dtype=float)
    scores = df_all[score_column].to_numpy(dtype=float)
    figure = Figure(figsize=(6.4, 4.6), layout="constrained")  # leaves room for the legend below
    axes = figure.add_subplot()
    for label, group, color, size in (("train", ~mask, TRAIN_COLOR, 6), ("eval", mask, EVAL_COLOR, 9)):
        x, y = lengths[group], scores[group]
        keep = _subsample(len(x), max_points)
        axes.scatter(x[keep], y[keep], s=size, c=color, alpha=0.6, linewidths=0,
                     label=f"{label} ({int(group.sum()):,})", rasterized=True)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel(f"{length_column} (words in the query)")
    axes.set_ylabel(f"{score_column} (sum of log-probabilities)")
    axes.set_title(title or "Score against length")
    legend_below(axes, fontsize=8, markerscale=2.5)
    return figure


def plot_score_vs_length(df_all: pd.DataFrame, eval_mask: Sequence[bool] | np.ndarray,
                         path: str | os.PathLike[str], **kwargs) -> Path:
    """Write :func:`score_vs_length_figure` to ``path`` (PNG) and return the path."""
    return save_figure(score_vs_length_figure(df_all, eval_mask, **kwargs), path)


def _histograms_figure(train: Sequence[float], evaluation: Sequence[float], bins: np.ndarray,
                       xlabel: str, ylabel: str, title: str) -> Figure:
    """Train and eval histograms on the same bins, normalised to densities (sizes differ)."""
    figure = Figure(figsize=(6.4, 4.2), layout="constrained")
    axes = figure.add_subplot()
    for label, values, color, dashes in (("train", train, TRAIN_COLOR, "-"), ("eval", evaluation, EVAL_COLOR, "--")):
        values = np.asarray(values, dtype=float)
        values = values[~np.isnan(values)]
        if len(values):  # dashed eval over solid train: both stay visible where they coincide
            axes.hist(values, bins=bins, density=True, histtype="step", linewidth=1.8, color=color, linestyle=dashes,
                      label=f"{label} ({len(values):,})")
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    legend_below(axes, fontsize=8)
    return figure


def _finite(*groups: Sequence[float]) -> np.ndarray:
    values = np.concatenate([np.asarray(g, dtype=float).ravel() for g in groups])
    return values[np.isfinite(values)]


def length_histograms_figure(train_lengths: Sequence[int], eval_lengths: Sequence[int], *,
                             title: str = "Query length, train vs eval") -> Figure:
    """Histograms of query length (one bin per integer length) for train and eval."""
    values = _finite(train_lengths, eval_lengths)
    low, high = (int(values.min()), int(values.max())) if len(values) else (0, 1)
    bins = np.arange(low - 0.5, high + 1.5, 1.0)
    figure = _histograms_figure(train_lengths, eval_lengths, bins, "length (words in the query)",
                                "share of examples", title)
    figure.axes[0].xaxis.set_major_locator(MaxNLocator(integer=True))
    return figure


def plot_length_histograms(train_lengths: Sequence[int], eval_lengths: Sequence[int],
                           path: str | os.PathLike[str], **kwargs) -> Path:
    """Write :func:`length_histograms_figure` to ``path`` (PNG) and return the path."""
    return save_figure(length_histograms_figure(train_lengths, eval_lengths, **kwargs), path)


def score_histogram_figure(train_scores: Sequence[float], eval_scores: Sequence[float], *, bins: int = 40,
                           title: str = "Score, train vs eval") -> Figure:
    """Histograms of ``ll_score`` for train and eval on ``bins`` shared equal-width bins."""
    values = _finite(train_scores, eval_scores)
    low, high = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
    edges = np.linspace(low, high if high > low else low + 1.0, bins + 1)
    return _histograms_figure(train_scores, eval_scores, edges, "ll_score (sum of log-probabilities)",
                              "density", title)


def plot_score_histogram(train_scores: Sequence[float], eval_scores: Sequence[float],
                         path: str | os.PathLike[str], **kwargs) -> Path:
    """Write :func:`score_histogram_figure` to ``path`` (PNG) and return the path."""
    return save_figure(score_histogram_figure(train_scores, eval_scores, **kwargs), path)


def rare_words_figure(shares: Mapping[str, Mapping[str, Share | None]], *,
                      xlabel: str = "examples with a rare word",
                      title: str = "Rare words, train vs eval",
                      confidence: float = DEFAULT_CONFIDENCE) -> Figure:
    """Horizontal grouped bars of shares, each with its Wilson interval and written ``share (count/n)``.

    One group per key of ``shares`` (a config, top to bottom; long names such as ``ll_split_len_reverse`` stay
    readable at the left), one bar per split inside it, e.g. ``{"ll_split": {"train": Share(4, 100),
    "eval": Share(12, 100)}}``; a missing or None share draws no bar.
    """
    groups = list(shares)
    splits = list(dict.fromkeys(split for group in groups for split in shares[group]))
    colors = dict(zip(splits, _split_colors(len(splits)), strict=True))
    figure = Figure(figsize=(6.4, 1.3 + (0.1 + 0.3 * max(len(splits), 1)) * max(len(groups), 1)),
                    layout="constrained")
    axes = figure.add_subplot()
    thickness = 0.8 / max(len(splits), 1)
    highest = 0.0
    for j, split in enumerate(splits):
        drawn = [(i, shares[group][split]) for i, group in enumerate(groups) if shares[group].get(split) is not None]
        if not drawn:
            continue
        ys = [i + (j - (len(splits) - 1) / 2) * thickness for i, _ in drawn]
        values = [share.fraction for _, share in drawn]
        intervals = np.array([share.interval(confidence) for _, share in drawn])
        errors = np.abs(intervals.T - np.array(values))  # distances below and above the share, as errorbar takes
        axes.barh(ys, values, height=thickness, color=colors[split], label=split,
                  xerr=errors, error_kw={"elinewidth": 1, "capsize": 2, "ecolor": "#333333"})
        for y, (_, share), high in zip(ys, drawn, intervals[:, 1], strict=True):
            axes.annotate(f"{share.fraction:.1%} ({share.count:,}/{share.n:,})", (high, y), xytext=(3, 0),
                          textcoords="offset points", va="center", fontsize=8)
        highest = max(highest, float(intervals[:, 1].max()))
    axes.set_xlim(0, max(highest, 0.01) / 0.68)  # room right of the widest interval for its text
    axes.set_yticks(range(len(groups)), groups)
    axes.set_ylim(len(groups) - 0.5, -0.5)  # first group on top
    axes.xaxis.set_major_formatter(PercentFormatter(1.0))  # as many decimals as the ticks need (2.5%, not 2%)
    axes.set_xlabel(f"{xlabel} (lines: {confidence:.0%} Wilson interval)")
    axes.set_title(title)
    if splits:
        legend_below(axes, columns=len(splits), fontsize=8)
    return figure


def _split_colors(n: int) -> list[str]:
    """Train grey, eval red, then further splits in a qualitative palette."""
    palette = [TRAIN_COLOR, EVAL_COLOR, "#edae49", "#00798c", "#30638e", "#003d5b"]
    return [palette[i % len(palette)] for i in range(n)]


def plot_rare_words(shares: Mapping[str, Mapping[str, Share | None]], path: str | os.PathLike[str],
                    **kwargs) -> Path:
    """Write :func:`rare_words_figure` to ``path`` (PNG) and return the path."""
    return save_figure(rare_words_figure(shares, **kwargs), path)
