"""A parse tree of Spider SQL, and the compounds (parent-child pairs) that TMCD splits compare.

Spider's queries (train_spider, train_others, dev) use a subset of SQLite: ``select [distinct]``
with ``from`` (tables, subqueries, joins with or without ``on``), ``where``, ``group by``,
``having``, ``order by``, ``limit``, set operations (``union``/``intersect``/``except``, also
parenthesised and nested) and subqueries, with comparisons, ``like``, ``between``, ``in``,
``exists`` and arithmetic. This module parses the sqlparse tokens of :mod:`lsplits.splits.sql`
into a tree of :class:`Node` by recursive descent, so that compounds (for TMCD and the divergences) and Spider's
hardness (:mod:`lsplits.splits.hardness`) are computed from the same structure. The grammar is
SQLite's expression grammar, so it also reads what the official files hold beyond Spider's own
parser: a comparison in ``order by`` (``order by count(*) >= 5``) or ``select``, arithmetic with
literals, quoted identifiers, ``cast``, ``case``, ``is null``, ``limit ... offset``.

Tree shape (``kind``: ``label``)::

    query: query
      clause: select | select distinct   -> one child per selected expression
      clause: from                       -> tables / subqueries, and join: join -> table [, condition]
      clause: where | having             -> one condition
      clause: group by                   -> expressions
      clause: order by                   -> expressions, wrapped in order: asc|desc when given
      clause: limit                      -> the limit value [, offset: offset -> value]
      setop: union | intersect | except  -> the right-hand query

Conditions are ``logic`` nodes (``and``/``or`` with their operands in order, chains flattened;
``not``) over ``compare`` nodes (``=``, ``>``, ``like``, ``not in``, ``between``, ``is not`` ...,
left operand first). Expressions are ``function`` (``count``, ``max`` ...; ``count(distinct x)``
is function -> distinct -> x; ``cast(x as real)`` is function -> x, type), ``arith`` (``+ - * /
% ||``, unary minus as ``neg``), ``case`` (-> when -> condition, result; else), ``column`` (the
column name, its alias qualifier and quotes dropped: ``t1.name``, ``t2.name`` and ``"name"`` in
``t."name"`` are the same column ``name``), ``table``, ``star`` (``*`` and ``t1.*``), ``literal``
(strings re-quoted with single quotes, doubled quotes resolved; negative numbers keep their sign)
and ``list`` (``in (1, 2)``). A comparison may stand wherever an expression may (SQLite's
booleans are numbers).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from lsplits.errors import DataError
from lsplits.splits.sql import SqlToken, sql_tokens

__all__ = ["Node", "parse_sql", "sql_compounds"]

_CLAUSES = ("from", "where", "group by", "having", "order by", "limit")
_SET_OPS = frozenset({"union", "union all", "intersect", "except"})
_COMPARISONS = frozenset({"=", "==", "!=", "<>", "<", ">", "<=", ">="})
_PATTERN_OPERATORS = frozenset({"in", "like", "glob", "regexp", "ilike"})  # each may follow "not"
_NEGATABLE = _PATTERN_OPERATORS | {"between"}
_NULL_TESTS = {"isnull": "is", "notnull": "is not", "not null": "is not"}  # "not null" is one sqlparse token
# Words that end an expression; anything else in operand position is a name (Spider uses
# ``year``, ``count``, ``language``... as column names).
_RESERVED = frozenset({
    "select", "distinct", "as", "on", "and", "or", "not", "in", "like", "between", "exists", "is",
    "asc", "desc", "case", *_CLAUSES, *_SET_OPS,
})
# Further words that never are a bare alias (``from t limit 1``: ``limit`` is no alias of ``t``).
_NOT_ALIASES = frozenset({"offset", "using", "escape", "when", "then", "else", "end", "nulls", "collate",
                          "glob", "regexp", "ilike", "isnull", "notnull", "not null"})


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
        # sqlparse lexes "a -5" as ``a``, ``-5``: the parser reads every signed number as minus and
        # number, so ``a -5`` is a subtraction and ``= -5`` still gives the literal ``-5``.
        self.tokens = tuple(split for token in tokens for split in _split_sign(token))
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

    def comma_list(self, parse_item: Callable[[], Node]) -> list[Node]:
        items = [parse_item()]
        while self.peek() == ",":
            self.position += 1
            items.append(parse_item())
        return items

    def at_alias(self) -> bool:
        """True when the next token can only be a bare alias (a name, or a double-quoted name)."""
        value, kind = self.peek(), self.peek_kind()
        if kind == "string":
            return value.startswith('"')
        return kind == "word" and value not in _RESERVED and value not in _NOT_ALIASES and not value.endswith("join")

    def skip_alias(self) -> None:
        """Skip ``as name`` or a bare alias: aliases carry no structure."""
        if self.peek() == "as":
            self.position += 1
            self.take()
        elif self.at_alias():
            self.position += 1

    # -- queries ---------------------------------------------------------------------------------
    def query(self) -> Node:
        """A select, or a parenthesised query, then optionally a set operation with another query."""
        if self.peek() == "(":
            self.position += 1
            clauses = list(self.query().children)
            self.expect(")")
        else:
            clauses = self.select_core()
        if self.peek() in _SET_OPS:
            operator = self.take().value
            clauses.append(Node("setop", operator, (self.query(),)))
        return Node("query", "query", tuple(clauses))

    def select_core(self) -> list[Node]:
        self.expect("select")
        label = "select"
        if self.peek() in ("distinct", "all"):
            label = "select distinct" if self.take().value == "distinct" else "select"
        clauses = [Node("clause", label, tuple(self.comma_list(self.select_item)))]
        while self.peek() in _CLAUSES:
            keyword = self.take().value
            if keyword == "from":
                children = self.from_items()
            elif keyword in ("where", "having"):
                children = [self.condition()]
            elif keyword == "order by":
                children = self.comma_list(self.order_item)
            elif keyword == "limit":
                children = self.limit_items()
            else:  # group by
                children = self.comma_list(self.condition)
            clauses.append(Node("clause", keyword, tuple(children)))
        return clauses

    def select_item(self) -> Node:
        item = self.condition()
        self.skip_alias()
        return item

    def order_item(self) -> Node:
        item = self.condition()  # Spider has "order by count(*) >= 5"
        if self.peek() in ("asc", "desc"):
            item = Node("order", self.take().value, (item,))
        if self.peek() == "nulls":
            self.position += 1
            self.take()  # first / last
        return item

    def limit_items(self) -> list[Node]:
        """``limit n``, ``limit n offset m`` or ``limit m, n``: the count, then ``offset -> m``."""
        first = self.expression()
        if self.peek() == "offset":
            self.position += 1
            return [first, Node("offset", "offset", (self.expression(),))]
        if self.peek() == ",":
            self.position += 1
            return [self.expression(), Node("offset", "offset", (first,))]
        return [first]

    def from_items(self) -> list[Node]:
        items = [self.table_ref()]
        while True:
            keyword = self.peek()
            if keyword is not None and keyword.endswith("join") and self.peek_kind() == "word":
                self.position += 1
                children = [self.table_ref()]
                if self.peek() == "on":
                    self.position += 1
                    children.append(self.condition())
                elif self.peek() == "using":
                    self.position += 1
                    self.expect("(")
                    children.append(Node("using", "using", tuple(self.comma_list(self.expression))))
                    self.expect(")")
                items.append(Node("join", keyword, tuple(children)))
            elif keyword == ",":
                self.position += 1
                items.append(self.table_ref())
            else:
                return items

    def table_ref(self) -> Node:
        if self.peek() == "(":
            self.position += 1
            if self.peek() in ("select", "("):
                node = self.query()
            else:  # a parenthesised join: (a join b on ...)
                items = self.from_items()
                node = items[0] if len(items) == 1 else Node("group", "group", tuple(items))
            self.expect(")")
        else:
            token = self.take()
            if not _is_name(token):
                self.position -= 1
                raise self.error("expected a table name")
            name = token.value
            while self.peek() == ".":  # schema.table
                self.position += 1
                name = self.take().value
            node = Node("table", _unquote(name))
        self.skip_alias()
        return node

    # -- conditions ------------------------------------------------------------------------------
    def condition(self) -> Node:
        return self.connective("or", self.conjunction)

    def conjunction(self) -> Node:
        return self.connective("and", self.negation)

    def connective(self, word: str, parse_operand: Callable[[], Node]) -> Node:
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
        node = self.expression()
        while True:  # SQLite allows chains such as a = b = c; Spider has one comparison at most
            compared = self.comparison(node)
            if compared is None:
                return node
            node = compared

    def comparison(self, left: Node) -> Node | None:
        """The comparison that follows ``left`` (``= x``, ``not in (...)``, ``between a and b`` ...), or None."""
        operator = self.peek()
        if operator == "not" and self.peek(1) in _NEGATABLE:
            self.position += 1
            operator = "not " + self.peek()
        elif operator in _NULL_TESTS:  # isnull, notnull, "not null" (one sqlparse token)
            self.position += 1
            return Node("compare", _NULL_TESTS[operator], (left, Node("literal", "null")))
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
        if operator in _COMPARISONS or operator in _PATTERN_OPERATORS or \
                (operator or "").removeprefix("not ") in _PATTERN_OPERATORS:
            self.position += 1
            children = [left, self.expression()]
            if self.peek() == "escape":
                self.position += 1
                children.append(Node("escape", "escape", (self.expression(),)))
            return Node("compare", operator, tuple(children))
        return None

    # -- expressions -----------------------------------------------------------------------------
    def expression(self) -> Node:
        return self.binary(("+", "-"), self.term)

    def term(self) -> Node:
        return self.binary(("*", "/", "%"), self.concatenation)

    def concatenation(self) -> Node:
        return self.binary(("||",), self.unary)

    def binary(self, operators: tuple[str, ...], parse_operand: Callable[[], Node]) -> Node:
        left = parse_operand()
        while self.peek() in operators:
            operator = self.take().value
            left = Node("arith", operator, (left, parse_operand()))
        return left

    def unary(self) -> Node:
        operator = self.peek()
        if operator == "-":
            self.position += 1
            if self.peek_kind() == "number":
                return Node("literal", "-" + self.take().value)
            return Node("arith", "neg", (self.unary(),))
        if operator == "+":
            self.position += 1
            return self.unary()
        if operator == "~":
            self.position += 1
            return Node("arith", "~", (self.unary(),))
        return self.primary()

    def primary(self) -> Node:
        token = self.take()
        if token.kind == "string":
            if token.value.startswith('"') and self.peek() == ".":  # "t1"."name": quoted identifiers
                return self.qualified()
            return Node("literal", _string_literal(token.value))
        if token.kind == "number":
            return Node("literal", token.value)
        if token.value == "*":
            return Node("star", "*")
        if token.value == "(":
            return self.parenthesised()
        if token.value == "case":
            return self.case()
        if not _is_name(token):
            self.position -= 1
            raise self.error("expected a value, column or function")
        if self.peek() == "(":
            return self.function_call(_unquote(token.value))
        if self.peek() == ".":
            return self.qualified()
        if token.value == "null":
            return Node("literal", "null")
        return Node("column", _unquote(token.value))

    def qualified(self) -> Node:
        """The column after ``qualifier .`` (the qualifier is already taken): ``t1.name``, ``t1.*``."""
        while self.peek() == ".":
            self.position += 1
            column = self.take()
            if column.value == "*":
                return Node("star", "*")
            if not (_is_name(column) or column.kind == "string"):
                self.position -= 1
                raise self.error("expected a column name")
        return Node("column", _unquote(column.value))

    def parenthesised(self) -> Node:
        """After ``(``: a subquery, a grouped condition or expression, or a value list."""
        if self.peek() == "select":
            node = self.query()
        else:
            items = self.comma_list(self.condition)
            node = items[0] if len(items) == 1 else Node("list", "list", tuple(items))
            if node.kind == "query" and self.peek() in _SET_OPS:  # ((select ...) union (select ...))
                operator = self.take().value
                node = Node("query", "query", (*node.children, Node("setop", operator, (self.query(),))))
        self.expect(")")
        return node

    def case(self) -> Node:
        """``case [x] when a then b ... [else c] end``."""
        children = [] if self.peek() == "when" else [self.condition()]
        while self.peek() == "when":
            self.position += 1
            when = self.condition()
            self.expect("then")
            children.append(Node("when", "when", (when, self.condition())))
        if not children or children[-1].kind != "when":
            raise self.error("expected 'when'")
        if self.peek() == "else":
            self.position += 1
            children.append(Node("else", "else", (self.condition(),)))
        self.expect("end")
        return Node("case", "case", tuple(children))

    def function_call(self, name: str) -> Node:
        self.expect("(")
        modifier = self.peek() if self.peek() in ("distinct", "all") else None
        if modifier:
            self.position += 1
        arguments = () if self.peek() == ")" else tuple(self.comma_list(self.condition))
        if self.peek() == "as":  # cast(x as real)
            self.position += 1
            arguments += (Node("type", self.type_name()),)
        self.expect(")")
        if modifier == "distinct":
            arguments = (Node("distinct", "distinct", arguments),)
        return Node("function", name, arguments)

    def type_name(self) -> str:
        """The words of a type up to the closing parenthesis of ``cast``: ``real``, ``varchar(10)``."""
        words, depth = [], 0
        while self.peek() is not None and (depth or self.peek() != ")"):
            value = self.take().value
            depth += {"(": 1, ")": -1}.get(value, 0)
            words.append(value)
        if not words:
            raise self.error("expected a type name")
        return " ".join(words)


def _split_sign(token: SqlToken) -> tuple[SqlToken, ...]:
    """``-5`` as the two tokens ``-`` and ``5``; any other token as it is."""
    if token.kind == "number" and token.value.startswith("-"):
        return SqlToken("-", "operator"), SqlToken(token.value[1:], "number")
    return (token,)


def _is_name(token: SqlToken) -> bool:
    """A table, column or function name: a non-reserved word, or a double-quoted identifier."""
    return (token.kind == "word" and token.value not in _RESERVED) or \
        (token.kind == "string" and token.value.startswith('"'))


def _unquote(name: str) -> str:
    """A name without its quotes: ```a b```, ``[a b]`` and ``"a b"`` are ``a b``."""
    if len(name) >= 2 and (name[0], name[-1]) in (("`", "`"), ("[", "]"), ('"', '"')):
        return name[1:-1].replace(name[0] * 2, name[0]) if name[0] != "[" else name[1:-1]
    return name


def _string_literal(quoted: str) -> str:
    """A string literal with single quotes: ``"it's"`` and ``'it''s'`` are both ``'it''s'``."""
    text = quoted[1:-1].replace(quoted[0] * 2, quoted[0])
    return "'" + text.replace("'", "''") + "'"


@functools.lru_cache(maxsize=65536)
def parse_sql(sql: str) -> Node:
    """Parse one Spider SQL query into its :class:`Node` tree; raise :class:`DataError` if it is not SQL.

    >>> parse_sql("SELECT count(*) FROM singer").children[0]
    Node(kind='clause', label='select', children=(Node(kind='function', label='count', \
children=(Node(kind='star', label='*', children=()),)),))
    """
    parser = _Parser(sql_tokens(sql), sql)
    try:
        tree = parser.query()
    except RecursionError:
        raise DataError(f"cannot parse SQL {sql!r}: nested too deeply", field="query") from None
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
