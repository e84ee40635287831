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


def test_penman_files_without_any_id_pair_by_position_and_say_so(tmp_path, caplog):
    rank1 = write_penman(tmp_path / "beam1.txt", [(None, "(a / b)"), (None, "(c / d)")])
    rank2 = write_penman(tmp_path / "beam2.txt", [(None, "(a / c)"), (None, "(c / e)")])
    gold = write_penman(tmp_path / "gold.txt", [(None, "(a / b)"), (None, "(c / d)")])
    with caplog.at_level("WARNING", logger="lsplits.uncertainty.inputs"):
        inputs = load_inputs([rank1, rank2], gold)
    assert inputs.paired_by == "position"
    assert inputs.ids == ["0", "1"]
    assert inputs.candidates == [["(a / b)", "(a / c)"], ["(c / d)", "(c / e)"]]
    assert inputs.gold == ["(a / b)", "(c / d)"]
    assert [r.getMessage() for r in caplog.records] == [
        f"no input has '# ::id' lines: the 2 beam examples are paired with the 2 gold graphs of {gold} by position "
        "(ids in the report are 0-based positions)"]
    short = write_penman(tmp_path / "beam3.txt", [(None, "(a / b)")])
    with pytest.raises(DataError, match="same number of graphs, but .*beam1.txt holds 2, .*beam3.txt holds 1"):
        read_beams([rank1, short])


def test_positional_pairing_needs_equal_counts_and_names_both_files(tmp_path):
    rank1 = write_penman(tmp_path / "beam1.txt", [(None, "(a / b)"), (None, "(c / d)"), (None, "(e / f)")])
    gold = write_penman(tmp_path / "gold.txt", [(None, "(a / b)"), (None, "(c / d)")])
    with pytest.raises(DataError) as error:
        load_inputs([rank1], gold)
    assert str(error.value) == (f"without '# ::id' lines beams and gold are paired by position, but the beams "
                                f"({rank1}) hold 3 examples and the gold ({gold}) holds 2 graphs")


def test_one_gold_graph_without_id_is_an_error_not_a_pairing_by_position(tmp_path):
    """The reported bug: one gold graph lost its id, so every gold graph was paired with a beam by position."""
    graphs = [("s1", "(a / one)"), ("s2", "(b / two)"), ("s3", "(c / three)")]
    beams = write_jsonl(tmp_path / "beams.jsonl", [  # beams listed in another order than the gold
        {"id": example, "candidates": [text]} for example, text in reversed(graphs)])
    gold = write_penman(tmp_path / "gold.txt", [graphs[0], (None, graphs[1][1]), graphs[2]])
    with pytest.raises(DataError) as error:
        load_inputs([beams], gold)
    # graph 1 takes lines 1-3 (two metadata lines and the graph), line 4 is blank: graph 2 is at line 5
    assert str(error.value).startswith(
        f"{gold}, line 5, field '# ::id': this graph has no id, but gold.txt line 1 has one: beams and gold are "
        "paired by id whenever any input has ids")
    fixed = write_penman(tmp_path / "fixed.txt", graphs)
    inputs = load_inputs([beams], fixed)
    assert inputs.paired_by == "id"
    assert inputs.gold == [c[0] for c in inputs.candidates]  # each gold graph with its own beam


def test_ids_on_one_side_only_are_refused(tmp_path):
    beams = write_jsonl(tmp_path / "beams.jsonl", [{"id": "s1", "candidates": ["(a / b)"]},
                                                  {"id": "s2", "candidates": ["(c / d)"]}])
    gold = write_penman(tmp_path / "gold.txt", [(None, "(c / d)"), (None, "(a / b)")])
    with pytest.raises(DataError, match=r"gold.txt, line 1, field '# ::id': no gold graph has an id, but the "
                                        r"beams do \(beams.jsonl line 1\)"):
        load_inputs([beams], gold)
    rank1 = write_penman(tmp_path / "beam1.txt", [(None, "(a / b)"), (None, "(c / d)")])
    with_ids = write_penman(tmp_path / "gold-ids.txt", [("s1", "(a / b)"), ("s2", "(c / d)")])
    with pytest.raises(DataError, match=r"beam1.txt, line 1, field '# ::id': no beam graph has an id, but the "
                                        r"gold does \(gold-ids.txt line 1\)"):
        load_inputs([rank1], with_ids)


