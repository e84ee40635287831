"""SNLI Likelihood Splits (``lsplits build snli``): all three official splits pooled, paper filters.

Hub source: ``stanfordnlp/snli`` (premise, hypothesis, label 0/1/2, -1 without gold label). Local
official JSONL (sentence1, sentence2, gold_label, ...) is converted to the Hub's field names and
keeps its other fields.
"""

from __future__ import annotations

import sys
from typing import Any

from lsplits.building.card import CardInfo
from lsplits.building.pipeline import DatasetSpec
from lsplits.data.loading import LoadedData, LoadOptions
from lsplits.data.tasks import NLI_LABELS, nli_task

from .common import Sources, load_official

CITATION = """@inproceedings{bowman-etal-2015-large,
  title = {A large annotated corpus for learning natural language inference},
  author = {Bowman, Samuel R. and Angeli, Gabor and Potts, Christopher and Manning, Christopher D.},
  booktitle = {Proceedings of EMNLP 2015},
  year = {2015}
}"""


def from_official(record: dict[str, Any]) -> dict[str, Any]:
    """Official SNLI JSONL -> the Hub schema (premise, hypothesis, label int; -1 for gold ``-``)."""
    if "sentence1" not in record:
        return record
    out = {"premise": record["sentence1"], "hypothesis": record["sentence2"]}
    gold = record.get("gold_label", "-")
    out["label"] = NLI_LABELS.index(gold) if gold in NLI_LABELS else -1
    out.update({k: v for k, v in record.items() if k not in {"sentence1", "sentence2"}})
    return out


def _task():
    filters = (
        ("no gold label", lambda ex: int(ex["label"]) in (0, 1, 2)),
        ("premise 'Cannot see picture to describe.'", lambda ex: ex["premise"].strip() != "Cannot see picture to describe."),
        ("empty or n/a hypothesis", lambda ex: str(ex["hypothesis"] or "").strip().lower() not in {"", "n/a"}),
    )
    return nli_task("snli", filters=filters)


SPEC = DatasetSpec(
    task=_task(),
    card=CardInfo(
        pretty_name="SNLI Likelihood Splits",
        license="cc-by-sa-4.0",
        task_categories=("text-classification",),
        source_datasets=("stanfordnlp/snli",),
        source_citation=CITATION,
        summary="SNLI re-split so that the hypotheses a language model finds least likely (given the "
                "premise and the label) form the evaluation set. Labels: 0 entailment, 1 neutral, 2 contradiction; "
                "eval is label-balanced.",
        extra_yaml={"task_ids": ["natural-language-inference"]},
    ),
    paper_sizes=(549_018, 10_000, 10_000),
    max_steps=15_000,
    method_note="SNLI: dropped examples without a gold label, with the premise "
                "'Cannot see picture to describe.', or with an empty or 'n/a' hypothesis. Eval is label-balanced.",
)


def load(data_files: list[str] | None = None, options: LoadOptions | None = None, *,
         sources: Sources | None = None) -> LoadedData:
    """SNLI pooled over train/validation/test (from the Hub, or the official JSONL files)."""
    return load_official(SPEC.task, "stanfordnlp/snli", ("train", "validation", "test"), data_files, from_official,
                         options=options, sources=sources)


if __name__ == "__main__":  # a script entry: python -m lsplits.builders.snli == lsplits build snli
    from lsplits.cli.parser import main

    sys.exit(main(["build", "snli", *sys.argv[1:]]))
