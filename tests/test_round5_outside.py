"""Reliability round 5, what lsplits writes outside its own outputs: a rebuild carries only files inside the old
folder, lock files are never followed or truncated unless lsplits wrote them, a user's beams file is not taken
for lsplits' own, an unreadable folder marker is one line, and caches and outputs stay out of built datasets.

Each case runs the real command (``lsplits.cli.parser.main`` in this process, as ``test_bad_inputs`` does) or
the real library function on real files, and checks the one line a user sees and that their files survive.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import pytest
from difficulty_fixtures import build_dataset, snli_rows
from test_bad_inputs import beams_and_gold, run_in_process, write_jsonl

from lsplits.errors import ConfigError


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A dataset the real ``lsplits build snli`` wrote (scratch LM, 2 steps), with Difficulty results added as
    ``lsplits difficulty`` adds them (card section, ``lsplits.json`` entry, ``plots/difficulty.png``)."""
    from lsplits.difficulty.card import update_folder

    root = tmp_path_factory.mktemp("built")
    folder = build_dataset(root, "snli", snli_rows())
    figure = root / "figure.png"
    figure.write_bytes(b"\x89PNG the figure")
    update_folder(folder, "## Difficulty\n\nrandom: 71.8%", {"results": [], "settings": {"configs": ["random"]}},
                  files={"plots/difficulty.png": figure}, configs=["random"])
    return folder


@pytest.fixture
def dataset(built: Path, tmp_path: Path) -> Path:
    """A copy of :func:`built` in this test's folder (``tmp_path/work/snli-built``), its data beside it."""
    folder = tmp_path / "work" / built.name
    shutil.copytree(built, folder, symlinks=True)
    shutil.copy(built.parent / "snli.jsonl", tmp_path / "work" / "snli.jsonl")
    return folder


def rebuild_argv(folder: Path, cache: Path) -> list[str]:
    """The ``lsplits build`` that made :func:`built`, into ``folder``."""
    return ["build", "snli", "--data-files", str(folder.parent / "snli.jsonl"), "--lm", "scratch", "--max-steps", "2",
            "--configs", "random", "ll_split", "--eval-size", "16", "--out", str(folder), "--cache-dir", str(cache),
            "--no-progress"]


def set_entry_files(folder: Path, files: object) -> None:
    """Edit the ``difficulty.files`` of ``folder``'s ``lsplits.json``, as a hand or a script might."""
    meta = json.loads((folder / "lsplits.json").read_text())
    meta["difficulty"]["files"] = files
    (folder / "lsplits.json").write_text(json.dumps(meta))


