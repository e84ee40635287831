"""Spider-specific split logic: question normalisation, the atom constraint, and the template split.

Where it sits: the engine (:mod:`lsplits.splits.engine`) ranks examples and cuts a
:class:`~lsplits.splits.engine.Partition`; for Spider every such partition then goes through
:func:`~lsplits.splits.atom_constraint.enforce_atom_constraint` so that no eval query uses an SQL
atom that train never shows (METHOD A2). The Spider baselines of METHOD A3 are :func:`template_partition` (here) and
:func:`~lsplits.splits.tmcd.tmcd_partition`; their statistics use
:mod:`lsplits.splits.divergence` and :mod:`lsplits.splits.hardness`.

This module re-exports the Spider API so callers need one import::

    from lsplits.splits.spider import sql_atoms, enforce_atom_constraint, tmcd_partition
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from lsplits.errors import ConfigError
from lsplits.splits.atom_constraint import enforce_atom_constraint, missing_eval_atoms
from lsplits.splits.divergence import atom_divergence, compound_divergence
from lsplits.splits.engine import Partition, resolve_eval_size
from lsplits.splits.hardness import HARDNESS_LEVELS, UNKNOWN_HARDNESS, spider_hardness
from lsplits.splits.sql import normalize_sql, sql_atoms, sql_template
from lsplits.splits.sql_tree import parse_sql, sql_compounds
from lsplits.splits.tmcd import tmcd_partition

__all__ = [
    "HARDNESS_LEVELS",
    "UNKNOWN_HARDNESS",
    "atom_divergence",
    "compound_divergence",
    "enforce_atom_constraint",
    "missing_eval_atoms",
    "normalize_question",
    "normalize_sql",
    "parse_sql",
    "spider_hardness",
    "sql_atoms",
    "sql_compounds",
    "sql_template",
    "template_partition",
    "tmcd_partition",
]

logger = logging.getLogger(__name__)


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
    """Spider's ``template`` baseline: whole program-template groups go to eval (METHOD A3).

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

