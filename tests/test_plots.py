"""Plots: the figures hold the right points and bars, and the PNG files are written atomically."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import BarContainer

from lsplits.building.analysis import Share
from lsplits.building.plots import (
    length_histograms_figure,
    plot_length_histograms,
    plot_rare_words,
    plot_score_histogram,
    plot_score_vs_length,
    rare_words_figure,
    score_histogram_figure,
    score_vs_length_figure,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
DF = pd.DataFrame({"length": [3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
                   "ll_score": [-5.0, -6, -7, -8, -9, -30, -11, -40, -13, -50]})
EVAL_MASK = np.array([False] * 5 + [True, False, True, False, True])


def _assert_png(path, folder):
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 2000
    assert [p.name for p in folder.iterdir()] == [path.name]  # no temporary left behind


def test_scatter_has_train_and_eval_points():
    axes = score_vs_length_figure(DF, EVAL_MASK).axes[0]
    train, evaluation = axes.collections
    assert train.get_offsets().tolist() == [[3, -5], [4, -6], [5, -7], [6, -8], [7, -9], [9, -11], [11, -13]]
    assert evaluation.get_offsets().tolist() == [[8, -30], [10, -40], [12, -50]]
    assert [t.get_text() for t in axes.get_legend().get_texts()] == ["train (7)", "eval (3)"]


def test_scatter_subsamples_large_groups_and_checks_the_mask():
    axes = score_vs_length_figure(DF, EVAL_MASK, max_points=4).axes[0]
    train, evaluation = axes.collections
    sampled = train.get_offsets().tolist()
    assert len(sampled) == 4 and len({tuple(p) for p in sampled}) == 4
    assert all(p in DF[~EVAL_MASK].to_numpy().tolist() for p in sampled)
    assert len(evaluation.get_offsets()) == 3
    with pytest.raises(ValueError, match="eval_mask"):
        score_vs_length_figure(DF, EVAL_MASK[:-1])


def _step_heights(axes) -> list[float]:
    """Highest y of each step-histogram outline, in drawing order."""
    return [float(patch.get_xy()[:, 1].max()) for patch in axes.patches]


def test_length_histograms_use_one_bin_per_length_and_densities():
    axes = length_histograms_figure([1, 2, 2, 3], [3, 3]).axes[0]
    assert len(axes.patches) == 2
    assert _step_heights(axes) == [0.5, 1.0]  # train: length 2 holds half; eval: all at length 3
    train_outline = axes.patches[0].get_xy()
    assert train_outline[:, 0].min() == 0.5 and train_outline[:, 0].max() == 3.5


def test_score_histogram_handles_constant_and_missing_scores():
    axes = score_histogram_figure([-2.0, -2.0, np.nan], [-2.0], bins=4).axes[0]
    assert len(axes.patches) == 2
    only_train = score_histogram_figure([-1.0, -3.0], []).axes[0]
    assert len(only_train.patches) == 1


def test_rare_word_bars():
    shares = {"ll_split": {"train": Share(10, 100), "eval": Share(5, 20)}, "random": {"train": Share(3, 10), "eval": None}}
    axes = rare_words_figure(shares).axes[0]
    widths = sorted(round(bar.get_width(), 6) for bar in axes.patches)
    assert widths == [0.1, 0.25, 0.3]
    assert [t.get_text() for t in axes.get_yticklabels()] == ["ll_split", "random"]
    assert sorted(t.get_text() for t in axes.texts) == ["10.0% (10/100)", "25.0% (5/20)", "30.0% (3/10)"]


def test_rare_word_bars_carry_their_wilson_interval():
    z = 1.959963984540054
    axes = rare_words_figure({"ll_split": {"eval": Share(3, 10)}}).axes[0]
    (bars,) = [c for c in axes.containers if isinstance(c, BarContainer)]
    (low, _), (high, _) = bars.errorbar.lines[2][0].get_segments()[0]
    centre, half = (0.3 + z * z / 20) / (1 + z * z / 10), z / (1 + z * z / 10) * np.sqrt(0.021 + z * z / 400)
    assert (low, high) == pytest.approx((centre - half, centre + half))
    assert "95% Wilson interval" in axes.get_xlabel()


def test_rare_word_axis_labels_say_their_tick():
    """With whole percents the ticks at 2.5% and 12.5% read '2%' and '12%' (the demo dataset's chart)."""
    figure = rare_words_figure({"ll_split": {"train": Share(89, 2400), "eval": Share(65, 600)}})
    FigureCanvasAgg(figure).draw()
    ticks = [(t.get_position()[0], t.get_text()) for t in figure.axes[0].get_xticklabels()]
    assert len(ticks) >= 4
    for value, text in ticks:
        assert float(text.rstrip("%")) == pytest.approx(100 * value), text


def test_rare_word_labels_do_not_overlap():
    """Spider's config names: ll_split_reverse and ll_split_len_reverse once ran into each other (8 px apart)."""
    names = ["ll_split", "ll_split_len", "ll_split_reverse", "ll_split_len_reverse", "random", "length", "template",
             "tmcd"]
    shares = {name: {"train": Share(40 + i, 800), "eval": Share(i * 9, 206)} for i, name in enumerate(names)}
    figure = rare_words_figure(shares)
    FigureCanvasAgg(figure).draw()
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    low, high = axes.get_xlim()
    shown = [t for t in axes.get_xticklabels() if low <= t.get_position()[0] <= high]  # ticks beyond are not drawn
    texts = [t for t in [*shown, *axes.get_yticklabels(), *axes.texts] if t.get_text()]
    assert len(axes.texts) == 2 * len(names)
    page = figure.bbox
    for text in texts:
        box = text.get_window_extent(renderer)
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1, text
    # each text with half an em around it: two read as separate only with a gap of about a character between them
    boxes = [t.get_window_extent(renderer).padded(t.get_size() * figure.dpi / 72 / 2) for t in texts]
    for i, box in enumerate(boxes):
        for j in range(i):
            assert not box.overlaps(boxes[j]), (texts[i].get_text(), texts[j].get_text())


def test_each_plot_writes_a_png(tmp_path):
    writers = {
        "scatter": lambda p: plot_score_vs_length(DF, EVAL_MASK, p, title="demo"),
        "lengths": lambda p: plot_length_histograms(DF["length"][~EVAL_MASK], DF["length"][EVAL_MASK], p),
        "scores": lambda p: plot_score_histogram(DF["ll_score"][~EVAL_MASK], DF["ll_score"][EVAL_MASK], p),
        "rare": lambda p: plot_rare_words({"ll_split": {"train": Share(4, 100), "eval": Share(12, 100)}}, p),
    }
    for name, write in writers.items():
        folder = tmp_path / name
        target = folder / f"{name}.png"
        assert write(target) == target
        _assert_png(target, folder)
        write(target)  # overwriting an existing plot works
        _assert_png(target, folder)
