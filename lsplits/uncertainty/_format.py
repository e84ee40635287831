"""Number and markdown-table formatting shared by the uncertainty reports (:mod:`.report`, :mod:`.systems_report`)
and their figures (:mod:`.plots`), with the two things every one of them says alike: the fewest points a rank
correlation is given on (:data:`MIN_CORRELATION_POINTS`) and the mark of a constant uncertainty."""

from __future__ import annotations

import math
from collections.abc import Sequence

MIN_CORRELATION_POINTS = 5
"""The fewest points any rank correlation of the uncertainty reports rests on (rho, its p-value, a heatmap, a
figure): below 5 even a perfect rank correlation is not significant (exact p = 1/12 at n = 4, 1/3 at n = 3) and
rho takes a handful of values (+-1 and +-0.5 at n = 3, +-1 by construction at n = 2); below it none is computed."""

CONSTANT_MARK = "†"
"""Marks a PRR whose uncertainty is the same for every example (``PRRRow.constant_uncertainty``), in every report."""


def number(value: float | None, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals, ``n/a`` for None or NaN, and never ``-0.000`` from rounding noise."""
    if value is None or math.isnan(value):
        return "n/a"
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """The lines of a markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def too_few_points(n: int, what: str) -> str | None:
    """The sentence said in place of a correlation table or figure over ``n`` ``what`` (``"example(s)"``) when
    that is below :data:`MIN_CORRELATION_POINTS`; None when there are enough."""
    if n >= MIN_CORRELATION_POINTS:
        return None
    return (f"Not computed: {n} {what}, and a rank correlation needs at least {MIN_CORRELATION_POINTS} points "
            "(below that even a perfect one is not significant, and rho takes only a few values).")


def rho(value: float, n: int) -> str:
    """A rank correlation over ``n`` points, ``n/a`` below :data:`MIN_CORRELATION_POINTS`."""
    return number(value) if n >= MIN_CORRELATION_POINTS else "n/a"
