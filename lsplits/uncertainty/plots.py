"""Figures of the uncertainty study: prediction-rejection curves, annotated heatmaps and the cross-system figures.

The one place that draws them, for the ``lsplits ue`` report (:mod:`.report`), the cross-system
report (:mod:`.systems_report`: Figures 1, 2, 4, 5, 6/8/11 and 7/9/10 of a
:class:`~lsplits.uncertainty.systems.SystemsStudy`) and the Space's uncertainty tab. Every figure is a matplotlib
``Figure`` made outside pyplot's global state (safe in a threaded web app, nothing to close); the
caller saves or shows it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from lsplits.figure_style import (  # noqa: F401 - re-exported: the uncertainty figures' styles
    COLOURS,
    DASHES,
    MAX_LINES,
    ORACLE_STYLE,
    RANDOM_STYLE,
    legend_below,
    line_style,
)
from lsplits.similarity.registry import display
from lsplits.uncertainty._format import number, rho, too_few_points
from lsplits.uncertainty.prr import RejectionCurve
from lsplits.uncertainty.study import method_family
from lsplits.uncertainty.systems import PERFORMANCE_METRIC, SystemsStudy, family_order


def new_figure(width: float, height: float):
    """A matplotlib Figure outside pyplot's global state."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def legend_under_figure(figure, axes, fontsize: float = 8) -> None:
    """One legend for every panel (taken from ``axes``) along the figure's bottom, then a layout that leaves it room."""
    handles, labels = axes.get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=fontsize, frameon=False)
    rows = math.ceil(len(labels) / 6)
    figure.tight_layout(rect=(0, min(0.3, 0.4 * rows / figure.get_figheight()), 1, 1))


def method_panels(methods: Sequence[str], per_panel: int = MAX_LINES - 2,
                  family: Callable[[str], str] = method_family) -> list[list[str]]:
    """``methods`` grouped into panels of at most ``per_panel``: whole estimator families packed in order.

    A family is split only when it alone has more than ``per_panel`` methods (into near-equal parts).
    """
    families: dict[str, list[str]] = {}
    for method in methods:
        families.setdefault(family(method), []).append(method)
    groups = []
    for members in families.values():
        parts = math.ceil(len(members) / per_panel)
        size = math.ceil(len(members) / parts)
        groups += [members[i:i + size] for i in range(0, len(members), size)]
    panels: list[list[str]] = []
    for group in groups:
        if panels and len(panels[-1]) + len(group) <= per_panel:
            panels[-1] += group
        else:
            panels.append(list(group))
    return panels


def _style_indices(methods: Sequence[str], panels: Sequence[Sequence[str]]) -> dict[str, int]:
    """A line-style index per method: by its similarity (the label after the family), so EigV-Smatch and
    Ecc-Smatch look alike in their two panels; by position in the panel where that would repeat a style in it."""
    keys = list(dict.fromkeys(m.split("-", 1)[1] if "-" in m else m for m in methods))
    by_similarity = {m: keys.index(m.split("-", 1)[1] if "-" in m else m) % MAX_LINES for m in methods}
    indices = {}
    for members in panels:
        chosen = [by_similarity[m] for m in members]
        if len(set(chosen)) < len(chosen):
            chosen = list(range(len(members)))
        indices.update(zip(members, chosen))
    return indices


def _panel_title(methods: Sequence[str]) -> str:
    return " + ".join(dict.fromkeys(method_family(m) for m in methods))


