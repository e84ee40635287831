"""Dataset cards (README.md with YAML metadata) for built Likelihood-Split datasets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd
import yaml

from .export import data_files_yaml

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


def render_card(info: CardInfo, configs: Mapping[str, Mapping[str, pd.DataFrame]],
                descriptions: Mapping[str, str], *, default: str, repo_hint: str, method: str,
                data_files: Mapping[str, Mapping[str, str]], statistics: str = "",
                plots: Mapping[str, str] | None = None) -> str:
    """Render the README.md: YAML header, method, configs table with sizes, statistics, plots, usage, citations.

    ``data_files`` maps config -> split -> path of its parquet file in the repo (as
    :func:`lsplits.export.write_hub_folder` wrote them); ``plots`` maps a caption to a path in the
    repo; ``statistics`` is ready markdown.
    """
    total = max(sum(len(frame) for frame in splits.values()) for splits in configs.values())
    header = {
        "pretty_name": info.pretty_name,
        "license": info.license,
        "language": list(info.language),
        "task_categories": list(info.task_categories),
        "size_categories": [size_category(total)],
        "source_datasets": list(info.source_datasets) or ["original"],
        "tags": ["likelihood-splits", "long-tail", "generalization"],
        **dict(info.extra_yaml),
        "configs": data_files_yaml(data_files, default),
    }
    lines = ["---", yaml.safe_dump(header, sort_keys=False, allow_unicode=True).rstrip(), "---", "",
             f"# {info.pretty_name}", ""]
    if info.summary:
        lines += [info.summary, ""]
    lines += ["## Method", "", method, "", "## Configs", "",
              "| config | train | validation | test | eval examples are |", "|---|---:|---:|---:|---|"]
    for name, splits in configs.items():
        sizes = " | ".join(f"{len(splits[s]):,}" if s in splits else "-" for s in ("train", "validation", "test"))
        mark = " (default)" if name == default else ""
        lines.append(f"| `{name}`{mark} | {sizes} | {descriptions.get(name, '')} |")
    lines += ["", "Every example keeps a stable `id` (source split and index), all original fields, "
              "`ll_score` (sum of query-token log-probabilities, nats), `ll_tokens` (number of scored "
              "tokens) and `length` (NLTK word count of the query).", ""]
    if statistics:
        lines += ["## Statistics", "", statistics, ""]
    for caption, path in (plots or {}).items():
        lines += [f"![{caption}]({path})", ""]
    lines += ["## How to load", "", "```python", "from datasets import load_dataset", "",
              f'ds = load_dataset("{repo_hint}", "{default}")', 'print(ds["test"][0])', "```", "",
              "## Citation", "", "Method:", "", "```bibtex", METHOD_CITATION, "```", ""]
    if info.source_citation:
        lines += ["Source dataset:", "", "```bibtex", info.source_citation.strip(), "```", ""]
    return "\n".join(lines)


def card_data_files(card: str) -> dict[str, dict[str, list[str]]]:
    """config -> split -> data file paths (or patterns) listed in a card's YAML ``configs:``; {} without any."""
    parts = card.split("---", 2)
    if not card.startswith("---") or len(parts) < 3:
        return {}
    try:
        meta = yaml.safe_load(parts[1])
    except yaml.YAMLError:
        return {}
    entries = meta.get("configs") if isinstance(meta, dict) else None
    found: dict[str, dict[str, list[str]]] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or "config_name" not in entry:
            continue
        files = entry.get("data_files")
        if isinstance(files, str) or (isinstance(files, list) and all(isinstance(f, str) for f in files)):
            files = {"train": files}
        elif isinstance(files, list):
            files = {str(f.get("split", "train")): f["path"] for f in files if isinstance(f, dict) and "path" in f}
        if not isinstance(files, dict):
            continue
        found[str(entry["config_name"])] = {str(split): [str(p) for p in (paths if isinstance(paths, list) else [paths])]
                                            for split, paths in files.items()}
    return found
