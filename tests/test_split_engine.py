"""Tests of lsplits.splits.engine: partition invariants, sizes, label balance, length control.

Expected values are hand-computed or come from the naive pure-Python references below, which
sort with ``sorted(key=(key, index))`` and loop over buckets instead of using numpy.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsplits.errors import ConfigError, InvalidInput, InvalidOption, SplitInvariantError
from lsplits.splits import (
    Partition,
    bucket_quotas,
    check_partition,
    engine,
    length_partition,
    likelihood_partition,
    random_partition,
    resolve_eval_size,
    split_eval,
)

FAST = settings(max_examples=60, deadline=None)
CLASSES = ["contradiction", "entailment", "neutral"]


# ------------------------------------------------------------------------------------------------
# Naive references
# ------------------------------------------------------------------------------------------------

def naive_ranking(keys: list[float]) -> list[int]:
    """Indices from lowest key to highest, ties by index."""
    return sorted(range(len(keys)), key=lambda i: (keys[i], i))


def naive_class_quotas(labels: list[str], eval_count: int) -> dict[str, int]:
    classes = sorted(set(labels))
    base, extra = divmod(eval_count, len(classes))
    return {c: base + (1 if k < extra else 0) for k, c in enumerate(classes)}


def naive_length_controlled(keys: list[float], lengths: list[int], eval_count: int,
                            quotas: dict[int, int]) -> tuple[list[int], list[int]]:
    """Length control with the fix-up rule the engine documents, one example at a time."""
    n = len(keys)
    ranked = naive_ranking(keys)
    rank = {i: r for r, i in enumerate(ranked)}
    buckets: dict[int, list[int]] = {}
    for i in ranked:
        buckets.setdefault(lengths[i], []).append(i)
    chosen: set[int] = set()
    for length, members in buckets.items():
        chosen.update(members[: quotas[length]])
    floors = {length: eval_count * len(m) // n for length, m in buckets.items()}
    fractional = {length: eval_count * len(m) % n != 0 for length, m in buckets.items()}
    total = sum(quotas.values())
    if total < eval_count:
        candidates = [m[quotas[b]] for b, m in buckets.items() if fractional[b] and quotas[b] == floors[b]]
        candidates.sort(key=rank.__getitem__)
        chosen.update(candidates[: eval_count - total])
    elif total > eval_count:
        candidates = [m[quotas[b] - 1] for b, m in buckets.items() if quotas[b] == floors[b] + 1]
        candidates.sort(key=rank.__getitem__)
        chosen.difference_update(candidates[len(candidates) - (total - eval_count):])
    return [i for i in ranked if i not in chosen], [i for i in ranked if i in chosen]


def assert_is_partition(partition: Partition, n: int, eval_count: int) -> None:
    """Independent check of the partition invariants (does not call check_partition)."""
    train, evals = partition.train.tolist(), partition.eval.tolist()
    assert len(evals) == eval_count
    assert len(set(train)) == len(train) and len(set(evals)) == len(evals)
    assert not set(train) & set(evals)
    assert sorted(train + evals) == list(range(n))
    assert partition.train.dtype == np.int64 and partition.eval.dtype == np.int64


# ------------------------------------------------------------------------------------------------
# Strategies
# ------------------------------------------------------------------------------------------------

score_values = st.one_of(
    st.sampled_from([-math.inf, -3.0, -1.5, 0.0, 2.0, math.inf]),  # many ties
    st.floats(allow_nan=False, allow_infinity=True),
)


@st.composite
def datasets(draw: st.DrawFn, min_size: int = 2, max_size: int = 40) -> dict:
    n = draw(st.integers(min_size, max_size))
    return {
        "n": n,
        "scores": draw(st.lists(score_values, min_size=n, max_size=n)),
        "lengths": draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)),
        "labels": draw(st.lists(st.sampled_from(CLASSES), min_size=n, max_size=n)),
        "eval_count": draw(st.integers(1, n - 1)),
        "seed": draw(st.integers(0, 2**32 - 1)),
        "reverse": draw(st.booleans()),
    }


def keys_of(data: dict) -> list[float]:
    return [-s for s in data["scores"]] if data["reverse"] else list(data["scores"])


def too_small_class(labels: list[str], eval_count: int) -> str | None:
    counts = Counter(labels)
    for label, quota in naive_class_quotas(labels, eval_count).items():
        if quota > counts[label]:
            return label
    return None


# ------------------------------------------------------------------------------------------------
# resolve_eval_size
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("eval_size", "n", "expected"), [
    (1, 2, 1), (10, 95, 10), (np.int64(3), 10, 3),
    (0.5, 5, 3),        # 2.5 rounds half up (Python's round would give 2)
    (0.1, 95, 10),      # 9.5 -> 10
    (0.25, 8, 2), (0.94, 10, 9),
    (0.001, 100, 1),    # 0.1 rounds to 0, but eval keeps at least one example
    (np.float64(0.2), 10, 2),
])
def test_resolve_eval_size_counts_and_fractions(eval_size, n, expected):
    assert resolve_eval_size(eval_size, n) == expected


@pytest.mark.parametrize(("eval_size", "n", "message"), [
    (5, 0, "empty"), (0.5, 0, "empty"),
    (0, 10, "a whole number >= 1"), (-3, 10, "a whole number >= 1"),
    (10, 10, "train empty"), (11, 10, "train empty"),
    (0.96, 10, "train empty"),  # 9.6 rounds to 10 = n
    (0.0, 10, r"fraction in \(0, 1\)"), (1.0, 10, r"fraction in \(0, 1\)"), (1.5, 10, r"fraction in \(0, 1\)"),
    (-0.2, 10, r"fraction in \(0, 1\)"),
    (True, 10, "count"), ("5", 10, "count"), (None, 10, "count"),
])
def test_resolve_eval_size_errors(eval_size, n, message):
    # errors.py's rule: no examples is an input problem, a size outside its range one option's, and a size that
    # leaves train empty a conflict between the option and the data
    expected = {"empty": InvalidInput, "train empty": ConfigError}.get(message, InvalidOption)
    with pytest.raises(expected, match=message) as caught:
        resolve_eval_size(eval_size, n)
    assert type(caught.value) is expected


@FAST
@given(n=st.integers(2, 10_000), fraction=st.floats(0.0001, 0.9999))
def test_fraction_gives_exact_size_in_every_strategy(n, fraction):
    expected = max(1, math.floor(fraction * n + 0.5))
    if expected >= n:
        with pytest.raises(ConfigError):
            random_partition(n, fraction)
        return
    scores = np.arange(n, dtype=float)[::-1]
    lengths = np.arange(n) % 3
    for partition in (likelihood_partition(scores, fraction), random_partition(n, fraction, seed=1),
                      length_partition(lengths, fraction),
                      likelihood_partition(scores, fraction, lengths=lengths)):
        assert partition.eval.size == expected
        assert partition.train.size == n - expected


# ------------------------------------------------------------------------------------------------
# Global likelihood splits
# ------------------------------------------------------------------------------------------------

def test_global_split_hand_computed():
    scores = [3.0, 1.0, 2.0, 1.0, -math.inf, 5.0]
    p = likelihood_partition(scores, 3)
    assert p.eval.tolist() == [4, 1, 3]          # -inf, then the tie 1.0 in dataset order
    assert p.train.tolist() == [2, 0, 5]
    r = likelihood_partition(scores, 3, reverse=True)
    assert r.eval.tolist() == [5, 0, 2]          # most likely first
    assert r.train.tolist() == [1, 3, 4]         # the tie 1.0 keeps dataset order in reverse too


def test_ties_keep_dataset_order():
    p = likelihood_partition([0.0] * 6, 2)
    assert p.eval.tolist() == [0, 1] and p.train.tolist() == [2, 3, 4, 5]
    r = likelihood_partition([0.0] * 6, 2, reverse=True)
    assert r.eval.tolist() == [0, 1]


@FAST
@given(datasets())
def test_global_split_matches_naive(data):
    p = likelihood_partition(data["scores"], data["eval_count"], reverse=data["reverse"])
    ranked = naive_ranking(keys_of(data))
    assert p.eval.tolist() == ranked[: data["eval_count"]]
    assert p.train.tolist() == ranked[data["eval_count"]:]
    assert_is_partition(p, data["n"], data["eval_count"])


@FAST
@given(datasets())
def test_reverse_puts_the_most_likely_in_eval(data):
    p = likelihood_partition(data["scores"], data["eval_count"], reverse=True)
    scores = np.asarray(data["scores"])
    assert scores[p.eval].min() >= scores[p.train].max()


def test_nan_score_is_refused_naming_the_index():
    with pytest.raises(InvalidInput, match="index 2 is NaN"):
        likelihood_partition([0.0, 1.0, math.nan, 2.0, math.nan], 1)


def test_mismatched_inputs_are_refused():
    with pytest.raises(InvalidInput, match="lengths"):
        likelihood_partition([0.0, 1.0, 2.0], 1, lengths=[1, 2])
    with pytest.raises(InvalidInput, match="labels"):
        likelihood_partition([0.0, 1.0, 2.0], 1, labels=["a"])
    with pytest.raises(InvalidInput, match="whole numbers"):
        likelihood_partition([0.0, 1.0, 2.0], 1, lengths=[1.5, 2.0, 3.0])
    with pytest.raises(InvalidInput, match="negative"):
        length_partition([1, -2, 3], 1)
    with pytest.raises(InvalidInput, match="1-D"):
        likelihood_partition([[0.0, 1.0], [2.0, 3.0]], 1)


# ------------------------------------------------------------------------------------------------
# Label balance
# ------------------------------------------------------------------------------------------------

def test_label_balance_hand_computed():
    # classes a (idx 0-3), b (idx 4-7), c (idx 8-9); E = 5 -> quotas a 2, b 2, c 1
    labels = ["b", "a", "c", "b", "a", "b", "a", "c", "b", "a"]
    scores = [0.0, 9.0, 1.0, 2.0, 8.0, 3.0, 7.0, 0.5, 4.0, 6.0]
    p = likelihood_partition(scores, 5, labels=labels)
    # a: idx 1,4,6,9 scores 9,8,7,6 -> 9, 6 ; b: 0,3,5,8 -> 0, 3 ; c: 2,7 -> 7 ; in global order
    assert p.eval.tolist() == [0, 7, 3, 9, 6]
    assert p.train.tolist() == [2, 5, 8, 4, 1]


@FAST
@given(datasets())
def test_label_balance_exact_per_class(data):
    labels, eval_count = data["labels"], data["eval_count"]
    small = too_small_class(labels, eval_count)
    if small is not None:
        with pytest.raises(ConfigError, match=f"label class '{small}'"):
            likelihood_partition(data["scores"], eval_count, labels=labels, reverse=data["reverse"])
        return
    p = likelihood_partition(data["scores"], eval_count, labels=labels, reverse=data["reverse"])
    assert_is_partition(p, data["n"], eval_count)
    ranked = naive_ranking(keys_of(data))
    expected_eval = set()
    for label, quota in naive_class_quotas(labels, eval_count).items():
        expected_eval.update([i for i in ranked if labels[i] == label][:quota])
    assert p.eval.tolist() == [i for i in ranked if i in expected_eval]
    assert p.train.tolist() == [i for i in ranked if i not in expected_eval]


def test_label_balance_accepts_bool_and_int_labels():
    p = likelihood_partition(np.arange(6.0), 3, labels=[True, False, True, False, True, False])
    assert p.eval.tolist() == [0, 1, 3]      # False gets 2 (first class in sorted order), True 1
    q = random_partition(6, 2, labels=[7, 7, 7, 3, 3, 3], seed=4)
    assert sorted(q.eval.tolist())[0] in (0, 1, 2) and sorted(q.eval.tolist())[1] in (3, 4, 5)


# ------------------------------------------------------------------------------------------------
# Length control
# ------------------------------------------------------------------------------------------------

def test_bucket_quotas_exact_shares_are_deterministic():
    lengths = [1, 1, 2, 2, 2, 2]
    for seed in range(20):
        assert bucket_quotas(lengths, 3, seed) == {1: 1, 2: 2}
        assert bucket_quotas(lengths, 0.5, seed) == {1: 1, 2: 2}


def test_bucket_quotas_extra_one_with_probability_of_the_fraction():
    lengths = [5, 9, 9, 9]          # E = 1 -> shares 0.25 and 0.75, both floor 0
    draws = [bucket_quotas(lengths, 1, seed) for seed in range(2000)]
    assert all(list(d) == [5, 9] and set(d.values()) <= {0, 1} for d in draws)
    # 4 standard deviations (about 78) around the expected counts; fixed seeds, so no flakiness
    assert abs(sum(d[5] for d in draws) - 500) < 78
    assert abs(sum(d[9] for d in draws) - 1500) < 78


def test_length_control_hand_computed_exact_quotas():
    lengths = [1, 1, 1, 1, 2, 2, 2, 2]               # E = 4 -> exactly 2 per bucket
    scores = [5.0, 1.0, 3.0, 0.0, 9.0, 8.0, 7.0, 6.0]
    p = likelihood_partition(scores, 4, lengths=lengths, seed=11)
    assert p.eval.tolist() == [3, 1, 7, 6]
    assert p.train.tolist() == [2, 0, 5, 4]
    r = likelihood_partition(scores, 4, lengths=lengths, reverse=True, seed=11)
    assert r.eval.tolist() == [4, 5, 0, 2]
    assert r.train.tolist() == [6, 7, 1, 3]
    assert likelihood_partition(scores, 4).eval.tolist() == [3, 1, 2, 0]  # global: all length 1


def test_length_control_fix_up_hand_computed():
    # Two buckets of 5 with E = 5: shares 2.5 each, so quotas (2|3, 2|3) and every fix-up branch.
    lengths = [1] * 5 + [2] * 5
    scores = [0.0, 1.0, 2.0, 3.0, 4.0, 0.5, 1.5, 2.5, 3.5, 4.5]
    seen = set()
    for seed in range(40):
        quotas = bucket_quotas(lengths, 5, seed)
        seen.add((quotas[1], quotas[2]))
        # (2,3) is exact; (3,2) exact; (2,2) adds idx 2 (score 2.0 beats idx 7's 2.5);
        # (3,3) removes idx 7 (the more likely of the last chosen, 2.0 vs 2.5).
        expected = [0, 5, 1, 6, 7] if (quotas[1], quotas[2]) == (2, 3) else [0, 5, 1, 6, 2]
        assert likelihood_partition(scores, 5, lengths=lengths, seed=seed).eval.tolist() == expected
    assert seen == {(2, 2), (2, 3), (3, 2), (3, 3)}


def test_quota_zero_bucket_puts_nothing_in_eval():
    # The reference code's x[-0:] took a whole bucket when its quota was 0.
    lengths = [1] * 9 + [2]                        # E = 5 -> shares 4.5 and 0.5
    scores = [float(i) for i in range(9)] + [-math.inf]
    seen = set()
    for seed in range(40):
        quotas = bucket_quotas(lengths, 5, seed)
        seen.add((quotas[1], quotas[2]))
        p = likelihood_partition(scores, 5, lengths=lengths, seed=seed)
        if (quotas[1], quotas[2]) == (5, 0):
            assert p.eval.tolist() == [0, 1, 2, 3, 4]     # idx 9, the least likely, stays in train
        else:  # (4,1) exact; (4,0) adds idx 9 (-inf beats 4.0); (5,1) removes idx 4
            assert p.eval.tolist() == [9, 0, 1, 2, 3]
    assert seen == {(4, 0), (4, 1), (5, 0), (5, 1)}


def per_bucket_counts(indices: list[int], lengths: list[int]) -> Counter:
    return Counter(lengths[i] for i in indices)


@settings(max_examples=100, deadline=None)
@given(datasets())
def test_length_control_guarantee_and_naive_reference(data):
    """Guarantee: each bucket gets floor or ceil of E*n_b/N, within one of its drawn quota
    (>= it when the quotas fell short, <= it when they overshot, equal when they summed to E)."""
    n, eval_count, lengths = data["n"], data["eval_count"], data["lengths"]
    p = likelihood_partition(data["scores"], eval_count, lengths=lengths, reverse=data["reverse"],
                             seed=data["seed"])
    assert_is_partition(p, n, eval_count)
    quotas = bucket_quotas(lengths, eval_count, data["seed"])
    sizes = Counter(lengths)
    got = per_bucket_counts(p.eval.tolist(), lengths)
    for length, size in sizes.items():
        low, high = eval_count * size // n, -(-eval_count * size // n)
        assert low <= got[length] <= high
        assert quotas[length] in (low, high)
        total = sum(quotas.values())
        if total == eval_count:
            assert got[length] == quotas[length]
        elif total < eval_count:
            assert quotas[length] <= got[length] <= quotas[length] + 1
        else:
            assert quotas[length] - 1 <= got[length] <= quotas[length]
    expected_train, expected_eval = naive_length_controlled(keys_of(data), lengths, eval_count, quotas)
    assert p.eval.tolist() == expected_eval
    assert p.train.tolist() == expected_train


@FAST
@given(datasets(min_size=6, max_size=60))
def test_length_control_inside_each_class(data):
    labels, lengths, eval_count = data["labels"], data["lengths"], data["eval_count"]
    if too_small_class(labels, eval_count) is not None:
        with pytest.raises(ConfigError, match="label class"):
            likelihood_partition(data["scores"], eval_count, labels=labels, lengths=lengths)
        return
    p = likelihood_partition(data["scores"], eval_count, labels=labels, lengths=lengths,
                             reverse=data["reverse"], seed=data["seed"])
    assert_is_partition(p, data["n"], eval_count)
    evals = p.eval.tolist()
    for label, quota in naive_class_quotas(labels, eval_count).items():
        members = [i for i in range(data["n"]) if labels[i] == label]
        in_eval = [i for i in evals if labels[i] == label]
        assert len(in_eval) == quota
        got = per_bucket_counts(in_eval, lengths)
        for length, size in per_bucket_counts(members, lengths).items():
            assert quota * size // len(members) <= got[length] <= -(-quota * size // len(members))
    ranked = naive_ranking(keys_of(data))
    assert p.eval.tolist() == [i for i in ranked if i in set(evals)]  # rank order kept


def test_length_control_is_seed_deterministic_and_seed_dependent():
    rng = np.random.default_rng(0)
    scores, lengths = rng.normal(size=500), rng.integers(1, 30, size=500)
    first = likelihood_partition(scores, 77, lengths=lengths, seed=3)
    again = likelihood_partition(scores, 77, lengths=lengths, seed=3)
    assert np.array_equal(first.eval, again.eval) and np.array_equal(first.train, again.train)
    others = [likelihood_partition(scores, 77, lengths=lengths, seed=s).eval for s in range(4, 10)]
    assert any(not np.array_equal(np.sort(first.eval), np.sort(o)) for o in others)


def test_large_length_controlled_split_is_fast_and_balanced():
    n, eval_count = 600_000, 20_000
    rng = np.random.default_rng(7)
    scores, lengths = rng.normal(size=n), rng.poisson(12, size=n)
    labels = rng.integers(0, 3, size=n)
    start = time.perf_counter()
    p = likelihood_partition(scores, eval_count, lengths=lengths, labels=labels, seed=1)
    elapsed = time.perf_counter() - start
    assert elapsed < 10.0, f"600k length-controlled split took {elapsed:.1f}s"
    assert p.eval.size == eval_count and np.unique(np.concatenate([p.train, p.eval])).size == n
    class_sizes = np.bincount(labels)
    assert np.bincount(labels[p.eval]).tolist() == [6667, 6667, 6666]
    for label in range(3):
        in_class = labels == label
        bucket_sizes = np.bincount(lengths[in_class], minlength=lengths.max() + 1)
        got = np.bincount(lengths[p.eval[labels[p.eval] == label]], minlength=lengths.max() + 1)
        quota = 6667 if label < 2 else 6666
        low = quota * bucket_sizes // class_sizes[label]
        high = -(-quota * bucket_sizes // class_sizes[label])
        assert np.all((low <= got) & (got <= high))


# ------------------------------------------------------------------------------------------------
# Random and length baselines
# ------------------------------------------------------------------------------------------------

@FAST
@given(datasets(), st.booleans())
def test_random_partition_invariants_and_balance(data, balanced):
    n, eval_count, labels = data["n"], data["eval_count"], data["labels"]
    if balanced and too_small_class(labels, eval_count) is not None:
        with pytest.raises(ConfigError, match="label class"):
            random_partition(n, eval_count, labels=labels, seed=data["seed"])
        return
    p = random_partition(n, eval_count, labels=labels if balanced else None, seed=data["seed"])
    assert_is_partition(p, n, eval_count)
    if balanced:
        got = Counter(labels[i] for i in p.eval.tolist())
        assert {c: got[c] for c in set(labels)} == naive_class_quotas(labels, eval_count)
    again = random_partition(n, eval_count, labels=labels if balanced else None, seed=data["seed"])
    assert np.array_equal(p.eval, again.eval) and np.array_equal(p.train, again.train)


def test_random_partition_depends_on_seed():
    evals = {tuple(sorted(random_partition(200, 100, seed=s).eval.tolist())) for s in range(5)}
    assert len(evals) == 5


def test_random_partition_is_uniform():
    counts = np.zeros(10)
    for seed in range(2000):
        counts[random_partition(10, 3, seed=seed).eval] += 1
    assert np.all(np.abs(counts - 600) < 82)   # 4 standard deviations of Binomial(2000, 0.3)


@FAST
@given(datasets(), st.booleans())
def test_length_partition_takes_the_longest(data, balanced):
    lengths, labels, eval_count = data["lengths"], data["labels"], data["eval_count"]
    if balanced and too_small_class(labels, eval_count) is not None:
        return
    p = length_partition(lengths, eval_count, labels=labels if balanced else None)
    ranked = naive_ranking([-x for x in lengths])
    if balanced:
        chosen = set()
        for label, quota in naive_class_quotas(labels, eval_count).items():
            chosen.update([i for i in ranked if labels[i] == label][:quota])
    else:
        chosen = set(ranked[:eval_count])
    assert p.eval.tolist() == [i for i in ranked if i in chosen]
    assert p.train.tolist() == [i for i in ranked if i not in chosen]


def test_length_partition_hand_computed():
    p = length_partition([3, 7, 3, 1, 7, 5], 3)
    assert p.eval.tolist() == [1, 4, 5] and p.train.tolist() == [0, 2, 3]
    q = length_partition([3, 7, 3, 1, 7, 5], 3)   # ties at 3: index 0 before 2
    assert length_partition([3, 7, 3, 1, 7, 5], 4).eval.tolist() == [1, 4, 5, 0]
    assert np.array_equal(p.eval, q.eval)


# ------------------------------------------------------------------------------------------------
# split_eval
# ------------------------------------------------------------------------------------------------

@FAST
@given(st.sets(st.integers(0, 10_000), max_size=60), st.integers(0, 2**32 - 1))
def test_split_eval_halves_with_extra_to_validation(indices, seed):
    validation, test = split_eval(sorted(indices), seed=seed)
    assert validation.size == (len(indices) + 1) // 2 and test.size == len(indices) // 2
    assert set(validation.tolist()) | set(test.tolist()) == indices
    assert not set(validation.tolist()) & set(test.tolist())
    again = split_eval(sorted(indices), seed=seed)
    assert np.array_equal(validation, again[0]) and np.array_equal(test, again[1])


def test_split_eval_shuffles_by_seed():
    indices = np.arange(100, 150)
    first = split_eval(indices, seed=0)[0]
    assert not np.array_equal(first, indices[:25])   # not just the first half
    assert any(not np.array_equal(first, split_eval(indices, seed=s)[0]) for s in (1, 2, 3))
    validation, test = split_eval([4, 8, 15], seed=9)
    assert validation.size == 2 and test.size == 1


# ------------------------------------------------------------------------------------------------
# check_partition and Partition
# ------------------------------------------------------------------------------------------------

def test_check_partition_accepts_a_valid_split():
    check_partition(Partition(train=[0, 2, 4], eval=[3, 1]), 5, 2, ids=["a", "b", "c", "d", "e"])
    check_partition(Partition(train=[0, 2, 4], eval=[3, 1]), 5, 0.4)


@pytest.mark.parametrize(("train", "evals", "message"), [
    ([0, 2, 5], [1, 3], "train holds indices outside"),
    ([0, 2, 4], [-1, 3], "eval holds indices outside"),
    ([0, 2, 2, 4], [1, 3], "train repeats indices: 2"),
    ([0, 2, 4], [3, 3], "eval repeats indices: 3"),
    ([0, 2, 4], [1, 2], "both train and eval: 2"),
    ([0, 2], [1, 3], "neither train nor eval: 4"),
    ([0, 2], [1, 3, 4], "eval holds 3 examples, expected 2"),
])
def test_check_partition_raises_on_each_broken_invariant(train, evals, message):
    with pytest.raises(SplitInvariantError, match=message):
        check_partition(Partition(train=train, eval=evals), 5, 2)


def test_check_partition_raises_on_bad_ids():
    partition = Partition(train=[0, 2, 4], eval=[1, 3])
    with pytest.raises(SplitInvariantError, match=r"'train-7' is used twice \(positions 1 and 3\)"):
        check_partition(partition, 5, 2, ids=["a", "train-7", "c", "train-7", "e"])
    with pytest.raises(SplitInvariantError, match="4 example ids for 5"):
        check_partition(partition, 5, 2, ids=["a", "b", "c", "d"])


def test_partition_is_read_only_int64_and_refuses_bad_arrays():
    p = Partition(train=np.array([0, 2], dtype=np.int32), eval=[1])
    assert p.train.dtype == np.int64
    with pytest.raises(ValueError):
        p.train[0] = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.eval = np.array([0])  # type: ignore[misc]
    with pytest.raises(SplitInvariantError, match="integers"):
        Partition(train=[0.0, 2.0], eval=[1])
    with pytest.raises(SplitInvariantError, match="1-D"):
        Partition(train=[[0, 2]], eval=[1])


@pytest.mark.parametrize("build", [
    lambda: likelihood_partition([2.0, 1.0, 0.0, 3.0], 2, lengths=[1, 1, 2, 2]),
    lambda: random_partition(4, 2, seed=1),
    lambda: length_partition([1, 2, 3, 4], 2, labels=["x", "y", "x", "y"]),
])
def test_every_strategy_checks_its_partition(monkeypatch, build):
    calls = []
    original = engine.check_partition

    def spy(partition, n, eval_size, ids=None):
        calls.append((partition.train.tolist(), partition.eval.tolist(), n, eval_size))
        original(partition, n, eval_size, ids)

    monkeypatch.setattr(engine, "check_partition", spy)
    result = build()
    assert calls == [(result.train.tolist(), result.eval.tolist(), 4, 2)]


@FAST
@given(st.lists(st.sampled_from("abc"), min_size=2, max_size=60), st.integers(0, 2**32 - 1))
def test_split_eval_with_labels_halves_every_class(labels, seed):
    """Issue 38 item 8: a label-balanced eval gave validation 42.5% contradiction; each class is halved now."""
    indices = np.arange(len(labels)) * 2 + 1  # eval holds the odd example indices; labels by example index
    by_index = np.array(["z"] * (2 * len(labels) + 1), dtype=object)
    by_index[indices] = labels
    validation, test = split_eval(indices, seed=seed, labels=by_index)
    assert validation.size == (len(labels) + 1) // 2 and test.size == len(labels) // 2
    assert sorted([*validation.tolist(), *test.tolist()]) == indices.tolist()
    for label in set(labels):
        in_validation, in_test = (int(np.sum(by_index[half] == label)) for half in (validation, test))
        assert abs(in_validation - in_test) <= 1, (label, in_validation, in_test)
    again = split_eval(indices[::-1], seed=seed, labels=by_index)
    assert np.array_equal(validation, again[0]) and np.array_equal(test, again[1])


def test_split_eval_of_a_balanced_eval_gives_balanced_halves():
    labels = np.array(["entailment", "neutral", "contradiction"] * 40)  # 40 per class, as a balanced eval holds
    for seed in range(5):
        validation, test = split_eval(np.arange(120), seed=seed, labels=labels)
        for half in (validation, test):
            assert sorted(np.unique(labels[half], return_counts=True)[1].tolist()) == [20, 20, 20], seed


def test_split_eval_depends_only_on_the_eval_set():
    """Reordering eval (as near-tied scores can) must not move examples between validation and test."""
    indices = np.arange(0, 40, 3)
    reordered = indices[::-1].copy()
    reordered[[0, 1]] = reordered[[1, 0]]
    for seed in range(5):
        first, second = split_eval(indices, seed=seed), split_eval(reordered, seed=seed)
        assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])


# ------------------------------------------------------------------------------------------------
# check_label_quotas: the label-balance check a build runs before scoring
# ------------------------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(labels=st.lists(st.sampled_from("abcd"), min_size=2, max_size=30), data=st.data())
def test_label_quota_check_agrees_with_the_partition_and_names_the_class(labels, data):
    eval_count = data.draw(st.integers(1, len(labels) - 1))
    small = too_small_class(labels, eval_count)
    scores = np.arange(len(labels), dtype=float)
    if small is None:
        engine.check_label_quotas(labels, eval_count, field="topic")
        likelihood_partition(scores, eval_count, labels=labels)
        return
    fits = max((e for e in range(eval_count) if too_small_class(labels, e) is None), default=0)
    counts = Counter(labels)
    quota = naive_class_quotas(labels, eval_count)[small]
    example = "example" if counts[small] == 1 else "examples"
    expected = (rf"^eval_size: label field 'topic': label class '{small}' has {counts[small]} {example}, fewer "
                rf"than its eval quota of {quota} \({eval_count} eval examples over {len(counts)} classes\); "
                + (rf"an eval size of at most {fits} fits" if fits else "no eval size fits")
                + rf", or drop the class(es)? \(drop_labels [^)]*'{small}'[^)]*\)$")
    with pytest.raises(ConfigError, match=expected):
        engine.check_label_quotas(labels, eval_count, field="topic")
    with pytest.raises(ConfigError, match=f"label class '{small}'"):
        likelihood_partition(scores, eval_count, labels=labels)


def test_label_quota_check_without_labels_checks_nothing():
    engine.check_label_quotas(None, 5)
