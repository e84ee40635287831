"""Similarity-matrix assembly: the B2 rules, minimal work (one prepare per string, one triangle), cache, pool."""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
from collections import Counter

import numpy as np
import pytest

from lsplits.errors import InvalidOutput, LsplitsError, SimilarityFailure, WorkerLost
from lsplits.similarity import registry
from lsplits.similarity.registry import Similarity
from lsplits.uncertainty.matrix import MatrixCache, build_matrices, build_matrix

CALLS: Counter = Counter()


def _prepare_letters(text: str) -> str:
    CALLS["prepare"] += 1
    if text.startswith("!"):
        raise InvalidOutput("starts with !")
    return text


def _overlap(a: str, b: str) -> float:
    """Asymmetric on purpose: share of a's letters found in b, plus 0.3 (so clipping shows)."""
    CALLS["score"] += 1
    return len(set(a) & set(b)) / len(set(a)) + 0.3


def _jaccard(a: str, b: str) -> float:
    CALLS["score"] += 1
    return len(set(a) & set(b)) / len(set(a) | set(b))


ASYMMETRIC = Similarity("test-overlap", _prepare_letters, _overlap, symmetric=False)
SYMMETRIC = Similarity("test-jaccard", _prepare_letters, _jaccard, symmetric=True)


@pytest.fixture(autouse=True)
def counting_similarities(monkeypatch):
    CALLS.clear()
    for similarity in (ASYMMETRIC, SYMMETRIC):
        monkeypatch.setitem(registry._REGISTERED, similarity.name, similarity)


def naive_matrix(candidates, score, invalid):
    """Independent restatement of B2: full S, zero rows/columns for invalid, symmetrise, clip, diagonal 1."""
    k = len(candidates)
    s = np.array([[score(a, b) for b in candidates] for a in candidates], dtype=float)
    for j in range(k):
        if invalid[j]:
            s[j, :] = 0.0
            s[:, j] = 0.0
    s = np.clip((s + s.T) / 2, 0, 1)
    np.fill_diagonal(s, 1.0)
    return s


def test_rules_of_b2_with_an_asymmetric_function():
    candidates = ["abc", "ab", "!bad", "xyz"]
    matrix = build_matrix(candidates, ASYMMETRIC)
    assert CALLS["score"] == 6  # both orders of the 3 valid candidates, never the diagonal
    expected = naive_matrix(candidates, _overlap, [False, False, True, False])
    np.testing.assert_allclose(matrix.values, expected)
    # hand-checked entries: abc->ab = 2/3 + 0.3, ab->abc = 1 + 0.3; mean 1.133 clipped to 1
    assert matrix.values[0, 1] == 1.0
    # abc->xyz = 0.3 both ways
    assert matrix.values[0, 3] == pytest.approx(0.3)
    assert matrix.values[2].tolist() == [0.0, 0.0, 1.0, 0.0]
    assert matrix.invalid.tolist() == [False, False, True, False]
    assert matrix.invalid_count == 1 and matrix.errors[2] == "starts with !"


def test_symmetric_function_scores_one_triangle_and_strings_once():
    candidates = ["abc", "abd", "abc", "xy", "abd", "abc"]
    matrix = build_matrix(candidates, SYMMETRIC)
    assert CALLS["prepare"] == 3  # three distinct strings
    assert CALLS["score"] == 3  # pairs of distinct strings: (abc, abd), (abc, xy), (abd, xy)
    np.testing.assert_allclose(matrix.values, naive_matrix(candidates, _jaccard, [False] * 6))
    assert matrix.values[0, 2] == matrix.values[0, 5] == 1.0  # identical strings
    assert matrix.values[0, 1] == pytest.approx(0.5)  # |{a,b}| / |{a,b,c,d}|


def test_identical_invalid_candidates_are_still_zero():
    matrix = build_matrix(["!x", "!x", "ab"], SYMMETRIC)
    assert matrix.values.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    assert CALLS["prepare"] == 2


