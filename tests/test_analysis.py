"""Split statistics against values computed by hand on a tiny split."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from lsplits.building.analysis import (
    RARE_WORDS_COLUMN,
    WORD_TOKENS_COLUMN,
    Share,
    add_rare_word_counts,
    is_rare_word,
    rare_ratio_sentence,
    rare_word_counts,
    rare_word_fractions,
    split_statistics,
    statistics_markdown,
    statistics_table,
    statistics_text,
    words,
)
from lsplits.errors import DataError

# Rare in wordfreq's English list (<= 1e-6): quokka 3.2e-8, theodolite 5.6e-8, axolotl 1.1e-7.
# Everything else here is common (dog 1.3e-4, bark 7.1e-6, sleeps 5.1e-6, ...).
TRAIN = pd.DataFrame({
    "q": ["The dog runs.",                    # 3 words, 0 rare
          "A quokka sleeps in the park.",     # 6 words, 1 rare
          "Dogs don't bark!",                 # dogs, do, bark: 3 words ("n't" and "!" are not words)
          "The theodolite and the quokka."],  # 5 words, 2 rare
    "ll_score": [-1.0, -2.0, -3.0, -10.0],
    "length": [4, 7, 5, 6],
    "label": ["a", "b", "a", "a"],
})
VALIDATION = pd.DataFrame({"q": ["An axolotl sleeps.", "Cats sleep."],  # 1/3 rare, 0/2 rare
                           "ll_score": [-20.0, -30.0], "length": [4, 3], "label": ["b", "b"]})
TEST = pd.DataFrame({"q": ["A quokka!"], "ll_score": [-40.0], "length": [3], "label": ["a"]})
SPLITS = {"train": TRAIN, "validation": VALIDATION, "test": TEST}


@pytest.fixture(scope="module")
def stats():
    return split_statistics(SPLITS, query_field="q", label_field="label", progress=False)


def test_words_are_lowercased_alphabetic_nltk_tokens():
    assert words("Dogs don't bark!") == ["dogs", "do", "bark"]
    assert words("It costs 5 dollars.") == ["it", "costs", "dollars"]


def test_rare_word_threshold():
    assert is_rare_word("quokka") and is_rare_word("theodolite")
    assert not is_rare_word("the") and not is_rare_word("dog") and not is_rare_word("bark")


def test_rare_word_counts_per_text():
    counts = rare_word_counts(TRAIN["q"], progress=False)
    assert counts.tolist() == [[0, 3], [1, 6], [0, 3], [2, 5]]
    assert rare_word_counts([], progress=False).shape == (0, 2)


def test_sizes_scores_lengths_and_labels(stats):
    splits = stats["splits"]
    assert list(splits) == ["train", "validation", "test", "eval"]
    assert {name: s["size"] for name, s in splits.items()} == {"train": 4, "validation": 2, "test": 1, "eval": 3}
    assert splits["train"]["numeric"]["ll_score"] == {"mean": -4.0, "median": -2.5}
    assert splits["train"]["numeric"]["length"] == {"mean": 5.5, "median": 5.5}
    assert splits["eval"]["numeric"]["ll_score"] == {"mean": -30.0, "median": -30.0}
    assert splits["eval"]["numeric"]["length"]["mean"] == pytest.approx(10 / 3)
    assert splits["train"]["categorical"] == {"label": {"a": 3, "b": 1}}
    assert splits["eval"]["categorical"] == {"label": {"a": 1, "b": 2}}


def test_rare_word_fractions_and_ratio(stats):
    train, evaluation = stats["splits"]["train"], stats["splits"]["eval"]
    assert train["rare_examples"] == pytest.approx(2 / 4)
    assert train["rare_tokens"] == pytest.approx(3 / 17)
    assert stats["splits"]["validation"]["rare_examples"] == pytest.approx(1 / 2)
    assert evaluation["rare_examples"] == pytest.approx(2 / 3)
    assert evaluation["rare_tokens"] == pytest.approx(2 / 7)
    assert stats["rare_ratio"]["examples"] == pytest.approx((2 / 3) / (2 / 4))
    assert stats["rare_ratio"]["tokens"] == pytest.approx((2 / 7) / (3 / 17))
    assert rare_word_fractions({"ll_split": stats}) == {"ll_split": {"train": Share(2, 4), "eval": Share(2, 3)}}


def test_share_interval_is_wilsons():
    z = 1.959963984540054  # the normal quantile of 97.5%
    for count, n in ((3, 10), (0, 50), (50, 50), (120, 800)):
        p = count / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        assert Share(count, n).interval() == pytest.approx((centre - half, centre + half), abs=1e-9)
    assert Share(0, 50).interval()[0] == pytest.approx(0, abs=1e-12) and Share(0, 50).interval()[1] > 0.05


def test_precomputed_rare_word_columns_are_used_instead_of_the_text():
    annotated = add_rare_word_counts(TRAIN, "q", progress=False)
    assert annotated[RARE_WORDS_COLUMN].tolist() == [0, 1, 0, 2]
    assert annotated[WORD_TOKENS_COLUMN].tolist() == [3, 6, 3, 5]
    assert RARE_WORDS_COLUMN not in TRAIN.columns
    planted = TRAIN.assign(**{RARE_WORDS_COLUMN: [1, 1, 1, 0], WORD_TOKENS_COLUMN: [2, 2, 2, 2]})
    stats = split_statistics({"train": planted}, query_field="q", progress=False)
    assert stats["splits"]["train"]["rare_examples"] == 0.75
    assert stats["splits"]["train"]["rare_tokens"] == 3 / 8
    assert stats["rare_ratio"] == {"examples": None, "tokens": None}  # no eval split


def test_extra_categorical_and_numeric_columns_and_missing_values():
    train = TRAIN.assign(hardness=["easy", "hard", None, "easy"], atoms=[1, 2, 3, 6])
    stats = split_statistics({"train": train, "test": TEST.assign(hardness=["extra"], atoms=[10])},
                             query_field="q", categorical_columns=["hardness"], numeric_columns=["atoms"],
                             progress=False)
    assert stats["splits"]["train"]["categorical"] == {"hardness": {"<missing>": 1, "easy": 2, "hard": 1}}
    assert stats["splits"]["eval"]["categorical"] == {"hardness": {"extra": 1}}
    assert stats["splits"]["train"]["numeric"]["atoms"] == {"mean": 3.0, "median": 2.5}


def test_missing_columns_and_empty_splits():
    with pytest.raises(DataError, match="label"):
        split_statistics({"train": TRAIN.drop(columns="label")}, query_field="q", label_field="label",
                         progress=False)
    no_rare_train = pd.DataFrame({"q": ["The dog runs."], "ll_score": [-1.0], "length": [4]})
    stats = split_statistics({"train": no_rare_train, "test": TEST.iloc[:0]}, query_field="q", progress=False)
    empty = stats["splits"]["eval"]
    assert empty["size"] == 0 and empty["rare_examples"] is None and empty["rare_tokens"] is None
    assert empty["numeric"]["ll_score"] == {"mean": None, "median": None}
    assert stats["rare_ratio"] == {"examples": None, "tokens": None}
    assert "not available" in rare_ratio_sentence(stats)
    assert "-" in statistics_text(stats).splitlines()[2]  # the empty eval row shows dashes
    no_score = split_statistics({"train": TRAIN[["q"]]}, query_field="q", progress=False)
    assert no_score["splits"]["train"]["numeric"] == {}


def test_table_cells(stats):
    table = statistics_table(stats)
    assert list(table.index) == ["train", "validation", "test", "eval"]
    assert table.loc["train", "size"] == "4"
    assert table.loc["train", "mean ll_score"] == "-4.00"
    assert table.loc["train", "median ll_score"] == "-2.50"
    assert table.loc["eval", "mean length"] == "3.3"
    assert table.loc["train", "rare-word examples"] == "50.0%"
    assert table.loc["eval", "rare-word tokens"] == "28.57%"
    assert table.loc["train", "label=a"] == "75.0%"
    assert table.loc["eval", "label=b"] == "66.7%"


def test_many_categorical_values_are_folded_into_other():
    train = TRAIN.assign(kind=["w", "x", "y", "z"], q=["The dog runs."] * 4)
    more = pd.DataFrame({"q": ["A dog."] * 3, "kind": ["w", "w", "x"]})
    stats = split_statistics({"train": train, "test": more}, query_field="q", categorical_columns=["kind"],
                             progress=False)
    table = statistics_table(stats, max_values=3)
    # Totals over train, test and eval: w 5, x 3, y 1, z 1 -> show w and x, fold y and z.
    assert [c for c in table.columns if c.startswith("kind=")] == ["kind=w", "kind=x", "kind=other"]
    assert table.loc["train", "kind=other"] == "50.0%"
    assert table.loc["test", "kind=other"] == "0.0%"
    assert table.loc["test", "kind=w"] == "66.7%"


def test_markdown_and_text_renderings(stats):
    markdown = statistics_markdown(stats).splitlines()
    n_columns = len(statistics_table(stats).columns) + 1
    assert markdown[0].startswith("| split | size | mean ll_score |")
    assert markdown[1].count("|") == n_columns + 1
    assert markdown[2].startswith("| train | 4 | -4.00 | -2.50 |")
    assert len([line for line in markdown if line.startswith("|")]) == 2 + 4
    assert "1.33x by example (66.7% vs 50.0%)" in markdown[-1]
    assert "1.62x by token" in markdown[-1]  # (2/7)/(3/17) = 34/21
    text = statistics_text(stats).splitlines()
    assert len({len(line) for line in text[:5]}) == 1  # header and four rows aligned
    assert text[1].split()[:4] == ["train", "4", "-4.00", "-2.50"]
    assert text[-1] == markdown[-1]
