"""Handlers of the "Likelihood Splits" tab: open a built dataset, show a config, score the user's own lines.

Each handler reads plain values from the UI, calls the library and returns what the components show
(DataFrames, matplotlib figures, markdown). Statistics come from :mod:`lsplits.building.report` and
:mod:`lsplits.building.analysis`, figures from :mod:`lsplits.building.plots`, scores from :mod:`lsplits.lm.scoring`
and splits from :func:`lsplits.building.pipeline.split_scored` (the configs' strategies of ``lsplits build``).
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from ui_common import FIELD_LABELS, SpaceSettings, hosted_hub_id, hub_model_folder

from lsplits.building import analysis, plots
from lsplits.building import dataset as built
from lsplits.building.demo import SCRATCH_LM_FOLDER, ensure_scratch_lm, scratch_lm_texts
from lsplits.building.export import METADATA_FILE
from lsplits.building.pipeline import checked_eval_size, score_records, split_scored
from lsplits.building.record import BuildRecord
from lsplits.building.report import config_statistics, eval_mask_frame
from lsplits.data.loading import load_examples, prepare_examples
from lsplits.data.tasks import generic_task
from lsplits.errors import ConfigError
from lsplits.lm.defaults import SCRATCH_LM
from lsplits.runtime.failures import is_hub_id

logger = logging.getLogger(__name__)

SCRATCH = SCRATCH_LM
PASTED_FIELD = "text"
EVAL_SHARE = "Eval share"
"""The label of the eval-size control, also how errors name it."""
_LM_OFFER = "'scratch' or a Hub causal LM id (such as gpt2)"
"""What a hosted Space's LM field takes."""
_HIDDEN_COLUMNS = ("ll_tokens", "source_split", analysis.RARE_WORDS_COLUMN, analysis.WORD_TOKENS_COLUMN)


@dataclass
class OpenedDataset:
    """A built dataset read into memory, with the statistics of every config."""

    source: str
    frames: dict[str, dict[str, pd.DataFrame]]
    record: BuildRecord  # its lsplits.json
    stats: dict[str, dict[str, Any]]
    difficulty: str = ""  # the card's Difficulty section (markdown), when `lsplits difficulty` wrote one

    @property
    def configs(self) -> list[str]:
        return list(self.frames)


def dataset_folder(source: str, settings: SpaceSettings) -> Path:
    """The local files of ``source`` (a folder path, or a Hub dataset repo id downloaded to the cache).

    The demo dataset is built first when it is asked for and missing (if the settings allow it).
    """
    return built_dataset(source, settings).files


def built_dataset(source: str, settings: SpaceSettings) -> built.BuiltDataset:
    """``source`` opened by :func:`lsplits.building.dataset.open_dataset`, after building the demo dataset
    when it is asked for and missing (if the settings allow it).

    A hosted Space (``settings.open_local`` false) opens its demo dataset or a Hub dataset repo
    (:func:`lsplits.building.dataset.open_hub_dataset`, never a folder of the same name); any other text gets
    the same answer whether or not such a path exists here, decided from the text alone."""
    text = source.strip()
    if not text:
        raise ConfigError("enter a folder built by `lsplits build` or a Hub dataset repo id (org/name)"
                          if settings.open_local else "enter the demo dataset's folder or a Hub dataset repo id "
                          "(org/name)")
    if not settings.open_local:
        if is_demo_text(text, settings.demo_data):
            return _open_demo(settings.demo_data, settings)
        if is_hub_id(text, namespaced=True):
            return built.open_hub_dataset(text)
        raise ConfigError(f"{text}: this Space opens its demo dataset ({display_path(settings.demo_data)}) or a Hub "
                          "dataset repo id (org/name), not folders of its machine")
    path = Path(text).expanduser()
    if path.resolve() == settings.demo_data.resolve():
        return _open_demo(path, settings)
    return built.open_dataset(text)


