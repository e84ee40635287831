"""Outputs: a user's files survive every command that writes, a folder lsplits wrote is replaced on a
rerun, and a rebuilt dataset loads fresh through the same ``datasets`` cache."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pandas as pd
import pytest

from lsplits.cli.parser import main

WORDS = ["red", "blue", "cat", "dog", "runs", "sleeps", "big", "small", "house", "tree"]
GOLD = ["(w / want-01 :ARG0 (b / boy))", "(r / run-01 :ARG0 (d / dog))", "(s / sleep-01 :ARG0 (c / cat))",
        "(e / eat-01 :ARG0 (g / girl) :ARG1 (a / apple))"]


def write_inputs(folder: Path) -> dict[str, Path]:
    """A generic JSONL dataset and a beams/gold pair for ``ue``, under ``folder/inputs``."""
    inputs = folder / "inputs"
    inputs.mkdir(parents=True)
    rows = [{"text": " ".join(WORDS[(i * k + k) % len(WORDS)] for k in range(1, 3 + i % 5)), "topic": "ab"[i % 2],
             "year": 2000 + i if i % 7 else "n/a"} for i in range(40)]  # a field of mixed types
    (inputs / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (inputs / "beams.jsonl").write_text("".join(
        json.dumps({"id": f"ex{i}", "candidates": [g if i % 2 else GOLD[(i + 1) % 4], g, GOLD[(i + 1) % 4]]}) + "\n"
        for i, g in enumerate(GOLD)))
    (inputs / "gold.jsonl").write_text("".join(json.dumps({"id": f"ex{i}", "amr": g}) + "\n"
                                               for i, g in enumerate(GOLD)))
    return {"data": inputs / "data.jsonl", "beams": inputs / "beams.jsonl", "gold": inputs / "gold.jsonl"}


def argv(command: str, inputs: dict[str, Path], out: Path, cache: Path, *extra: str) -> list[str]:
    """The command line of ``command`` on the small inputs, writing ``out``."""
    generic = ["--data-files", str(inputs["data"]), "--query-field", "text", "--lm", "scratch", "--max-steps", "2",
               "--cache-dir", str(cache), "--no-progress"]
    if command == "build":
        return ["build", *generic, "--label-field", "topic", "--eval-size", "8", "--configs", "ll_split", "random",
                "--out", str(out), *extra]
    if command == "score":
        return ["score", *generic, "--out", str(out), *extra]
    if command == "demo":
        return ["demo", "--n", "40", "--scratch-steps", "2", "--cache-dir", str(cache), "--no-progress", "--out",
                str(out), *extra]
    return ["ue", str(inputs["beams"]), "--gold", str(inputs["gold"]), "--similarities", "sema", "--qualities",
            "sema", "--n-bootstrap", "0", "--workers", "1", "--cache-dir", str(cache), "--no-progress", "--out", str(out),
            *extra]


def snapshot(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file and folder below ``folder``: modification time and content."""
    return {p.relative_to(folder).as_posix(): (p.stat().st_mtime_ns, p.read_bytes() if p.is_file() else b"")
            for p in sorted(folder.rglob("*"))}


def user_folder(folder: Path) -> Path:
    """A folder of a user's own files, one of them in a sub-folder."""
    (folder / "mine" / "drafts").mkdir(parents=True)
    (folder / "mine" / "notes.txt").write_text("my notes", encoding="utf-8")
    (folder / "mine" / "drafts" / "thesis.tex").write_text("chapter 1", encoding="utf-8")
    pd.DataFrame({"id": ["x"], "value": [1.0]}).to_parquet(folder / "mine" / "results.parquet")
    return folder / "mine"


