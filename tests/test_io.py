"""The output guard: lsplits replaces only what it wrote (marked folders and files), atomically."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lsplits.errors import ConfigError
from lsplits.io.atomic import atomic_write_parquet
from lsplits.io.guard import check_additions, check_output, foreign_files, output_folder
from lsplits.io.records import DATASET_MARKER, FOLDER_MARKER, MARKER_FILES_KEY, mark_folder


def write_report(target, text):
    with output_folder(target) as folder:
        (folder / "curves").mkdir()
        (folder / "curves" / "a.png").write_bytes(b"png")
        (folder / "report.md").write_text(text)


def test_output_folder_marks_its_files_and_replaces_only_its_own_folder(tmp_path):
    target = tmp_path / "report"
    write_report(target, "first")
    marker = json.loads((target / FOLDER_MARKER).read_text())
    assert marker[MARKER_FILES_KEY] == ["curves/a.png", "report.md"]
    write_report(target, "second")  # its own folder: replaced
    assert (target / "report.md").read_text() == "second"
    (target / "curves" / "mine.txt").write_text("user file")  # a file lsplits did not write
    assert foreign_files(target) == ["curves/mine.txt"]
    with pytest.raises(ConfigError, match=r"files that lsplits did not write \(curves/mine.txt\)"):
        write_report(target, "third")
    assert (target / "report.md").read_text() == "second" and (target / "curves" / "mine.txt").exists()


def test_a_failed_write_leaves_the_previous_output(tmp_path):
    target = tmp_path / "report"
    write_report(target, "first")
    with pytest.raises(RuntimeError), output_folder(target) as folder:
        (folder / "report.md").write_text("half")
        raise RuntimeError("crash mid-write")
    assert (target / "report.md").read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


def test_folders_that_may_and_may_not_be_replaced(tmp_path):
    (tmp_path / "empty").mkdir()
    assert check_output(tmp_path / "empty", expect="folder") == tmp_path / "empty"
    assert check_output(tmp_path / "new" / "deeper", expect="folder") == tmp_path / "new" / "deeper"
    old = tmp_path / "old-build"  # a build: its lsplits.json lists the files it wrote
    (old / "ll_split").mkdir(parents=True)
    (old / "ll_split" / "train.parquet").write_bytes(b"PAR1")
    (old / "README.md").write_text("card")
    (old / DATASET_MARKER).write_text(json.dumps({"configs": ["ll_split"], "query_field": "text",
                                                  "lsplits_files": ["README.md", "ll_split/train.parquet"]}))
    check_output(old, expect="folder", marker=DATASET_MARKER)  # a build may replace it
    with pytest.raises(ConfigError, match="is a dataset lsplits built"):  # any other output may not
        check_output(old, expect="folder")
    (old / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="notes.txt"):
        check_output(old, expect="folder", marker=DATASET_MARKER)
    unlisted = tmp_path / "unlisted"  # an lsplits.json that lists no files (no format before it is read)
    (unlisted / "ll_split").mkdir(parents=True)
    (unlisted / DATASET_MARKER).write_text(json.dumps({"configs": ["ll_split"], "query_field": "text"}))
    with pytest.raises(ConfigError, match="a non-empty folder that lsplits did not write"):
        check_output(unlisted, expect="folder", marker=DATASET_MARKER)
    fake = tmp_path / "fake"  # a user's own lsplits.json that is not a build's is no marker
    fake.mkdir()
    (fake / DATASET_MARKER).write_text("[1, 2]")
    with pytest.raises(ConfigError, match="a non-empty folder that lsplits did not write"):
        check_output(fake, expect="folder")


def test_inputs_caches_links_and_the_current_folder_are_refused(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    (data / "train.jsonl").write_text("{}\n")
    monkeypatch.chdir(tmp_path / "data")
    cases = [
        (dict(target=data / "train.jsonl", expect="file", inputs=[data / "train.jsonl"]), "is the input"),
        (dict(target=tmp_path / "data" / "sub" / "..", expect="folder"), "is the current folder"),
        (dict(target=tmp_path, expect="folder"), "holds the current folder"),
        (dict(target=tmp_path / "x", expect="folder", inputs=[tmp_path / "x" / "a.jsonl"]), "holds the input file"),
        (dict(target=data / "built", expect="folder", inputs=[data]), "lies inside the input folder"),
        (dict(target=tmp_path / "c", expect="folder", caches=[tmp_path / "c" / "scores"]), "holds the cache folder"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ConfigError, match=message):
            check_output(**kwargs)
    with pytest.raises(ConfigError, match="lies under .*train.jsonl, which is a file, not a folder"):
        check_output(data / "train.jsonl" / "out", expect="folder")
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ConfigError, match="symbolic link"):
        check_output(tmp_path / "link", expect="folder")


def test_only_a_parquet_file_lsplits_marked_is_replaced(tmp_path):
    frame = pd.DataFrame({"id": ["a"], "ll_score": [-1.0]})
    ours = tmp_path / "scores.parquet"
    atomic_write_parquet(ours, frame, mark="score")
    assert check_output(ours, expect="file") == ours
    assert pd.read_parquet(ours).equals(frame)
    theirs = tmp_path / "theirs.parquet"
    frame.to_parquet(theirs)
    (tmp_path / "notes.txt").write_text("mine")
    for path in (theirs, tmp_path / "notes.txt"):
        with pytest.raises(ConfigError, match="an existing file that lsplits did not write"):
            check_output(path, expect="file", option="--out")
    with pytest.raises(ConfigError, match="is a folder, not a file"):
        check_output(tmp_path, expect="file")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        check_output(ours, expect="folder")


def test_a_beams_file_goes_through_the_same_guard(tmp_path):
    """``lsplits beams``' output: a .jsonl path; a beams file it wrote (its settings record says so) is replaced,
    any other file refused, a beams-shaped one too."""
    from lsplits.generation.cache import BeamSettings, BeamsRecord, write_beams

    beams = tmp_path / "beams.jsonl"
    write_beams(beams, ["0"], [["(a / b)"]], record=BeamsRecord(model="m", source="in.txt", n_inputs=1,
                                                                settings=BeamSettings(), dtype_used="fp32"))
    assert check_output(beams, expect="file", suffix=".jsonl") == beams
    (tmp_path / "parser.jsonl").write_text('{"id": "0", "candidates": ["(a / b)"]}\n')
    with pytest.raises(ConfigError, match="parser.jsonl: an existing file that lsplits did not write"):
        check_output(tmp_path / "parser.jsonl", expect="file", suffix=".jsonl")
    (tmp_path / "notes.jsonl").write_text('{"note": "mine"}\n')
    with pytest.raises(ConfigError, match="notes.jsonl: an existing file that lsplits did not write"):
        check_output(tmp_path / "notes.jsonl", expect="file", suffix=".jsonl")
    with pytest.raises(ConfigError, match="beams.txt: the file name must end in .jsonl"):
        check_output(tmp_path / "beams.txt", expect="file", suffix=".jsonl")
    with pytest.raises(ConfigError, match="is the input"):
        check_output(beams, expect="file", suffix=".jsonl", inputs=[beams])


def test_files_added_to_a_folder_are_checked_first_and_listed_after(tmp_path):
    """difficulty adds its figure to a built folder: refused over a user's file, listed once written."""
    with output_folder(tmp_path / "built") as staged:
        (staged / "README.md").write_text("card")
    folder = tmp_path / "built"
    check_additions(folder, ["README.md", "plots/figure.png"], what="the dataset folder")
    (folder / "plots").mkdir()
    (folder / "plots" / "figure.png").write_bytes(b"png")
    assert foreign_files(folder) == ["plots/figure.png"]
    mark_folder(folder)  # lists the figure too
    assert foreign_files(folder) == [] and check_output(folder, expect="folder") == folder
    (folder / "plots" / "mine.png").write_bytes(b"user")
    with pytest.raises(ConfigError, match="the dataset folder .*: plots/mine.png exists and lsplits did not write it"):
        check_additions(folder, ["plots/mine.png"], what="the dataset folder")
    with pytest.raises(ConfigError, match="not a folder lsplits wrote"):
        check_additions(tmp_path, ["x.png"], what="the dataset folder")


