"""Figures of the uncertainty study: prediction-rejection curves and annotated heatmaps.

The one place that draws them, for the ``lsplits ue`` report (:mod:`.report`), the cross-system
report (:mod:`.systems_report`) and the Space's uncertainty tab. Every figure is a matplotlib
``Figure`` made outside pyplot's global state (safe in a threaded web app, nothing to close); the
caller saves or shows it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from lsplits.uncertainty._format import number
from lsplits.uncertainty.prr import RejectionCurve


def new_figure(width: float, height: float):
    """A matplotlib Figure outside pyplot's global state."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def rejection_figure(curves: Mapping[str, RejectionCurve], quality_label: str, title: str,
                     methods: Sequence[str] | None = None):
    """Prediction-rejection curves of ``methods`` (default: all of ``curves``), with the oracle and random rejection.

    ``curves`` are one quality's curves (:attr:`Study.curves[k, quality] <lsplits.uncertainty.study.Study>`),
    so they share their oracle and random curves; ``quality_label`` names the quality on the y axis.
    """
    methods = list(curves) if methods is None else list(methods)
    many = len(methods) > 6
    figure = new_figure(7.0, 4.5)
    axes = figure.add_subplot()
    for method in methods:
        curve = curves[method]
        axes.plot(curve.rates, curve.uncertainty, linewidth=1 if many else 1.5, label=method)
    reference = curves[methods[0]]
    axes.plot(reference.rates, reference.oracle, "k-", linewidth=2, label="Oracle")
    axes.plot(reference.rates, reference.random, "k--", linewidth=2, label="Random")
    axes.set_xlabel("rejection rate (most uncertain rejected first)")
    axes.set_ylabel(f"mean {quality_label} of kept predictions")
    axes.set_title(title)
    axes.legend(fontsize=6 if many else 8, ncol=2 if many else 1, loc="lower right")
    figure.tight_layout()
    return figure


def heatmap(axes, matrix: np.ndarray, rows: Sequence[str] | None, columns: Sequence[str], *, vmin: float,
            vmax: float, cmap: str, dark: Callable[[float], bool], fontsize: float = 6, digits: int = 2):
    """An annotated heatmap on ``axes`` (white text where ``dark(value)``; row labels only when given); the image."""
    image = axes.imshow(matrix, vmin=vmin, vmax=vmax, cmap=cmap, aspect="auto")
    for (r, c), value in np.ndenumerate(matrix):
        light = not math.isnan(value) and dark(value)
        axes.text(c, r, number(value, digits), ha="center", va="center", fontsize=fontsize,
                  color="white" if light else "black")
    axes.set_xticks(range(len(columns)), columns, rotation=45, ha="right", fontsize=fontsize + 1)
    if rows is None:
        axes.set_yticks([])
    else:
        axes.set_yticks(range(len(rows)), rows, fontsize=fontsize + 1)
    return image


def correlation_heatmap(axes, matrix: np.ndarray, rows: Sequence[str] | None, columns: Sequence[str], limit: float):
    """A heatmap on a diverging scale from -limit to limit (correlations, PRRs)."""
    return heatmap(axes, matrix, rows, columns, vmin=-limit, vmax=limit, cmap="RdBu",
                   dark=lambda value: abs(value) > 0.6 * limit)


def similarity_matrix_figure(values: np.ndarray, labels: Sequence[str], title: str):
    """One example's candidate-by-candidate similarity matrix, values in [0, 1]."""
    figure = new_figure(5.2, 4.4)
    axes = figure.add_subplot()
    image = heatmap(axes, values, labels, labels, vmin=0.0, vmax=1.0, cmap="viridis", dark=lambda value: value < 0.6,
                    fontsize=8)
    axes.set_aspect("equal")
    axes.set_title(title, fontsize=10)
    figure.colorbar(image, ax=axes, fraction=0.046)
    figure.tight_layout()
    return figure
