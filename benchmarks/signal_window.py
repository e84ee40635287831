"""Does Ctrl-C always stop a build? Hundreds of builds, each sent SIGINT just after it starts scoring.

Issue 27: `tests/test_signals.py` saw a build SIGINT did not stop, on a loaded machine. This runs the build
of that test in this process, over and over: each time its ``lsplits-scores-*`` temporary folder is made, a
timer sends SIGINT 0 to ``--max-delay`` s later (the moment the test signals). A signal either ends the build
(``main`` returns 130; the next build resumes from the cache) or is lost, and the build runs on to its end.
Two CPU burners (``--burners``) load the cores, as on the machine where the test failed.

    .venv/bin/python benchmarks/signal_window.py [--seconds 300] [--max-delay 0.3] [--burners 2]

Prints how many signals ended a build, how many builds ran on to their end, the signal-to-return times, and
each signal a finalizer swallowed (``sys.unraisablehook``: what ran, where).

Measured (2 cores, 2 burners). At 5bd4d2b, before the watchdog (its tree and venv on the path), 367 builds:
364 ended, 3 ran on to their end, each because the KeyboardInterrupt was raised inside
``WeakKeyDictionary``'s key-removal callback (``weakref.py`` ``remove``), run by a key dying under
transformers' ``_convert_encoding`` (the fold's tokenization) or under matplotlib (the plots of a build
whose shards were all cached); Python reports an exception raised in a weakref callback as "Exception
ignored" and drops it. With cli/interrupt.py's watchdog (9088012, 240 s): 335 builds, all 335 ended with 130,
signal to return median 0.01 s, max 0.11 s; one signal was swallowed there too, by the same callback under
``_convert_encoding``, and raised again at once.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

WORDS = ["red", "blue", "cat", "dog", "runs", "sleeps", "big", "small", "house", "tree"]


def build_argv(folder: Path, cache: Path) -> list[str]:
    """The build of tests/test_signals.py: 400 rows, the scratch LM, one config."""
    rows = [{"text": " ".join(WORDS[(i * k + k) % len(WORDS)] for k in range(1, 3 + i % 5)),
             "topic": ["a", "b"][i % 2]} for i in range(400)]
    data = folder / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return ["build", "--data-files", str(data), "--query-field", "text", "--label-field", "topic", "--lm", "scratch",
            "--out", str(folder / "out"), "--eval-size", "40", "--max-steps", "2000", "--cache-dir", str(cache),
            "--no-progress", "--configs", "ll_split"]


def _where(unraisable) -> str:
    """The finalizer that swallowed a signal and the innermost frames it ran under."""
    tb = unraisable.exc_traceback
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    frames, frame = [], tb.tb_frame if tb is not None else None
    while frame is not None and len(frames) < 6:
        frames.append(f"{frame.f_code.co_filename.rsplit('site-packages/', 1)[-1]}:{frame.f_lineno} "
                      f"{frame.f_code.co_name}")
        frame = frame.f_back
    return f"{unraisable.object!r:.70} under " + " < ".join(frames[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300, help="keep starting builds for this long")
    parser.add_argument("--max-delay", type=float, default=0.3, help="SIGINT this long at most after scoring starts")
    parser.add_argument("--burners", type=int, default=2, help="CPU-bound processes run alongside")
    args = parser.parse_args()
    os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    folder = Path(tempfile.mkdtemp(prefix="signal-window-"))
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.burners)]
    swallowed: collections.Counter[str] = collections.Counter()

    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            swallowed[_where(unraisable)] += 1
        previous_hook(unraisable)
    from lsplits.cli.parser import main as lsplits_main

    print(f"lsplits from {Path(sys.modules['lsplits'].__file__).parent}; warm-up build (no signal)", flush=True)
    lsplits_main(build_argv(folder, folder / "warm-cache")[:-2] + ["--configs", "ll_split", "--max-steps", "3"])
    shutil.rmtree(folder / "out", ignore_errors=True)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = hook  # after the warm-up: it sees a swallowed signal before a watchdog's hook does

    sent: list[float] = []
    in_build = [False]

    def send() -> None:
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    original = tempfile.TemporaryDirectory

    class Signalling(original):  # type: ignore[misc, valid-type]
        def __init__(self, *a, **k) -> None:
            super().__init__(*a, **k)
            if "lsplits-scores-" in self.name and in_build[0]:
                threading.Timer(random.uniform(0, args.max_delay), send).start()
    tempfile.TemporaryDirectory = Signalling  # type: ignore[misc]
    codes: collections.Counter[object] = collections.Counter()
    latencies: list[float] = []
    argv = build_argv(folder, folder / "cache")
    start = time.monotonic()
    try:
        while time.monotonic() - start < args.seconds:
            sent.clear()
            in_build[0] = True
            try:
                code: object = lsplits_main(argv)
            except KeyboardInterrupt:  # the signal came before or after main's own handling
                code = "KeyboardInterrupt"
            finally:
                in_build[0] = False
            codes[code] += 1
            if sent:
                latencies.append(time.monotonic() - sent[0])
            shutil.rmtree(folder / "out", ignore_errors=True)
            if code == 0:  # it ran on and cached every shard: the next build starts from nothing again
                shutil.rmtree(folder / "cache", ignore_errors=True)
            try:
                time.sleep(0.4)  # a late timer fires now, not in the next build
            except KeyboardInterrupt:
                pass
    finally:
        for burner in burners:
            burner.kill()
        shutil.rmtree(folder, ignore_errors=True)
    latencies.sort()
    ran_on = sum(n for code, n in codes.items() if code == 0)
    print(f"builds: {sum(codes.values())}; exit codes: {dict(codes)}; ran on to their end: {ran_on}")
    if latencies:
        print(f"signal -> build returned: median {latencies[len(latencies) // 2]:.2f} s, max {latencies[-1]:.2f} s, "
              f"over 5 s: {sum(x > 5 for x in latencies)}")
    print(f"signals a finalizer swallowed: {sum(swallowed.values())}")
    for where, count in swallowed.most_common():
        print(f"  {count} x {where}")


if __name__ == "__main__":
    main()
