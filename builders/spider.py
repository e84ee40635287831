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

import sys
from dataclasses import replace

from lsplits.building.card import CardInfo
from lsplits.building.pipeline import DatasetSpec
from lsplits.data.loading import LoadedData, LoadOptions
from lsplits.data.tasks import spider_task
from lsplits.splits.spider import SPIDER_POLICY, normalize_question, query_hardness

from .common import Sources, load_official

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
    policy=SPIDER_POLICY,
    paper_sizes=(5_966, 1_034, 1_034),
    max_steps=2_000,
    categorical_columns=("hardness",),
    method_note="Spider: questions lowercased with whitespace "
                "collapsed before scoring; after every split, examples are swapped until each SQL atom of eval "
                "occurs in train. `hardness` follows Spider's official easy/medium/hard/extra rules. A query the SQL "
                "parser cannot read (listed below) keeps its atoms for that constraint but has no compounds "
                "and hardness `unknown`.",
)


def load(data_files: list[str] | None = None, options: LoadOptions | None = None, *,
         sources: Sources | None = None) -> LoadedData:
    """Spider pooled over train_spider and dev (from the Hub, or the official JSON/JSONL files),
    with a ``hardness`` field (Spider's level of the gold SQL; ``unknown`` when it cannot be parsed)."""
    loaded = load_official(SPEC.task, "xlangai/spider", ("train", "validation"), data_files, options=options, sources=sources)
    for example in loaded.examples:
        example["hardness"] = query_hardness(example)
    if "hardness" not in loaded.columns:
        loaded.columns.append("hardness")
    return loaded


if __name__ == "__main__":  # a script entry: python -m lsplits.builders.spider == lsplits build spider
    from lsplits.cli.parser import main

    sys.exit(main(["build", "spider", *sys.argv[1:]]))