def test_single_and_empty_candidate_lists():
    assert build_matrix(["a"], SYMMETRIC).values.tolist() == [[1.0]]
    assert build_matrix([], SYMMETRIC).values.shape == (0, 0)


def test_truncate_is_the_top_left_block():
    candidates = ["abc", "ab", "!bad", "xyz", "b"]
    full = build_matrix(candidates, ASYMMETRIC)
    for k in (1, 3, 5, 9):
        part = build_matrix(candidates[:k], ASYMMETRIC)
        np.testing.assert_allclose(full.truncate(k).values, part.values)
        assert full.truncate(k).invalid.tolist() == part.invalid.tolist()


def _prepare_bug(text):
    return {}[text] if text == "x" else text  # a bug on "x": KeyError


def _score_bug(a, b):
    return {}[a] if a == "x" else 0.5  # a bug when the first candidate is "x": KeyError


@pytest.mark.parametrize("broken, message", [
    (Similarity("test-broken", _prepare_bug, _jaccard, symmetric=True), "similarity 'test-broken' failed to prepare the output 'x'"),
    (Similarity("test-broken", _prepare_letters, _score_bug, symmetric=True),
     "similarity 'test-broken' failed to score the outputs 'x' and 'y': KeyError"),
])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_bug_in_a_similarity_fails_naming_it_and_the_example(monkeypatch, broken, message, workers):
    """Only InvalidOutput marks a candidate invalid; another exception is a bug, not a 0 or an invalid row."""
    monkeypatch.setitem(registry._REGISTERED, broken.name, broken)
    examples = [["a", "b" * n] for n in range(1, 13)] + [["x", "y"]] * 2 + [["a", "!c"]] * 4  # e12: the first "x"
    with pytest.raises(SimilarityFailure, match=f"^example e12: {message}") as caught:
        build_matrices(examples, "test-broken", workers=workers,
                       progress=False, ids=[f"e{i}" for i in range(len(examples))])
    assert not isinstance(caught.value, LsplitsError)  # a bug keeps its traceback in the CLI


def test_cache_reuses_matrices_and_is_keyed_by_content(tmp_path):
    examples = [["abc", "ab"], ["x", "!y", "xz"], ["abc", "ab"]]
    first = build_matrices(examples, "test-jaccard", cache=tmp_path, progress=False)
    computed = CALLS["score"]
    assert computed == 2
    CALLS.clear()
    again = build_matrices(examples, "test-jaccard", cache=tmp_path, progress=False)
    assert CALLS["score"] == 0 and CALLS["prepare"] == 0
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a.values, b.values)
        assert a.errors == b.errors and a.invalid.tolist() == b.invalid.tolist()
    assert len(list(tmp_path.rglob("*.npz"))) == 2  # examples 0 and 2 share one entry
    newer = Similarity("test-jaccard", _prepare_letters, _jaccard, symmetric=True, version="2")
    assert MatrixCache.key(newer, examples[0]) != MatrixCache.key(SYMMETRIC, examples[0])
    build_matrices(examples[:1], newer, cache=tmp_path, progress=False)
    assert CALLS["score"] == 1  # a new version recomputes


@pytest.mark.parametrize("similarity", [SYMMETRIC, ASYMMETRIC], ids=lambda s: s.name)
def test_reordered_candidates_compute_no_pair_again_and_come_back_in_their_own_order(tmp_path, similarity):
    """Issue 38 item 7: another system's candidates are the same graphs in another order: the cache answers."""
    first = [["abc", "ab", "!bad", "xyz", "ab"], ["q", "qr", "rs"]]
    reordered = [["xyz", "ab", "ab", "abc", "!bad"], ["rs", "q", "qr"]]
    build_matrices(first, similarity, cache=tmp_path, progress=False)
    assert CALLS["score"] > 0
    CALLS.clear()
    again = build_matrices(reordered, similarity, cache=tmp_path, progress=False)
    assert CALLS["score"] == 0 and CALLS["prepare"] == 0
    for candidates, matrix in zip(reordered, again, strict=True):
        fresh = build_matrix(candidates, similarity)
        np.testing.assert_array_equal(matrix.values, fresh.values)
        assert matrix.invalid.tolist() == fresh.invalid.tolist() and matrix.errors == fresh.errors
    assert again[0].invalid.tolist() == [False, False, False, False, True]
    scores = _jaccard if similarity is SYMMETRIC else _overlap
    np.testing.assert_allclose(again[0].values, naive_matrix(reordered[0], scores, again[0].invalid))