def one_line(done) -> str:
    """The single stderr line of a refused command (exit code 2)."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, (done.returncode, done.stderr)
    return lines[0]


# --- 1. a rebuild carries only regular files inside the old folder ------------------------------------------------

@pytest.mark.parametrize("tamper, problem", [
    ("outside", "'../../victim.txt' among the files `lsplits difficulty` added (difficulty.files), a path that "
                "leads out of the folder"),
    ("symlink", "'plots/difficulty.png' among the files `lsplits difficulty` added (difficulty.files), a symbolic "
                "link"),
    ("absolute", "among the files `lsplits difficulty` added (difficulty.files), an absolute path"),
])
def test_a_rebuild_refuses_an_entry_naming_a_file_it_must_not_carry_before_any_work(
        dataset, tmp_path, monkeypatch, capsys, tamper, problem):
    work = dataset.parent
    (tmp_path / "victim.txt").write_text("the user's file above")  # what ../../victim.txt reads from
    (work / "victim.txt").write_text("the user's file")  # and what it wrote onto
    (work / "secret.txt").write_text("a secret")
    if tamper == "outside":
        set_entry_files(dataset, ["../../victim.txt"])
    elif tamper == "symlink":
        (dataset / "plots" / "difficulty.png").unlink()
        (dataset / "plots" / "difficulty.png").symlink_to(work / "secret.txt")
    else:
        set_entry_files(dataset, [str(dataset / "plots" / "difficulty.png")])
    before = sorted((p.relative_to(dataset).as_posix(), p.is_symlink()) for p in dataset.rglob("*"))
    done = run_in_process(rebuild_argv(dataset, tmp_path / "cache"), tmp_path, monkeypatch, capsys)
    line = one_line(done)
    assert line.startswith(f"lsplits build: error: --out {dataset}: its lsplits.json lists ")
    assert problem in line and line.endswith("a rebuild carries only regular files inside the folder: remove that "
                                             "entry (or the folder) first")
    assert not (tmp_path / "cache").exists()  # refused before any scoring
    assert (work / "victim.txt").read_text() == "the user's file" and (work / "secret.txt").read_text() == "a secret"
    assert sorted((p.relative_to(dataset).as_posix(), p.is_symlink()) for p in dataset.rglob("*")) == before


def test_keep_additions_never_copies_a_file_from_outside_or_through_a_link(dataset, tmp_path, caplog):
    """What the build carries at its end (the folder may change after the first check): an unsafe entry is left
    out with a warning naming it, the safe figure is carried, and no outside file lands in the new folder."""
    from lsplits.building.additions import keep_additions
    from lsplits.building.export import card_data_files

    work = dataset.parent
    (work / "secret.txt").write_text("a secret")
    (dataset / "plots" / "link.png").symlink_to(work / "secret.txt")
    set_entry_files(dataset, ["plots/difficulty.png", "plots/link.png", "../secret.txt", str(work / "secret.txt")])
    card = (dataset / "README.md").read_text()
    data_files = {config: {split: paths[0] for split, paths in splits.items()}
                  for config, splits in card_data_files(card).items()}
    staged = tmp_path / "staged"
    shutil.copytree(dataset, staged, ignore=shutil.ignore_patterns("plots"))
    with caplog.at_level(logging.WARNING, logger="lsplits"):
        kept = keep_additions(dataset, staged, data_files)
    assert sorted(p.relative_to(staged).as_posix() for p in (staged / "plots").rglob("*")) == ["plots/difficulty.png"]
    assert (staged / "plots" / "difficulty.png").read_bytes() == b"\x89PNG the figure"
    assert not any(p.read_bytes() == b"a secret" for p in staged.rglob("*") if p.is_file())
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert [w.split("not carrying ")[1].split(",")[0] for w in warnings] == [
        "'plots/link.png'", "'../secret.txt'", repr(str(work / "secret.txt"))]
    assert "a symbolic link" in warnings[0] and "leads out of the folder" in warnings[1]
    assert "an absolute path" in warnings[2]
    assert kept["files"] == ["plots/difficulty.png"]  # the entry the rebuilt record holds


# --- 2. the lock file --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("planted, problem", [
    ("symlink", "is a symbolic link"),
    ("hardlink", "has 2 names (hard links)"),
    ("content", "holds something other than a process id"),
])
def test_a_lock_file_lsplits_did_not_write_is_refused_not_followed_or_truncated(tmp_path, planted, problem):
    from lsplits.io.guard import check_output
    from lsplits.io.locks import holding_outputs

    victim = tmp_path / "victim2.txt"
    victim.write_text("the user's text")
    lock = tmp_path / ".out.lsplits-lock"
    if planted == "symlink":
        lock.symlink_to(victim)
    elif planted == "hardlink":
        os.link(victim, lock)
    else:
        lock.write_text("my notes, not a pid")
    with holding_outputs(), pytest.raises(ConfigError) as refused:
        check_output(tmp_path / "out", expect="folder")
    assert str(refused.value) == (f"out {tmp_path / 'out'}: its lock file {lock} {problem}, not a lock file "
                                  "lsplits wrote; remove it yourself or give another path")
    assert victim.read_text() == "the user's text"
    assert lock.is_symlink() or lock.read_text() in ("the user's text", "my notes, not a pid")


def test_a_lock_file_left_by_a_killed_command_is_still_taken(tmp_path):
    """A stale lock (the pid of a process that is gone) is lsplits' own: taken, rewritten, removed after."""
    from lsplits.io.guard import check_output
    from lsplits.io.locks import holding_outputs

    lock = tmp_path / ".out.lsplits-lock"
    lock.write_text("4194999")
    with holding_outputs():
        check_output(tmp_path / "out", expect="folder")
        assert lock.read_text() == str(os.getpid())
    assert not lock.exists()


# --- 3. a user's beams file is not lsplits' own ------------------------------------------------------------------

def test_beams_refuses_a_users_own_beams_file(tmp_path, monkeypatch, capsys):
    mine = write_jsonl(tmp_path / "my_parser_beams.jsonl", [{"id": "1", "candidates": ["(r / run-01)"]}])
    inputs = tmp_path / "sentences.txt"
    inputs.write_text("the dog runs\n")
    done = run_in_process(["beams", "no-such-model", str(inputs), "--out", str(mine), "--cache-dir",
                           str(tmp_path / "cache"), "--no-progress"], tmp_path, monkeypatch, capsys)
    assert one_line(done) == (f"lsplits beams: error: --out {mine}: an existing file that lsplits did not write "
                              "(lsplits knows its own by the my_parser_beams.settings.json it writes beside it); "
                              "give a new path or remove the file yourself")
    assert json.loads(mine.read_text()) == {"id": "1", "candidates": ["(r / run-01)"]}


def test_a_beams_file_is_lsplits_own_while_its_record_describes_it(tmp_path):
    from lsplits.generation.cache import BeamSettings, BeamsRecord, write_beams
    from lsplits.io.guard import check_output

    beams = tmp_path / "beams.jsonl"
    record = BeamsRecord(model="m", source="inputs.txt", n_inputs=2, settings=BeamSettings(k=1), dtype_used="fp32")
    write_beams(beams, ["a", "b"], [["(x / y)"], ["(z / w)"]], record=record)
    assert check_output(beams, expect="file", suffix=".jsonl") == beams
    beams.write_text(beams.read_text().replace("(x / y)", "(x / edited)"))  # the user's edit: theirs now
    with pytest.raises(ConfigError, match="beams.jsonl: an existing file that lsplits did not write"):
        check_output(beams, expect="file", suffix=".jsonl")


# --- 9 (part). an unreadable folder marker ---------------------------------------------------------------------

