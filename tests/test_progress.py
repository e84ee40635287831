"""Progress without a terminal: periodic log lines with rate and ETA, no carriage returns, quiet when quick."""

from __future__ import annotations

import logging
import time

import pytest

from lsplits.runtime import progress
from lsplits.runtime.progress import LogProgress, progress_bar


@pytest.fixture
def short_interval(monkeypatch):
    monkeypatch.setattr(progress, "LOG_INTERVAL_S", 0.2)
    return 0.2


def test_without_a_tty_a_bar_is_a_periodic_log_line(short_interval, caplog, capsys):
    caplog.set_level(logging.INFO, logger="lsplits.runtime.progress")
    bar = progress_bar(total=12, desc="fold-0: training", unit="step", mininterval=0.01)
    assert isinstance(bar, LogProgress)  # pytest's captured stderr is no terminal
    started = time.monotonic()
    for _ in range(12):
        time.sleep(0.05)
        bar.update(1)
        bar.set_postfix(val_ppl=3.25, refresh=False)
    bar.close()
    elapsed = time.monotonic() - started
    lines = [r.getMessage() for r in caplog.records if r.name == "lsplits.runtime.progress"]
    assert 2 <= len(lines) <= elapsed / short_interval + 2
    assert lines[-1].startswith("fold-0: training: 12/12 (100%)")
    for line in lines:
        assert "step/s" in line and "ETA" in line and "val_ppl=3.25" in line
        assert "\r" not in line and "\x1b" not in line
    out, err = capsys.readouterr()
    assert "\r" not in err and "\x1b" not in err and "fold-0" not in err  # nothing drawn, only logged


def test_quick_bars_and_disabled_bars_write_nothing(short_interval, caplog):
    caplog.set_level(logging.INFO, logger="lsplits.runtime.progress")
    assert list(progress_bar(range(50), desc="quick")) == list(range(50))
    for _ in progress_bar(range(3), desc="off", disable=True):
        time.sleep(0.15)
    assert [r for r in caplog.records if r.name == "lsplits.runtime.progress"] == []


def test_a_terminal_gets_a_drawn_bar(monkeypatch):
    from tqdm.auto import tqdm

    monkeypatch.setattr(progress, "interactive", lambda: True)
    bar = progress_bar(total=3, disable=True)
    assert isinstance(bar, tqdm) and not isinstance(bar, LogProgress)


def test_a_bar_interrupted_while_it_is_made_closes_quietly(monkeypatch):
    """Ctrl-C or SIGTERM inside tqdm's __init__ left a half-made bar whose __del__ printed an AttributeError."""
    import tqdm

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tqdm.tqdm, "__init__", interrupted)
    with pytest.raises(KeyboardInterrupt):
        LogProgress(total=3)
    half_made = LogProgress.__new__(LogProgress)  # what __del__ meets after the interrupted __init__
    half_made._logged_n = None
    half_made.close()


def test_no_progress_line_after_an_interrupts_line(short_interval, caplog):
    """A bar left open by an interrupt is closed later (unwinding, the garbage collector): after the command's
    one line (report_interrupt silences bars) its close logs nothing, and the next command's bars log again."""
    caplog.set_level(logging.INFO, logger="lsplits.runtime.progress")
    bar = progress_bar(total=10, desc="scoring", mininterval=0.01)
    time.sleep(0.25)
    bar.update(3)  # logs once
    bar.update(2)
    logged = [r.getMessage() for r in caplog.records if r.name == "lsplits.runtime.progress"]
    assert logged and logged[-1].startswith("scoring: 3/10")
    try:
        progress.silence_bars()
        bar.close()  # would log 'scoring: 5/10' (its final count) without the silence
        assert [r.getMessage() for r in caplog.records if r.name == "lsplits.runtime.progress"] == logged
    finally:
        progress.silence_bars(False)
    again = progress_bar(total=10, desc="next", mininterval=0.01)
    time.sleep(0.25)
    again.update(4)
    again.close()
    assert [r.getMessage() for r in caplog.records][-1].startswith("next: 4/10")