def test_reordered_candidates_in_one_call_are_computed_once():
    examples = [["abc", "abd", "xy"], ["xy", "abc", "abd"], ["abd", "xy", "abc"]]
    matrices = build_matrices(examples, "test-jaccard", progress=False)
    assert CALLS["score"] == 3 and CALLS["prepare"] == 3  # one triangle of one set of three strings
    for candidates, matrix in zip(examples, matrices, strict=True):
        np.testing.assert_allclose(matrix.values, naive_matrix(candidates, _jaccard, [False] * 3))


def test_process_pool_gives_the_serial_result():
    examples = [["abc", "ab", "!q", "b"], ["xyz", "xy"], ["a"], ["ab", "ba", "ab"]] * 3
    serial = build_matrices(examples, "test-overlap", workers=1, progress=False)
    pooled = build_matrices(examples, "test-overlap", workers=2, progress=False)
    for a, b in zip(serial, pooled, strict=True):
        np.testing.assert_array_equal(a.values, b.values)
        assert a.invalid.tolist() == b.invalid.tolist()


def test_real_smatchpp_matrix_on_an_invalid_candidate():
    graph = "(w / want-01 :ARG0 (b / boy))"
    matrix = build_matrix([graph, "(w / want-01 :ARG1 (b / boy))", "(w / want-01", graph], registry.get("smatchpp"))
    assert matrix.values[0, 1] == pytest.approx(0.75)  # 3 of 4 standardised triples
    assert matrix.values[0, 3] == 1.0
    assert matrix.values[2].tolist() == [0.0, 0.0, 1.0, 0.0]
    assert matrix.invalid.tolist() == [False, False, True, False]


def test_a_bug_in_a_quality_metric_fails_naming_it_and_the_example(monkeypatch):
    """The same rule when a similarity scores predictions against references."""
    from lsplits.uncertainty.quality import score_predictions

    broken = Similarity("test-broken", _prepare_letters, _score_bug, symmetric=True)
    with pytest.raises(SimilarityFailure, match="^example b: similarity 'test-broken' failed to score the outputs "
                                                "'x' and 'y': KeyError"):
        score_predictions(broken, ["a", "x"], ["a", "y"], ids=["a", "b"])
    assert score_predictions(broken, ["a", "!x"], ["a", "y"], ids=["a", "b"]).invalid_predictions == [1]  # InvalidOutput: 0



def _exit_on_x(text):
    if text == "x":
        os._exit(3)  # a worker that dies without a Python exception (a crash in a C extension, sys.exit)
    return text


def _killed_on_x(text):
    if text == "x":
        os.kill(os.getpid(), signal.SIGKILL)  # what the OOM killer does
    return text


@pytest.mark.parametrize("prepare, message", [
    (_exit_on_x, r"a similarity worker \(pid \d+\) failed with exit code 3 \(its traceback is above\)$"),
    (_killed_on_x, r"a similarity worker \(pid \d+\) was killed by SIGKILL before finishing its examples "
                   r"\(out of memory\?\); rerun with fewer workers$"),
])
def test_a_worker_that_dies_is_an_error_naming_it_not_a_hang(monkeypatch, prepare, message):
    dying = Similarity("test-dying", prepare, _jaccard, symmetric=True)
    monkeypatch.setitem(registry._REGISTERED, dying.name, dying)
    examples = [["a", "b" * n] for n in range(1, 40)] + [["x", "y"]]
    with pytest.raises(WorkerLost, match=message):
        build_matrices(examples, "test-dying", workers=2, progress=False)
    assert multiprocessing.active_children() == []  # the other worker was ended too


