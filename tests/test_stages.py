"""Stage timing: each stage logs its wall time (without nested stages) and its peak RSS."""

from __future__ import annotations

import logging
import time

import numpy as np

from lsplits.runtime.stages import stage


def _records(caplog) -> dict:
    return {r.stage_time.name: r.stage_time for r in caplog.records if hasattr(r, "stage_time")}


def test_a_stage_logs_its_time_without_the_nested_ones_and_its_peak_with_them(caplog):
    caplog.set_level(logging.DEBUG, logger="lsplits.runtime.stages")
    start = time.perf_counter()
    with stage("outer"):
        time.sleep(0.05)
        with stage("inner"):
            block = np.ones(64 * 2**20 // 8)  # 64 MiB, touched
            time.sleep(0.2)
            del block
    total = time.perf_counter() - start
    times = _records(caplog)
    assert set(times) == {"outer", "inner"}
    assert times["inner"].seconds >= 0.2 and times["outer"].seconds >= 0.05
    assert times["outer"].seconds + times["inner"].seconds <= total  # the inner seconds are not counted twice
    assert times["inner"].peak_rss >= 64 * 2**20 and times["outer"].peak_rss >= times["inner"].peak_rss
    with stage("after"):
        pass
    after = _records(caplog)["after"]
    if after.own_peak:  # Linux: the high-water mark was reset, so the freed 64 MiB no longer count
        assert after.peak_rss < times["inner"].peak_rss


def test_a_failing_stage_is_still_logged(caplog):
    caplog.set_level(logging.DEBUG, logger="lsplits.runtime.stages")
    try:
        with stage("broken"):
            raise KeyError("x")
    except KeyError:
        pass
    assert "broken" in _records(caplog)

