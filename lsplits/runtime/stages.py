"""Wall time and peak memory of each stage of a build, logged as the stage ends.

The build marks its stages (load, type unification, tokenizer, folds, scoring, split, export, card and
plots) with :func:`stage`; each end logs one DEBUG record (shown with ``-v``) on the ``lsplits.runtime.stages`` logger carrying a
:class:`StageTime` as ``record.stage_time``, so a caller (``benchmarks/build_scale.py``) collects the
figures by attaching a handler instead of timing the build itself. A stage entered several times (the
folds, scoring) logs each entry; sum the seconds and take the largest peak.

Peak RSS is the stage's own high-water mark where Linux lets a process reset it (``/proc/self/clear_refs``);
elsewhere it is the process's peak so far (``getrusage``), which can only grow.

>>> with stage("example"):
...     total = sum(range(1000))
>>> total
499500
"""

from __future__ import annotations

import contextlib
import logging
import resource
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


@dataclass(frozen=True)
class StageTime:
    """One stage's wall time and the process's CPU time (s, both without the stages nested in it; CPU time
    barely moves when other jobs share the cores) and peak resident memory (bytes, nested stages included);
    ``own_peak`` is False when the peak is the process's peak so far, not the stage's own."""

    name: str
    seconds: float
    cpu_seconds: float
    peak_rss: int
    own_peak: bool


def _high_water_mark() -> int | None:
    """The process's peak RSS since the last reset (VmHWM), in bytes; None where /proc has no such line."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_high_water_mark() -> bool:
    """Reset VmHWM to the current RSS (Linux); False where that is not possible."""
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


def _process_peak() -> int:
    """The process's peak RSS since it started, in bytes (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


_open: list[list[float]] = []  # per open stage: [highest VmHWM seen before an inner reset, nested wall, nested CPU]


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """Time the block as stage ``name`` and log its :class:`StageTime` when it ends (also on an error).

    Stages may nest: an inner stage's peak counts in the outer one's, its time does not.
    """
    if _open:  # an inner reset would hide the outer stage's peak so far: keep it
        _open[-1][0] = max(_open[-1][0], _high_water_mark() or 0)
    own = _reset_high_water_mark() and _high_water_mark() is not None
    _open.append([0, 0.0, 0.0])
    # a stage whose generator was left suspended (a frame kept by an interrupt's traceback) is closed at interpreter
    # exit, when module globals are gone: it then records nothing, instead of an "Exception ignored" traceback
    is_finalizing = sys.is_finalizing
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        if not is_finalizing():
            _end_stage(name, own, start, cpu_start)


def _end_stage(name: str, own: bool, start: float, cpu_start: float) -> None:
    """Log the :class:`StageTime` of the stage that started at ``start`` / ``cpu_start`` (the end of :func:`stage`)."""
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    seen, nested, nested_cpu = _open.pop()
    peak = int(max(seen, _high_water_mark() or 0)) if own else _process_peak()
    if _open:
        _open[-1][0] = max(_open[-1][0], peak)
        _open[-1][1] += seconds
        _open[-1][2] += cpu
    record = StageTime(name=name, seconds=seconds - nested, cpu_seconds=cpu - nested_cpu, peak_rss=peak,
                       own_peak=own)
    logger.debug("stage %s: %.2f s (%.2f s CPU), peak RSS %.0f MiB", name, record.seconds, record.cpu_seconds,
                peak / 2**20, extra={"stage_time": record})
