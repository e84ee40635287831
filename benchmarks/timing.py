"""Wall-clock timing shared by the benchmark scripts (standard library only: LM-Polygraph's side imports it too)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def timed(function: Callable[..., Any], *args: Any) -> tuple[Any, float]:
    """(result, seconds): one call, or the best of five when a call takes under half a second."""
    start = time.perf_counter()
    result = function(*args)
    best = time.perf_counter() - start
    if best < 0.5:
        for _ in range(4):
            start = time.perf_counter()
            result = function(*args)
            best = min(best, time.perf_counter() - start)
    return result, best
