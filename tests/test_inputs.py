"""Reading beams (JSONL or one PENMAN file per rank) and gold, and pairing them by id."""

from __future__ import annotations

import json

import pytest

from lsplits.errors import DataError
from lsplits.uncertainty.inputs import load_inputs, read_beams, read_gold, read_penman_file


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_penman(path, graphs):
    """graphs: list of (id or None, PENMAN text)."""
    blocks = []
    for example, text in graphs:
        header = f"# ::id {example} ::date 2012\n# ::snt a sentence\n" if example is not None else ""
        blocks.append(header + text)
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return path


def test_penman_file_blocks_ids_and_lines(tmp_path):
    path = write_penman(tmp_path / "a.txt", [("s1", "(a / b\n   :x (c / d))"), ("s2", "(e / f)")])
    blocks = read_penman_file(path)
    assert [(b.id, b.text, b.line) for b in blocks] == [("s1", "(a / b\n   :x (c / d))", 1), ("s2", "(e / f)", 6)]


def test_jsonl_beams_with_varying_k_and_bad_candidates(tmp_path):
    path = write_jsonl(tmp_path / "beams.jsonl", [
        {"id": "s1", "candidates": ["(a / b)", "(a / c)", "(a / d)"]},
        {"id": 2, "candidates": ["(a / b)", None]},
    ])
    beams, with_ids = read_beams([path])
    assert with_ids
    assert beams == {"s1": ["(a / b)", "(a / c)", "(a / d)"], "2": ["(a / b)", ""]}


@pytest.mark.parametrize("line, problem", [
    ("{not json", "line 2: invalid JSON"),
    ('{"candidates": []}', "line 2, field 'id': missing id"),
    ('{"id": "x", "candidates": "(a / b)"}', "field 'candidates'"),
    ('{"id": "s1", "candidates": []}', "example 's1', field 'id': duplicate id"),
])
def test_jsonl_beam_errors_name_the_place(tmp_path, line, problem):
    path = tmp_path / "beams.jsonl"
    path.write_text('{"id": "s1", "candidates": ["(a / b)"]}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        read_beams([path])


def test_one_penman_file_per_rank_with_ids(tmp_path):
    rank1 = write_penman(tmp_path / "beam1.txt", [("s1", "(a / b)"), ("s2", "(c / d)")])
    rank2 = write_penman(tmp_path / "beam2.txt", [("s2", "(c / e)"), ("s1", "(a / x")])  # other order, one broken
    rank3 = write_penman(tmp_path / "beam3.txt", [("s1", "(a / y)")])  # s2 has only two candidates
    beams, with_ids = read_beams([rank1, rank2, rank3])
    assert with_ids
    assert beams == {"s1": ["(a / b)", "(a / x", "(a / y)"], "s2": ["(c / d)", "(c / e)"]}


def test_penman_files_without_ids_pair_by_position(tmp_path):
    rank1 = write_penman(tmp_path / "beam1.txt", [(None, "(a / b)"), (None, "(c / d)")])
    rank2 = write_penman(tmp_path / "beam2.txt", [(None, "(a / c)"), (None, "(c / e)")])
    gold = write_penman(tmp_path / "gold.txt", [("g1", "(a / b)"), ("g2", "(c / d)")])
    inputs = load_inputs([rank1, rank2], gold)
    assert inputs.ids == ["g1", "g2"]
    assert inputs.candidates == [["(a / b)", "(a / c)"], ["(c / d)", "(c / e)"]]
    short = write_penman(tmp_path / "beam3.txt", [(None, "(a / b)")])
    with pytest.raises(DataError, match="same number of graphs"):
        read_beams([rank1, short])


def test_ids_that_differ_are_listed(tmp_path):
    beams = write_jsonl(tmp_path / "beams.jsonl", [
        {"id": "s1", "candidates": ["(a / b)"]}, {"id": "s2", "candidates": ["(c / d)"]},
        {"id": "s3", "candidates": []}, {"id": "extra", "candidates": ["(e / f)"]},
    ])
    gold = write_jsonl(tmp_path / "gold.jsonl", [
        {"id": "s1", "amr": "(a / b)"}, {"id": "s2", "gold": "(c / d)"}, {"id": "s3", "amr": "(x / y)"},
        {"id": "missing", "amr": "(m / n)"},
    ])
    inputs = load_inputs([beams], gold)
    assert inputs.ids == ["s1", "s2"]
    assert inputs.gold == ["(a / b)", "(c / d)"]
    assert inputs.only_in_beams == ["extra"]
    assert inputs.only_in_gold == ["missing"]
    assert inputs.without_candidates == ["s3"]


def test_gold_errors(tmp_path):
    gold = write_jsonl(tmp_path / "gold.jsonl", [{"id": "s1", "text": "(a / b)"}])
    with pytest.raises(DataError, match="example 's1'"):
        read_gold(gold)
    beams = write_jsonl(tmp_path / "beams.jsonl", [{"id": "other", "candidates": ["(a / b)"]}])
    fine = write_jsonl(tmp_path / "fine.jsonl", [{"id": "s1", "amr": "(a / b)"}])
    with pytest.raises(DataError, match="no example is in both"):
        load_inputs([beams], fine)
    with pytest.raises(DataError, match="not a mix"):
        read_beams([beams, tmp_path / "beam2.txt"])
