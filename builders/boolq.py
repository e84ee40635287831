"""BoolQ Likelihood Splits (``lsplits build boolq``): train + validation pooled (the test has no labels).

Hub source: ``google/boolq`` (question, answer, passage); the official JSONL (with title) also works.
"""

from __future__ import annotations

import sys

from lsplits.building.card import CardInfo
from lsplits.building.pipeline import DatasetSpec
from lsplits.data.loading import LoadedData, LoadOptions
from lsplits.data.tasks import boolq_task

from .common import Sources, load_official

CITATION = """@inproceedings{clark-etal-2019-boolq,
  title = {{B}ool{Q}: Exploring the Surprising Difficulty of Natural Yes/No Questions},
  author = {Clark, Christopher and Lee, Kenton and Chang, Ming-Wei and Kwiatkowski, Tom and Collins, Michael and Toutanova, Kristina},
  booktitle = {Proceedings of NAACL-HLT 2019},
  year = {2019}
}"""

SPEC = DatasetSpec(
    task=boolq_task(),
    card=CardInfo(
        pretty_name="BoolQ Likelihood Splits",
        license="cc-by-sa-3.0",
        task_categories=("question-answering", "text-classification"),
        source_datasets=("google/boolq",),
        source_citation=CITATION,
        summary="BoolQ re-split so that the questions a language model finds least likely (given the passage) "
                "form the evaluation set; eval is balanced between yes and no answers.",
    ),
    paper_sizes=(7_617, 2_540, 2_540),
    max_steps=3_000,
    method_note="BoolQ: eval is balanced by answer.",  # what was read (files or Hub splits) is the card's own line
)


def load(data_files: list[str] | None = None, options: LoadOptions | None = None, *,
         sources: Sources | None = None) -> LoadedData:
    """BoolQ pooled over train/validation (from the Hub, or the official JSONL files)."""
    return load_official(SPEC.task, "google/boolq", ("train", "validation"), data_files, options=options, sources=sources)


if __name__ == "__main__":  # a script entry: python -m lsplits.builders.boolq == lsplits build boolq
    from lsplits.cli.parser import main

    sys.exit(main(["build", "boolq", *sys.argv[1:]]))
