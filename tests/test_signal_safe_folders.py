"""Issue 34 item 0: no signal leaks a temporary folder, wherever it lands (the random `make test` failure).

`test_signals.py` signals a build as soon as its ``lsplits-scores-*`` folder appears, which is the moment between
``mkdtemp``'s ``mkdir`` and ``TemporaryDirectory`` registering the folder's removal: under the full suite's load
the process was sometimes stopped right there, and the folder stayed. These tests put the signal at exactly that
point (and in the middle of the removal) by sending it from inside ``os.mkdir`` / ``os.unlink``, so the race is
hit every time instead of once in a thousand.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
WORDS = ["red", "blue", "cat", "dog", "runs", "sleeps", "big", "small", "house", "tree"]

# Runs `lsplits ARGV` in-process after wrapping os.mkdir / os.rmdir: the first call on a path whose folder name
# starts with PREFIX sends SIGNAL to this very process, right after the real mkdir (the folder exists, its removal
# is not arranged yet) or right before the real rmdir (the removal has begun, the folder is still there).
_RUNNER = r"""
import os, signal, sys
from lsplits.cli.parser import main

hook, prefix, signum, argv = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
real = getattr(os, hook)
sent = []

def wrapped(path, *args, **kwargs):
    name = os.fsdecode(path)
    hit = not sent and any(part.startswith(prefix) for part in name.split(os.sep))
    if hit and hook == "rmdir":
        sent.append(name)
        os.kill(os.getpid(), signum)
    result = real(path, *args, **kwargs)
    if hit and hook == "mkdir":
        sent.append(name)
        os.kill(os.getpid(), signum)
    return result

setattr(os, hook, wrapped)
code = main(argv)
print("SIGNALLED AT", sent, file=sys.stderr)
sys.exit(code)
"""


def _env(tmp: Path) -> dict[str, str]:
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(tmp), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO),
                                                                                     os.environ.get("PYTHONPATH")]))}


def _score_argv(folder: Path) -> list[str]:
    """A small ``lsplits score`` with the scratch LM (no --cache-dir: the scores go to a temporary folder)."""
    rows = [{"text": " ".join(WORDS[(i * k + k) % len(WORDS)] for k in range(1, 6 + i % 5))} for i in range(24)]
    data = folder / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return ["score", "--data-files", str(data), "--query-field", "text", "--lm", "scratch", "--folds", "2",
            "--max-steps", "2", "--out", str(folder / "scores.parquet"), "--no-progress"]


def _foreground_signals() -> None:
    """Ctrl-C as a terminal's foreground job gets it: a suite started in the background (``make test &``, a CI
    runner) hands its children SIGINT ignored, and the command would then rightly not react to it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def _run(tmp_path: Path, hook: str, prefix: str, sig: int) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-c", _RUNNER, hook, prefix, str(int(sig)), *_score_argv(tmp_path)],
                          capture_output=True, text=True, env=_env(tmp_path / "tmp"), timeout=300,
                          start_new_session=True, preexec_fn=_foreground_signals)
    return done.returncode, done.stderr


def _last_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("SIGNALLED AT")]
    return lines[-1] if lines else ""


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
@pytest.mark.process
def test_a_signal_right_after_the_score_folder_is_made_leaves_no_folder(tmp_path, sig, code):
    """The signal lands after ``mkdir`` made ``lsplits-scores-*`` and before its removal was arranged."""
    returned, stderr = _run(tmp_path, "mkdir", "lsplits-scores-", sig)
    assert "SIGNALLED AT ['" in stderr, stderr[-2000:]  # the window was really hit
    assert returned == code, stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    assert _last_line(stderr).startswith("lsplits score: "), stderr[-1000:]
    assert not list((tmp_path / "tmp").glob("lsplits-scores-*"))
    assert not (tmp_path / "scores.parquet").exists()


@pytest.mark.process
def test_ctrl_c_while_the_score_folder_is_being_removed_still_removes_all_of_it(tmp_path):
    """The signal lands in the middle of the removal (just before the folder's rmdir): it is removed all the same."""
    returned, stderr = _run(tmp_path, "rmdir", "lsplits-scores-", signal.SIGINT)
    assert "SIGNALLED AT ['" in stderr, stderr[-2000:]
    assert returned == 130, stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    assert not list((tmp_path / "tmp").glob("lsplits-scores-*"))