def rejection_figure(curves: Mapping[str, RejectionCurve], quality_label: str, title: str,
                     methods: Sequence[str] | None = None,
                     decorate: Callable[[object, list[str]], None] | None = None):
    """Prediction-rejection curves of ``methods`` (default: all of ``curves``), with the oracle and random rejection.

    ``curves`` are one quality's curves (:attr:`Study.curves[k, quality] <lsplits.uncertainty.study.Study>`),
    so they share their oracle and random curves; ``quality_label`` names the quality on the y axis. The methods
    are faceted by estimator family (:func:`method_panels`) so that no panel holds more than ``MAX_LINES``
    lines; each panel's legend sits below it. ``decorate(axes, panel_methods)``, when given, draws extra
    artists on each panel (e.g. an operating point) before its legend is made, so their labels are listed.
    """
    methods = list(curves) if methods is None else list(methods)
    panels = method_panels(methods)
    columns = min(2, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure = new_figure(5.0 * columns + 0.4, 4.3 * rows + 0.5)
    figure.set_layout_engine("constrained")
    grid = figure.subplots(rows, columns, squeeze=False, sharey=True)
    reference = curves[methods[0]]
    styles = _style_indices(methods, panels)
    for axes, members in zip(grid.ravel(), panels, strict=False):
        for method in members:
            curve = curves[method]
            axes.plot(curve.rates, curve.uncertainty, linewidth=1.6, label=method, **line_style(styles[method]))
        axes.plot(reference.rates, reference.oracle, label="Oracle", linewidth=2.6, alpha=0.4, **ORACLE_STYLE)
        axes.plot(reference.rates, reference.random, label="Random", linewidth=1.2, **RANDOM_STYLE)
        axes.set_title(_panel_title(members), fontsize=10)
        axes.set_xlabel("rejection rate (most uncertain rejected first)", fontsize=8)
        axes.set_ylabel(f"mean {quality_label} of kept", fontsize=8)
        axes.grid(alpha=0.25)
        if decorate is not None:
            decorate(axes, members)
        legend_below(axes)
    for extra in grid.ravel()[len(panels):]:
        extra.set_visible(False)
    figure.suptitle(title, fontsize=11)
    return figure


def operating_points(points: Mapping[str, tuple[float, float]], target: float | None, target_label: str,
                     label: str) -> Callable[[object, list[str]], None]:
    """A ``decorate`` hook for :func:`rejection_figure`: a dot at ``points[method]`` (rejection rate, mean quality
    of kept) in each method's line colour, one legend entry ``label``; a thin unlabelled line at ``target``
    (named ``target_label``; only said in a corner when it lies outside the curves' range)."""

    def decorate(axes, methods: list[str]) -> None:
        colours = {line.get_label(): line.get_color() for line in axes.get_lines()}
        low, high = axes.get_ylim()
        if target is not None and low <= target <= high:
            axes.axhline(target, color="grey", linewidth=0.8, linestyle=":")
            axes.annotate(target_label, (0.01, target), xycoords=("axes fraction", "data"), fontsize=7,
                          color="grey", va="bottom")
        elif target is not None:  # said, not drawn: a far-away line would squash the curves
            axes.annotate(f"{target_label}: {'below' if target < low else 'above'} the axis", (0.01, 0.02),
                          xycoords="axes fraction", fontsize=7, color="grey")
        shown = [m for m in methods if m in points]
        for i, method in enumerate(shown):
            axes.plot([points[method][0]], [points[method][1]], marker="o", markersize=7, linestyle="none",
                      markerfacecolor=colours.get(method, "black"), markeredgecolor="black",
                      label=label if i == 0 else None)

    return decorate


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


def p_value_figure(rules: Mapping[str, object], title: str):
    """The p-value curve of each calibrated rule (:class:`~lsplits.uncertainty.selective.SelectiveThreshold`):
    the p-value of "risk above target" against the calibration coverage of each candidate threshold, log
    scale, with delta dashed; filled markers are the thresholds the procedure certified, a ring the chosen one.
    Shows how far each candidate is from being certified, not only the one chosen."""
    figure = new_figure(7.0, 4.3)
    axes = figure.subplots()
    delta = None
    for index, (method, rule) in enumerate(rules.items()):
        style = line_style(index)
        p = np.maximum(np.asarray(rule.p_values, dtype=float), 1e-12)  # a p-value of 0 still shows on a log axis
        coverage = np.asarray(rule.candidate_coverages, dtype=float)
        valid = np.asarray(rule.valid, dtype=bool)
        (line,) = axes.plot(coverage, p, linewidth=1.4, label=method, **style)
        axes.plot(coverage[valid], p[valid], "o", markersize=4, color=line.get_color())
        if rule.certified:
            chosen = int(np.argmin(np.abs(np.asarray(rule.candidates) - rule.threshold)))
            axes.plot(coverage[chosen], p[chosen], "o", markersize=10, markerfacecolor="none",
                      color=line.get_color())
        delta = rule.delta
    if delta is not None:
        axes.axhline(delta, color="black", linestyle="--", linewidth=1, label=f"delta = {delta:g}")
    axes.plot([], [], "o", color="gray", markersize=4, label="certified (valid)")
    axes.plot([], [], "o", color="gray", markersize=10, markerfacecolor="none", label="chosen threshold")
    axes.set_yscale("log")
    axes.set_xlabel("calibration coverage of the candidate threshold (share kept)", fontsize=8)
    axes.set_ylabel("p-value of risk > target (joint over risks)", fontsize=8)
    axes.grid(alpha=0.25)
    axes.set_title(title, fontsize=10)
    axes.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, frameon=False)
    figure.tight_layout()
    return figure