def test_a_subfolder_lsplits_owns_whole_may_fill_after_marking(tmp_path):
    """A difficulty report's runs/ fills during training: its files are lsplits' though never listed."""
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "settings.json").write_text("{}")
    mark_folder(tmp_path / "report", owned=["runs"])
    (tmp_path / "report" / "runs" / "m").mkdir(parents=True)
    (tmp_path / "report" / "runs" / "m" / "checkpoint.pt").write_bytes(b"weights")
    assert check_output(tmp_path / "report", expect="folder") == tmp_path / "report"
    (tmp_path / "report" / "extra.txt").write_text("mine")
    with pytest.raises(ConfigError, match=r"files that lsplits did not write \(extra.txt\)"):
        check_output(tmp_path / "report", expect="folder")


@pytest.mark.process
def test_two_commands_writing_one_output_the_second_is_refused_at_once(tmp_path):
    """The first command holds the output (here this process, as the CLI's main does for a command's run);
    a second one, another process, is refused before any work, naming the holder; afterwards the lock is gone."""
    import os
    import subprocess
    import sys

    from lsplits.io.guard import check_output
    from lsplits.io.locks import holding_outputs

    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"text": f"line number {i}"}) + "\n" for i in range(20)))
    out = tmp_path / "out"
    second = [sys.executable, "-m", "lsplits", "build", "--data-files", str(data), "--query-field", "text", "--lm",
              "scratch", "--max-steps", "2", "--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    with holding_outputs():
        check_output(out, expect="folder")
        check_output(out, expect="folder")  # the same command checking again: it holds the lock already
        done = subprocess.run(second, capture_output=True, text=True, timeout=300, cwd=tmp_path,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})
        assert done.returncode == 2
        assert done.stderr.strip() == (f"lsplits build: error: --out {out}: another lsplits command (pid {os.getpid()}) "
                                       "is writing it now; wait for it to finish, or give another path")
        assert not (tmp_path / "cache").exists()  # refused before any work
    assert [p.name for p in tmp_path.iterdir() if "lock" in p.name] == []
    with holding_outputs():  # free again
        check_output(out, expect="folder")
    nested = tmp_path / "new" / "scores.parquet"  # its folder does not exist yet: locked in the folder above
    with holding_outputs():
        check_output(nested, expect="file")
        assert (tmp_path / ".new%scores.parquet.lsplits-lock").is_file()
        (tmp_path / "new").mkdir()  # the command makes the folder while it holds the lock
    assert not (tmp_path / ".new%scores.parquet.lsplits-lock").exists()


def test_a_folder_is_replaced_in_one_exchange_and_stale_staging_folders_are_removed(tmp_path, monkeypatch):
    import os
    import time

    from lsplits.io.atomic import STALE_STAGING_SECONDS, atomic_path

    target = tmp_path / "out"
    target.mkdir()
    (target / "old.txt").write_text("old")
    stale = tmp_path / ".out.killed.tmp"  # what a process killed while writing left behind
    (stale / "out").mkdir(parents=True)
    long_ago = time.time() - STALE_STAGING_SECONDS - 60
    os.utime(stale, (long_ago, long_ago))
    busy = tmp_path / ".out.writing.tmp"  # another writer's, touched just now
    busy.mkdir()
    renames = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: renames.append((a, b)) or real_replace(a, b))
    with atomic_path(target) as staged:
        staged.mkdir()
        (staged / "new.txt").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]
    assert renames == []  # one renameat2 exchange, not two renames with a moment without the folder
    assert not stale.exists() and busy.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.writing.tmp", "out"]
