"""Spider Likelihood Splits (``lsplits build spider``): train_spider + dev pooled, atom constraint on every split.

Hub source: ``xlangai/spider`` (train = train_spider, validation = dev); local official files
(``train_spider.json``, ``dev.json`` or JSONL) work too; ``train_others`` is not used, as in the paper.
Adds the Spider baselines ``length``, ``template`` and ``tmcd``, a ``hardness`` column (Spider's
easy/medium/hard/extra rules) and atom/compound divergences in the card. A gold query that is not
text, or empty, is a bad input (DataError naming the example, before any scoring); one that the SQL
tree parser cannot read is kept (atoms only, hardness ``unknown``) and counted in the log, the
card and ``lsplits.json``.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from dataclasses import replace
from typing import Any

from builders.common import load_official, run_cli
from lsplits.build import BuildResult, DatasetSpec
from lsplits.card import CardInfo
from lsplits.configs import SplitConfig, SplitInputs
from lsplits.data import ID_FIELD, LoadedData
from lsplits.errors import DataError
from lsplits.splits.engine import Partition
from lsplits.splits.spider import (
    UNKNOWN_HARDNESS,
    atom_divergence,
    compound_divergence,
    enforce_atom_constraint,
    normalize_question,
    normalize_sql,
    spider_hardness,
    sql_atoms,
    sql_compounds,
    template_partition,
    tmcd_partition,
)
from lsplits.tasks import spider_task

logger = logging.getLogger(__name__)

_IDS_IN_LOG = 50  # the log names this many unparsable ids; lsplits.json and the card list them all

CITATION = """@inproceedings{yu-etal-2018-spider,
  title = {Spider: A Large-Scale Human-Labeled Dataset for Complex and Cross-Domain Semantic Parsing and Text-to-SQL Task},
  author = {Yu, Tao and Zhang, Rui and Yang, Kai and Yasunaga, Michihiro and Wang, Dongxu and Li, Zifan and Ma, James and Li, Irene and Yao, Qingning and Roman, Shanelle and Zhang, Zilin and Radev, Dragomir},
  booktitle = {Proceedings of EMNLP 2018},
  year = {2018}
}"""


def _task():
    """Spider's task, scoring the normalised question (lowercased, whitespace collapsed)."""
    base = spider_task()
    return replace(base, query=lambda setting: lambda ex: base.query(setting)(
        {**ex, "question": normalize_question(str(ex["question"]))}))


def spider_extras(examples: list[dict[str, Any]]) -> dict[str, Any]:
    """Atoms, compounds and SQL strings per example (what the atom constraint, template and TMCD read).

    A query the SQL tree parser cannot read does not stop the build: its sqlparse atoms still
    count for the atom constraint, its compounds are empty (it adds nothing to the compound
    divergence), and its id is logged, listed under ``unparsable`` and named in the card.
    """
    sqls, atoms, compounds, unparsable = [], [], [], []
    for ex in examples:
        sql = _checked_query(ex)
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


def _checked_query(example: dict[str, Any]) -> str:
    """The example's SQL text; DataError naming the example when it is not text or empty."""
    sql = example["query"]
    if not isinstance(sql, str):
        found = "null" if sql is None else f"{type(sql).__name__} {sql!r}"
        raise DataError(f"expected the SQL query as text, got {found}",
                        example=str(example[ID_FIELD]), field="query")
    if not normalize_sql(sql):
        raise DataError(f"the SQL query is empty ({sql!r})", example=str(example[ID_FIELD]), field="query")
    return sql


def query_hardness(example: dict[str, Any]) -> str:
    """Spider's hardness level of the example's gold SQL, or ``unknown`` when it cannot be parsed."""
    sql = _checked_query(example)  # not SQL text at all is a bad input, not a gap of the parser
    try:
        return spider_hardness(sql)
    except DataError:
        return UNKNOWN_HARDNESS


def atom_constraint(partition: Partition, inputs: SplitInputs) -> Partition:
    """Every SQL atom of eval must occur in train (METHOD A2); applied to every Spider config."""
    return enforce_atom_constraint(partition, inputs.extras["atoms"])


def divergences(result: BuildResult) -> dict[str, dict[str, float]]:
    """Atom (alpha 0.5) and compound (alpha 0.1) divergence between train and eval, per config."""
    extras = result.inputs.extras
    return {name: {"atom divergence": atom_divergence(p.train, p.eval, extras["atoms"]),
                   "compound divergence": compound_divergence(p.train, p.eval, extras["compounds"])}
            for name, p in result.partitions.items()}


def unparsable_note(result: BuildResult) -> dict[str, Any]:
    """The ids of the queries the SQL parser could not read, for the card and ``lsplits.json``."""
    return {"unparsable SQL queries": list(result.inputs.extras["unparsable"])}


SPIDER_CONFIGS = {
    "template": SplitConfig("template", "whole SQL-template groups (Finegan-Dollak et al., 2018) drawn at random",
                            lambda inputs, size, seed: template_partition(inputs.extras["sqls"], size, seed)),
    "tmcd": SplitConfig("tmcd", "maximum compound divergence with every eval atom in train (Shaw et al., 2021)",
                        lambda inputs, size, seed: tmcd_partition(inputs.extras["atoms"], inputs.extras["compounds"],
                                                                  size, seed)),
}

SPEC = DatasetSpec(
    task=_task(),
    card=CardInfo(
        pretty_name="Spider Likelihood Splits",
        license="cc-by-sa-4.0",
        task_categories=("text2text-generation", "table-question-answering"),
        source_datasets=("xlangai/spider",),
        source_citation=CITATION,
        summary="Spider (text-to-SQL) re-split so that the questions a language model finds least likely form the "
                "evaluation set, with the atom constraint: every SQL atom of eval occurs in train.",
    ),
    configs=("ll_split", "ll_split_len", "ll_split_pt", "ll_split_pt_len", "ll_split_reverse",
             "ll_split_len_reverse", "random", "length", "template", "tmcd"),
    extra_configs=SPIDER_CONFIGS,
    extras=spider_extras,
    partition_hook=atom_constraint,
    paper_sizes=(5_966, 1_034, 1_034),
    max_steps=2_000,
    categorical_columns=("hardness",),
    extra_statistics=divergences,
    build_notes=unparsable_note,
    method_note="Spider: train_spider and dev pooled (train_others unused); questions lowercased with whitespace "
                "collapsed before scoring; after every split, examples are swapped until each SQL atom of eval "
                "occurs in train. `hardness` follows Spider's official easy/medium/hard/extra rules. A query the SQL "
                "parser cannot read (listed below) keeps its atoms for that constraint but has no compounds "
                "and hardness `unknown`.",
)


def load(data_files: list[str] | None = None) -> LoadedData:
    """Spider pooled over train_spider and dev (from the Hub, or the official JSON/JSONL files),
    with a ``hardness`` field (Spider's level of the gold SQL; ``unknown`` when it cannot be parsed)."""
    loaded = load_official(SPEC.task, "xlangai/spider", ("train", "validation"), data_files)
    for example in loaded.examples:
        example["hardness"] = query_hardness(example)
    if "hardness" not in loaded.columns:
        loaded.columns.append("hardness")
    return loaded


if __name__ == "__main__":
    sys.exit(run_cli("spider"))
