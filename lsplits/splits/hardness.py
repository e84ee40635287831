"""Spider's SQL hardness levels (easy / medium / hard / extra), for the split statistics.

Spider's official ``evaluation.py`` (``Evaluator.eval_hardness``) rates a query from three counts
over its *top-level* query (set-operation right-hand sides and subqueries are not looked into):

- component 1: one each for ``where``, ``group by``, ``order by``, ``limit``; one per joined table
  beyond the first; one per ``or`` and one per ``like`` (``not like`` included) among the
  conditions of ``on``, ``where`` and ``having``;
- component 2: one per subquery used as a value in those conditions, plus one for a
  ``union``/``intersect``/``except``;
- others: one each for "more than one aggregate", "more than one selected expression", "more
  than one ``where`` condition", "more than one ``group by`` column".

The aggregate count reproduces the official code's quirks, because the paper's Table 5 and
Figure 5 use that tool: a selected expression counts when it *starts* with an aggregate function;
``order by`` and ``group by`` count each aggregated operand; a ``where`` condition counts when it
is negated (``not in``, ``not like``: the official code reads the negation flag in the aggregate
slot); and a ``having`` clause counts its negated conditions and each of its ``and``/``or``
connectives (the official code counts the connective strings themselves). The plain
``having count(*) > 1`` adds nothing. Where the official parser stops early and ignores the rest
(``order by count(*) >= 5`` in train_spider orders by ``count(*)``), so does this count.

:func:`spider_hardness` accepts either the SQL string (parsed here by
:mod:`lsplits.splits.sql_tree`) or Spider's own parsed ``sql`` dict when the data carries one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lsplits.splits.sql_tree import Node, parse_sql

__all__ = ["HARDNESS_LEVELS", "UNKNOWN_HARDNESS", "hardness_counts", "spider_hardness"]

#: The four levels, easiest first.
HARDNESS_LEVELS = ("easy", "medium", "hard", "extra")
#: The level a build records for a query that :mod:`lsplits.splits.sql_tree` cannot parse.
UNKNOWN_HARDNESS = "unknown"

_AGGREGATES = frozenset({"max", "min", "count", "sum", "avg"})
_SPIDER_LIKE_OP = 9  # index of "like" in Spider's WHERE_OPS
_SPIDER_NO_AGG = 0  # index of "none" in Spider's AGG_OPS


def _level(component1: int, component2: int, others: int) -> str:
    """Spider's decision rule from the three counts."""
    if component1 <= 1 and others == 0 and component2 == 0:
        return "easy"
    if (others <= 2 and component1 <= 1 and component2 == 0) or \
            (component1 <= 2 and others < 2 and component2 == 0):
        return "medium"
    if (others > 2 and component1 <= 2 and component2 == 0) or \
            (2 < component1 <= 3 and others <= 2 and component2 == 0) or \
            (component1 <= 1 and others == 0 and component2 <= 1):
        return "hard"
    return "extra"


# -- from our parse tree -------------------------------------------------------------------------

def _conditions(condition: Node | None) -> tuple[list[Node], list[str]]:
    """Flatten a condition into its basic conditions and its ``and``/``or`` connectives, in order."""
    if condition is None:
        return [], []
    if condition.kind == "logic" and condition.label in ("and", "or"):
        leaves: list[Node] = []
        connectives: list[str] = []
        for position, operand in enumerate(condition.children):
            if position:
                connectives.append(condition.label)
            operand_leaves, operand_connectives = _conditions(operand)
            leaves += operand_leaves
            connectives += operand_connectives
        return leaves, connectives
    if condition.kind == "logic" and condition.label == "not":
        return _conditions(condition.children[0])
    return [condition], []


def _is_aggregate(node: Node) -> bool:
    return node.kind == "function" and node.label in _AGGREGATES


def _value_unit(node: Node) -> Node:
    """The value Spider's parser reads from a selected or ordering item.

    Spider's parser stops at a comparison it does not expect and ignores the rest, so
    ``order by count(*) >= 5`` (a real train_spider query) orders by ``count(*)``.
    """
    if node.kind == "order":
        node = node.children[0]
    while node.kind == "compare" and not node.label.endswith("exists"):
        node = node.children[0]
    return node


def _starts_with_aggregate(node: Node) -> bool:
    """True for ``max(x)`` and ``max(x) - min(x)``: Spider reads the leading aggregate only."""
    node = _value_unit(node)
    if node.kind == "arith" and node.label != "neg":
        return _starts_with_aggregate(node.children[0])
    return _is_aggregate(node)


def _aggregated_operands(node: Node) -> int:
    """Aggregates among the one or two column units of an ``order by``/``group by`` value."""
    node = _value_unit(node)
    if node.kind == "arith" and node.label != "neg":
        return sum(_is_aggregate(child) for child in node.children)
    return int(_is_aggregate(node))


def _is_negated(condition: Node) -> bool:
    return condition.label.startswith("not ")


