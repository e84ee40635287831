"""Reliability round 5, integrity: what lsplits reads back must be what it wrote, or be said to differ.

- a similarity-matrix cache entry with the right key and altered values (still similarities in [0, 1]) is not
  trusted: its checksum fails, one warning names the file, the matrix is recomputed and rewritten;
  an entry an older lsplits wrote (no checksum) is a plain miss;
- ``build --from-record`` on data whose labels, prompt fields or queries differ from the recorded build's says
  which part changed (fields the build does not read change nothing);
- ``lsplits beams`` refuses a read-only ``--cache-dir`` before it reads the model.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from test_bad_inputs import run_in_process
from test_storage import tmpfs

from lsplits.cli.parser import main
from lsplits.similarity.registry import Similarity
from lsplits.uncertainty.matrix import build_matrices, build_matrix

CALLS: Counter = Counter()
CANDIDATES = ["abcd", "abc", "ab", "bcd", "xyz", "xy", "a", "b", "cd", "d"]


def _jaccard(a: str, b: str) -> float:
    CALLS["score"] += 1
    return len(set(a) & set(b)) / len(set(a) | set(b))


JACCARD = Similarity("r5-jaccard", lambda text: text, _jaccard, symmetric=True)


def _cached_entry(folder: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """The one cache file under ``folder`` and its arrays."""
    [path] = folder.rglob("*.npz")
    with np.load(path) as data:
        return path, {name: data[name] for name in data.files}


def _plausible_but_wrong(values: np.ndarray) -> np.ndarray:
    """Another candidate order's matrix: symmetric, in [0, 1], diagonal 1, and wrong for these candidates."""
    order = np.roll(np.arange(len(values)), 3)
    wrong = values[np.ix_(order, order)]
    assert not np.array_equal(wrong, values)
    return wrong


def test_a_cache_entry_with_the_right_key_and_altered_values_is_recomputed_and_rewritten(tmp_path, caplog):
    fresh = build_matrix(CANDIDATES, JACCARD)
    build_matrices([CANDIDATES], JACCARD, cache=tmp_path, progress=False)
    path, stored = _cached_entry(tmp_path)
    assert "checksum" in stored
    np.savez_compressed(path, **{**stored, "values": _plausible_but_wrong(stored["values"])})  # key kept
    CALLS.clear()
    with caplog.at_level("WARNING", logger="lsplits.uncertainty.matrix"):
        [again] = build_matrices([CANDIDATES], JACCARD, cache=tmp_path, progress=False)
    np.testing.assert_array_equal(again.values, fresh.values)
    assert CALLS["score"] == 45  # recomputed: every pair of the 10 distinct candidates
    [warning] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning == (f"ignoring the cached similarity matrix {path}: its values do not match the checksum stored "
                       "with them (the file was altered or corrupted); recomputing it")
    _, rewritten = _cached_entry(tmp_path)  # an entry holds the candidates' matrix in sorted order
    np.testing.assert_array_equal(rewritten["values"], build_matrix(sorted(CANDIDATES), JACCARD).values)
    CALLS.clear()
    caplog.clear()
    with caplog.at_level("WARNING", logger="lsplits.uncertainty.matrix"):
        [third] = build_matrices([CANDIDATES], JACCARD, cache=tmp_path, progress=False)
    assert CALLS["score"] == 0 and caplog.records == []  # the rewritten entry is trusted again
    np.testing.assert_array_equal(third.values, fresh.values)


def test_an_altered_invalid_mask_is_caught_by_the_checksum_too(tmp_path, caplog):
    build_matrices([CANDIDATES], JACCARD, cache=tmp_path, progress=False)
    path, stored = _cached_entry(tmp_path)
    flipped = stored["invalid"].copy()
    flipped[0] = True
    np.savez_compressed(path, **{**stored, "invalid": flipped})
    with caplog.at_level("WARNING", logger="lsplits.uncertainty.matrix"):
        [again] = build_matrices([CANDIDATES], JACCARD, cache=tmp_path, progress=False)
    assert again.invalid_count == 0
    assert [str(path) in r.getMessage() and "checksum" in r.getMessage() for r in caplog.records] == [True]


def test_a_cache_entry_an_older_lsplits_wrote_without_a_checksum_is_a_silent_miss(tmp_path, caplog):
    fresh = build_matrix(CANDIDATES, JACCARD)
    build_matrices([CANDIDATES], JACCARD, cache=tmp_path, progress=False)
    path, stored = _cached_entry(tmp_path)
    older = {name: stored[name] for name in ("values", "invalid", "errors", "key")}  # what the older code wrote
    np.savez_compressed(path, **{**older, "values": _plausible_but_wrong(stored["values"])})
    CALLS.clear()
    with caplog.at_level("WARNING", logger="lsplits.uncertainty.matrix"):
        [again] = build_matrices([CANDIDATES], JACCARD, cache=tmp_path, progress=False)
    np.testing.assert_array_equal(again.values, fresh.values)
    assert CALLS["score"] == 45 and caplog.records == []
    _, rewritten = _cached_entry(tmp_path)
    assert "checksum" in rewritten
    np.testing.assert_array_equal(rewritten["values"], build_matrix(sorted(CANDIDATES), JACCARD).values)


