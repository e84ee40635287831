"""Statistics of a built split, for the demo summary, dataset cards and ``lsplits analyze``.

Everything is computed from plain DataFrame columns, so it works for any dataset: sizes, mean and
median of the score and length columns, label balance and other categorical mixes (e.g. Spider's
``hardness``), and the rare-word fraction of the query text.

Rare words. A word is rare when wordfreq's English list gives it at most
:data:`RARE_WORD_MAX_FREQUENCY` (1 per million). Words are NLTK word tokens of the query,
lowercased, alphabetic only (punctuation, numbers and clitics such as ``n't`` are not words).
Two fractions are reported per split:

- ``rare_examples``: the share of examples whose query contains at least one rare word;
- ``rare_tokens``: rare word tokens / all word tokens, pooled over the split.

``rare_ratio`` divides eval's fraction by train's (above 1: rare words are over-represented in eval).
Eval is the union of the ``validation`` and ``test`` splits, reported as an extra split ``eval``.
"""

from __future__ import annotations

import functools
import logging
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from lsplits.errors import DataError
from lsplits.params import DEFAULT_CONFIDENCE
from lsplits.runtime.progress import progress_bar

logger = logging.getLogger(__name__)

RARE_WORD_MAX_FREQUENCY = 1e-6
"""A word is rare at or below this frequency (1 per million) in wordfreq's English list."""
RARE_WORDS_COLUMN = "rare_words"
"""Optional precomputed column: number of rare word tokens in the query (see :func:`add_rare_word_counts`)."""
WORD_TOKENS_COLUMN = "word_tokens"
"""Optional precomputed column: number of word tokens in the query."""
EVAL = "eval"
MISSING = "<missing>"


@functools.lru_cache(maxsize=1)
def _tokenizer():
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


def words(text: str) -> list[str]:
    """The lowercased alphabetic NLTK word tokens of ``text`` (what the rare-word check counts)."""
    return [token.lower() for token in _tokenizer().tokenize(text) if token.isalpha()]


@functools.cache
def is_rare_word(word: str) -> bool:
    """Whether ``word`` occurs at most once per million words in English (wordfreq); cached."""
    from wordfreq import word_frequency

    return word_frequency(word, "en") <= RARE_WORD_MAX_FREQUENCY


def rare_word_counts(texts: Iterable[str], *, progress: bool = True) -> np.ndarray:
    """Per text, ``[number of rare word tokens, number of word tokens]`` (int array of shape (n, 2)).

    Repeated texts are tokenised once.
    """
    texts = ["" if t is None or (isinstance(t, float) and math.isnan(t)) else str(t) for t in texts]
    counts: dict[str, tuple[int, int]] = {}
    for text in progress_bar(dict.fromkeys(texts), desc="rare words", unit="text", disable=not progress):
        tokens = words(text)
        counts[text] = (sum(is_rare_word(w) for w in tokens), len(tokens))
    return np.array([counts[t] for t in texts], dtype=np.int64).reshape(len(texts), 2)


def add_rare_word_counts(df: pd.DataFrame, query_field: str, *, progress: bool = True) -> pd.DataFrame:
    """A copy of ``df`` with :data:`RARE_WORDS_COLUMN` and :data:`WORD_TOKENS_COLUMN` for ``query_field``.

    Compute these once on the whole dataset when analysing many configs of it: split_statistics
    uses the columns when present instead of tokenising again.
    """
    return _with_rare_word_counts(df, query_field, "dataset", progress)


def _with_rare_word_counts(df: pd.DataFrame, query_field: str, split: str, progress: bool) -> pd.DataFrame:
    if RARE_WORDS_COLUMN in df.columns and WORD_TOKENS_COLUMN in df.columns:
        return df
    _require(df, query_field, split)
    counts = rare_word_counts(df[query_field].tolist(), progress=progress)
    return df.assign(**{RARE_WORDS_COLUMN: counts[:, 0], WORD_TOKENS_COLUMN: counts[:, 1]})


def _require(df: pd.DataFrame, column: str, split: str) -> None:
    if column not in df.columns:
        raise DataError(f"split {split!r} has no column {column!r} (it has: {', '.join(map(str, df.columns))})",
                        field=column)


