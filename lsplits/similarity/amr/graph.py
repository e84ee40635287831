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

Input that is not one well-formed PENMAN graph raises :class:`~lsplits.errors.InvalidOutput`
with the parser's message: unbalanced brackets, text after the graph, an empty node ``()``, a node
without a concept, or a variable given two different concepts.
"""

from __future__ import annotations

import logging
import re
import sys
from dataclasses import dataclass

import penman
from penman.models.amr import model as AMR_MODEL  # noqa: N812

from lsplits.errors import InvalidOption, InvalidOutput

logger = logging.getLogger(__name__)

Relation = tuple[str, int, int]
Attribute = tuple[str, int, str]


EMPTY_AMR = "(a / amr-empty)"
"""The stand-in graph AMR evaluations score in place of a prediction that does not parse."""
EMPTY_CONCEPT = "amr-empty"
"""The one concept of :data:`EMPTY_AMR`."""


def is_empty_stand_in(graph: AmrGraph) -> bool:
    """Whether ``graph`` is :data:`EMPTY_AMR`, the stand-in of an invalid output: one node, no triples beyond it."""
    return graph.concepts == (EMPTY_CONCEPT,) and not graph.relations and not graph.attributes

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


_SPACE = " \t\r\n\v\f"
"""What penman skips between tokens (line breaks of every kind end a line: ``str.splitlines``)."""
_TOKENS = re.compile(r'(?P<comment>#.*$)|"[^"\\]*(?:\\.[^"\\]*)*"|(?P<open>\()|(?P<close>\))|[^ \t\r\n\v\f"()]+|"')
"""What decides where a PENMAN graph ends, as penman lexes a line: comments (``#`` starting a token, to the end
of the line), strings (which may hold brackets), brackets, and runs of anything else."""
_STRINGS = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')


def _after_graph(text: str, tree: penman.Tree) -> tuple[str, int, int] | None:
    """The first token after the end of ``tree``, the first graph of ``text`` (text, line, 0-based character in
    the line, as penman's messages count them), or None when nothing follows it.

    Without comments, each node of the tree is one bracket pair outside strings, so a text whose bracket counts
    are the tree's and that ends with ``)`` holds nothing more (no scan: 10x cheaper); otherwise it is scanned.
    """
    if "#" not in text:
        plain = _STRINGS.sub('""', text) if '"' in text else text
        nodes = len(tree.nodes())
        if plain.count("(") == nodes == plain.count(")") and plain.rstrip(_SPACE).endswith(")"):
            return None
    depth, started = 0, False
    for line_no, line in enumerate(text.splitlines(), start=1):
        for match in _TOKENS.finditer(line):
            if started and depth == 0:
                return match.group(), line_no, match.start()
            if match.lastgroup == "open":
                depth, started = depth + 1, True
            elif match.lastgroup == "close":
                depth -= 1
    return None


def _decode(text: str) -> tuple[penman.Tree, penman.Graph]:
    """Parse exactly one PENMAN graph (metadata comments allowed): its tree as written and its graph
    under the AMR model; raises InvalidOutput otherwise. Only penman's public API is used: ``penman.parse``
    reads the first graph, :func:`_after_graph` finds what follows it."""
    try:
        tree = penman.parse(text)
        extra = _after_graph(text, tree)
        if extra is not None:
            token, line_no, offset = extra
            raise InvalidOutput(f"unexpected {token!r} after the end of the AMR graph "
                                f"(line {line_no}, character {offset})")
        return tree, penman.interpret(tree, model=AMR_MODEL)
    except penman.PenmanError as error:
        raise InvalidOutput(f"not a valid PENMAN graph: {' '.join(str(error).split())}") from error
    except RecursionError:  # penman parses recursively: thousands of nested nodes exhaust the stack
        raise InvalidOutput(f"not a usable AMR graph: nested too deep to read (past Python's recursion limit of "
                            f"{sys.getrecursionlimit():,} frames)") from None


def _checked_nodes(graph: penman.Graph) -> tuple[dict[str, int], list[str]]:
    """Node number of each variable (order of first appearance) and its lower-cased concept, checked:
    no empty node, no node without a concept, no variable with two concepts."""
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
    return index, concepts


def parse_amr(text: str) -> AmrGraph:
    """Parse a PENMAN string into an :class:`AmrGraph`.

    Raises:
        InvalidOutput: the string is not exactly one well-formed AMR graph (the message says why).

    Example:
        >>> g = parse_amr('(w / want-01 :ARG0 (b / boy) :ARG1-of (l / like-01 :polarity -))')
        >>> g.concepts, g.relations, g.attributes  # :ARG1-of is stored inverted: like-01 -ARG1-> want-01
        (('want-01', 'boy', 'like-01'), ((':arg0', 0, 1), (':arg1', 2, 0)), ((':polarity', 2, '-'),))
    """
    if not isinstance(text, str):
        raise InvalidOutput(f"an AMR graph must be a string, not {type(text).__name__}")
    _, graph = _decode(text)
    index, concepts = _checked_nodes(graph)
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


SMATCH_DIALECTS = ("official", "corrected")
"""How :func:`parse_smatch` reads triples: as the official ``smatch`` 1.0.4 scorer, or with its slips fixed."""

_NOT_INVERSE = frozenset({"prep-on-behalf-of", "prep-out-of", "consist-of"})
"""Roles ending in ``-of`` that the official scorer does not turn around."""


_ALIGNMENT_RE = re.compile(r"~(?:[a-zA-Z]\.?)?[0-9]+(?:,[0-9]+)*$")


def _smatch_token(token: str, *, constant: bool, whole: bool) -> str:
    """A concept, role or constant as the official scorer compares it: quotes dropped, lower-cased,
    trailing underscores stripped. It reads a quoted constant only up to its first space (``"New York"``
    is ``new``) and drops the spaces of a quoted concept; ``whole`` (the corrected reading) keeps a
    quoted constant whole and drops an alignment marker (``boy~e.3`` is ``boy``)."""
    if whole:
        token = _ALIGNMENT_RE.sub("", token)
    if len(token) >= 2 and token[0] == token[-1] == '"':
        token = token[1:-1]
        if constant and not whole:
            words = token.split()
            token = words[0] if words else ""
        elif not constant:
            token = "".join(token.split())
    return token.lower().rstrip("_")


def parse_smatch(text: str, *, dialect: str = "official") -> AmrGraph:
    """Parse a PENMAN string into the triples that Smatch scores.

    ``"official"`` reads them as the official scorer (PyPI ``smatch`` 1.0.4, ``amr.py``) does, on the
    graph as written: a role ending in ``-of`` (but ``:consist-of``, ``:prep-out-of``,
    ``:prep-on-behalf-of``) is turned around, ``:mod`` becomes an inverted ``:domain``, and such a role
    *to a constant* is dropped (``(c / chapter :mod 7)`` has 2 triples); a quoted constant counts up to
    its first space; repeated triples all count (and match each copy: see
    :func:`lsplits.similarity.amr.align.match_graphs`); alignment markers (``~e.3``) stay part of their token.
    ``"corrected"`` reads the same way but keeps a constant under an inverted role or ``:mod`` as an
    attribute with its role as written, keeps quoted constants whole, and keeps a repeated triple once.
    Validity is :func:`parse_amr`'s (same checks, same :class:`~lsplits.errors.InvalidOutput`).
    """
    if dialect not in SMATCH_DIALECTS:
        raise InvalidOption(f"unknown Smatch dialect {dialect!r}; use one of {', '.join(SMATCH_DIALECTS)}")
    if not isinstance(text, str):
        raise InvalidOutput(f"an AMR graph must be a string, not {type(text).__name__}")
    tree, graph = _decode(text)
    _checked_nodes(graph)
    official = dialect == "official"
    index: dict[str, int] = {}
    concepts: list[str] = []
    branches: list[tuple[str, str, str | None, str]] = []  # (source, role, target variable or None, constant)

    def visit(node: tuple) -> None:
        variable, edges = node
        if variable not in index:
            index[variable] = len(concepts)
            concepts.append(next(target for role, target in edges if role == "/"))
        for role, target in edges:
            if role != "/":
                branches.append((variable, role, target[0], "") if isinstance(target, tuple)
                                else (variable, role, None, target))
                if isinstance(target, tuple):
                    visit(target)

    def token(text: str, constant: bool = False) -> str:
        return _smatch_token(text, constant=constant, whole=not official)

    visit(tree.node)
    relations: list[Relation] = []
    attributes: list[Attribute] = []
    for source, role, target, constant in branches:
        name = role[1:] if official else _ALIGNMENT_RE.sub("", role[1:])
        if not official:
            constant = _ALIGNMENT_RE.sub("", constant)
        if target is None and not constant.startswith('"') and constant in index:
            target = constant  # an unquoted symbol that names a variable is a reentrancy
        inverted = name.endswith("-of") and name not in _NOT_INVERSE
        if target is not None:
            if inverted:
                relations.append((":" + token(name[:-3]), index[target], index[source]))
            elif name == "mod":
                relations.append((":domain", index[target], index[source]))
            else:
                relations.append((":" + token(name), index[source], index[target]))
        elif not (official and (inverted or name == "mod")):  # the official scorer loses such a constant
            attributes.append((":" + token(name), index[source], token(constant, constant=True)))
    if not official:
        relations, attributes = list(dict.fromkeys(relations)), list(dict.fromkeys(attributes))
    return AmrGraph(variables=tuple(index), concepts=tuple(token(concept) for concept in concepts), top=0,
                    relations=tuple(relations), attributes=tuple(attributes))
