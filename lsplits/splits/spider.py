"""Spider's split policy: question normalisation, SQL inputs, the atom constraint, template and TMCD splits.

Where it sits: the engine (:mod:`lsplits.splits.engine`) ranks examples and cuts a
:class:`~lsplits.splits.engine.Partition`; for Spider every such partition then goes through
:func:`~lsplits.splits.atom_constraint.enforce_atom_constraint` so that no eval query uses an SQL
atom that train never shows. The paper's Spider baselines are :class:`TemplateSplit`
(:func:`template_partition`, here) and :class:`TMCDSplit` (:func:`~lsplits.splits.tmcd.tmcd_partition`);
their statistics use :mod:`lsplits.splits.divergence` and :mod:`lsplits.splits.hardness`.
:data:`SPIDER_POLICY` bundles all of it, so a Spider split needs no dataset builder::

    from lsplits.building.configs import CONFIGS
    from lsplits.splits.spider import SPIDER_POLICY

    examples = [{"id": "train-0", "question": "How many singers?", "query": "SELECT count(*) FROM singer"}, ...]
    inputs = SPIDER_POLICY.inputs(examples, ids=[e["id"] for e in examples], lengths=[...])
    partition = SPIDER_POLICY.split(CONFIGS["template"], inputs, eval_size=100, seed=0)

This module re-exports the Spider API so callers need one import::

    from lsplits.splits.spider import sql_atoms, enforce_atom_constraint, tmcd_partition
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lsplits.data.loading import ID_FIELD
from lsplits.errors import ConfigError, DataError, SplitInvariantError
from lsplits.splits.atom_constraint import (
    enforce_atom_constraint,
    enforce_atom_constraint_on_groups,
    groups_on_both_sides,
    missing_eval_atoms,
)
from lsplits.splits.divergence import atom_divergence, compound_divergence
from lsplits.splits.engine import Partition, resolve_eval_size
from lsplits.splits.hardness import HARDNESS_LEVELS, UNKNOWN_HARDNESS, spider_hardness
from lsplits.splits.sql import normalize_sql, sql_atoms, sql_template
from lsplits.splits.sql_tree import parse_sql, sql_compounds
from lsplits.splits.strategy import SplitInputs, SplitPolicy, SplitStrategy
from lsplits.splits.tmcd import tmcd_partition

__all__ = [
    "HARDNESS_LEVELS",
    "SPIDER_POLICY",
    "UNKNOWN_HARDNESS",
    "TMCDSplit",
    "TemplateSplit",
    "atom_divergence",
    "checked_query",
    "compound_divergence",
    "enforce_atom_constraint",
    "enforce_atom_constraint_on_groups",
    "missing_eval_atoms",
    "normalize_question",
    "normalize_sql",
    "parse_sql",
    "query_hardness",
    "spider_extras",
    "spider_hardness",
    "sql_atoms",
    "sql_compounds",
    "sql_template",
    "template_partition",
    "tmcd_partition",
]

logger = logging.getLogger(__name__)

_IDS_IN_LOG = 50  # the log names this many unparsable ids; lsplits.json and the card list them all


def normalize_question(text: str) -> str:
    """The question text that Spider splits score and measure: lowercased, whitespace collapsed.

    Source: the paper's reference code reads Shaw et al.'s Spider TSV (google-research/language,
    ``nqg/tasks/spider/write_dataset.py``), whose source column is ``"db_id: question"``
    lowercased, and strips the ``db_id:`` prefix and surrounding spaces before scoring. We do the
    same and also collapse runs of whitespace (6 of the 1,034 dev questions have a double space,
    an annotation accident that would otherwise change the LM's tokens). Quotes and punctuation
    are kept as they are.

    >>> normalize_question("  What are  the names of singers?")
    'what are the names of singers?'
    """
    return " ".join(text.split()).lower()


def template_partition(sqls: Sequence[str], eval_size: int | float, seed: int = 0) -> Partition:
    """Spider's ``template`` baseline: whole program-template groups go to eval.

    Queries are grouped by :func:`~lsplits.splits.sql.sql_template`; the groups are shuffled
    (``numpy.random.default_rng(seed)``) and visited in that order. A group joins eval when it
    fits in the room left (eval size minus the examples already drawn), and is otherwise skipped
    for train; the walk continues through *all* groups, so smaller groups later in the order
    fill the remainder and eval ends at exactly the requested size. No template is split across
    train and eval. Raises :class:`ConfigError` when no selection of whole groups in that
    order reaches the size (only possible when few small groups are left: choose another seed
    or size).

    Both sides are listed in the drawing order (group order, then dataset order within a group).
    """
    n = len(sqls)
    eval_count = resolve_eval_size(eval_size, n)
    groups: dict[str, list[int]] = {}
    for index, sql in enumerate(sqls):
        groups.setdefault(sql_template(sql), []).append(index)
    members = list(groups.values())
    eval_indices: list[int] = []
    train_indices: list[int] = []
    for group_number in np.random.default_rng(seed).permutation(len(members)).tolist():
        group = members[group_number]
        if len(eval_indices) + len(group) <= eval_count:
            eval_indices += group
        else:
            train_indices += group
    if len(eval_indices) != eval_count:
        raise ConfigError(
            f"the template split cannot put exactly {eval_count} examples in eval with whole template "
            f"groups (reached {len(eval_indices)} of {len(members)} groups' worth; seed {seed}); "
            "try another seed or eval size"
        )
    logger.info("template split: %d of %d templates in eval", len({sql_template(sqls[i]) for i in eval_indices}),
                len(members))
    return Partition(train=np.asarray(train_indices, dtype=np.int64),
                     eval=np.asarray(eval_indices, dtype=np.int64))



# --------------------------------------------------------------------------------------------------
# Per-example SQL inputs
# --------------------------------------------------------------------------------------------------

def checked_query(example: Mapping[str, Any]) -> str:
    """The example's SQL text; DataError naming the example when it is not text or empty."""
    sql = example["query"]
    if not isinstance(sql, str):
        found = "null" if sql is None else f"{type(sql).__name__} {sql!r}"
        raise DataError(f"expected the SQL query as text, got {found}",
                        example=str(example[ID_FIELD]), field="query")
    if not normalize_sql(sql):
        raise DataError(f"the SQL query is empty ({sql!r})", example=str(example[ID_FIELD]), field="query")
    return sql


def query_hardness(example: Mapping[str, Any]) -> str:
    """Spider's hardness level of the example's gold SQL, or ``unknown`` when it cannot be parsed."""
    sql = checked_query(example)  # not SQL text at all is a bad input, not a gap of the parser
    try:
        return spider_hardness(sql)
    except DataError:
        return UNKNOWN_HARDNESS


def spider_extras(examples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Atoms, compounds and SQL strings per example (what the atom constraint, template and TMCD read).

    A query the SQL tree parser cannot read does not stop the build: its sqlparse atoms still
    count for the atom constraint, its compounds are empty (it adds nothing to the compound
    divergence), and its id is logged, listed under ``unparsable`` and named in the card.
    """
    sqls, atoms, compounds, unparsable = [], [], [], []
    for ex in examples:
        sql = checked_query(ex)
        sqls.append(sql)
        atoms.append(sql_atoms(sql))
        try:
            compounds.append(sql_compounds(sql))
        except DataError:
            compounds.append(Counter())
            unparsable.append(str(ex[ID_FIELD]))
    if unparsable:
        shown = ", ".join(unparsable[:_IDS_IN_LOG])
        if len(unparsable) > _IDS_IN_LOG:
            shown += f" and {len(unparsable) - _IDS_IN_LOG} more (all in the card and lsplits.json)"
        logger.warning("SQL parser: %d of %d queries could not be parsed and are kept with no compounds and "
                       "hardness %r (their atoms still count for the atom constraint): %s",
                       len(unparsable), len(examples), UNKNOWN_HARDNESS, shown)
    else:
        logger.info("SQL parser: all %d queries parsed (0 unparsable)", len(examples))
    return {"sqls": sqls, "atoms": atoms, "compounds": compounds, "unparsable": unparsable}


# --------------------------------------------------------------------------------------------------
# Strategies and the policy
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TemplateSplit(SplitStrategy):
    """Whole SQL-template groups drawn at random into eval (:func:`template_partition`); the atom constraint
    then moves whole groups (:func:`enforce_atom_constraint_on_groups`), so no template is on both sides."""

    requires = ("sqls", "atoms")

    @property
    def description(self) -> str:
        return ("whole SQL-template groups (Finegan-Dollak et al., 2018) drawn at random; the atom constraint "
                "moves whole groups, so no template is in both train and eval (checked by the build)")

    def split(self, inputs: SplitInputs, eval_size: int | float, seed: int = 0) -> Partition:
        sqls = inputs.extra("sqls", self)
        return enforce_atom_constraint_on_groups(self.own_choice(inputs, eval_size, seed), inputs.extra("atoms", self),
                                                 [sql_template(sql) for sql in sqls])

    def own_choice(self, inputs: SplitInputs, eval_size: int | float, seed: int = 0) -> Partition:
        """The template groups drawn before the atom constraint moved any (what the card's swaps count against)."""
        return template_partition(inputs.extra("sqls", self), eval_size, seed)

    def check(self, partition: Partition, inputs: SplitInputs) -> None:
        """SplitInvariantError when a template has examples in both train and eval."""
        shared = groups_on_both_sides(partition, [sql_template(sql) for sql in inputs.extra("sqls", self)])
        if shared:
            raise SplitInvariantError(f"template split: {len(shared)} SQL templates are in both train and eval "
                                      f"(e.g. {sorted(shared)[0]!r}); the split must keep template groups whole")


@dataclass(frozen=True)
class TMCDSplit(SplitStrategy):
    """Maximum compound divergence with every eval atom in train (:func:`~lsplits.splits.tmcd.tmcd_partition`)."""

    requires = ("atoms", "compounds")
    max_swaps: int | None = None
    max_atom_divergence: float | None = None
    candidates_per_swap: int = 16

    @property
    def description(self) -> str:
        return "maximum compound divergence with every eval atom in train (Shaw et al., 2021)"

    def split(self, inputs: SplitInputs, eval_size: int | float, seed: int = 0) -> Partition:
        return tmcd_partition(inputs.extra("atoms", self), inputs.extra("compounds", self), eval_size, seed,
                              max_swaps=self.max_swaps, max_atom_divergence=self.max_atom_divergence,
                              candidates_per_swap=self.candidates_per_swap)


def atom_constraint(partition: Partition, inputs: SplitInputs) -> Partition:
    """Every SQL atom of eval must occur in train; applied to every Spider config."""
    return enforce_atom_constraint(partition, inputs.extras["atoms"])


def divergences(inputs: SplitInputs, partitions: Mapping[str, Partition]) -> dict[str, dict[str, float]]:
    """Atom (alpha 0.5) and compound (alpha 0.1) divergence between train and eval, per config."""
    extras = inputs.extras
    return {name: {"atom divergence": atom_divergence(p.train, p.eval, extras["atoms"]),
                   "compound divergence": compound_divergence(p.train, p.eval, extras["compounds"])}
            for name, p in partitions.items()}


def unparsable_note(inputs: SplitInputs) -> dict[str, Any]:
    """The ids of the queries the SQL parser could not read, for the card and ``lsplits.json``."""
    return {"unparsable SQL queries": list(inputs.extras["unparsable"])}


SPIDER_POLICY = SplitPolicy(name="spider", provides=frozenset({"sqls", "atoms", "compounds", "unparsable"}),
                            extras=spider_extras, constraint=atom_constraint,
                            constraint_name="atom constraint (every SQL atom of eval occurs in train)",
                            statistics=divergences,
                            notes=unparsable_note)
"""Spider's split policy: SQL inputs per example, the atom constraint on every partition, divergences
per config and the unparsable queries as a note."""
