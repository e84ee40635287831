"""The one progress helper of every lsplits bar: a tqdm bar on a terminal, a periodic log line elsewhere.

Piped or redirected output (CI logs, ``nohup``, ``| tee``) must not fill with carriage-return redraws and
escape codes, so without a TTY on stderr a bar becomes an INFO line on the ``lsplits.runtime.progress`` logger at
most every :data:`LOG_INTERVAL_S` seconds, with the count, rate and ETA; a bar that finishes within the
interval writes nothing. Both kinds are ``tqdm`` objects (same ``update``/``set_postfix``/iteration API;
Gradio's ``track_tqdm`` follows them too).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import Any

from tqdm.std import tqdm as _std_tqdm

logger = logging.getLogger(__name__)

LOG_INTERVAL_S = 10.0
"""Seconds between two progress log lines of one bar (without a TTY)."""

_LOG_FORMAT = "{desc}: {n_fmt}/{total_fmt} ({percentage:.0f}%), {rate_fmt}, elapsed {elapsed}, ETA {remaining}{postfix}"
_LOG_FORMAT_NO_TOTAL = "{desc}: {n_fmt}, {rate_fmt}, elapsed {elapsed}{postfix}"


_silenced = False


def silence_bars(silenced: bool = True) -> None:
    """After a command's last line (an interrupt's), bars closed later (unwinding frames, the garbage collector,
    exit) log nothing, so no progress line follows it; ``silence_bars(False)`` as the next command starts."""
    global _silenced
    _silenced = silenced


class _Discard:
    """A write-only stream that drops everything (tqdm's ``file`` when the bar is logged instead)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        return None


class LogProgress(_std_tqdm):
    """A tqdm bar that logs one line per :data:`LOG_INTERVAL_S` instead of redrawing a terminal line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._logged_at: float | None = None
        self._logged_n: int | None = None
        kwargs.setdefault("mininterval", LOG_INTERVAL_S)
        kwargs["file"] = _Discard()
        super().__init__(*args, **kwargs)

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        """Log the state when LOG_INTERVAL_S has passed since the last line (never the empty start or a clear)."""
        if msg == "" or self.n == 0 or _silenced:
            return True
        now = self._time()
        if self._logged_at is not None and now - self._logged_at < LOG_INTERVAL_S:
            return True
        if self._logged_at is None and now - self.start_t < LOG_INTERVAL_S:
            return True  # a bar that finishes quickly stays silent
        self._log(now)
        return True

    def _log(self, now: float) -> None:
        self._logged_at, self._logged_n = now, self.n
        logger.info(self._line())

    def _line(self) -> str:
        state = dict(self.format_dict)
        state["prefix"] = state.get("prefix") or "progress"
        state["bar_format"] = _LOG_FORMAT if self.total else _LOG_FORMAT_NO_TOTAL
        return " ".join(self.format_meter(**state).split())

    def close(self) -> None:
        """Close the bar; one last line with the final count when the bar has logged before."""
        if not hasattr(self, "disable"):  # interrupted (Ctrl-C, SIGTERM) inside tqdm's __init__: nothing to close
            return
        if not self.disable and not _silenced and self._logged_n is not None and self.n != self._logged_n:
            self._log(self._time())
        super().close()


def interactive() -> bool:
    """Whether stderr is a terminal (then bars are drawn; otherwise they are logged)."""
    stream = sys.stderr
    return bool(getattr(stream, "isatty", None)) and stream.isatty()


def progress_bar(iterable: Iterable | None = None, **kwargs: Any):
    """A progress bar over ``iterable`` (or for manual ``update``): tqdm keywords (``total``, ``desc``, ``unit``,
    ``disable``, ``leave``, ...). A tqdm bar on a terminal, a :class:`LogProgress` otherwise."""
    if interactive():
        from tqdm.auto import tqdm

        return tqdm(iterable, **kwargs)
    return LogProgress(iterable, **kwargs)


def format_duration(seconds: float) -> str:
    """``42 s``, ``3.5 min``, ``2.1 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def format_bytes(size: float) -> str:
    """``812 B``, ``3.4 MB``, ``1.2 GB`` (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} TB"
