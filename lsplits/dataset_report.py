"""Statistics and plots of a whole built dataset (every config), for cards, the CLI, the demo and the Space.

Per-split numbers come from :mod:`lsplits.analysis` and figures from :mod:`lsplits.plots`; this
module runs them over every config of a build, reusing one rare-word count per example, and
reads back built folders (``lsplits analyze DIR``) using the ``lsplits.json`` written beside the data.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import analysis, plots
from .card import card_data_files
from .errors import DataError
from .export import SPLIT_NAMES

Frames = Mapping[str, Mapping[str, pd.DataFrame]]
METADATA_FILE = "lsplits.json"


def config_statistics(frames: Frames, *, query_field: str, label_field: str | None = None,
                      categorical_columns: Sequence[str] = (), progress: bool = False) -> dict[str, dict[str, Any]]:
    """``split_statistics`` for every config, tokenising each distinct example once."""
    every = pd.concat([frame for splits in frames.values() for frame in splits.values()])
    every = every.drop_duplicates("id")
    counted = analysis.add_rare_word_counts(every, query_field, progress=progress).set_index("id")
    columns = [analysis.RARE_WORDS_COLUMN, analysis.WORD_TOKENS_COLUMN]
    stats = {}
    for name, splits in frames.items():
        annotated = {split: frame.join(counted[columns], on="id") for split, frame in splits.items()}
        stats[name] = analysis.split_statistics(annotated, query_field=query_field, label_field=label_field,
                                                categorical_columns=categorical_columns, progress=False)
    return stats


def statistics_markdown(stats_by_config: Mapping[str, Mapping[str, Any]]) -> str:
    """One markdown section per config: the statistics table and the rare-word sentence."""
    parts = []
    for name, stats in stats_by_config.items():
        parts += [f"### `{name}`", "", analysis.statistics_markdown(stats).rstrip(), ""]
    return "\n".join(parts).rstrip()


def extra_statistics_markdown(extra: Mapping[str, Mapping[str, float]]) -> str:
    """A markdown table of per-config numbers (rows: configs; columns: the numbers' names)."""
    columns = list(dict.fromkeys(key for values in extra.values() for key in values))
    lines = ["| config | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    for name, values in extra.items():
        lines.append(f"| `{name}` | " + " | ".join(f"{values[c]:.4f}" if c in values else "-" for c in columns) + " |")
    return "\n".join(lines)


def statistics_text(stats_by_config: Mapping[str, Mapping[str, Any]]) -> str:
    """Plain-text statistics of every config (for the terminal)."""
    parts = []
    for name, stats in stats_by_config.items():
        parts += [f"== {name} ==", analysis.statistics_text(stats)]
    return "\n".join(parts).rstrip()


def eval_mask_frame(splits: Mapping[str, pd.DataFrame]) -> tuple[pd.DataFrame, np.ndarray]:
    """All examples of a config in one frame, and a mask of those in validation or test."""
    frame = pd.concat([splits[s] for s in splits], ignore_index=True)
    mask = np.concatenate([np.full(len(splits[s]), s != "train") for s in splits])
    return frame, mask


def config_plots(frames: Frames, stats_by_config: Mapping[str, Mapping[str, Any]],
                 out_dir: Path) -> list[tuple[str, str, Path]]:
    """Write the card's PNGs; returns (caption, path in repo, local file) for each."""
    written = []
    for name, splits in frames.items():
        frame, mask = eval_mask_frame(splits)
        repo_path = f"plots/{name}_score_vs_length.png"
        plots.plot_score_vs_length(frame, mask, out_dir / repo_path, title=f"{name}: score vs length")
        written.append((f"{name}: ll_score against query length, eval highlighted", repo_path, out_dir / repo_path))
        repo_path = f"plots/{name}_lengths.png"
        plots.plot_length_histograms(frame.loc[~mask, "length"], frame.loc[mask, "length"], out_dir / repo_path,
                                     title=f"{name}: query length, train vs eval")
        written.append((f"{name}: query length distribution, train vs eval", repo_path, out_dir / repo_path))
    repo_path = "plots/rare_words.png"
    plots.plot_rare_words(analysis.rare_word_fractions(stats_by_config), out_dir / repo_path)
    written.append(("Share of examples with a rare word, train vs eval, per config", repo_path, out_dir / repo_path))
    return written


def write_metadata(path: Path, **fields: Any) -> Path:
    """Write the build's settings (query field, label field, LM, seed, ...) as JSON."""
    path.write_text(json.dumps(fields, indent=2, sort_keys=True), encoding="utf-8")
    return path


def data_file_paths(folder: str | Path, config: str) -> dict[str, list[Path]]:
    """split -> parquet files of one config in a built folder, as its card's YAML ``configs:`` lists them.

    Folders whose card lists nothing for the config (older builds, hand-made fixtures) are read by
    name: ``{config}/{split}.parquet`` or ``{config}/{split}-*.parquet``.
    """
    folder = Path(folder)
    card = folder / "README.md"
    listed = card_data_files(card.read_text(encoding="utf-8")).get(config) if card.is_file() else None
    if not listed:
        found = {}
        for split in SPLIT_NAMES:
            exact = folder / config / f"{split}.parquet"
            paths = [exact] if exact.is_file() else sorted((folder / config).glob(f"{split}-*.parquet"))
            if paths:
                found[split] = paths
        return found
    found = {}
    for split, patterns in listed.items():
        paths: list[Path] = []
        for pattern in patterns:
            matches = sorted(folder.glob(pattern)) if glob.has_magic(pattern) else [folder / pattern]
            missing = [p for p in matches if not p.is_file()]
            if missing or not matches:
                raise DataError(f"the card lists {pattern} for config {config!r}, split {split!r}, but no such "
                                "file exists", source=str(folder))
            paths += matches
        found[split] = paths
    return found


def read_folder(folder: str | Path, configs: Sequence[str] | None = None) -> tuple[dict[str, dict[str, pd.DataFrame]], dict]:
    """Read a built folder's configs (config -> split -> DataFrame, files as the card lists them) and its metadata."""
    folder = Path(folder)
    meta_path = folder / METADATA_FILE
    if not meta_path.exists():
        raise DataError(f"no {METADATA_FILE}; is this a folder written by `lsplits build`?", source=str(folder))
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    names = list(configs) if configs else list(meta.get("configs", []))
    frames = {}
    for name in names:
        if not (folder / name).is_dir():
            raise DataError(f"no config {name!r} (has: {', '.join(meta.get('configs', []))})", source=str(folder))
        frames[name] = {split: pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
                        for split, paths in data_file_paths(folder, name).items()}
    return frames, meta


def analyze_folder(folder: str | Path, configs: Sequence[str] | None = None) -> str:
    """The statistics of a built folder as text (``lsplits analyze``)."""
    frames, meta = read_folder(folder, configs)
    stats = config_statistics(frames, query_field=meta["query_field"], label_field=meta.get("label_field"),
                              categorical_columns=meta.get("categorical_columns", ()))
    text = statistics_text(stats)
    extra = meta.get("extra_statistics")
    if extra:
        text = extra_statistics_markdown({k: v for k, v in extra.items() if k in frames}) + "\n\n" + text
    return text
