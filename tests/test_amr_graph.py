"""Tests for lsplits.similarity.amr.graph: PENMAN parsing into the shared triple form."""

from __future__ import annotations

import pytest
from amr_helpers import sample_graphs

from lsplits.errors import InvalidOutput
from lsplits.runtime.pysource import parse_file
from lsplits.similarity.amr.graph import labelled_graph, parse_amr


def test_nodes_relations_attributes_and_top():
    graph = parse_amr('(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b :polarity -))')
    assert graph.variables == ("w", "b", "g")
    assert graph.concepts == ("want-01", "boy", "go-02")
    assert graph.top == 0
    assert set(graph.relations) == {(":arg0", 0, 1), (":arg1", 0, 2), (":arg0", 2, 1)}
    assert graph.attributes == ((":polarity", 2, "-"),)


def test_inverse_role_is_turned_around():
    inverse = parse_amr("(b / boy :ARG0-of (w / want-01))")
    assert inverse.top == 0 and inverse.concepts == ("boy", "want-01")
    assert inverse.relations == ((":arg0", 1, 0),)  # want-01 :ARG0 boy


def test_roles_that_only_look_inverse_are_kept():
    graph = parse_amr("(c / cloud :consist-of (w / water))")
    assert graph.relations == ((":consist-of", 0, 1),)


def test_constants_lose_quotes_and_case():
    graph = parse_amr('(c / City :name (n / name :op1 "Paris") :quant "2" :mod 2)')
    assert graph.concepts == ("city", "name")
    assert set(graph.attributes) == {(":op1", 1, "paris"), (":quant", 0, "2"), (":mod", 0, "2")}


def test_repeated_triple_is_kept_once():
    graph = parse_amr("(a / and :op1 (b / boy) :op1 b)")
    assert graph.relations == ((":op1", 0, 1),)


def test_reentrancy_defined_after_use():
    graph = parse_amr("(e / ensure-01 :ARG1 (f / forget-01 :ARG0 i) :condition (t / try-01 :ARG0 (i / i)))")
    assert graph.concepts == ("ensure-01", "forget-01", "try-01", "i")
    assert (":arg0", 1, 3) in graph.relations and (":arg0", 2, 3) in graph.relations


def test_metadata_comments_are_allowed():
    assert parse_amr("# ::snt Hello .\n(h / hello)").concepts == ("hello",)


@pytest.mark.parametrize("text", [
    "",
    "   ",
    "hello",
    "(a / b :ARG0 (c / d)",  # unbalanced
    "(a / b :ARG0 (c / d)))",  # extra closing bracket
    "(a / b) (c / d)",  # two graphs
    "(a :ARG0 (b / c))",  # node without concept
    "(a / b :ARG0 (a / c))",  # variable with two concepts
    "(a / b :ARG0 ())",  # empty node
    None,
])
def test_malformed_input_raises_invalid_output(text):
    with pytest.raises(InvalidOutput):
        parse_amr(text)


def test_parse_error_message_comes_from_the_parser():
    with pytest.raises(InvalidOutput, match="Unexpected end of input"):
        parse_amr("(a / b :ARG0 (c / d)")


def test_labelled_graph_turns_constants_into_nodes():
    labels, edges = labelled_graph(parse_amr('(g / go-02 :polarity - :ARG0 (b / boy :name "Bo"))'))
    assert labels == ["go-02", "boy", "-", "bo"]
    assert sorted(edges) == [(0, ":arg0", 1), (0, ":polarity", 2), (1, ":name", 3)]


def test_real_graphs_parse_with_one_node_per_opening_bracket():
    texts = sample_graphs()
    assert len(texts) >= 5
    for text in texts:
        graph = parse_amr(text)
        assert graph.size == text.count("("), text
        assert len(set(graph.variables)) == graph.size


@pytest.mark.parametrize(("text", "message"), [
    ("(a / b :ARG0 (c / d)))", r"unexpected '\)' after the end of the AMR graph \(line 1, character 21\)"),
    ("(a / b)\n  (c / d)", r"unexpected '\(' after the end of the AMR graph \(line 2, character 2\)"),
    ('(a / b :name "x)") x', r"unexpected 'x' after the end of the AMR graph \(line 1, character 19\)"),
    ("# ::snt (a b)\n(a / b) # note", r"unexpected '# note' after the end of the AMR graph \(line 2, character 8\)"),
    ("(a / b)\u00a0", r"unexpected '\\xa0' after the end of the AMR graph \(line 1, character 7\)"),
])
def test_text_after_the_graph_is_named_with_its_line_and_character(text, message):
    with pytest.raises(InvalidOutput, match=message):
        parse_amr(text)


@pytest.mark.parametrize("text", [
    '(a / b :name "x (y)" :ARG0 (c / d))',  # brackets inside a string are no brackets
    "# ::id 1 (not a graph)\n# ::snt b\n(a / b :ARG0 (c / d))\n\n",  # metadata comments, trailing blank lines
    '(a / b :name "say \\") twice")\r\n',
])
def test_one_graph_with_comments_strings_and_line_ends_parses(text):
    assert parse_amr(text).concepts[0] == "b"


def test_penman_is_read_through_its_public_api_only():
    """penman has renamed its private modules before (pyproject says penman>=1.3): no ``penman._x`` import."""
    import ast
    from pathlib import Path

    import lsplits

    for path in sorted((Path(lsplits.__file__).parent).rglob("*.py")):
        for node in ast.walk(parse_file(path)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                parts = name.split(".")
                assert not (parts[0] == "penman" and any(part.startswith("_") for part in parts)), (path, name)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "penman":
                assert not node.attr.startswith("_") or node.attr.startswith("__"), (path, node.attr)