# --- build --from-record: every field the build reads is fingerprinted --------------------------------------------

WORDS = ["red", "blue", "cat", "dog", "runs", "sleeps", "big", "small", "house", "tree", "green", "bird"]
ROWS = [{"text": " ".join(WORDS[(i * k + k) % len(WORDS)] for k in range(1, 3 + i % 6)), "topic": "ab"[i % 2],
         "source": f"s{i % 3}", "note": f"n{i}"} for i in range(40)]


def _write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A build of :data:`ROWS`: query ``text``, label ``topic``, prompt from ``source``; ``note`` is not read."""
    folder = tmp_path_factory.mktemp("r5-build")
    out = folder / "built"
    assert main(["build", "--data-files", str(_write(folder / "data.jsonl", ROWS)), "--query-field", "text",
                 "--label-field", "topic", "--prompt-template", "From {source}:", "--lm", "scratch", "--folds", "2",
                 "--seed", "1", "--max-steps", "2", "--eval-size", "10", "--configs", "ll_split", "--out", str(out),
                 "--cache-dir", str(folder / "cache"), "--no-progress"]) == 0
    return out / "lsplits.json"


def _data(folder: Path, rows: list[dict]) -> Path:
    """``rows`` as ``folder/data.jsonl``: the name of the built file, so that the ids (``data-0``, ...) are its."""
    return _write(folder / "data.jsonl", rows)


def _edited(field: str, index: int, value: str) -> list[dict]:
    return [{**row, field: value} if i == index else row for i, row in enumerate(ROWS)]


def _settings_warnings(settings: Path, data: Path, tmp_path: Path, caplog) -> list[str]:
    caplog.clear()
    with caplog.at_level("WARNING"):
        assert main(["build", "--from-record", str(settings), "--data-files", str(data), "--out", str(tmp_path / "o"),
                     "--dry-run"]) == 0
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("the record ")]


@pytest.mark.parametrize(("edit", "changed"), [
    (("topic", 0, "b"), "other labels (field 'topic')"),
    (("source", 5, "s9"), "other values of field 'source'"),
    (("text", 2, "a brand new query"), "other queries (field 'text')"),
])
def test_build_settings_names_the_part_of_the_data_that_changed(built, tmp_path, caplog, edit, changed):
    data = _data(tmp_path, _edited(*edit))
    [warning] = _settings_warnings(built, data, tmp_path, caplog)
    assert warning == (f"the record {built} is of a build that split other data (it had 40 examples, as this "
                       f"data has, but {changed}); this build will not reproduce it. Give the same data "
                       "(data files are recorded relative to the folder the build ran in) to rebuild it")


def test_build_settings_says_nothing_for_the_same_data_or_a_field_the_build_does_not_read(built, tmp_path, caplog):
    assert _settings_warnings(built, _data(tmp_path / "same", ROWS), tmp_path, caplog) == []
    other_note = _data(tmp_path / "note", _edited("note", 3, "changed"))
    assert _settings_warnings(built, other_note, tmp_path, caplog) == []


# --- lsplits beams: a read-only cache is refused before the model is read ----------------------------------------

@pytest.mark.process
def test_beams_refuses_a_read_only_cache_before_reading_the_model(tmp_path, monkeypatch, capsys):
    from beams_fixtures import build_tiny_parser

    import lsplits.cli.beams as beams_cli
    import lsplits.lm.model_files as model_files

    model = build_tiny_parser(tmp_path / "parser", steps=1)
    inputs = _write(tmp_path / "inputs.jsonl", [{"id": "a", "text": "the dog runs"}])
    read: list[str] = []
    for module, name in [(beams_cli, "check_model"), (beams_cli, "_check_lengths"), (model_files, "load_tokenizer")]:
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _f=original, _n=name, **k: read.append(_n) or _f(*a, **k))
    with tmpfs(tmp_path / "ro", read_only=True) as frozen:
        done = run_in_process(["beams", str(model), str(inputs), "--out", str(tmp_path / "beams.jsonl"),
                               "--cache-dir", str(frozen / "beams"), "--no-progress"], tmp_path, monkeypatch, capsys)
    assert done.returncode == 2 and read == []
    assert done.stderr.splitlines() == [
        f"lsplits beams: error: the beam cache (--cache-dir) {frozen / 'beams'}: cannot write into {frozen} "
        "(Read-only file system); give a writable folder"]
    assert not (tmp_path / "beams.jsonl").exists()
