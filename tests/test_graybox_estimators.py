"""Gray-box and hybrid estimators (lsplits.uncertainty.graybox): each equals LM-Polygraph 0.7's formula, written out
here independently with numpy and math on hand-made inputs, one example at a time; stacks and lists of mixed
sizes equal the per-example values; bad scores are refused in one line naming the argument."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lsplits.errors import InvalidInput, InvalidOption
from lsplits.generation.scores import Scored
from lsplits.uncertainty.estimators import (
    ESTIMATORS,
    NEEDS_SCORES,
    EstimatorSettings,
    check_estimators,
    estimate,
    estimate_many,
    estimator_options,
    get_estimator,
)
from lsplits.uncertainty.graybox import (
    DEFAULT_SAR_T,
    GRAYBOX_ESTIMATORS,
    HYBRID_ESTIMATORS,
    SCORED_ESTIMATORS,
    cocoa_msp,
    cocoa_mte,
    cocoa_ppl,
    mc_sequence_entropy,
    mean_token_entropy,
    msp,
    perplexity,
    scored_many,
    semantic_entropy_prob,
    sentence_sar,
)
from lsplits.uncertainty.semantic_sets import semantic_entropy, semantic_entropy_counts

# --- independent reference formulas (LM-Polygraph 0.7's definitions, one example, plain loops) --------------


def ref_semantic_entropy_prob(lp, classes):
    """-(1/k) sum_j log(sum of exp(l) over candidate j's class); ``classes`` lists the classes' members."""
    class_of = {j: members for members in classes for j in members}
    top = max(lp)
    return -np.mean([math.log(sum(math.exp(lp[m] - top) for m in class_of[j])) + top for j in range(len(lp))])


def ref_sentence_sar(s, lp, t=0.001):
    """mean_j -log(p_j + sum_{l != j} S[j, l] p_l / t)."""
    p = [math.exp(x) for x in lp]
    k = len(lp)
    return float(np.mean([-math.log(p[j] + sum(s[j][m] * p[m] for m in range(k) if m != j) / t) for j in range(k)]))


def ref_dissimilarity(s):
    """Mean over the other candidates of 1 - (S[0, l] + S[l, 0]) / 2 (0 for k = 1)."""
    k = len(s)
    return float(np.mean([1 - (s[0][m] + s[m][0]) / 2 for m in range(1, k)])) if k > 1 else 0.0


# A hand-made example: candidates 0 and 1 equivalent (>= 0.85 both ways), 2 alone, 3 joined to 2 one way only.
S = np.array([[1.0, 0.9, 0.2, 0.1],
              [0.95, 1.0, 0.3, 0.0],
              [0.1, 0.4, 1.0, 0.9],
              [0.2, 0.0, 0.5, 1.0]])
CLASSES = [[0, 1], [2], [3]]
LP = [-0.5, -1.25, -2.0, -4.0]
N = [3, 5, 2, 8]
H = [0.4, 0.9, 1.3, 0.2]
ROW = {"candidates": ["a", "b", "c", "d"], "logprobs": LP, "n_tokens": N, "token_entropies": H}


def test_graybox_by_hand():
    assert msp(LP) == pytest.approx(0.5)
    assert perplexity(LP, N) == pytest.approx(0.5 / 3)
    assert mean_token_entropy(H) == pytest.approx(0.4)
    assert mc_sequence_entropy(LP) == pytest.approx(-np.mean(LP))
    assert mc_sequence_entropy(LP) == pytest.approx((0.5 + 1.25 + 2.0 + 4.0) / 4)


def test_hybrid_by_hand():
    d = ref_dissimilarity(S)
    assert d == pytest.approx(np.mean([1 - 0.925, 1 - 0.15, 1 - 0.15]))
    assert cocoa_msp(S, LP) == pytest.approx(0.5 * d)
    assert cocoa_ppl(S, LP, N) == pytest.approx(0.5 / 3 * d)
    assert cocoa_mte(S, H) == pytest.approx(0.4 * d)
    assert semantic_entropy_prob(S, LP) == pytest.approx(ref_semantic_entropy_prob(LP, CLASSES))
    # at threshold 0.45, 2 ~ 3 both ways (0.9, 0.5) but not 1 ~ 2 (0.3, 0.4): classes {0, 1}, {2, 3}
    assert semantic_entropy_prob(S, LP, sets_threshold=0.45) == pytest.approx(
        ref_semantic_entropy_prob(LP, [[0, 1], [2, 3]]))
    assert sentence_sar(S, LP) == pytest.approx(ref_sentence_sar(S, LP))
    assert sentence_sar(S, LP, sar_t=0.5) == pytest.approx(ref_sentence_sar(S, LP, t=0.5))
    assert DEFAULT_SAR_T == 0.001


def test_semantic_entropy_prob_joins_chains_like_the_count_based_sets():
    chain = np.array([[1.0, 0.9, 0.1], [0.9, 1.0, 0.9], [0.1, 0.9, 1.0]])  # 0 ~ 1 ~ 2, 0 !~ 2: one set
    lp = [-1.0, -2.0, -3.0]
    assert semantic_entropy_prob(chain, lp) == pytest.approx(ref_semantic_entropy_prob(lp, [[0, 1, 2]]))
    assert semantic_entropy_counts(chain) == 0.0


def test_single_candidate():
    s, lp = [[1.0]], [-1.7]
    assert msp(lp) == mc_sequence_entropy(lp) == pytest.approx(1.7)
    assert semantic_entropy_prob(s, lp) == pytest.approx(1.7)
    assert sentence_sar(s, lp) == pytest.approx(1.7)  # no other candidate: -log p_0
    assert perplexity(lp, [2]) == pytest.approx(0.85)
    assert mean_token_entropy([0.3]) == pytest.approx(0.3)
    for value in (cocoa_msp(s, lp), cocoa_ppl(s, lp, [2]), cocoa_mte(s, [0.3])):
        assert value == 0.0  # nothing to disagree with


@pytest.mark.parametrize("k", [2, 3, 6])
def test_identical_candidates(k):
    ones, lp = np.ones((k, k)), [-2.5] * k
    assert semantic_entropy_prob(ones, lp) == pytest.approx(2.5 - math.log(k))  # one class of mass k p
    assert sentence_sar(ones, lp) == pytest.approx(2.5 - math.log(1 + (k - 1) / 0.001))
    assert sentence_sar(ones, lp) == pytest.approx(ref_sentence_sar(ones, lp))
    assert mc_sequence_entropy(lp) == pytest.approx(2.5)
    for value in (cocoa_msp(ones, lp), cocoa_ppl(ones, lp, [4] * k), cocoa_mte(ones, [1.0] * k)):
        assert value == 0.0


@pytest.mark.parametrize("k", [2, 5])
def test_equal_logprobs_on_distinct_candidates(k):
    identity, lp = np.eye(k), [-1.5] * k  # k classes of one member, no similarity: every value is -l
    assert semantic_entropy_prob(identity, lp) == pytest.approx(1.5)
    assert sentence_sar(identity, lp) == pytest.approx(1.5)
    assert mc_sequence_entropy(lp) == pytest.approx(1.5)
    assert cocoa_msp(identity, lp) == pytest.approx(1.5)  # d = 1
    half = np.full((k, k), 0.5) + np.eye(k) * 0.5
    assert semantic_entropy_prob(half, lp) == pytest.approx(1.5)
    assert sentence_sar(half, lp) == pytest.approx(ref_sentence_sar(half, lp))


def test_tiny_probabilities_stay_finite_and_exact():
    # exp(-1000) underflows to 0: LM-Polygraph's SentenceSAR gives log(0) = inf; the log-space value is exact
    k, lp = 3, [-1000.0, -1000.0, -1001.0]
    ones = np.ones((k, k))
    shift = [math.log(1 + sum(math.exp(lp[m] - lp[j]) / 0.001 for m in range(k) if m != j)) for j in range(k)]
    assert sentence_sar(ones, lp) == pytest.approx(np.mean([-(lp[j] + shift[j]) for j in range(k)]))
    assert semantic_entropy_prob(ones, lp) == pytest.approx(1000 - math.log(2 + math.exp(-1)))


# --- stacks, lists of mixed sizes, by name --------------------------------------------------------------


def random_example(k: int, rng: np.random.Generator) -> tuple[np.ndarray, dict]:
    s = rng.uniform(0, 1, (k, k))
    s[rng.random((k, k)) < 0.3] = rng.uniform(0.85, 1.0)  # some equivalent pairs
    s[np.arange(k), np.arange(k)] = 1.0
    return s, {"logprobs": list(-rng.exponential(3.0, k)), "n_tokens": list(rng.integers(1, 20, k)),
               "token_entropies": list(rng.uniform(0, 3, k))}


def reference(name: str, s: np.ndarray, row: dict) -> float:
    """The value of ``name`` by the independent formulas above (classes from the matrix by hand)."""
    lp, n, h = row["logprobs"], row["n_tokens"], row["token_entropies"]
    k = len(lp)
    if name == "semantic_entropy_prob":
        equivalent = (s >= 0.85) & (s.T >= 0.85)
        label = list(range(k))
        for _ in range(k):  # plain label propagation to the smallest reachable index
            for a in range(k):
                for b in range(k):
                    if equivalent[a, b]:
                        label[a] = label[b] = min(label[a], label[b])
        classes = [[j for j in range(k) if label[j] == c] for c in set(label)]
        return ref_semantic_entropy_prob(lp, classes)
    d = ref_dissimilarity(s)
    return {"msp": -lp[0], "perplexity": -lp[0] / n[0], "mean_token_entropy": h[0],
            "mc_sequence_entropy": -np.mean(lp), "sentence_sar": ref_sentence_sar(s, lp),
            "cocoa_msp": -lp[0] * d, "cocoa_ppl": -lp[0] / n[0] * d, "cocoa_mte": h[0] * d}[name]


@pytest.mark.parametrize("name", sorted(SCORED_ESTIMATORS))
def test_stack_equals_each_example_equals_the_formula(name):
    rng = np.random.default_rng(5)
    examples = [random_example(5, rng) for _ in range(7)]
    matrices = np.stack([s for s, _ in examples])
    stacked = {field: np.array([row[field] for _, row in examples]) for field in ("logprobs", "n_tokens",
                                                                                  "token_entropies")}
    together = estimate(name, matrices, scores=stacked)
    assert together.shape == (7,)
    one_by_one = [estimate(name, s, scores=row) for s, row in examples]
    assert together.tolist() == one_by_one  # the same arithmetic, rounded alike: exactly equal
    assert one_by_one == pytest.approx([reference(name, s, row) for s, row in examples], rel=1e-9, abs=1e-11)


@pytest.mark.parametrize("name", sorted(SCORED_ESTIMATORS))
def test_estimate_many_mixes_sizes(name):
    rng = np.random.default_rng(11)
    examples = [random_example(k, rng) for k in (3, 1, 5, 3, 2, 5)]
    matrices = [s for s, _ in examples]
    rows = [row for _, row in examples]
    values = estimate_many(name, matrices, scores=rows)
    assert values.tolist() == [estimate(name, s, scores=row) for s, row in examples]
    assert values == pytest.approx([reference(name, s, row) for s, row in examples], rel=1e-9, abs=1e-11)
    if name in GRAYBOX_ESTIMATORS:  # no matrix needed
        assert estimate_many(name, scores=rows).tolist() == values.tolist()


def test_scored_objects_and_options_by_name():
    scored = Scored(["a", "b", "c", "d"], logprobs=LP, n_tokens=N, token_entropies=H)
    assert estimate("cocoa_ppl", S, scores=scored) == cocoa_ppl(S, LP, N)
    assert estimate("msp", scores=ROW) == 0.5
    assert estimate("SENTENCE_SAR", S, scores=ROW, sar_t=0.5) == sentence_sar(S, LP, sar_t=0.5)
    assert estimate("semantic_entropy_prob", S, scores=ROW, sets_threshold=0.45) == semantic_entropy_prob(S, LP, 0.45)
    assert estimator_options("sentence_sar") == {"sar_t": 0.001}
    assert estimator_options("semantic_entropy_prob") == {"sets_threshold": 0.85}
    assert estimator_options("cocoa_mte") == {}
    assert estimate("eigv", S, scores=ROW) == estimate("eigv", S)  # matrix-only estimators ignore the scores
    settings = EstimatorSettings(sets_threshold=0.45, sar_t=0.5)
    assert settings.options("sentence_sar") == {"sar_t": 0.5}
    assert settings.options("semantic_entropy_prob") == {"sets_threshold": 0.45}
    assert settings.options("kle") == {"kle_t": 0.3, "kle_normalize": True, "kle_scale": True}
    assert settings.options("msp") == {}
    with pytest.raises(InvalidOption, match="does not take option.*sets_threshold"):
        estimate("msp", scores=ROW, sets_threshold=0.5)
    with pytest.raises(InvalidOption, match="^sar_t must be the SentenceSAR temperature"):
        estimate("sentence_sar", S, scores=ROW, sar_t=0.0)
    with pytest.raises(InvalidOption, match="sar_t"):
        EstimatorSettings(sar_t=float("nan")).check()


def test_registry_tables():
    assert set(GRAYBOX_ESTIMATORS) == {"msp", "perplexity", "mean_token_entropy", "mc_sequence_entropy"}
    assert set(HYBRID_ESTIMATORS) == {"semantic_entropy_prob", "sentence_sar", "cocoa_msp", "cocoa_ppl", "cocoa_mte"}
    assert NEEDS_SCORES["msp"] == "scores" and NEEDS_SCORES["cocoa_msp"] == "scores+matrix"
    assert not set(NEEDS_SCORES) & set(ESTIMATORS)  # ESTIMATORS stays the matrix-only set
    assert get_estimator("msp") is msp
    # the count-based semantic entropy has its own name; the old one still works and gives the same value
    assert get_estimator("semantic_entropy") is get_estimator("semantic_entropy_counts") is semantic_entropy
    assert estimate("semantic_entropy", S) == estimate("semantic_entropy_counts", S) == pytest.approx(
        -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)))
    assert check_estimators(["MSP", "eigv"], with_scores=True) == ("msp", "eigv")
    with pytest.raises(InvalidOption, match=r"'cocoa_msp'.* needs the candidates' log-probabilities"):
        check_estimators(["eigv", "cocoa_msp"])  # a caller with matrices only (lsplits ue, for now)


# --- bad inputs: one InvalidInput naming the argument --------------------------------------------------


@pytest.mark.parametrize(("call", "message"), [
    (lambda: msp([-1.0, float("nan")]), r"^logprobs, candidate 1 is nan: a log-probability must be a finite"),
    (lambda: mc_sequence_entropy([[-1.0, -2.0], [-1.0, float("-inf")]]),
     r"^logprobs of example 1, candidate 1 is -inf: a log-probability must be a finite number"),
    (lambda: msp([-1.0, 0.25]), r"^logprobs, candidate 1 is 0.25: a log-probability must be <= 0"),
    (lambda: perplexity([-1.0, -2.0], [3, 0]), r"^n_tokens, candidate 1 is 0: a token count must be >= 1"),
    (lambda: perplexity([-1.0, -2.0], [2.5, 1]), r"^n_tokens, candidate 0 is 2.5: a token count must be a whole"),
    (lambda: mean_token_entropy([0.1, -0.2]), r"^token_entropies, candidate 1 is -0.2: .* must be >= 0"),
    (lambda: perplexity([-1.0, -2.0], [3]), r"^n_tokens has shape \(1,\) but logprobs has shape \(2,\)"),
    (lambda: cocoa_msp(np.eye(3), [-1.0, -2.0]), r"^logprobs has shape \(2,\) but the similarity matrix has shape "
                                                 r"\(3, 3\)"),
    (lambda: sentence_sar(np.stack([np.eye(2)] * 3), [[-1.0, -1.0]] * 2), r"^logprobs has shape \(2, 2\) but the "
                                                                          r"similarity matrix has shape \(3, 2, 2\)"),
    (lambda: msp([]), r"^logprobs needs at least one candidate"),
    (lambda: msp("abc"), r"^logprobs must be numbers"),
    (lambda: estimate("msp"), r"^estimator 'msp' needs the candidates' scores \(logprobs\)"),
    (lambda: estimate("perplexity", scores={"logprobs": [-1.0]}), r"^estimator 'perplexity' needs the candidates' "
                                                                  r"n_tokens, and scores has none"),
    (lambda: estimate("cocoa_msp", scores=ROW), r"^estimator 'cocoa_msp' needs the similarity matrix"),
    (lambda: estimate("eigv", scores=ROW), r"^estimator 'eigv' needs a similarity matrix"),
    (lambda: estimate_many("msp", scores=[ROW, dict(ROW, logprobs=[-1.0, 1.0, -1.0, -1.0])]),
     r"^logprobs of example 1, candidate 1 is 1: a log-probability must be <= 0"),
    (lambda: estimate_many("mc_sequence_entropy", scores=[ROW, {"logprobs": [-1.0]}, {"logprobs": [-1, "x"]}]),
     r"^logprobs must be numbers"),
    (lambda: estimate_many("cocoa_ppl", [S], scores=[ROW, ROW]), r"^2 examples have scores but 1 have a similarity"),
    (lambda: estimate_many("cocoa_ppl", [S, np.eye(3)], scores=[ROW, ROW]),
     r"^the similarity matrix of example 1 has shape \(3, 3\) but its scores have 4 values"),
    (lambda: estimate_many("perplexity", scores=[ROW, dict(ROW, n_tokens=[1, 2])]),
     r"^n_tokens of example 1 has \(2,\) values but logprobs has 4"),
    (lambda: estimate_many("msp", scores=[ROW, {}]), r"^estimator 'msp' needs the candidates' logprobs, and the "
                                                     r"scores of example 1 has none"),
    (lambda: scored_many("msp", None), r"^estimator 'msp' needs the candidates' scores"),
])
def test_bad_scores_are_one_clear_line(call, message):
    with pytest.raises(InvalidInput, match=message) as raised:
        call()
    assert "\n" not in str(raised.value)


def test_lsplits_ue_refuses_a_graybox_estimator_in_one_line(tmp_path, monkeypatch, capsys):
    """Beams without scores: when every estimator asked for needs them, ``lsplits ue`` refuses up front in one
    line (with a black-box one beside them they are skipped instead: tests/test_graybox_ue.py)."""
    from test_bad_inputs import beams_and_gold, run_in_process

    beams, gold = beams_and_gold(tmp_path)
    argv = ["ue", str(beams), "--gold", str(gold), "--out", str(tmp_path / "out"), "--no-cache",
            "--estimators", "msp,cocoa_msp"]
    result = run_in_process(argv, tmp_path, monkeypatch, capsys)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1, result.stderr[-3000:]
    assert "--estimators" in lines[0] and "cocoa_msp" in lines[0]
    assert "the beams carry no scores" in lines[0]
    assert not (tmp_path / "out").exists()
