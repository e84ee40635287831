"""Dataset cards (README.md with YAML metadata) for built Likelihood-Split datasets.

The card renders from what :func:`lsplits.building.export.write_hub_folder` wrote (a
:class:`~lsplits.building.export.WrittenFolder`: data files and sizes); the Hub layout itself, including
reading a card's YAML ``configs:`` back, belongs to :mod:`lsplits.building.export`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lsplits.building.export import WrittenFolder
from lsplits.building.settings import BuildSettings
from lsplits.data.loading import read_text
from lsplits.lm.defaults import SCRATCH_LM
from lsplits.lm.dtype import dtype_text

HOW_TO_LOAD = "## How to load"

METHOD_CITATION = """@inproceedings{godbole-jia-2023-benchmarking,
  title = {Benchmarking Long-tail Generalization with Likelihood Splits},
  author = {Godbole, Ameya and Jia, Robin},
  booktitle = {Findings of the Association for Computational Linguistics: EACL 2023},
  year = {2023},
  url = {https://arxiv.org/abs/2210.06799}
}"""


@dataclass
class CardInfo:
    """Metadata for a dataset card: what the data is, where it comes from, how to cite it."""

    pretty_name: str
    license: str = "unknown"
    task_categories: Sequence[str] = ("text-classification",)
    language: Sequence[str] = ("en",)
    source_datasets: Sequence[str] = ()
    source_citation: str = ""
    summary: str = ""
    extra_yaml: Mapping[str, object] = field(default_factory=dict)


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket for ``n`` examples."""
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if n < bound:
            return label
    return "n>10M"


def placeholder_repo(out: str | Path) -> str:
    """The repo id the card's "How to load" shows before a push: ``your-org/NAME``, never a local path."""
    return f"your-org/{Path(out).name}"


def with_repo_id(card: str, repo_id: str) -> str:
    """``card`` with its "How to load" ``load_dataset(...)`` naming ``repo_id`` (what a push uploads)."""
    head, found, tail = card.partition(HOW_TO_LOAD)
    if not found:
        return card
    return head + found + re.sub(r'load_dataset\("[^"]*"', f'load_dataset("{repo_id}"', tail, count=1)


def _labels_note(features: Sequence[Mapping]) -> list[str]:
    """One line per ClassLabel column: its ids and names (``datasets`` ``features`` has them too)."""
    lines = []
    for feature in features:
        dtype = feature.get("dtype")
        if isinstance(dtype, dict) and "class_label" in dtype:
            names = dtype["class_label"]["names"]
            mapping = ", ".join(f"{i} {names[i]}" for i in sorted(names, key=int))
            lines.append(f"`{feature['name']}` is a `ClassLabel` ({mapping}): "
                         f"`ds[\"train\"].features[\"{feature['name']}\"].int2str(i)` gives the name.")
    return [*lines, ""] if lines else []


def render_card(info: CardInfo, folder: WrittenFolder, descriptions: Mapping[str, str], *, repo_hint: str,
                method: str, statistics: str = "", plots: Mapping[str, str] | None = None,
                strategies: Mapping[str, str] | None = None, settings: str = "") -> str:
    """Render the README.md: YAML header, method, configs table with sizes, statistics, plots, usage, citations.

    ``folder`` is what :func:`lsplits.building.export.write_hub_folder` wrote (its first config is the
    default); ``plots`` maps a caption to a path in the repo; ``statistics`` is ready markdown;
    ``strategies`` maps a config to the repr of its split strategy; ``settings`` is the ready markdown of
    the build's recorded settings.
    """
    sizes = folder.num_rows
    default = folder.default
    total = max(sum(splits.values()) for splits in sizes.values())
    header = {
        "pretty_name": info.pretty_name,
        "license": info.license,
        "language": list(info.language),
        "task_categories": list(info.task_categories),
        "size_categories": [size_category(total)],
        **({"source_datasets": list(info.source_datasets)} if info.source_datasets else {}),  # unknown: left out
        "tags": ["likelihood-splits", "long-tail", "generalization"],
        **dict(info.extra_yaml),
        "configs": folder.configs_yaml(),
    }
    if folder.features:
        header["dataset_info"] = folder.dataset_info_yaml()
    lines = ["---", yaml.safe_dump(header, sort_keys=False, allow_unicode=True).rstrip(), "---", "",
             f"# {info.pretty_name}", ""]
    if info.summary:
        lines += [info.summary, ""]
    lines += ["## Method", "", method, "", "## Configs", "",
              "| config | train | validation | test | eval examples are |", "|---|---:|---:|---:|---|"]
    for name, splits in sizes.items():
        cells = " | ".join(f"{splits[s]:,}" if s in splits else "-" for s in ("train", "validation", "test"))
        mark = " (default)" if name == default else ""
        lines.append(f"| `{name}`{mark} | {cells} | {descriptions.get(name, '')} |")
    lines += ["", "Every example keeps a stable `id` (source split and index), all original fields, "
              "`ll_score` (sum of query-token log-probabilities, nats), `ll_tokens` (number of scored "
              "tokens) and `length` (NLTK word count of the query).", ""]
    if strategies:
        lines += ["Split strategy of each config (`lsplits.building.configs`; parameters also in `lsplits.json`):", ""]
        lines += [f"- `{name}`: `{text}`" for name, text in strategies.items()] + [""]
    if settings:
        lines += ["## Settings", "", settings, ""]
    if statistics:
        lines += ["## Statistics", "", statistics, ""]
    for caption, path in (plots or {}).items():
        lines += [f"![{caption}]({path})", ""]
    lines += [HOW_TO_LOAD, "", "```python", "from datasets import load_dataset", "",
              f'ds = load_dataset("{repo_hint}", "{default}")', 'print(ds["test"][0])', "```", "",
              *_labels_note(folder.features),
              "## Citation", "", "Method:", "", "```bibtex", METHOD_CITATION, "```", ""]
    if info.source_citation:
        lines += ["Source dataset:", "", "```bibtex", info.source_citation.strip(), "```", ""]
    return "\n".join(lines)


# --- the method section's prose -------------------------------------------------------------------------


def training_text(run: Any, stops: Sequence[Mapping[str, Any]] = ()) -> str:
    """A few sentences on how a :class:`~lsplits.lm.plan.RunPlan` trains (or that it does not) and, from ``stops``
    (:attr:`~lsplits.building.record.BuildRecord.training`'s entries of the run), where each fold stopped and why."""
    if run.train_config is None:
        return f"In the `{run.setting}` setting the frozen LM scores every example; nothing is trained."
    config = run.train_config
    steps = config.max_steps
    if not config.warmup_steps:
        warmup = "constant"
    elif config.warmup_steps >= steps:  # the run ends inside the warm-up: say so, not a schedule it never reaches
        warmup = f"rising linearly for all {steps} steps (a warm-up of {config.warmup_steps}), never at the peak"
    else:
        warmup = f"linear warm-up over {config.warmup_steps} steps, then constant"
    measured = (f"every {config.eval_every} steps" if config.eval_every < steps
                else "before the first step and after the last")
    at_most = "at most " if config.patience else ""
    text = (f"In the `{run.setting}` setting each of the {run.folds} fold models trains for {at_most}{steps} "
            f"steps (AdamW, lr {config.lr:g}, {warmup}, batch {config.batch_size}, weight decay "
            f"{config.weight_decay:g}), keeping the weights with the best validation perplexity, measured "
            f"{measured} on {config.val_fraction:.0%} of its training data.")
    if config.patience:
        text += (f" A fold stops early once {config.patience} check{'s' * (config.patience != 1)} in a row have "
                 "not lowered its validation perplexity (the weights kept are those a longer run would keep "
                 "unless it improved later).")
    if stops:
        text += " " + "; ".join(f"Fold {stop['fold']} ran {stop['steps_run']} of {stop['max_steps']} steps "
                                f"({stop['reason']}; best at step {stop['best_step']})" for stop in stops) + "."
    if run.scratch_config is not None:
        scratch = run.scratch_config
        text += (f" The scratch LM is a GPT-2 of {scratch.n_layer} layers, {scratch.n_head} heads and width "
                 f"{scratch.n_embd} (dropout {scratch.dropout:g}) with a byte-level BPE tokenizer of at most "
                 f"{scratch.vocab_size:,} tokens trained on the data; each fold starts from its own seeded "
                 "random weights.")
    return text


def method_text(spec: Any, result: Any, settings: BuildSettings) -> str:
    """A few lines on how this dataset was built (LM, folds, training, eval size, seed), for the card's method
    section: ``spec`` a :class:`~lsplits.building.pipeline.DatasetSpec`, ``result`` its
    :class:`~lsplits.building.pipeline.BuildResult` (the pipeline imports this module, so neither is imported)."""
    lm = settings.lm
    lm_text = "a small GPT-2-style LM trained from scratch on the data, offline" \
        if lm == SCRATCH_LM else f"`{lm}`"
    lines = [
        "Likelihood Splits (Godbole & Jia, 2023) re-split a dataset so that the examples a language model "
        "finds least likely form the evaluation set: the model must generalise to the long tail.",
        "",
        f"Each example was scored by {lm_text}: the score is the sum of log-probabilities of the query "
        f"tokens given the prompt; in the fine-tuned setting the data is cut into {settings.folds} folds and each "
        "fold is scored by a model fine-tuned on the other folds, so no example is scored by a model trained on it.",
        f"Eval size: {result.eval_size:,} examples, halved into validation and test (seed {settings.seed}"
        + ("; each label class is halved, so both halves keep eval's label balance)." if spec.task.label_field
           else ")."),
    ]
    if result.read:
        lines += ["", read_text(result.read)]
    if result.dropped:
        lines += ["", "Dropped when loading: " + ", ".join(f"{count:,} example{'s' * (count != 1)} ({reason})"
                                                         for reason, count in result.dropped.items()) + "."]
    lines += [""] + [training_text(run, result.training.get(kind, ())) for kind, run in result.runs.items()] \
        if result.runs else []
    if result.dtypes:
        lines.append("Compute dtype: " + "; ".join(f"{setting} setting {dtype_text(dtype)}"
                                                   for setting, dtype in result.dtypes.items()) + ".")
    if spec.method_note:
        lines += ["", spec.method_note]
    notes = spec.policy.notes_of(result.inputs)
    if notes:  # a list value reads as its length and its items: "unparsable SQL queries: 1 (train-7)"
        lines += [""] + [f"- {key}: {len(value)} ({', '.join(map(str, value))})" if isinstance(value, list) and value
                         else f"- {key}: {len(value) if isinstance(value, list) else value}"
                         for key, value in notes.items()]
    effects = result.constraint_effects
    if effects:
        lines += ["", "What the split policy's constraint did to each config (also `constraint_effects` in "
                  "`lsplits.json`; `lsplits analyze` shows it):", ""]
        lines += [f"- `{name}`: {effect.describe()}" for name, effect in effects.items()]
    if result.skipped:
        lines += ["", "Not built: " + "; ".join(f"`{k}` ({v})" for k, v in result.skipped.items()) + "."]
    return "\n".join(lines)