# --- the cross-system figures (lsplits ue --system: uncertainty.systems_report) ------------------------


def figure1(study: SystemsStudy):
    """Grouped bars: mean PRR per system, one bar per quality metric, values printed on the bars."""
    figure = new_figure(max(6.0, 1.4 * len(study.names) + 2), 4.2)
    axes = figure.subplots()
    width = 0.8 / max(1, len(study.qualities))
    x = np.arange(len(study.names))
    for i, quality in enumerate(study.qualities):
        values = [study.mean_by_system[s, quality] for s in study.names]
        bars = axes.bar(x + (i - (len(study.qualities) - 1) / 2) * width, values, width, label=display(quality))
        axes.bar_label(bars, labels=[number(v) for v in values], fontsize=7, padding=2)
        for bar, value in zip(bars, values, strict=True):
            if math.isnan(value):  # no mean: every PRR of that system constant or undefined (the report says which)
                axes.annotate("n/a", (bar.get_x() + bar.get_width() / 2, 0), ha="center", va="bottom", fontsize=7,
                              xytext=(0, 2), textcoords="offset points")
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set_xticks(x, study.names, rotation=20 if len(study.names) > 4 else 0)
    axes.set_ylabel("Mean PRR (all UE methods, all beams)")
    axes.set_title("Mean PRR per system and quality metric")
    legend_below(axes, columns=len(study.qualities), fontsize=8)
    figure.tight_layout()
    return figure


def figure2(study: SystemsStudy):
    """Mean PRR against beam size, one line per system."""
    figure = new_figure(6.4, 4.2)
    axes = figure.subplots()
    for index, name in enumerate(study.names):
        axes.plot(study.beam_sizes, [study.mean_by_beam[name, k] for k in study.beam_sizes], marker="o", label=name,
                  **line_style(index))
    axes.axhline(0, color="black", linewidth=0.8, linestyle=":")
    axes.set_xticks(study.beam_sizes)
    axes.set_xlabel("Beam size k")
    axes.set_ylabel("Mean PRR (UE methods x quality metrics)")
    axes.set_title("Mean PRR against beam size")
    legend_below(axes, columns=min(4, len(study.names)), fontsize=8)
    figure.tight_layout()
    return figure


def _panels(count: int, width: float = 3.6, height: float = 3.0):
    columns = min(3, count)
    rows = math.ceil(count / columns)
    figure = new_figure(width * columns, height * rows)
    axes = figure.subplots(rows, columns, sharey=True, squeeze=False)
    for extra in axes.ravel()[count:]:
        extra.set_visible(False)
    return figure, axes.ravel()


