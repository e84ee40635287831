"""A disk that cannot take the output: an empty mount point as ``--out``, a full disk, a read-only cache.

Each is a real tmpfs mounted for the test (the suite runs as root in its container); each must be one line
naming the folder and the problem, said before the work where it can be known before.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from lm_fixtures import tiny_records

from lsplits.errors import ConfigError
from lsplits.io.guard import check_output, output_folder

REPO = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def tmpfs(path: Path, *, size: str = "64k", read_only: bool = False) -> Iterator[Path]:
    """A fresh tmpfs of ``size`` mounted at ``path`` (an empty folder), unmounted afterwards."""
    path.mkdir(parents=True, exist_ok=True)
    options = f"size={size}" + (",ro" if read_only else "")
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True, capture_output=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True)


@pytest.mark.process
def test_an_empty_mount_point_as_the_output_folder_is_refused_before_any_work(tmp_path):
    with tmpfs(tmp_path / "volume", size="1m") as volume:
        expected = (rf"^out {volume}: is a mount point, which lsplits cannot replace .*; give a folder inside it, "
                    rf"such as {volume / 'out'}$")
        with pytest.raises(ConfigError, match=expected):
            check_output(volume, expect="folder")
        with pytest.raises(ConfigError, match=expected), output_folder(volume):
            raise AssertionError("the work must not start")
        with output_folder(volume / "out") as staged:  # a folder inside it is fine
            (staged / "result.txt").write_text("done")
        assert (volume / "out" / "result.txt").read_text() == "done"


@pytest.mark.process
def test_a_full_disk_ends_the_command_in_one_line(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"text": f"the dog number {i} runs home"}) + "\n" for i in range(24)))
    with tmpfs(tmp_path / "small", size="64k") as small:
        done = subprocess.run(
            [sys.executable, "-m", "lsplits", "score", "--data-files", str(data), "--query-field", "text", "--lm",
             "scratch", "--folds", "2", "--max-steps", "2", "--cache-dir", str(small / "cache"), "--out",
             str(tmp_path / "scores.parquet"), "--no-progress"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    lines = [line for line in done.stderr.splitlines() if line.startswith("lsplits score: error")]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith("lsplits score: error: no space left on the device")
    assert "free space or write the output (--out) and the caches (--cache-dir) to another disk" in lines[0]


@pytest.mark.process
def test_a_read_only_cache_is_refused_before_any_work(tmp_path):
    from lsplits.lm import compute_scores
    from lsplits.uncertainty.matrix import build_matrices
    from lsplits.uncertainty.study import run_study
    from lsplits.uncertainty.study_config import StudyConfig

    beams = tmp_path / "beams.jsonl"
    beams.write_text(json.dumps({"id": "e1", "candidates": ["a b", "a c"]}) + "\n")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "e1", "amr": "a b"}) + "\n")
    with tmpfs(tmp_path / "ro", read_only=True) as frozen:
        reason = rf"cannot write into {frozen} \(Read-only file system\); give a writable folder$"
        with pytest.raises(ConfigError, match=rf"^the score cache \(cache_dir\) {frozen / 'scores'}: {reason}"):
            compute_scores(tiny_records(6), lm="scratch", setting="ft", folds=2, cache_dir=frozen / "scores",
                           progress=False)
        with pytest.raises(ConfigError, match=rf"^the similarity matrix cache {frozen}: {reason}"):
            build_matrices([["a b", "a c"]], "rougel", cache=frozen, progress=False)
        with pytest.raises(ConfigError, match=rf"^the similarity matrix cache \(cache_dir\) {frozen}: {reason}"):
            run_study([str(beams)], str(gold), StudyConfig(similarities=("rougel",), qualities=("rougel",),
                                                           cache_dir=frozen, progress=False))
