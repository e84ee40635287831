"""SQL tokens for Spider: the atoms of the atom constraint and the program templates of the template split.

Every Spider-specific view of a query starts here. A query is normalised the way Shaw et al.
(2021) prepare Spider targets (google-research/language, ``nqg/tasks/spider``): whitespace runs
collapsed, lowercased, trailing ``;`` removed. sqlparse's lexer then tokenises it, and the
non-whitespace token values are the query's *atoms*: keywords, table and column names, aliases,
punctuation, operators and literals, exactly as sqlparse cuts them (``t1.name`` is three atoms
``t1``, ``.``, ``name``; ``group by`` and ``not like`` are one atom each). Operators SQL treats as
the same are one atom: ``<>`` is read as ``!=`` and ``==`` as ``=`` (:data:`OPERATOR_SYNONYMS`), so
they give the same atoms, templates and compounds.

The structural parse (compounds, hardness) lives in :mod:`lsplits.splits.sql_tree`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from sqlparse import lexer
from sqlparse import tokens as ttypes

from lsplits.errors import DataError

__all__ = [
    "OPERATOR_SYNONYMS",
    "TEMPLATE_VALUE",
    "SqlToken",
    "normalize_sql",
    "sql_atoms",
    "sql_template",
    "sql_tokens",
]

#: Placeholder that replaces every string and number literal in a program template.
TEMPLATE_VALUE = "value"

#: Operators that SQL (SQLite, Spider's engine) treats as the same, mapped to one spelling.
OPERATOR_SYNONYMS = {"<>": "!=", "==": "="}


@dataclass(frozen=True)
class SqlToken:
    """One non-whitespace sqlparse token of a normalised query.

    ``kind`` is ``"string"`` (a quoted literal, single or double quotes), ``"number"``,
    ``"operator"`` (comparison and arithmetic operators, ``*`` included), ``"punct"``
    (``( ) , .``) or ``"word"`` (keywords and names alike: Spider uses keywords such as ``year``
    or ``count`` as column names, so the parser tells them apart by position, not by sqlparse's
    token type).
    """

    value: str
    kind: str


def normalize_sql(sql: str) -> str:
    """Collapse whitespace, lowercase and drop trailing semicolons, as Shaw et al. prepare Spider.

    >>> normalize_sql("SELECT  T1.Name FROM Singer AS T1 ;")
    'select t1.name from singer as t1'
    """
    return " ".join(sql.split()).lower().rstrip(";").rstrip()


def _token_kind(ttype: object, value: str) -> str:
    """Map a sqlparse token type onto the coarse kinds of :class:`SqlToken`."""
    if ttype in ttypes.Literal.String:
        # sqlparse calls double-quoted text a "symbol"; SQLite (and Spider) reads it as a string
        # literal. Backticks quote identifiers.
        return "word" if value.startswith("`") else "string"
    if ttype in ttypes.Literal.Number:
        return "number"
    if ttype in ttypes.Operator or ttype in ttypes.Wildcard:
        return "operator"
    if ttype in ttypes.Punctuation:
        return "punct"
    return "word"


@functools.lru_cache(maxsize=65536)
def sql_tokens(sql: str) -> tuple[SqlToken, ...]:
    """Tokenise ``sql`` after :func:`normalize_sql`; raise :class:`DataError` if nothing is left.

    >>> [t.value for t in sql_tokens("SELECT count(*) FROM singer;")]
    ['select', 'count', '(', '*', ')', 'from', 'singer']
    """
    normalized = normalize_sql(sql)
    if not normalized:
        raise DataError(f"empty SQL query {sql!r}", field="query")
    # sqlparse's lexer alone: the tokens of sqlparse.parse without its grouping pass, which is
    # slower and refuses deeply nested parentheses ("maximum grouping depth exceeded").
    tokens = []
    for ttype, value in lexer.tokenize(normalized):
        if ttype in ttypes.Whitespace or ttype in ttypes.Comment:
            continue
        kind = _token_kind(ttype, value)
        tokens.append(SqlToken(OPERATOR_SYNONYMS.get(value, value) if kind == "operator" else value, kind))
    return tuple(tokens)


def sql_atoms(sql: str) -> frozenset[str]:
    """The set of atoms of ``sql``: its non-whitespace sqlparse token values.

    >>> sorted(sql_atoms("SELECT T1.name FROM singer AS T1 WHERE T1.age  >  20;"))
    ['.', '20', '>', 'age', 'as', 'from', 'name', 'select', 'singer', 't1', 'where']
    """
    return frozenset(token.value for token in sql_tokens(sql))


def sql_template(sql: str) -> str:
    """The program template of ``sql`` (Finegan-Dollak et al. 2018), used to group the template split.

    Two queries share a template when they differ only in literal values or in the names of
    their table aliases. Following Finegan-Dollak et al. ("anonymising variables and
    standardising syntax") and Shaw et al.'s Spider template split:

    - every string or number literal becomes :data:`TEMPLATE_VALUE` (a leading minus sign stays);
    - every alias (the word after ``as``) is renamed ``alias0``, ``alias1``, ... in the order
      the aliases are defined, everywhere it occurs;
    - whitespace, case and trailing ``;`` are normalised (:func:`normalize_sql`).

    Table and column names stay: a template is a program shape over a given schema.

    >>> sql_template("SELECT name FROM singer AS T2 WHERE age > 20 AND country = 'France'")
    'select name from singer as alias0 where age > value and country = value'
    """
    tokens = sql_tokens(sql)
    aliases: dict[str, str] = {}
    for previous, token in zip(tokens, tokens[1:]):
        if previous.value == "as" and token.kind == "word" and token.value not in aliases:
            aliases[token.value] = f"alias{len(aliases)}"
    words = []
    for token in tokens:
        if token.kind in ("string", "number"):
            words.append(TEMPLATE_VALUE)
        elif token.kind == "word" and token.value in aliases:
            words.append(aliases[token.value])
        else:
            words.append(token.value)
    return " ".join(words)