def test_beam_rank_files_mixing_ids_are_refused(tmp_path):
    rank1 = write_penman(tmp_path / "beam1.txt", [("s1", "(a / b)"), ("s2", "(c / d)")])
    rank2 = write_penman(tmp_path / "beam2.txt", [(None, "(a / c)"), (None, "(c / e)")])
    with pytest.raises(DataError, match=r"beam2.txt, line 1, field '# ::id': this graph has no id, but beam1.txt "
                                        r"line 1 has one"):
        read_beams([rank1, rank2])
    partly = write_penman(tmp_path / "beam3.txt", [("s1", "(a / c)"), (None, "(c / e)")])
    with pytest.raises(DataError, match=r"beam3.txt, line 5, field '# ::id'"):
        read_beams([rank1, partly])


def test_empty_files_are_named(tmp_path):
    empty = tmp_path / "gold.txt"
    empty.write_text("\n", encoding="utf-8")
    beams = write_jsonl(tmp_path / "beams.jsonl", [{"id": "s1", "candidates": ["(a / b)"]}])
    with pytest.raises(DataError, match=r"gold.txt: no gold graph in the file"):
        load_inputs([beams], empty)


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


GRAPHS = ["(w / want-01 :ARG0 (b / boy))", "(r / run-01 :ARG0 (d / dog))", "(s / sleep-01 :ARG0 (c / cat))"]


def _text_file_beams(path, graphs):
    """Beams as `lsplits beams` writes them for a text file: ids are the line positions."""
    return write_jsonl(path, [{"id": str(i), "candidates": [g, g]} for i, g in enumerate(graphs)])


def test_beams_of_a_text_file_pair_with_id_gold_only_by_position_when_asked(tmp_path, caplog):
    beams = _text_file_beams(tmp_path / "beams.jsonl", GRAPHS)
    gold = write_penman(tmp_path / "gold.amr", [(f"lpp.{i + 1}", g) for i, g in enumerate(GRAPHS)])
    with pytest.raises(DataError, match=r"no example is in both.*beams 0, 1, 2, \.\.\.; gold lpp\.1, lpp\.2, lpp\.3.*"
                                        r"with the gold's ids, or pass pair_by_position to pair them by order$"):
        load_inputs([beams], gold)
    with caplog.at_level("WARNING"):
        inputs = load_inputs([beams], gold, pair_by_position=True)
    assert inputs.ids == ["lpp.1", "lpp.2", "lpp.3"] and inputs.paired_by == "order"
    assert inputs.gold == GRAPHS and [c[0] for c in inputs.candidates] == GRAPHS
    assert "paired by position: the 3 beam examples are paired with the 3 gold graphs" in caplog.text
    short = write_penman(tmp_path / "short.amr", [("lpp.1", GRAPHS[0]), ("lpp.2", GRAPHS[1])])
    with pytest.raises(DataError, match=r"pair_by_position pairs .* hold 3 examples and the gold holds 2 graphs"):
        load_inputs([beams], short, pair_by_position=True)


def test_ue_pair_by_position_runs_the_study_and_the_report_says_so(tmp_path):
    from lsplits.cli.parser import main

    beams = _text_file_beams(tmp_path / "beams.jsonl", GRAPHS)
    gold = write_penman(tmp_path / "gold.amr", [(f"lpp.{i + 1}", g) for i, g in enumerate(GRAPHS)])
    argv = ["ue", str(beams), "--gold", str(gold), "--out", str(tmp_path / "out"), "--no-cache",
            "--similarities", "smatchpp", "--qualities", "smatchpp", "--beam-sizes", "2", "--workers", "1",
            "--no-progress"]
    assert main(argv) != 0  # by id, nothing pairs
    assert main([*argv, "--pair-by-position"]) == 0
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "paired **by order** (`--pair-by-position`)" in report
    assert json.loads((tmp_path / "out" / "settings.json").read_text())["pair_by_position"] is True