@pytest.mark.parametrize("command", ["build", "score", "demo", "ue"])
def test_a_users_files_survive_every_command(command, tmp_path, monkeypatch, capsys):
    inputs = write_inputs(tmp_path)
    mine = user_folder(tmp_path)
    monkeypatch.chdir(mine)
    cache = tmp_path / "cache"
    if command == "score":  # a file is expected: a folder, a user's file, the input itself
        outs = [mine, mine / "results.parquet", mine / "notes.txt", inputs["data"], Path(".")]
    else:  # a folder is expected: the user's folder, one of its files, the current folder, one holding inputs
        outs = [mine, mine / "notes.txt", Path("."), Path(".."), inputs["data"].parent]
    before = snapshot(tmp_path)
    for out in outs:
        assert main(argv(command, inputs, out, cache)) == 2, out
        lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith(f"lsplits {command}: error: --out {out}"), lines
    assert snapshot(tmp_path) == before  # every file unchanged, and nothing scored (no cache written)


def ids_of(folder: Path, config: str, cache: Path) -> dict[str, list[str]]:
    """The ids of every split of a config, as ``load_dataset`` returns them (every split with the same features)."""
    loaded = datasets.load_dataset(str(folder), config, cache_dir=str(cache))
    assert len({repr(loaded[split].features) for split in loaded}) == 1
    assert loaded["train"].features["year"].dtype == "string"
    return {split: list(loaded[split]["id"]) for split in ("train", "validation", "test")}


def test_rebuild_replaces_the_folder_and_loads_fresh_through_the_same_cache(tmp_path):
    inputs = write_inputs(tmp_path)
    out, hf_cache = tmp_path / "built", tmp_path / "hf-cache"
    assert main(argv("build", inputs, out, tmp_path / "cache")) == 0
    first = ids_of(out, "random", hf_cache)
    first_files = {p.relative_to(out) for p in out.rglob("*") if p.is_file()}
    assert main(argv("build", inputs, out, tmp_path / "cache", "--seed", "1")) == 0
    on_disk = {split: pd.read_parquet(path)["id"].tolist() for split, path in
               ((p.name.split("-")[0].split(".")[0], p) for p in (out / "random").glob("*.parquet"))}
    assert on_disk["test"] != first["test"]  # the seed changed the random split
    assert ids_of(out, "random", hf_cache) == {split: on_disk[split] for split in ("train", "validation", "test")}
    second_files = {p.relative_to(out) for p in out.rglob("*") if p.is_file()}
    assert {p for p in first_files if p.suffix == ".parquet"}.isdisjoint(second_files)  # old data files are gone


def test_ue_report_and_score_file_are_replaced_on_a_rerun(tmp_path):
    inputs = write_inputs(tmp_path)
    report, scores = tmp_path / "report", tmp_path / "scores.parquet"
    assert main(argv("ue", inputs, report, tmp_path / "matrices")) == 0
    first = (report / "report.md").stat().st_mtime_ns
    assert main(argv("ue", inputs, report, tmp_path / "matrices", "--seed", "3")) == 0
    assert (report / "report.md").stat().st_mtime_ns != first
    assert main(argv("score", inputs, scores, tmp_path / "cache")) == 0
    assert main(argv("score", inputs, scores, tmp_path / "cache")) == 0  # its own file: replaced
    assert len(pd.read_parquet(scores)) == 40


def test_every_cache_kind_lives_under_one_root(tmp_path, monkeypatch):
    """Scores, beams and matrices are cached under the same root, chosen by one function."""
    from lsplits.building.settings import default_cache_dir as scores
    from lsplits.generation.cache import default_cache_dir as beams
    from lsplits.io.storage import cache_folder
    from lsplits.uncertainty.study_config import default_cache_dir as matrices

    monkeypatch.delenv("LSPLITS_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert [scores(), beams(), matrices()] == [tmp_path / "xdg" / "lsplits" / kind
                                              for kind in ("scores", "beams", "matrices")]
    monkeypatch.setenv("LSPLITS_CACHE", str(tmp_path / "mine"))
    assert {f().parent for f in (scores, beams, matrices)} == {tmp_path / "mine"}
    monkeypatch.delenv("LSPLITS_CACHE")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_folder("scores") == Path.home() / ".cache" / "lsplits" / "scores"