def is_demo_text(text: str, demo: Path) -> bool:
    """Whether ``text`` names the demo folder as the Space shows it or as configured (compared as strings)."""
    return os.path.normpath(text) in {os.path.normpath(display_path(demo)), os.path.normpath(str(demo))}


def _open_demo(path: Path, settings: SpaceSettings) -> built.BuiltDataset:
    """The demo dataset, built first (``lsplits demo``) when it is missing and the settings allow it."""
    if not settings.demo_data.exists() and settings.build_missing_demo:
        from lsplits.building.demo import run_demo

        logger.info("building the demo dataset into %s (first start)", settings.demo_data)
        run_demo(settings.demo_data, progress=True)  # scores cached where `lsplits demo` caches them: a rerun trains nothing
    return built.open_dataset(path)


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it (shorter to read), else as given."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def open_dataset(source: str, settings: SpaceSettings) -> OpenedDataset:
    """Read every config of a built dataset and compute its statistics (rare words counted once).

    Results are shared between sessions and page loads until the folder's ``lsplits.json`` changes.
    """
    dataset = built_dataset(source, settings)
    folder = dataset.files.resolve()
    key = (str(folder), (folder / METADATA_FILE).stat().st_mtime_ns)
    with _READ_LOCK:
        found = _READ.get(key)
    if found is None:
        found = _read_dataset(dataset)
        with _READ_LOCK:
            _READ[key] = found
            while len(_READ) > _READ_KEPT:
                _READ.pop(next(iter(_READ)))
    frames, record, stats = found
    return OpenedDataset(source=source.strip(), frames=frames, record=record, stats=stats,
                         difficulty=difficulty_section(folder))


def difficulty_section(folder: Path) -> str:
    """The Difficulty section of the folder's card without its figure (a repo-relative image), or ""."""
    from lsplits.building.additions import read_section

    readme = folder / "README.md"
    section = read_section(readme.read_text(encoding="utf-8")) if readme.is_file() else None
    return "\n".join(line for line in (section or "").splitlines() if not line.startswith("!["))


_READ: dict[tuple[str, int], tuple[dict, BuildRecord, dict]] = {}
"""What :func:`open_dataset` read, by folder and ``lsplits.json`` time stamp (the last :data:`_READ_KEPT`)."""
_READ_KEPT = 4
_READ_LOCK = threading.Lock()


def _read_dataset(dataset: built.BuiltDataset) -> tuple[dict, BuildRecord, dict]:
    """Frames, record and statistics of a built dataset."""
    frames, record = dataset.frames(), dataset.record
    if not frames:
        raise ConfigError(f"{dataset.location}: the dataset lists no configs")
    stats = config_statistics(frames, query_field=record.task.query_field, label_field=record.task.label_field,
                              categorical_columns=record.task.categorical_columns, progress=True)
    return frames, record, stats


def overview_markdown(opened: OpenedDataset) -> str:
    """Two lines on the dataset (size, configs, how it was scored), then its card's Difficulty section if any."""
    first = next(iter(opened.frames.values()))
    n = sum(len(frame) for frame in first.values())
    settings = opened.record.settings
    lm = "?" if settings is None else settings.lm
    lm_text = "a small LM trained from scratch on the data" if lm == SCRATCH else f"`{lm}`"
    folds = "" if settings is None else f" in {settings.folds} folds"
    text = (f"**{opened.source}**: {n:,} examples, {len(opened.frames)} configs "
            f"({', '.join(f'`{c}`' for c in opened.frames)}). Query field `{opened.record.task.query_field}`, "
            f"scored by {lm_text}{folds}; eval = validation + test.")
    return f"{text}\n\n{opened.difficulty.strip()}" if opened.difficulty.strip() else text


def _config(opened: OpenedDataset | None, config: str) -> dict[str, pd.DataFrame]:
    if opened is None:
        raise ConfigError("open a dataset first")
    if config not in opened.frames:
        raise ConfigError(f"no config {config!r}; choose one of {', '.join(opened.frames)}")
    return opened.frames[config]


