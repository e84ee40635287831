"""A small parse tree of Spider SQL, and the compounds (parent-child pairs) that TMCD splits compare.

Spider's queries use a compact SQL subset: one ``select`` with optional ``from`` (tables, joins
with ``on``), ``where``, ``group by``, ``having``, ``order by``, ``limit``, set operations
(``union``/``intersect``/``except``) and subqueries. This module parses the sqlparse tokens of
:mod:`lsplits.splits.sql` into a tree of :class:`Node` by recursive descent, so that compounds
(METHOD A3) and Spider's hardness (:mod:`lsplits.splits.hardness`) are computed from the same
structure.

Tree shape (``kind``: ``label``)::

    query: query
      clause: select | select distinct   -> one child per selected expression
      clause: from                       -> tables / subqueries, and join: join -> table [, condition]
      clause: where | having             -> one condition
      clause: group by                   -> expressions
      clause: order by                   -> expressions, wrapped in order: asc|desc when given
      clause: limit                      -> the limit literal
      setop: union | intersect | except  -> the right-hand query

Conditions are ``logic`` nodes (``and``/``or`` with their operands in order, chains flattened;
``not``) over ``compare`` nodes (``=``, ``>``, ``like``, ``not in``, ``between`` ...). Expressions
are ``function`` (``count``, ``max`` ...; ``count(distinct x)`` is function -> distinct -> x),
``arith`` (``+ - * /``, unary minus as ``neg``), ``column`` (the column name, its alias
qualifier dropped: ``t1.name`` and ``t2.name`` are the same column ``name``), ``table``,
``star`` (``*``), ``literal`` (strings re-quoted with single quotes) and ``list`` (``in (1, 2)``).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from lsplits.errors import DataError
from lsplits.splits.sql import SqlToken, sql_tokens

__all__ = ["Node", "parse_sql", "sql_compounds"]

_CLAUSES = ("from", "where", "group by", "having", "order by", "limit")
_SET_OPS = frozenset({"union", "union all", "intersect", "except"})
_COMPARISONS = frozenset({"=", "==", "!=", "<>", "<", ">", "<=", ">=", "like", "not like", "in", "glob"})
_NEGATABLE = frozenset({"in", "like", "between", "exists", "glob"})
# Words that end an expression; anything else in operand position is a name (Spider uses
# ``year``, ``count``, ``language``... as column names).
_RESERVED = frozenset({
    "select", "distinct", "as", "on", "and", "or", "not", "in", "like", "between", "exists", "is",
    "asc", "desc", "case", *_CLAUSES, *_SET_OPS,
})


@dataclass(frozen=True)
class Node:
    """A node of the SQL parse tree: its ``kind`` (see the module docstring), ``label`` and children."""

    kind: str
    label: str
    children: tuple[Node, ...] = ()

    def walk(self) -> Iterator[Node]:
        """Yield this node and all its descendants, depth first, in query order."""
        yield self
        for child in self.children:
            yield from child.walk()


class _Parser:
    """Recursive-descent parser over the token tuple of one query."""

    def __init__(self, tokens: tuple[SqlToken, ...], sql: str) -> None:
        self.tokens = tokens
        self.sql = sql
        self.position = 0

    # -- token access ----------------------------------------------------------------------------
    def peek(self, ahead: int = 0) -> str | None:
        index = self.position + ahead
        return self.tokens[index].value if index < len(self.tokens) else None

    def peek_kind(self) -> str | None:
        return self.tokens[self.position].kind if self.position < len(self.tokens) else None

    def take(self) -> SqlToken:
        if self.position >= len(self.tokens):
            raise self.error("unexpected end of query")
        token = self.tokens[self.position]
        self.position += 1
        return token

    def expect(self, value: str) -> None:
        if self.peek() != value:
            raise self.error(f"expected {value!r}")
        self.position += 1

    def error(self, problem: str) -> DataError:
        found = self.peek()
        where = f"at token {self.position} ({found!r})" if found is not None else "at the end"
        return DataError(f"cannot parse SQL {self.sql!r}: {problem} {where}", field="query")

    def comma_list(self, parse_item) -> list[Node]:
        items = [parse_item()]
        while self.peek() == ",":
            self.position += 1
            items.append(parse_item())
        return items

    # -- queries ---------------------------------------------------------------------------------
    def query(self) -> Node:
        self.expect("select")
        label = "select"
        if self.peek() == "distinct":
            self.position += 1
            label = "select distinct"
        clauses = [Node("clause", label, tuple(self.comma_list(self.select_item)))]
        while self.peek() in _CLAUSES:
            keyword = self.take().value
            if keyword == "from":
                children = self.from_items()
            elif keyword in ("where", "having"):
                children = [self.condition()]
            elif keyword == "order by":
                children = self.comma_list(self.order_item)
            else:  # group by, limit
                children = self.comma_list(self.expression)
            clauses.append(Node("clause", keyword, tuple(children)))
        if self.peek() in _SET_OPS:
            operator = self.take().value
            clauses.append(Node("setop", operator, (self.query(),)))
        return Node("query", "query", tuple(clauses))

    def select_item(self) -> Node:
        item = self.expression()
        self.skip_alias()
        return item

    def order_item(self) -> Node:
        item = self.expression()
        if self.peek() in ("asc", "desc"):
            return Node("order", self.take().value, (item,))
        return item

    def skip_alias(self) -> None:
        """Skip ``as name`` or a bare alias name: aliases carry no structure."""
        if self.peek() == "as":
            self.position += 1
            self.take()
        elif self.peek_kind() == "word" and self.peek() not in _RESERVED and not self.peek().endswith("join"):
            self.position += 1

    def from_items(self) -> list[Node]:
        items = [self.table_ref()]
        while True:
            keyword = self.peek()
            if keyword is not None and keyword.endswith("join"):
                self.position += 1
                children = [self.table_ref()]
                if self.peek() == "on":
                    self.position += 1
                    children.append(self.condition())
                items.append(Node("join", keyword, tuple(children)))
            elif keyword == ",":
                self.position += 1
                items.append(self.table_ref())
            else:
                return items

    def table_ref(self) -> Node:
        if self.peek() == "(":
            self.position += 1
            node = self.query()
            self.expect(")")
        else:
            token = self.take()
            if token.kind != "word" or token.value in _RESERVED:
                self.position -= 1
                raise self.error("expected a table name")
            node = Node("table", token.value.strip("`"))
        self.skip_alias()
        return node

    # -- conditions ------------------------------------------------------------------------------
    def condition(self) -> Node:
        return self.connective("or", self.conjunction)

    def conjunction(self) -> Node:
        return self.connective("and", self.negation)

    def connective(self, word: str, parse_operand) -> Node:
        operands = [parse_operand()]
        while self.peek() == word:
            self.position += 1
            operands.append(parse_operand())
        return operands[0] if len(operands) == 1 else Node("logic", word, tuple(operands))

    def negation(self) -> Node:
        if self.peek() == "not" and self.peek(1) != "exists":
            self.position += 1
            return Node("logic", "not", (self.negation(),))
        return self.predicate()

    def predicate(self) -> Node:
        if self.peek() == "exists" or (self.peek() == "not" and self.peek(1) == "exists"):
            label = "exists"
            if self.take().value == "not":
                self.position += 1
                label = "not exists"
            return Node("compare", label, (self.primary(),))
        if self.peek() == "(" and self.peek(1) != "select":
            grouped = self.try_grouped_condition()
            if grouped is not None:
                return grouped
        left = self.expression()
        operator = self.peek()
        if operator == "not" and self.peek(1) in _NEGATABLE:
            self.position += 1
            operator = "not " + self.peek()
        if operator in ("between", "not between"):
            self.position += 1
            low = self.expression()
            self.expect("and")
            return Node("compare", operator, (left, low, self.expression()))
        if operator == "is":
            self.position += 1
            if self.peek() == "not null":  # sqlparse lexes "not null" as one keyword
                self.position += 1
                return Node("compare", "is not", (left, Node("literal", "null")))
            if self.peek() == "not":
                self.position += 1
                operator = "is not"
            return Node("compare", operator, (left, self.expression()))
        if operator in _COMPARISONS or operator in ("not in", "not glob"):
            self.position += 1
            return Node("compare", operator, (left, self.expression()))
        return left

    def try_grouped_condition(self) -> Node | None:
        """Parse ``( condition )``; return None (and rewind) when the parenthesis is an expression."""
        start = self.position
        try:
            self.position += 1
            inner = self.condition()
            self.expect(")")
        except DataError:
            self.position = start
            return None
        if inner.kind in ("compare", "logic") and self.peek() not in _COMPARISONS:
            return inner
        self.position = start
        return None

    # -- expressions -----------------------------------------------------------------------------
    def expression(self) -> Node:
        return self.binary(("+", "-", "||"), self.term)

    def term(self) -> Node:
        return self.binary(("*", "/", "%"), self.unary)

    def binary(self, operators: tuple[str, ...], parse_operand) -> Node:
        left = parse_operand()
        while self.peek() in operators:
            operator = self.take().value
            left = Node("arith", operator, (left, parse_operand()))
        return left

    def unary(self) -> Node:
        if self.peek() == "-":
            self.position += 1
            if self.peek_kind() == "number":
                return Node("literal", "-" + self.take().value)
            return Node("arith", "neg", (self.unary(),))
        return self.primary()

    def primary(self) -> Node:
        token = self.take()
        if token.kind == "string":
            return Node("literal", "'" + token.value[1:-1] + "'")
        if token.kind == "number":
            return Node("literal", token.value)
        if token.value == "*":
            return Node("star", "*")
        if token.value == "(":
            if self.peek() == "select":
                node = self.query()
            else:
                items = self.comma_list(self.expression)
                node = items[0] if len(items) == 1 else Node("list", "list", tuple(items))
            self.expect(")")
            return node
        if token.kind != "word" or token.value in _RESERVED:
            self.position -= 1
            raise self.error("expected a value, column or function")
        name = token.value.strip("`")
        if self.peek() == "(":
            return self.function_call(name)
        if self.peek() == ".":
            self.position += 1
            column = self.take()
            return Node("star", "*") if column.value == "*" else Node("column", column.value.strip("`"))
        if name == "null":
            return Node("literal", "null")
        return Node("column", name)

    def function_call(self, name: str) -> Node:
        self.expect("(")
        distinct = self.peek() == "distinct"
        if distinct:
            self.position += 1
        arguments = () if self.peek() == ")" else tuple(self.comma_list(self.expression))
        self.expect(")")
        if distinct:
            arguments = (Node("distinct", "distinct", arguments),)
        return Node("function", name, arguments)


@functools.lru_cache(maxsize=65536)
def parse_sql(sql: str) -> Node:
    """Parse one Spider SQL query into its :class:`Node` tree; raise :class:`DataError` if it is not SQL.

    >>> parse_sql("SELECT count(*) FROM singer").children[0]
    Node(kind='clause', label='select', children=(Node(kind='function', label='count', \
children=(Node(kind='star', label='*', children=()),)),))
    """
    parser = _Parser(sql_tokens(sql), sql)
    tree = parser.query()
    if parser.position != len(parser.tokens):
        raise parser.error("unexpected trailing tokens")
    return tree


def sql_compounds(sql: str) -> Counter[str]:
    """Count the compounds of ``sql``: every parent-child edge of its tree, as ``"parent -> child"``.

    Labels are those of :class:`Node`, so ``select count(*) from singer`` has the compounds
    ``query -> select``, ``select -> count``, ``count -> *``, ``query -> from`` and
    ``from -> singer``. An edge that occurs twice in a query counts twice. Raises
    :class:`DataError` when the query cannot be parsed.
    """
    compounds: Counter[str] = Counter()
    for node in parse_sql(sql).walk():
        for child in node.children:
            compounds[f"{node.label} -> {child.label}"] += 1
    return compounds
