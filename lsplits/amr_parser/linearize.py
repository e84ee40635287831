"""The parser's target text: an AMR graph as a variable-free token sequence, and back to well-formed PENMAN.

``(r / reveal-01 :ARG0 (s / sheep) :ARG1 (l / life :poss s))`` is written
``( reveal-01 :ARG0 ( sheep ) :ARG1 ( life :poss sheep ) )``: every node opens with ``(`` and its concept, and a
second mention of a node (a re-entrancy) is its concept alone, with no bracket. Constants (numbers, quoted
strings, ``-``/``+``, the ``:mode`` words) stay as they are; spaces inside a quoted string become ``_``.
Without variables the model never has to invent names, and the sequence is about a third shorter.

:func:`to_penman` reads any token sequence back into one well-formed graph: brackets are closed, a role with no
value is dropped, a bare concept is the latest node with that concept (else a new node), unknown tokens become
``thing``, and variables are fresh (penman's own naming). It returns ``None`` only when nothing graph-like is
left, so invalid candidates are rare and counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

OPEN, CLOSE = "(", ")"
UNKNOWN_CONCEPT = "thing"
"""The concept written for a node whose concept the model could not name (its unknown token)."""

MODES = frozenset({"imperative", "expressive", "interrogative"})
_NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?(/\d+)?$")
_ROLE = re.compile(r"^:[A-Za-z][\w-]*$")


def is_constant(token: str) -> bool:
    """Whether a bare token is an attribute value (number, quoted string, polarity, mode), not a node."""
    return (token.startswith('"') or token in {"-", "+"} or token in MODES or bool(_NUMBER.match(token)))


def linearize(amr: str) -> str:
    """``amr`` (PENMAN) as the parser's variable-free token sequence, tokens separated by single spaces.

    Raises:
        penman.DecodeError: ``amr`` is not PENMAN.
    """
    import penman

    tree = penman.parse(amr)
    concepts: dict[str, str] = {}
    for variable, branches in _nodes(tree.node):
        concepts[variable] = next((str(target) for role, target in branches if role == "/"), UNKNOWN_CONCEPT)
    return " ".join(_node_tokens(tree.node, concepts))


def _nodes(node) -> Iterator[tuple[str, list]]:
    variable, branches = node
    yield variable, branches
    for _, target in branches:
        if isinstance(target, tuple):
            yield from _nodes(target)


def _node_tokens(node, concepts: dict[str, str]) -> Iterator[str]:
    variable, branches = node
    yield OPEN
    yield _token(concepts[variable])
    for role, target in branches:
        if role == "/":
            continue
        yield role
        if isinstance(target, tuple):
            yield from _node_tokens(target, concepts)
        elif target in concepts:  # a re-entrancy: the concept alone
            yield _token(concepts[target])
        else:
            yield _token(str(target))
    yield CLOSE


def _token(text: str) -> str:
    """One token: spaces inside a quoted string become ``_``."""
    return text.replace(" ", "_") if text.startswith('"') else text


def to_penman(text: str, *, unknown: str = "[UNK]") -> str | None:
    """The best well-formed PENMAN graph the token sequence ``text`` spells, or ``None`` when it holds no node.

    Tolerant by design (a beam candidate may stop anywhere): see the module docstring for each repair.
    """
    import penman

    tokens = [token for token in text.split() if token]
    if tokens and tokens[0] != OPEN and not (_ROLE.match(tokens[0]) or is_constant(tokens[0]) or tokens[0] == CLOSE):
        tokens = [OPEN, *tokens]  # a graph that starts with its concept: the bracket is assumed
    reader = _Reader(tokens, unknown)
    while reader.position < len(tokens) and tokens[reader.position] != OPEN:
        reader.position += 1  # anything before the first node is skipped
    root = reader.node()
    if root is None:
        return None
    graph = penman.Graph(reader.triples, top=root)
    try:
        return penman.encode(graph, indent=None)
    except penman.exceptions.PenmanError:
        return None


def _inverted(role: str) -> bool:
    from penman.models.amr import model

    return model.is_role_inverted(role)


class _Reader:
    """Recursive descent over the tokens, collecting triples with fresh variables ``n0, n1, ...``."""

    def __init__(self, tokens: list[str], unknown: str) -> None:
        self.tokens = tokens
        self.unknown = unknown
        self.position = 0
        self.triples: list[tuple[str, str, str]] = []
        self.seen: set[tuple[str, str, str]] = set()
        self.latest: dict[str, str] = {}  # concept -> the latest node with it
        self.count = 0

    def _peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _add(self, triple: tuple[str, str, str]) -> None:
        """Keep a triple once (a repeated edge, e.g. two mentions of one re-entrancy or ``:ARG0-of`` beside the
        same ``:ARG0``, says nothing more): compared in AMR's normal form, inverted roles turned around."""
        from penman.models.amr import model

        source, role, target = triple
        key = (target, model.invert_role(role), source) if _inverted(role) else triple
        if key not in self.seen:
            self.seen.add(key)
            self.triples.append(triple)

    def _new(self, concept: str) -> str:
        concept = UNKNOWN_CONCEPT if concept == self.unknown or not concept else concept
        variable = f"n{self.count}"
        self.count += 1
        self._add((variable, ":instance", concept))
        self.latest[concept] = variable
        return variable

    def node(self, parent: str | None = None, role: str = "") -> str | None:
        """Read ``( concept (role value)* )`` from an opening bracket; the node's variable. The edge from
        ``parent`` comes before the node's own edges, so PENMAN lays the graph out as it was written."""
        if self._peek() != OPEN:
            return None
        self.position += 1
        concept = self._peek()
        if concept is None or concept in (OPEN, CLOSE) or _ROLE.match(concept):
            concept = UNKNOWN_CONCEPT
        else:
            self.position += 1
        variable = self._new(concept)
        if parent is not None:
            self._add((parent, role, variable))
        while (token := self._peek()) is not None:
            if token == CLOSE:
                self.position += 1
                break
            self.position += 1
            if not _ROLE.match(token):
                continue  # a stray token where a role belongs: skipped
            self._value(variable, token)
        return variable

    def _value(self, variable: str, role: str) -> None:
        token = self._peek()
        if token is None or token == CLOSE or _ROLE.match(token):
            return  # a role with no value: dropped
        if token == OPEN:
            self.node(variable, role)
            return
        self.position += 1
        if is_constant(token):
            if _inverted(role):
                return  # a constant cannot be the source of an edge (``:ARG0-of 5``): dropped
            value = token.replace("_", " ") if token.startswith('"') else token
            if value.startswith('"') and (len(value) < 2 or not value.endswith('"')):
                value = value.strip('"')
                value = f'"{value}"' if value else '"?"'
            self._add((variable, role, value))
        elif token == self.unknown:
            return
        else:
            target = self.latest.get(token) or self._new(token)
            self._add((variable, role, target))