def statistics_view(opened: OpenedDataset | None, config: str) -> tuple[pd.DataFrame, str]:
    """The config's statistics table and the rare-word sentence. One column per split, one row per statistic: a
    label or hardness value adds a row, so the table stays as narrow as the splits are few (one row per split
    ran past the right edge with SNLI's labels)."""
    _config(opened, config)
    stats = opened.stats[config]
    table = analysis.statistics_table(stats).T.rename_axis(index="statistic", columns=None)
    return table.reset_index(), analysis.rare_ratio_sentence(stats)


def config_figures(opened: OpenedDataset | None, config: str) -> tuple[Any, Any, Any]:
    """Score against length (eval highlighted), length histograms, rare-word shares of every config."""
    frame, mask = eval_mask_frame(_config(opened, config))
    scatter = plots.score_vs_length_figure(frame, mask, title=f"{config}: score against length")
    lengths = plots.length_histograms_figure(frame.loc[~mask, "length"], frame.loc[mask, "length"],
                                             title=f"{config}: query length, train vs eval")
    rare = plots.rare_words_figure(analysis.rare_word_fractions(opened.stats))
    return scatter, lengths, rare


def extremes(opened: OpenedDataset | None, config: str, count: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``count`` least likely and most likely examples of the config, with their split."""
    splits = _config(opened, config)
    frame = pd.concat([split_frame.assign(split=name) for name, split_frame in splits.items()], ignore_index=True)
    task = opened.record.task
    first = ["id", "split", "ll_score", "length", task.label_field, task.query_field]
    columns = [c for c in dict.fromkeys(first) if c and c in frame.columns]
    columns += [c for c in frame.columns if c not in columns and c not in _HIDDEN_COLUMNS]
    frame = frame[columns].sort_values("ll_score", kind="stable")
    count = max(1, int(count))
    least = frame.head(count).round({"ll_score": 2})
    most = frame.tail(count).iloc[::-1].round({"ll_score": 2})
    return least.reset_index(drop=True), most.reset_index(drop=True)


class LanguageModels:
    """Loads (once) the models "Score your own" uses: the scratch LM, or a Hub causal LM by id."""

    def __init__(self, settings: SpaceSettings) -> None:
        self.settings = settings
        self._loaded: dict[str, tuple[Any, Any]] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> tuple[Any, Any]:
        """``(model, tokenizer)`` for ``scratch`` or a Hub id / local folder (a hosted Space: a Hub id only,
        :func:`hub_model_folder`)."""
        from lsplits.lm.scoring import load_causal_lm

        if name != SCRATCH and not self.settings.open_local:  # refused before the lock: no wait for a refusal
            hosted_hub_id(name, FIELD_LABELS["lm"], _LM_OFFER)
        with self._lock:
            if name not in self._loaded:
                folder: str | Path = name
                if name == SCRATCH:
                    folder = self._scratch_folder()
                elif not self.settings.open_local:
                    folder = hub_model_folder(name, FIELD_LABELS["lm"], _LM_OFFER)
                self._loaded = {name: load_causal_lm(folder)}  # one model in memory at a time
            return self._loaded[name]

    def _scratch_folder(self) -> Path:
        """The scratch LM's folder: the shipped one, else the one the demo build wrote (``lsplits demo``, run now
        when the demo is missing), else one trained now on the demo dataset's sentences (a demo built elsewhere)."""
        target = self.settings.scratch_lm
        if (target / "config.json").is_file():
            return target
        demo = dataset_folder(str(self.settings.demo_data), self.settings)
        if (demo / SCRATCH_LM_FOLDER / "config.json").is_file():
            return demo / SCRATCH_LM_FOLDER
        return ensure_scratch_lm(scratch_lm_texts(demo), target, max_steps=self.settings.scratch_steps)