def _first_letter(text: str) -> str:
    return text[0]


@pytest.mark.timeout(300)
def test_large_tasks_and_large_results_do_not_deadlock_the_workers(monkeypatch):
    """Chunks of long candidates (700 KB a task) whose matrices are large too (k=120: 460 KB a result): more than
    a pipe holds each way, so a parent sending ahead while a worker sends its result would wait for ever."""
    cheap = Similarity("test-first-letter", _first_letter, lambda a, b: float(a == b), symmetric=True)
    monkeypatch.setitem(registry._REGISTERED, cheap.name, cheap)
    examples = [[f"{'ab'[j % 2]}{i:03d}{j:03d}" + "x" * 1500 for j in range(120)] for i in range(64)]
    matrices = build_matrices(examples, cheap.name, workers=2, progress=False)
    expected = build_matrix(examples[5], cheap).values
    assert len(matrices) == 64 and matrices[5].values.shape == (120, 120)
    np.testing.assert_array_equal(matrices[5].values, expected)
    assert matrices[5].values[0, 2] == 1.0 and matrices[5].values[0, 1] == 0.0


def test_a_task_for_a_worker_that_already_died_is_worker_lost_not_a_broken_pipe():
    """A worker killed between two chunks: sending it the next one fails with EPIPE, which is the same lost
    worker (the CLI would otherwise read the BrokenPipeError as a closed stdout)."""
    from lsplits.runtime.pool import Workers

    cheap = Similarity("test-first-letter", _first_letter, lambda a, b: float(a == b), symmetric=True)
    workers = Workers(functools.partial(build_matrix, similarity=cheap), 2, name="similarity")
    try:
        victim = workers._processes[0]
        os.kill(victim.pid, signal.SIGKILL)
        victim.join()
        with pytest.raises(WorkerLost, match=rf"worker \(pid {victim.pid}\) was killed by SIGKILL"):
            list(workers.imap([["a", "b"]] * 8, 1))
    finally:
        workers.close()
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("poison", ["smaller", "other key", "out of range"])
def test_a_poisoned_or_stale_cache_file_is_recomputed_with_a_warning_naming_it(tmp_path, caplog, poison):
    candidates = ["abcd", "abc", "ab", "bcd", "xyz", "xy", "a", "b", "cd", "d"]
    fresh = build_matrix(candidates, SYMMETRIC)
    build_matrices([candidates], "test-jaccard", cache=tmp_path, progress=False)
    [path] = tmp_path.rglob("*.npz")
    with np.load(path) as data:
        stored = {name: data[name] for name in data.files}
    if poison == "smaller":  # a 3x3 matrix where the 10 candidates' belongs
        stored.update(values=np.eye(3), invalid=np.zeros(3, dtype=bool), errors=np.array([""] * 3))
    elif poison == "other key":  # the right shape, but written for other candidates
        stored.update(values=np.ones((10, 10)), key=np.array("0" * 64))
    else:
        stored.update(values=np.full((10, 10), 7.0))
    np.savez_compressed(path, **stored)
    CALLS.clear()
    with caplog.at_level("WARNING", logger="lsplits.uncertainty.matrix"):
        [again] = build_matrices([candidates], "test-jaccard", cache=tmp_path, progress=False)
    np.testing.assert_array_equal(again.values, fresh.values)
    assert CALLS["score"] == 45  # recomputed
    [record] = [r for r in caplog.records if r.levelname == "WARNING"]
    assert str(path) in record.getMessage() and "recomputing it" in record.getMessage()
    with np.load(path) as data:  # and replaced by the right matrix (stored for the candidates in sorted order)
        np.testing.assert_array_equal(data["values"], build_matrix(sorted(candidates), SYMMETRIC).values)