def test_a_deeply_nested_folder_marker_is_one_line(tmp_path, monkeypatch, capsys):
    beams, gold = beams_and_gold(tmp_path / "inputs")
    out = tmp_path / "report"
    out.mkdir()
    (out / ".lsplits-output.json").write_text("[" * 200_000 + "]" * 200_000)
    done = run_in_process(["ue", str(beams), "--gold", str(gold), "--out", str(out), "--no-cache", "--no-progress",
                           "--similarities", "sema", "--qualities", "sema"], tmp_path, monkeypatch, capsys)
    assert one_line(done) == (f"lsplits ue: error: --out {out}: a non-empty folder that lsplits did not write "
                              "(.lsplits-output.json); give a new or empty folder, or move those files out first")


# --- minor items ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["build", "score", "demo", "ue", "beams", "difficulty"])
def test_an_empty_cache_dir_is_refused_by_every_command_that_has_one(tmp_path, monkeypatch, capsys, command):
    missing = str(tmp_path / "missing.jsonl")  # anything checked after the options fails otherwise
    argv = {"build": ["build", "--data-files", missing, "--query-field", "text", "--out", "o"],
            "score": ["score", "--data-files", missing, "--query-field", "text", "--out", "o.parquet"],
            "demo": ["demo", "--out", "o", "--n", "1"],
            "ue": ["ue", missing, "--gold", missing, "--out", "o"],
            "beams": ["beams", "no-such-model", missing, "--out", "o.jsonl"],
            "difficulty": ["difficulty", str(tmp_path / "missing"), "--out", "o"]}[command]
    done = run_in_process([*argv, "--cache-dir", ""], tmp_path, monkeypatch, capsys)
    assert one_line(done) == (f"lsplits {command}: error: argument --cache-dir: an empty path would put the cache "
                              f"into the current folder; give a folder (see lsplits {command} --help)")
    assert list(tmp_path.iterdir()) == []


def test_the_library_refuses_an_empty_cache_folder(tmp_path):
    from lsplits.io.storage import check_writable

    with pytest.raises(ConfigError, match="^the score cache: an empty path, which would put the cache into the "
                                          "current folder; give a folder$"):
        check_writable("", "the score cache")


def test_score_refuses_an_out_name_that_is_not_parquet(tmp_path, monkeypatch, capsys):
    data = write_jsonl(tmp_path / "data.jsonl", [{"text": f"line {i}"} for i in range(8)])
    done = run_in_process(["score", "--data-files", str(data), "--query-field", "text", "--lm", "scratch", "--out",
                           str(tmp_path / "x.csv"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"],
                          tmp_path, monkeypatch, capsys)
    assert one_line(done) == f"lsplits score: error: --out {tmp_path / 'x.csv'}: the file name must end in .parquet"
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "cache").exists()


def test_ue_refuses_to_replace_a_built_dataset(dataset, tmp_path, monkeypatch, capsys):
    beams, gold = beams_and_gold(tmp_path / "inputs")
    before = sorted(p.relative_to(dataset).as_posix() for p in dataset.rglob("*"))
    done = run_in_process(["ue", str(beams), "--gold", str(gold), "--out", str(dataset), "--no-cache",
                           "--no-progress", "--similarities", "sema", "--qualities", "sema"],
                          tmp_path, monkeypatch, capsys)
    assert one_line(done) == (f"lsplits ue: error: --out {dataset}: is a dataset lsplits built (it holds "
                              "lsplits.json), which this command's output would replace; give another folder")
    assert sorted(p.relative_to(dataset).as_posix() for p in dataset.rglob("*")) == before


def test_score_onto_a_built_datasets_parquet_says_what_the_file_is(dataset, tmp_path, monkeypatch, capsys):
    parquet = next((dataset / "random").glob("train-*.parquet"))
    data = write_jsonl(tmp_path / "data.jsonl", [{"text": f"line {i}"} for i in range(8)])
    done = run_in_process(["score", "--data-files", str(data), "--query-field", "text", "--lm", "scratch", "--out",
                           str(parquet), "--cache-dir", str(tmp_path / "cache"), "--no-progress"],
                          tmp_path, monkeypatch, capsys)
    assert one_line(done) == (f"lsplits score: error: --out {parquet}: is a file of the built dataset {dataset}, "
                              "which lsplits replaces only as a whole (a rebuild); write the output elsewhere")


def test_difficulty_refuses_a_cache_folder_inside_a_built_dataset(dataset, tmp_path, monkeypatch, capsys):
    done = run_in_process(["difficulty", str(dataset), "--model", str(tmp_path / "no-model"), "--out",
                           str(tmp_path / "report"), "--cache-dir", str(dataset / "runs"), "--no-progress"],
                          tmp_path, monkeypatch, capsys)
    assert one_line(done) == (f"lsplits difficulty: error: the training cache (--cache-dir) {dataset / 'runs'}: "
                              f"lies inside the built dataset {dataset}, which a rebuild replaces as a whole (and "
                              "refuses while it holds files lsplits did not list); give a folder outside it")
    assert not (dataset / "runs").exists() and not (tmp_path / "report").exists()