def families_figure(study: SystemsStudy, quality: str):
    """Figures 7/9/10: one panel per system, PRR of each estimator family against beam size, and random (0)."""
    figure, panels = _panels(len(study.names))
    families = sorted({f for (_, q, _, f) in study.families if q == quality}, key=family_order)
    for axes, name in zip(panels, study.names, strict=False):
        for index, family in enumerate(families):
            axes.plot(study.beam_sizes, [study.families[name, quality, k, family] for k in study.beam_sizes],
                      marker="o", label=family, **line_style(index))
        axes.set_title(name)
        axes.set_xticks(study.beam_sizes)
        axes.set_xlabel("Beam size k")
        axes.set_ylabel(f"PRR ({display(quality)})")
    values = [v for (_, q, _, _), v in study.families.items() if q == quality and np.isfinite(v)]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    pad = max(0.02, 0.15 * (high - low))
    shown = low - pad <= 0  # the axis spans the data, so differences show; Random (PRR 0) when it is in range
    for axes in panels[:len(study.names)]:
        axes.axhline(0, linewidth=1, label="Random (PRR 0)" if shown else "Random: PRR 0, below the axis",
                     **RANDOM_STYLE)
    panels[0].set_ylim((min(low - pad, 0.0), max(high + pad, 0.0)) if shown else (low - pad, high + pad))  # shared
    figure.suptitle(f"PRR vs beam size, quality: {display(quality)}")
    legend_under_figure(figure, panels[0])
    return figure


def stability_figure(study: SystemsStudy):
    """Figure 5: heatmaps of mean PRR over systems, estimator x beam size, one panel per quality metric."""
    count = len(study.qualities)
    figure = new_figure(1.6 + 2.6 * count, 0.32 * len(study.methods) + 1.8)
    axes = figure.subplots(1, count, squeeze=False)
    matrices = {q: np.array([[study.stability[q, m, k] for k in study.beam_sizes] for m in study.methods])
                for q in study.qualities}
    finite = np.concatenate([np.abs(m[np.isfinite(m)]) for m in matrices.values()])
    limit = max(0.05, float(finite.max())) if finite.size else 1.0
    for index, (panel, quality) in enumerate(zip(axes[0], study.qualities, strict=True)):
        image = correlation_heatmap(panel, matrices[quality], study.methods if index == 0 else None,
                         [f"k={k}" for k in study.beam_sizes], limit)
        panel.set_title(display(quality), fontsize=9)
    figure.colorbar(image, ax=list(axes[0]), label="Mean PRR")
    figure.suptitle(f"UE method stability across beam sizes (mean PRR over {len(study.names)} systems)")
    return figure


def agreement_figure(study: SystemsStudy, quality: str):
    """Figures 6/8/11: Spearman correlation between the estimators' PRR over system x beam-size configurations."""
    size = 0.42 * len(study.methods) + 2.5
    figure = new_figure(size + 1, size)
    axes = figure.subplots()
    image = correlation_heatmap(axes, study.agreement[quality], study.methods, study.methods, 1.0)
    axes.set_title(f"Pairwise Spearman correlation, {display(quality)}, across {len(study.names)} systems x "
                   f"{len(study.beam_sizes)} beams", fontsize=9)
    figure.colorbar(image, ax=axes, label="Spearman rho")
    figure.tight_layout()
    return figure