def test_a_signal_inside_a_shielded_section_is_raised_when_it_ends(tmp_path):
    """In-process: a folder made while a signal arrives is recorded before the signal is raised, and removed."""
    from lsplits.runtime import shield, tempfolders

    before = signal.getsignal(signal.SIGUSR1)
    signal.signal(signal.SIGUSR1, _deferring_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with shield.shielded():
                path = tempfolders.make("probe-", dir=tmp_path)
                os.kill(os.getpid(), signal.SIGUSR1)
                time.sleep(0.01)  # the handler has run by now (and deferred its exception)
                assert path.is_dir()
        assert path in tempfolders._LIVE
        tempfolders.remove_left()
        assert not path.exists() and path not in tempfolders._LIVE
    finally:
        signal.signal(signal.SIGUSR1, before)


def _deferring_handler(signum, frame):
    from lsplits.runtime import shield

    exc = KeyboardInterrupt()
    if shield.active():
        shield.defer(exc)
        return
    raise exc


@pytest.mark.process
def test_a_staging_folder_whose_writer_was_killed_is_removed_by_the_next_write(tmp_path):
    """`kill -9` during a write leaves ``.NAME.PID@HOST.*.tmp``: the next write removes it at once (not after
    6 hours), and leaves a staging folder whose writer still runs."""
    from lsplits.io.atomic import _staging_owner, atomic_write_text

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        host = _staging_owner().split("@", 1)[1]
        gone = tmp_path / f".out.json.{dead.pid}@{host}.abcd1234.tmp"
        running = tmp_path / f".out.json.{alive.pid}@{host}.efgh5678.tmp"
        other_host = tmp_path / f".out.json.{dead.pid}@not-{host}.ijkl9012.tmp"
        for folder in (gone, running, other_host):
            (folder / "out.json").mkdir(parents=True)
            (folder / "out.json" / "partial").write_text("half", encoding="utf-8")
        atomic_write_text(tmp_path / "out.json", "{}")
        assert (tmp_path / "out.json").read_text(encoding="utf-8") == "{}"
        assert not gone.exists()
        assert running.exists() and other_host.exists()
    finally:
        alive.kill()
        alive.wait()


def test_a_full_disk_names_the_output_not_a_temporary_source(tmp_path):
    """shutil puts a copy's source in ``filename``: the message names the destination, and a staged file by the
    output it stands for."""
    from lsplits.io.atomic import _staging_owner
    from lsplits.io.storage import storage_problem

    copy = OSError(errno.ENOSPC, "No space left on device", "/tmp/xyz/model.safetensors", None,
                   str(tmp_path / "out" / "model.safetensors"))
    assert f"writing {tmp_path / 'out' / 'model.safetensors'}:" in storage_problem(copy)
    staged = tmp_path / f".ds.{_staging_owner()}.k2j3h4g5.tmp" / "ds" / "data" / "train.parquet"
    message = storage_problem(OSError(errno.ENOSPC, "No space left on device", str(staged)))
    assert message.startswith(f"no space left on the device writing {tmp_path / 'ds' / 'data' / 'train.parquet'}:")
    from lsplits.runtime import tempfolders

    with tempfolders.temporary_folder("lsplits-scores-") as folder:
        message = storage_problem(OSError(errno.ENOSPC, "No space left on device", str(folder / "x.parquet")))
    assert f"writing {folder / 'x.parquet'} in the temporary folder" in message and "(TMPDIR)" in message
    assert "temporary folder" not in storage_problem(copy)


def test_the_interrupt_line_counts_finished_work_not_the_runs_bookkeeping(tmp_path, monkeypatch):
    """Only ``run.json`` and a fold manifest were written: nothing a rerun can reuse, and the line says so."""
    import argparse

    from lsplits.cli import interrupt

    monkeypatch.setattr(interrupt, "_STARTED", time.time() - 1)
    cache = tmp_path / "cache"
    (cache / "abc" / "fold-0").mkdir(parents=True)
    (cache / "abc" / "run.json").write_text("{}", encoding="utf-8")
    (cache / "abc" / "fold-0" / "manifest.json").write_text("{}", encoding="utf-8")
    args = argparse.Namespace(command="build", cache_dir=cache, dry_run=False)
    line = interrupt.interrupted_line(args, interrupt.Terminated())
    assert line == f"terminated (SIGTERM); this run cached nothing yet in {cache}, so a rerun starts from the beginning"
    for preparation in ("abc/tokenizer/tokenizer.json", "abc/fold-0/init/model.safetensors"):  # a scratch LM's start
        (cache / preparation).parent.mkdir(parents=True)
        (cache / preparation).write_bytes(b"{}")
    assert interrupt.interrupted_line(args, interrupt.Terminated()) == line
    (cache / "abc" / "fold-0" / "scores-00000.parquet").write_bytes(b"PAR1")
    line = interrupt.interrupted_line(args, interrupt.Terminated())
    assert line == (f"terminated (SIGTERM); finished score shards and fold checkpoints are cached in {cache}, "
                    "and a rerun resumes from them")


@pytest.mark.parametrize("command, kind", [("demo", "scores"), ("beams", "beams")])
def test_without_cache_dir_the_line_names_the_default_cache(tmp_path, monkeypatch, command, kind):
    """``demo`` said "...were cached, so a rerun starts from the beginning": it caches in the default folder."""
    import argparse

    from lsplits.cli import interrupt

    monkeypatch.setenv("LSPLITS_CACHE", str(tmp_path / "lsplits-cache"))
    monkeypatch.setattr(interrupt, "_STARTED", time.time() + 3600)
    line = interrupt.interrupted_line(argparse.Namespace(command=command, cache_dir=None), KeyboardInterrupt())
    assert line == (f"interrupted; this run cached nothing yet in {tmp_path / 'lsplits-cache' / kind}, "
                    "so a rerun starts from the beginning")


def test_every_temporary_folder_of_lsplits_and_its_space_is_made_signal_safe():
    """``tempfile.TemporaryDirectory`` and ``mkdtemp`` leak their folder to a signal at the wrong moment: lsplits
    makes temporary folders only through :mod:`lsplits.runtime.tempfolders` (docstring examples aside)."""
    import re

    unsafe = re.compile(r"^(?!\s*>>>).*\b(TemporaryDirectory|mkdtemp)\(", re.MULTILINE)
    found = []
    for root in ("lsplits", "spaces"):
        for path in sorted((REPO / root).rglob("*.py")):
            if path.name == "tempfolders.py" or "_shipped" in path.parts:
                continue
            for match in unsafe.finditer(path.read_text(encoding="utf-8")):
                found.append(f"{path.relative_to(REPO)}: {match.group(0).strip()}")
    assert not found, "\n".join(found)