FROZEN = "pt"
"""The setting of the scores "Score your own" computes: the LM as it is (the demo's scratch LM trained on the demo's
sentences, or a Hub LM), not fine-tuned on the user's examples in folds as ``ft`` would be."""


def user_examples(lines: str, upload: str | None, text_field: str, prompt_template: str):
    """The task and examples to score: an uploaded CSV/JSONL file when given, else the pasted lines."""
    if upload:
        field = text_field.strip() or PASTED_FIELD
        task = generic_task(field, prompt_template.strip())
        return task, load_examples(task, data_files=[str(upload)]).examples
    rows = [{PASTED_FIELD: line.strip()} for line in (lines or "").splitlines() if line.strip()]
    if not rows:
        raise ConfigError("paste some lines (one example per line) or upload a CSV or JSONL file")
    task = generic_task(PASTED_FIELD, prompt_template.strip())
    return task, prepare_examples([("line", rows, "pasted lines")], task).examples


def score_own(lines: str, upload: str | None, text_field: str, prompt_template: str, lm: str,
              eval_fraction: float, length_control: bool, models: LanguageModels) -> tuple[str, pd.DataFrame, Any]:
    """Score the user's examples with the LM as it is (frozen: nothing is trained on them, the ``pt`` setting) and
    split them as ``lsplits build`` does (``ll_split_pt``, or ``ll_split_pt_len`` with length control): the least
    likely ``eval_fraction`` goes to eval.

    Returns a summary, the scored table (least likely first) and the score-against-length figure.
    """
    limits = models.settings.limits
    limits.check_text(lines, "examples")
    limits.check_files([upload] if upload else None, "file")
    task, examples = user_examples(lines, upload, text_field, prompt_template)
    limits.check_count(len(examples), "score_examples", "examples to score")
    checked_eval_size(float(eval_fraction), len(examples), option=EVAL_SHARE)  # refused before the LM loads
    lm = lm.strip() or SCRATCH
    from lsplits.lm.scoring import score_pairs  # torch: seconds to import, after every check of the input

    model, tokenizer = models.get(lm)
    records = score_records(examples, task, FROZEN)
    scores, tokens = score_pairs(model, tokenizer, [r["prompt"] for r in records], [r["query"] for r in records],
                                 ids=[r["id"] for r in records], progress=True)
    config = "ll_split_pt_len" if length_control else "ll_split_pt"
    result = split_scored(task, examples, {FROZEN: (scores, tokens)}, configs=[config], eval_size=float(eval_fraction),
                          option=EVAL_SHARE)
    eval_size, lengths = result.eval_size, result.inputs.lengths
    in_eval = np.zeros(len(examples), dtype=bool)
    in_eval[result.configs[config].partition.eval] = True
    table = pd.DataFrame({
        "id": [r["id"] for r in records], "split": np.where(in_eval, "eval", "train"),
        "ll_score": np.round(scores, 2), "ll_tokens": tokens,
        "perplexity": np.round(np.exp(-scores / np.maximum(tokens, 1)), 1), "length": lengths,
        task.query_field: [str(example[task.query_field]) for example in examples],
    })
    figure = plots.score_vs_length_figure(table, in_eval, title="Your examples: score against length")
    table = table.sort_values("ll_score", kind="stable").reset_index(drop=True)
    lm_text = "the demo's scratch LM" if lm == SCRATCH else f"`{lm}`"
    how = "the least likely examples of each length" if length_control else "the least likely examples"
    plural = "s" if eval_size > 1 else ""
    summary = (f"Scored {len(examples)} examples with {lm_text}, frozen (the `{FROZEN}` setting: nothing is "
               f"trained on your examples). A Likelihood Split (`{config}`) with {eval_size} eval "
               f"example{plural} ({eval_fraction:.0%}) puts {how} in eval: the rows marked `eval` below.")
    return summary, table, figure