def performance_figure(study: SystemsStudy):
    """Figure 4: top-1 Smatch against mean PRR over estimators, a point per system and beam size (the means of
    :attr:`~lsplits.uncertainty.systems.SystemsStudy.mean_by_point`); a quality metric with too few points for its
    rho gets the sentence why in place of its panel."""
    count = len(study.qualities)
    figure = new_figure(4.0 * count, 3.6)
    axes = figure.subplots(1, count, squeeze=False)
    by_quality = {c.quality: c for c in study.correlations}
    markers = "os^Dv<>p*h"
    keyed = None  # the first drawn panel: it carries the markers' key and the figure's legend
    for panel, quality in zip(axes[0], study.qualities, strict=True):
        correlation = by_quality[quality]
        note = too_few_points(correlation.n_points, "point(s)")
        if note is not None:
            panel.text(0.5, 0.5, f"{display(quality)}: {note}", ha="center", va="center", wrap=True, fontsize=8,
                       transform=panel.transAxes)
            panel.set_axis_off()
            continue
        for index, name in enumerate(study.names):
            x = study.table1[name][PERFORMANCE_METRIC]
            shown = [(j, study.mean_by_point[name, k, quality]) for j, k in enumerate(study.beam_sizes)
                     if not math.isnan(study.mean_by_point[name, k, quality])]  # NaN: constant or undefined PRRs
            for first, (j, y) in enumerate(shown):
                panel.scatter(x, y, color=f"C{index}", marker=markers[j % len(markers)],
                              label=name if first == 0 else None)
        if keyed is None:  # the markers' key, beside the systems' colours
            keyed = panel
            for j, k in enumerate(study.beam_sizes):
                panel.scatter([], [], color="0.45", marker=markers[j % len(markers)], label=f"k = {k}")
        panel.set_title(f"{display(quality)}: rho = {rho(correlation.rho_points, correlation.n_points)}", fontsize=9)
        panel.set_xlabel(f"Top-1 {display(PERFORMANCE_METRIC)}")
        panel.set_ylabel("Mean PRR (across UE methods)")
    figure.suptitle("PRR vs parser accuracy (colour: system, marker: beam size)")
    legend_under_figure(figure, axes[0][0] if keyed is None else keyed)
    return figure


def amr_graph_figure(penman_text: str, title: str = ""):
    """A drawing of one AMR graph (its concepts as nodes, roles on the edges, the root on top, one row per depth),
    laid out and drawn by networkx; None when the text is not a graph or networkx 3.3+ (a dependency of torch) is
    missing."""
    try:
        import networkx as nx
        import penman
    except ImportError:
        return None
    if not hasattr(nx, "bfs_layout"):  # networkx < 3.3
        return None
    try:
        graph = penman.decode(penman_text)
    except (penman.DecodeError, ValueError):
        return None
    if not graph.instances():
        return None
    drawn = nx.DiGraph()
    for source, _, concept in graph.instances():
        drawn.add_node(source, label=concept or "?")
    for position, (source, role, value) in enumerate(graph.attributes()):
        drawn.add_node(f"{source}{role}#{position}", label=str(value))
        drawn.add_edge(source, f"{source}{role}#{position}", label=role)
    for source, role, target in graph.edges():
        drawn.add_edge(source, target, label=role)
    positions = nx.bfs_layout(drawn.to_undirected(as_view=True), graph.top, align="horizontal")
    top_y = positions[graph.top][1]
    if any(y > top_y for _, y in positions.values()):  # the root's row on top
        positions = {node: (x, -y) for node, (x, y) in positions.items()}
    rows = len({round(y, 6) for _, y in positions.values()})
    widest = max(sum(1 for _, y in positions.values() if round(y, 6) == row) for row in
                 {round(y, 6) for _, y in positions.values()})
    figure = new_figure(min(14.0, 2.0 + 1.6 * widest), min(10.0, 1.5 + 1.2 * rows))
    axes = figure.add_subplot()
    labels = nx.get_node_attributes(drawn, "label")
    concepts = [node for node in drawn if node in {source for source, _, _ in graph.instances()}]
    nx.draw_networkx_edges(drawn, positions, ax=axes, arrows=True, arrowsize=10, edge_color="0.55",
                           node_size=1600)
    nx.draw_networkx_edge_labels(drawn, positions, edge_labels=nx.get_edge_attributes(drawn, "label"), ax=axes,
                                 font_size=7, font_color="0.25", rotate=False)
    nx.draw_networkx_labels(drawn, positions, labels={n: labels[n] for n in concepts}, ax=axes, font_size=8,
                            bbox={"boxstyle": "round,pad=0.3", "facecolor": COLOURS[0], "alpha": 0.25,
                                  "edgecolor": COLOURS[0]})
    nx.draw_networkx_labels(drawn, positions, labels={n: labels[n] for n in drawn if n not in concepts}, ax=axes,
                            font_size=8, font_color="0.2")
    axes.set_title(title, fontsize=9)
    axes.axis("off")
    axes.margins(0.12)
    figure.tight_layout()
    return figure
