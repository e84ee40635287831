"""The demo dataset: deterministic, well-formed, NLI-consistent, with its planted tails at the stated rates."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter

import pytest
from nltk.tokenize import NLTKWordTokenizer
from wordfreq import word_frequency

from lsplits.data.synthetic import (
    DEMO_RARE_WORDS,
    DEMO_TASK,
    RARE_CONSTRUCTION_RATE,
    RARE_WORD_RATE,
    common_lexicon,
    has_rare_word,
    is_rare_construction,
    make_demo_dataset,
)
from lsplits.data.tasks import nli_prompt, nli_task
from lsplits.errors import DataError

DATA = make_demo_dataset(3000, seed=0)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def _is_rare(word: str) -> bool:
    return word_frequency(word, "en") <= 1e-6


def test_same_arguments_give_equal_data_and_a_new_seed_changes_it():
    assert make_demo_dataset(3000, seed=0) == DATA
    other = make_demo_dataset(3000, seed=1)
    assert [e["hypothesis"] for e in other] != [e["hypothesis"] for e in DATA]
    assert [e["id"] for e in other] == [e["id"] for e in DATA]


@pytest.mark.process
def test_output_does_not_depend_on_the_hash_seed():
    code = "import json; from lsplits.data.synthetic import make_demo_dataset; print(json.dumps(make_demo_dataset(300, 7)))"
    outputs = []
    for hash_seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0]) == make_demo_dataset(300, 7)


def test_a_smaller_dataset_is_a_prefix_of_a_larger_one():
    assert make_demo_dataset(100, seed=0) == DATA[:100]


def test_fields_ids_and_labels():
    assert make_demo_dataset(0) == []
    with pytest.raises(ValueError):
        make_demo_dataset(-1)
    assert DATA[0]["id"] == "demo-00000" and DATA[2999]["id"] == "demo-02999"
    assert len({e["id"] for e in DATA}) == 3000
    for example in DATA:
        assert set(example) == {"id", "premise", "hypothesis", "label"}
        assert example["premise"].strip() and example["hypothesis"].strip()
        assert example["hypothesis"].endswith(".") and example["hypothesis"][0].isupper()
    shares = {label: count / 3000 for label, count in Counter(e["label"] for e in DATA).items()}
    assert set(shares) == {"entailment", "neutral", "contradiction"}
    assert all(0.28 < share < 0.39 for share in shares.values()), shares


def test_hypotheses_vary_in_length():
    lengths = [len(NLTKWordTokenizer().tokenize(e["hypothesis"])) for e in DATA]
    word_counts = [len(_words(e["hypothesis"])) for e in DATA]
    assert min(word_counts) <= 3 and max(word_counts) >= 18
    assert len(set(lengths)) >= 15
    assert max(Counter(lengths).values()) < 0.15 * len(DATA)  # no length dominates


def test_rare_words_are_rare_in_english_and_the_lexicon_is_not():
    assert all(_is_rare(word) for word in DEMO_RARE_WORDS)
    assert not [word for word in common_lexicon() if _is_rare(word)]
    assert not DEMO_RARE_WORDS & set(common_lexicon())


@pytest.mark.parametrize("seed", [0, 1])
def test_rare_words_appear_in_the_stated_fraction_of_hypotheses(seed):
    data = DATA if seed == 0 else make_demo_dataset(3000, seed)
    # Independent of the module: wordfreq on every word of the hypothesis.
    rare = [e for e in data if any(_is_rare(w) for w in _words(e["hypothesis"]))]
    assert abs(len(rare) / len(data) - RARE_WORD_RATE) < 0.015
    assert all(set(_words(e["hypothesis"])) & DEMO_RARE_WORDS for e in rare)
    assert [e["id"] for e in rare] == [e["id"] for e in data if has_rare_word(e)]
    assert {w for e in rare for w in _words(e["hypothesis"]) if _is_rare(w)} == DEMO_RARE_WORDS


def test_rare_construction_is_recognised_and_appears_at_about_its_rate():
    assert is_rare_construction({"hypothesis": "Running in the park is a tall man."})
    assert is_rare_construction({"hypothesis": "Sleeping next to an astrolabe is a woman."})
    assert not is_rare_construction({"hypothesis": "A tall man is running in the park."})
    assert not is_rare_construction({"hypothesis": "Someone is running."})
    preposed = [e for e in DATA if is_rare_construction(e)]
    assert 0.5 * RARE_CONSTRUCTION_RATE < len(preposed) / len(DATA) <= RARE_CONSTRUCTION_RATE + 0.01
    for example in preposed:  # "<Gerund> ... is a/an <noun phrase>."
        assert re.fullmatch(r"[A-Z][a-z]+ing( [a-z]+)* is an? [a-z ]+\.", example["hypothesis"]), example


def test_labels_agree_with_the_premise():
    function_words = {"a", "an", "is", "someone"}
    for example in DATA:
        premise, hypothesis = set(_words(example["premise"])), set(_words(example["hypothesis"]))
        new_words = hypothesis - premise - function_words
        if example["label"] == "entailment":
            assert not new_words, example
        elif example["label"] == "neutral":
            assert new_words and "no" not in hypothesis, example
        else:
            assert new_words, example  # a changed verb or place, or "no"


def test_demo_task_builds_the_snli_prompt_and_query():
    example = {"id": "x", "premise": "A man is singing.", "hypothesis": "A man is singing.", "label": "neutral"}
    assert DEMO_TASK.prompt_text(example, "ft") == "Premise: A man is singing. This hypothesis is neutral:"
    assert DEMO_TASK.prompt_text(example, "pt") == DEMO_TASK.prompt_text(example, "ft")
    assert DEMO_TASK.query_text(example) == " A man is singing."
    assert (DEMO_TASK.query_field, DEMO_TASK.label_field) == ("hypothesis", "label")
    assert DEMO_TASK.length_text(example) == "A man is singing."


def test_nli_prompt_accepts_names_and_hub_integers_and_rejects_other_labels():
    assert nli_prompt("P.", "entailment") == "Premise: P. This hypothesis is entailed:"
    assert nli_prompt("P.", 2) == "Premise: P. This hypothesis is a contradiction:"
    assert nli_prompt("P.", 1) == "Premise: P. This hypothesis is neutral:"
    task = nli_task("snli", "sentence1", "sentence2", "gold_label")
    with pytest.raises(DataError, match="gold_label") as info:
        task.prompt_text({"id": "dev-3", "sentence1": "P.", "sentence2": "H.", "gold_label": "-"})
    assert "dev-3" in str(info.value)
    with pytest.raises(DataError):
        nli_prompt("P.", -1)
