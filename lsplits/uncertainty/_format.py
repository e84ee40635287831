"""Number and markdown-table formatting shared by the uncertainty reports (:mod:`.report`, :mod:`.systems_report`)
and their figures (:mod:`.plots`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

MIN_CORRELATION_POINTS = 3
"""A rank correlation over fewer points is not reported (2 points give +-1 by construction)."""


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


def rho(value: float, n: int) -> str:
    """A rank correlation over ``n`` points, ``n/a`` below :data:`MIN_CORRELATION_POINTS`."""
    return number(value) if n >= MIN_CORRELATION_POINTS else "n/a"
