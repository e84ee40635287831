"""Wall-clock timing shared by the benchmark scripts (standard library and numpy only: LM-Polygraph's side imports it too)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np


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


class Recorder:
    """Each side's results by name (as float arrays) and their best times, filled one timed call at a time."""

    def __init__(self) -> None:
        self.values: dict[str, np.ndarray] = {}
        self.seconds: dict[str, float] = {}

    def record(self, name: str, function: Callable[..., Any], *args: Any) -> None:
        """Time ``function(*args)`` with :func:`timed`; keep its value under ``name`` and its seconds."""
        value, took = timed(function, *args)
        self.values[name] = np.asarray(value, dtype=float)
        self.seconds[name] = took
