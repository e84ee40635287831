"""Shared looks of every lsplits figure: distinguishable lines and legends that never cover the data.

Used by the build's plots (:mod:`lsplits.building.plots`), the uncertainty figures (:mod:`lsplits.uncertainty.plots`)
and the difficulty report.
"""

from __future__ import annotations

# Each line of a panel differs from the others by colour AND dash pattern (readable in greyscale and by
# colour-blind readers); black is kept for the Oracle and Random references.
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
DASHES = ("-", "--", "-.", ":", (0, (6, 1.5, 1, 1.5, 1, 1.5)), (0, (1, 2.5)), (0, (8, 3)), (0, (3, 1, 3, 4)))
MAX_LINES = len(COLOURS)  # lines per panel, references included

ORACLE_STYLE = {"color": "black", "linestyle": (0, (14, 2, 2, 2))}
RANDOM_STYLE = {"color": "black", "linestyle": (0, (4, 2))}


def line_style(index: int) -> dict:
    """Matplotlib keywords for the ``index``-th line of a panel: a distinct colour and dash pattern (up to MAX_LINES)."""
    return {"color": COLOURS[index % len(COLOURS)], "linestyle": DASHES[index % len(DASHES)]}


def legend_below(axes, columns: int = 2, fontsize: float = 7, **kwargs) -> None:
    """The legend under the axes, outside the data area (a legend never hides a curve); ``kwargs`` to ``legend``."""
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=columns, fontsize=fontsize, frameon=False,
                **kwargs)


def legend_right(axes, fontsize: float = 8, **kwargs) -> None:
    """The legend right of the axes, outside the data area (for axes whose x labels leave no room below)."""
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=fontsize, frameon=False, **kwargs)
