"""The rejection-curve figure stays readable with any number of methods: facets, styles, legends."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from lsplits.uncertainty.plots import MAX_LINES, method_panels, rejection_figure
from lsplits.uncertainty.prr import RejectionCurve
from lsplits.uncertainty.study import method_family

GRAPH = ("Smatch", "Smatch++", "S2match", "SEMA", "WLK")
LEXICAL = ("LexSim", "LexSim-ROUGE-1", "LexSim-ROUGE-2", "LexSim-BLEU", "LexSim-ROUGE-L+stem",
           "LexSim-ROUGE-1+stem", "LexSim-ROUGE-2+stem")
FAMILIES = ("EigV", "Ecc", "DegMat", "NumSemSets", "LabelProb", "SemEnt", "LUQ", "KLE")
PAPER = ["LexSim", *(f"{f}-{s}" for f in ("EigV", "DegMat", "Ecc") for s in GRAPH)]
EVERY = [*LEXICAL, *(f"{f}-{s}" for f in FAMILIES for s in GRAPH)]


def curves(methods):
    rng = np.random.default_rng(0)
    rates = np.linspace(0, 0.9, 10)
    oracle = np.linspace(0.8, 1.0, 10)
    return {m: RejectionCurve(rates, np.sort(rng.uniform(0.8, 1.0, 10)), oracle, np.full(10, 0.8)) for m in methods}


@pytest.mark.parametrize("methods", [PAPER, EVERY, PAPER[:3]], ids=["paper-16", "every-47", "three"])
def test_panels_keep_families_whole_and_small(methods):
    panels = method_panels(methods)
    assert [m for panel in panels for m in panel] == methods
    assert all(len(panel) <= MAX_LINES - 2 for panel in panels)  # + Oracle + Random
    for family in {method_family(m) for m in methods}:
        members = [m for m in methods if method_family(m) == family]
        holding = [panel for panel in panels if any(method_family(m) == family for m in panel)]
        if len(members) <= MAX_LINES - 2:
            assert len(holding) == 1, family
    assert len(method_panels(PAPER)) == 3  # LexSim + EigV, DegMat, Ecc


@pytest.mark.parametrize("methods", [PAPER, EVERY], ids=["paper-16", "every-47"])
def test_every_panel_has_distinct_colours_and_dashes_and_a_legend_off_the_data(methods):
    figure = rejection_figure(curves(methods), "Smatch++", "title")
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    visible = [axes for axes in figure.axes if axes.get_visible()]
    assert len(visible) == len(method_panels(methods))
    plotted = []
    for axes in visible:
        lines = axes.get_lines()
        assert len(lines) <= MAX_LINES
        colours = [line.get_color() for line in lines if line.get_label() not in ("Oracle", "Random")]
        dashes = [line._dash_pattern for line in lines]  # (offset, on-off sequence) as drawn; no public getter
        assert len(set(colours)) == len(colours), colours
        assert len({str(d) for d in dashes}) == len(dashes), dashes
        legend = axes.get_legend().get_window_extent(renderer)
        assert legend.y1 <= axes.get_window_extent(renderer).y0  # wholly below the data area
        plotted += [line.get_label() for line in lines if line.get_label() not in ("Oracle", "Random")]
    assert plotted == methods


def test_the_same_similarity_looks_alike_across_panels():
    figure = rejection_figure(curves(PAPER), "Smatch++", "title")
    style = {line.get_label(): (line.get_color(), str(line._dash_pattern)) for axes in figure.axes
             for line in axes.get_lines()}
    for similarity in GRAPH:
        assert style[f"EigV-{similarity}"] == style[f"Ecc-{similarity}"] == style[f"DegMat-{similarity}"]


def test_decorate_draws_on_every_panel_before_the_legend():
    seen = []

    def mark(axes, members):
        seen.append(list(members))
        axes.axvline(0.5, color="grey", label="operating point")

    figure = rejection_figure(curves(PAPER), "Smatch++", "title", decorate=mark)
    assert seen == method_panels(PAPER)
    for axes in figure.axes:
        if axes.get_visible():
            assert "operating point" in [t.get_text() for t in axes.get_legend().get_texts()]