def hardness_counts(sql: str) -> tuple[int, int, int]:
    """Return Spider's (component 1, component 2, others) counts for the SQL string ``sql``."""
    query = parse_sql(sql)
    clauses = {child.label.replace("select distinct", "select"): child
               for child in query.children if child.kind == "clause"}
    set_operations = sum(child.kind == "setop" for child in query.children)

    def single(name: str) -> Node | None:
        clause = clauses.get(name)
        return clause.children[0] if clause is not None else None

    tables, join_conditions = 0, []
    for item in clauses["from"].children if "from" in clauses else ():
        tables += 1
        if item.kind == "join" and len(item.children) > 1:
            join_conditions.append(item.children[1])
    where_leaves, where_connectives = _conditions(single("where"))
    having_leaves, having_connectives = _conditions(single("having"))
    on_leaves, on_connectives = [], []
    for condition in join_conditions:
        leaves, connectives = _conditions(condition)
        on_leaves += leaves
        on_connectives += connectives
    all_leaves = on_leaves + where_leaves + having_leaves
    all_connectives = on_connectives + where_connectives + having_connectives

    component1 = sum(name in clauses for name in ("where", "group by", "order by", "limit"))
    component1 += max(tables - 1, 0)
    component1 += all_connectives.count("or")
    component1 += sum(leaf.label in ("like", "not like") for leaf in all_leaves)

    component2 = set_operations + sum(
        child.kind == "query" for leaf in all_leaves if leaf.kind == "compare" for child in leaf.children[1:]
    )

    selected = clauses["select"].children
    group_by = clauses["group by"].children if "group by" in clauses else ()
    aggregates = sum(_starts_with_aggregate(item) for item in selected)
    aggregates += sum(_is_negated(leaf) for leaf in where_leaves + having_leaves)
    aggregates += sum(_aggregated_operands(item) for item in group_by)
    order_by = clauses["order by"].children if "order by" in clauses else ()
    aggregates += sum(_aggregated_operands(item) for item in order_by)
    aggregates += len(having_connectives)
    others = int(aggregates > 1) + int(len(selected) > 1) + int(len(where_leaves) > 1) + int(len(group_by) > 1)
    return component1, component2, others


# -- from Spider's parsed ``sql`` dict -----------------------------------------------------------

def _spider_counts(sql: Mapping[str, Any]) -> tuple[int, int, int]:
    """The same three counts from Spider's parsed form (``select``, ``from``, ``where`` ... keys)."""
    # Each condition list alternates units and connectives: [unit, "and", unit, "or", unit].
    condition_lists = (sql["from"]["conds"], sql["where"], sql["having"])
    units = [unit for conditions in condition_lists for unit in conditions[::2]]
    connectives = [word for conditions in condition_lists for word in conditions[1::2]]
    component1 = sum(bool(sql[key]) for key in ("where", "groupBy", "orderBy"))
    component1 += sql["limit"] is not None
    component1 += max(len(sql["from"]["table_units"]) - 1, 0)
    component1 += connectives.count("or")
    component1 += sum(unit[1] == _SPIDER_LIKE_OP for unit in units)

    component2 = sum(isinstance(value, dict) for unit in units for value in (unit[3], unit[4]))
    component2 += sum(sql[key] is not None for key in ("intersect", "except", "union"))

    aggregates = sum(unit[0] != _SPIDER_NO_AGG for unit in sql["select"][1])
    aggregates += sum(unit[0] != _SPIDER_NO_AGG for unit in sql["where"][::2])
    aggregates += sum(unit[0] != _SPIDER_NO_AGG for unit in sql["groupBy"])
    if sql["orderBy"]:
        column_units = [part for value in sql["orderBy"][1] for part in (value[1], value[2]) if part]
        aggregates += sum(unit[0] != _SPIDER_NO_AGG for unit in column_units)
    # The official code applies the aggregate test to the raw having list, "and"/"or" included.
    aggregates += sum(unit[0] != _SPIDER_NO_AGG for unit in sql["having"])
    others = int(aggregates > 1) + int(len(sql["select"][1]) > 1) + int(len(sql["where"]) > 1)
    others += int(len(sql["groupBy"]) > 1)
    return component1, component2, others


def spider_hardness(sql: str | Mapping[str, Any]) -> str:
    """Spider's hardness level of a query: ``"easy"``, ``"medium"``, ``"hard"`` or ``"extra"``.

    ``sql`` is the SQL string or Spider's parsed ``sql`` dict. Raises
    :class:`~lsplits.errors.DataError` when a string cannot be parsed.

    >>> spider_hardness("SELECT count(*) FROM singer"), spider_hardness(
    ...     "SELECT name FROM singer WHERE age > 20 ORDER BY age DESC LIMIT 1")
    ('easy', 'hard')
    """
    counts = _spider_counts(sql) if isinstance(sql, Mapping) else hardness_counts(sql)
    return _level(*counts)
