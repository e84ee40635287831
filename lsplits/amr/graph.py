"""One parsed AMR graph in the triple form that the AMR metrics share (Smatch, S2Match, SEMA, WLK, SemBLEU).

A PENMAN string is parsed once with the ``penman`` package (AMR role model) into an :class:`AmrGraph`:

- nodes are the graph's variables, numbered in order of first appearance; each has one concept;
- ``relations`` are (role, source node, target node) triples between variables;
- ``attributes`` are (role, source node, constant) triples;
- ``top`` is the root node.

Normalisation, applied identically to every graph so that metrics compare like with like:

- inverse roles are turned around: ``(a :ARG0-of b)`` becomes ``(b :ARG0 a)`` (roles that only
  look inverse in the AMR model, such as ``:consist-of``, are kept);
- concepts, roles and constants are lower-cased (as Smatch compares them);
- double quotes around a constant are dropped, so ``:quant "2"`` equals ``:quant 2``;
- a repeated identical triple is kept once (it would otherwise be matched twice by Smatch).

Input that is not one well-formed PENMAN graph raises :class:`~lsplits.similarity.InvalidOutput`
with the parser's message: unbalanced brackets, text after the graph, an empty node ``()``, a node
without a concept, or a variable given two different concepts.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import penman
from penman import layout
from penman._lexer import PENMAN_RE, lex
from penman._parse import _parse
from penman.exceptions import PenmanError
from penman.models.amr import model as AMR_MODEL  # noqa: N812

from ..similarity import InvalidOutput

logger = logging.getLogger(__name__)

Relation = tuple[str, int, int]
Attribute = tuple[str, int, str]


EMPTY_AMR = "(a / amr-empty)"
"""The stand-in graph AMR evaluations score in place of a prediction that does not parse."""

@dataclass(frozen=True)
class AmrGraph:
    """An AMR graph as numbered nodes with concepts, relation triples and attribute triples.

    Attributes:
        variables: variable names, indexed by node number (order of first appearance).
        concepts: concept of each node, lower-cased (``concepts[i]`` belongs to ``variables[i]``).
        top: node number of the root.
        relations: (role, source, target) between nodes, roles lower-cased with their colon
            (``":arg0"``), inverse roles turned around; no duplicates.
        attributes: (role, source, constant) with the constant lower-cased and unquoted; no duplicates.
    """

    variables: tuple[str, ...]
    concepts: tuple[str, ...]
    top: int
    relations: tuple[Relation, ...]
    attributes: tuple[Attribute, ...]

    @property
    def size(self) -> int:
        """Number of nodes (variables)."""
        return len(self.concepts)


def labelled_graph(graph: AmrGraph) -> tuple[list[str], list[tuple[int, str, int]]]:
    """The graph with constants as nodes: node labels and (source, role, target) edges.

    Nodes 0..size-1 are the variables (labelled with their concepts); each attribute adds one node
    labelled with its constant, so ``:polarity -`` becomes an edge to a node ``-`` (WLK, SemBLEU).
    """
    labels = list(graph.concepts)
    edges = [(source, role, target) for role, source, target in graph.relations]
    for role, source, constant in graph.attributes:
        edges.append((source, role, len(labels)))
        labels.append(constant)
    return labels, edges


def _normalise_constant(value: str) -> str:
    """``'"Paris"' -> 'paris'``; ``'2' -> '2'``."""
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return value.lower()


def _decode(text: str) -> penman.Graph:
    """Parse exactly one PENMAN graph (metadata comments allowed), raising InvalidOutput otherwise."""
    try:
        tokens = lex(text, pattern=PENMAN_RE)
        tree = _parse(tokens)
        if tokens:
            extra = tokens.next()
            raise InvalidOutput(f"unexpected {extra.text!r} after the end of the AMR graph "
                                f"(line {extra.lineno}, character {extra.offset})")
        return layout.interpret(tree, model=AMR_MODEL)
    except PenmanError as error:
        raise InvalidOutput(f"not a valid PENMAN graph: {' '.join(str(error).split())}") from error


def parse_amr(text: str) -> AmrGraph:
    """Parse a PENMAN string into an :class:`AmrGraph`.

    Raises:
        InvalidOutput: the string is not exactly one well-formed AMR graph (the message says why).

    Example:
        >>> g = parse_amr('(w / want-01 :ARG0 (b / boy) :ARG1-of (l / like-01 :polarity -))')
        >>> g.concepts, g.relations, g.attributes
        (('want-01', 'boy', 'like-01'), ((':arg0', 0, 1), (':arg1', 0, 2)), ((':polarity', 2, '-'),))
    """
    if not isinstance(text, str):
        raise InvalidOutput(f"an AMR graph must be a string, not {type(text).__name__}")
    graph = _decode(text)
    index: dict[str, int] = {}
    concepts: list[str] = []
    for variable, _, concept in graph.instances():
        if variable is None:
            raise InvalidOutput("not a valid AMR graph: empty node '()'")
        if concept is None:
            raise InvalidOutput(f"not a valid AMR graph: node {variable!r} has no concept")
        concept = concept.lower()
        if variable in index:
            if concepts[index[variable]] != concept:
                raise InvalidOutput(f"not a valid AMR graph: variable {variable!r} has two concepts "
                                    f"({concepts[index[variable]]!r} and {concept!r})")
            continue
        index[variable] = len(concepts)
        concepts.append(concept)
    relations: dict[Relation, None] = {}
    attributes: dict[Attribute, None] = {}
    for source, role, target in graph.edges() + graph.attributes():
        if source is None or target is None:
            raise InvalidOutput("not a valid AMR graph: empty node '()'")
        role = role.lower()
        if target in index:
            relations[(role, index[source], index[target])] = None
        else:
            attributes[(role, index[source], _normalise_constant(str(target)))] = None
    return AmrGraph(
        variables=tuple(index),
        concepts=tuple(concepts),
        top=index[graph.top],
        relations=tuple(relations),
        attributes=tuple(attributes),
    )