def _number(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def _summary(values: pd.Series) -> dict[str, float | None]:
    values = pd.to_numeric(values, errors="coerce").dropna()
    return {"mean": _number(values.mean()) if len(values) else None,
            "median": _number(values.median()) if len(values) else None}


def _value_counts(values: pd.Series) -> dict[str, int]:
    """Counts per value, keyed by ``str(value)`` (missing values as ``<missing>``), sorted by key."""
    keys = [MISSING if pd.isna(v) else str(v) for v in values.tolist()]
    return dict(sorted(Counter(keys).items()))


def _split_summary(df: pd.DataFrame, name: str, *, numeric: Sequence[str],
                   categorical: Sequence[str]) -> dict[str, Any]:
    """Statistics of one split whose rare-word count columns are present."""
    stats: dict[str, Any] = {"size": len(df)}
    stats["numeric"] = {col: _summary(df[col]) for col in numeric if col in df.columns}
    stats["categorical"] = {}
    for col in categorical:
        _require(df, col, name)
        stats["categorical"][col] = _value_counts(df[col])
    rare, tokens = df[RARE_WORDS_COLUMN].to_numpy(dtype=np.int64), df[WORD_TOKENS_COLUMN].to_numpy(dtype=np.int64)
    stats["rare_examples"] = float((rare > 0).mean()) if len(df) else None
    stats["rare_tokens"] = float(rare.sum() / tokens.sum()) if tokens.sum() else None
    return stats


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return numerator / denominator if numerator is not None and denominator else None


def split_statistics(splits: Mapping[str, pd.DataFrame], *, query_field: str, label_field: str | None = None,
                     score_column: str = "ll_score", length_column: str = "length",
                     categorical_columns: Sequence[str] = (), numeric_columns: Sequence[str] = (),
                     train_split: str = "train", eval_splits: Sequence[str] = ("validation", "test"),
                     progress: bool = True) -> dict[str, Any]:
    """Statistics of one config's splits, as plain JSON-ready values.

    Returns ``{"splits": {name: per_split}, "rare_ratio": {"examples": r, "tokens": r},
    "query_field", "label_field", "score_column", "length_column", "train_split"}`` where ``per_split`` is
    ``{"size": n, "numeric": {column: {"mean", "median"}}, "categorical": {column: {value: count}},
    "rare_examples": fraction, "rare_tokens": fraction}``. ``numeric`` covers the score and length
    columns (when present) and ``numeric_columns``; ``categorical`` covers ``label_field`` and
    ``categorical_columns`` (values as strings). Splits named in ``eval_splits`` are also pooled
    into an extra split ``eval`` (unless one is already called that). Means of an empty split and
    ratios with a zero train fraction are None. Raises DataError when a named column is missing.
    """
    splits = {name: _with_rare_word_counts(df, query_field, name, progress) for name, df in splits.items()}
    pooled = [splits[name] for name in eval_splits if name in splits]
    if pooled and EVAL not in splits:
        splits[EVAL] = pd.concat(pooled, ignore_index=True)
    numeric = list(dict.fromkeys([score_column, length_column, *numeric_columns]))
    categorical = list(dict.fromkeys([label_field, *categorical_columns] if label_field else categorical_columns))
    per_split = {name: _split_summary(df, name, numeric=numeric, categorical=categorical)
                 for name, df in splits.items()}
    train, evaluation = per_split.get(train_split), per_split.get(EVAL)
    rare_ratio = {key: _ratio(evaluation[f"rare_{key}"], train[f"rare_{key}"]) if train and evaluation else None
                  for key in ("examples", "tokens")}
    logger.debug("split statistics: %s", {name: s["size"] for name, s in per_split.items()})
    return {"splits": per_split, "rare_ratio": rare_ratio, "query_field": query_field,
            "label_field": label_field, "score_column": score_column, "length_column": length_column,
            "train_split": train_split}


@dataclass(frozen=True)
class Share:
    """``count`` of ``n`` examples (e.g. those with a rare word), so a chart can say n and how sure the share is."""

    count: int
    n: int

    @property
    def fraction(self) -> float:
        return self.count / self.n

    def interval(self, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
        """Wilson score interval of the fraction (binomial; sound at 0 and 1 and for small n, unlike the Wald one)."""
        from scipy.stats import binomtest

        ci = binomtest(self.count, self.n).proportion_ci(confidence_level=confidence, method="wilson")
        return float(ci.low), float(ci.high)


def rare_word_fractions(stats_by_config: Mapping[str, Mapping[str, Any]],
                        splits: Sequence[str] = ("train", EVAL)) -> dict[str, dict[str, Share]]:
    """``{config: {split: Share}}`` of examples with a rare word (``rare_examples`` of ``size``), for
    :func:`lsplits.building.plots.plot_rare_words`; splits a config lacks, or empty ones, are left out."""
    return {config: {split: Share(round(part["rare_examples"] * part["size"]), part["size"])
                     for split in splits if (part := stats["splits"].get(split)) and part["size"]}
            for config, stats in stats_by_config.items()}


# --- rendering -------------------------------------------------------------------------------


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _ranked_values(stats: Mapping[str, Any], column: str) -> list[str]:
    """Values of a categorical column over all splits, most frequent first (ties by value)."""
    total: Counter[str] = Counter()
    for split in stats["splits"].values():
        total.update(split["categorical"].get(column, {}))
    return sorted(total, key=lambda value: (-total[value], value))


def _value_order(value: str) -> tuple[int, float, str]:
    """Numbers in numeric order, then strings alphabetically: the same column order in every config."""
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)


def statistics_table(stats: Mapping[str, Any], *, max_values: int = 6) -> pd.DataFrame:
    """The statistics as a display table: one row per split, formatted strings.

    Columns: size, mean/median of each numeric column, the two rare-word fractions, and the share
    of each categorical value (``label=neutral``); beyond ``max_values`` values the least frequent
    are summed as ``other``.
    """
    rows = {}
    for name, split in stats["splits"].items():
        row = {"size": f"{split['size']:,}"}
        for column, summary in split["numeric"].items():
            spec = ".1f" if column == stats.get("length_column") else ".2f"
            row[f"mean {column}"] = _fmt(summary["mean"], spec)
            row[f"median {column}"] = _fmt(summary["median"], spec)
        row["rare-word examples"] = _fmt(split["rare_examples"], ".1%")
        row["rare-word tokens"] = _fmt(split["rare_tokens"], ".2%")
        rows[name] = row
    for column in next(iter(stats["splits"].values()), {"categorical": {}})["categorical"]:
        ranked = _ranked_values(stats, column)
        truncated = len(ranked) > max_values
        shown = sorted(ranked[: max_values - 1] if truncated else ranked, key=_value_order)
        for name, split in stats["splits"].items():
            counts = split["categorical"].get(column, {})
            size = split["size"]
            for value in shown:
                rows[name][f"{column}={value}"] = _fmt(counts.get(value, 0) / size if size else None, ".1%")
            if truncated:
                other = size - sum(counts.get(value, 0) for value in shown)
                rows[name][f"{column}=other"] = _fmt(other / size if size else None, ".1%")
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "split"
    return table.fillna("-")


def rare_ratio_sentence(stats: Mapping[str, Any]) -> str:
    """One line comparing rare words in eval and train, e.g. for the demo summary."""
    ratio, splits = stats["rare_ratio"], stats["splits"]
    if ratio["examples"] is None:
        return "Rare-word ratio eval/train: not available (needs train and eval splits with rare words in train)."
    train, evaluation = splits[stats["train_split"]], splits[EVAL]
    return (f"Rare words (<= 1 per million, wordfreq) in eval vs train: "
            f"{ratio['examples']:.2f}x by example ({evaluation['rare_examples']:.1%} vs "
            f"{train['rare_examples']:.1%}), {_fmt(ratio['tokens'], '.2f')}x by token.")


def _cells(stats: Mapping[str, Any], max_values: int) -> tuple[list[str], list[list[str]]]:
    table = statistics_table(stats, max_values=max_values)
    header = ["split", *map(str, table.columns)]
    return header, [[str(name), *map(str, row)] for name, row in zip(table.index, table.to_numpy().tolist(), strict=True)]


def statistics_markdown(stats: Mapping[str, Any], *, max_values: int = 6) -> str:
    """The statistics as a GitHub-flavoured markdown table plus the rare-word sentence (for cards)."""
    header, rows = _cells(stats, max_values)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n\n" + rare_ratio_sentence(stats) + "\n"


def statistics_text(stats: Mapping[str, Any], *, max_values: int = 6) -> str:
    """The statistics as an aligned plain-text table plus the rare-word sentence (for the CLI)."""
    header, rows = _cells(stats, max_values)
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                       for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
             for row in [header, *rows]]
    return "\n".join(lines) + "\n" + rare_ratio_sentence(stats) + "\n"
