"""Estimators on hand-computed matrices, and the edge cases each defines (one candidate, identical or invalid ones, zero degree)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lsplits.errors import InvalidOption
from lsplits.uncertainty.beam import beam_uncertainties, beam_uncertainty_outputs
from lsplits.uncertainty.estimators import (
    degmat,
    ecc,
    eigv,
    estimate,
    get_estimator,
    lexsim,
    normalized_laplacian,
)

TWO_CLUSTERS = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]], dtype=float)


def test_two_by_two_by_hand():
    # A = [[1, s], [s, 1]]: degrees 1+s, L = [[1 - 1/(1+s), -s/(1+s)], ...], eigenvalues 0 and 2s/(1+s)
    s = 0.5
    a = np.array([[1, s], [s, 1]])
    assert np.linalg.eigvalsh(normalized_laplacian(a)) == pytest.approx([0.0, 2 * s / (1 + s)])
    assert eigv(a) == pytest.approx(1 + (1 - 2 * s / (1 + s)))  # 1 + 1/3
    assert degmat(a) == pytest.approx(1 - (2 + 2 * s) / 4)  # 0.25
    assert lexsim(a) == pytest.approx(1 - s)
    # eigenvalue 2/3 < 0.9: both eigenvectors kept -> sqrt(k - 1) = 1; threshold 0.5 keeps the constant one only
    assert ecc(a) == pytest.approx(1.0)
    assert ecc(a, ecc_threshold=0.5) == pytest.approx(0.0, abs=1e-12)


def test_two_clusters_by_hand():
    # two components: eigenvalues 0, 0, 1, 1 -> EigV = 2; DegMat = 1 - 8/16
    assert eigv(TWO_CLUSTERS) == pytest.approx(2.0)
    assert degmat(TWO_CLUSTERS) == pytest.approx(0.5)
    assert lexsim(TWO_CLUSTERS) == pytest.approx(1 - 4 / 12)
    # kept eigenvectors span the two cluster indicators; embeddings are (1/sqrt2, 0) or (0, 1/sqrt2) up to
    # rotation, centred at (1/(2 sqrt2), 1/(2 sqrt2)): each row has squared norm 1/4, total 1
    assert ecc(TWO_CLUSTERS) == pytest.approx(1.0)


def test_asymmetric_input_is_symmetrised():
    a = np.array([[1.0, 0.2], [0.8, 1.0]])
    sym = np.array([[1.0, 0.5], [0.5, 1.0]])
    for name in ("lexsim", "eigv", "ecc", "degmat"):
        assert estimate(name, a) == pytest.approx(estimate(name, sym))


@pytest.mark.parametrize("k", [2, 3, 5, 10])
def test_ecc_with_every_eigenvector_is_sqrt_k_minus_1(k):
    rng = np.random.default_rng(k)
    m = rng.random((k, k))
    a = (m + m.T) / 2
    np.fill_diagonal(a, 1.0)
    # the largest threshold allowed, 2, keeps every eigenvector: with a diagonal of 1 (self-loops) the
    # normalised Laplacian's eigenvalues are all below 2
    assert np.linalg.eigvalsh(normalized_laplacian(a)).max() < 2.0
    assert ecc(a, ecc_threshold=2.0) == pytest.approx(math.sqrt(k - 1))


def test_single_candidate():
    one = [[1.0]]
    assert (lexsim(one), eigv(one), ecc(one), degmat(one)) == (0.0, 1.0, 0.0, 0.0)


@pytest.mark.parametrize("k", [2, 4, 7])
def test_all_identical_candidates_are_certain(k):
    ones = np.ones((k, k))
    assert lexsim(ones) == pytest.approx(0.0)
    assert eigv(ones) == pytest.approx(1.0)
    assert ecc(ones) == pytest.approx(0.0, abs=1e-7)
    assert degmat(ones) == pytest.approx(0.0)


@pytest.mark.parametrize("k", [2, 4, 7])
def test_all_invalid_candidates_are_maximally_uncertain(k):
    identity = np.eye(k)  # what matrix.py builds when no candidate parses
    assert eigv(identity) == pytest.approx(k)
    assert ecc(identity) == pytest.approx(math.sqrt(k - 1))
    assert degmat(identity) == pytest.approx(1 - 1 / k)
    assert lexsim(identity) == pytest.approx(1.0)


def test_zero_degree_node_is_an_isolated_component():
    a = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    laplacian = normalized_laplacian(a)
    assert np.isfinite(laplacian).all()
    assert laplacian[2].tolist() == [0.0, 0.0, 0.0]
    # components {0, 1} and {2}: eigenvalues 0, 0, 1 -> EigV 2
    assert eigv(a) == pytest.approx(2.0)
    assert degmat(a) == pytest.approx(1 - 4 / 9)


def test_more_disagreement_means_more_uncertainty():
    def matrix(s):
        a = np.full((4, 4), s)
        np.fill_diagonal(a, 1.0)
        return a

    for name in ("lexsim", "eigv", "ecc", "degmat"):
        values = [estimate(name, matrix(s)) for s in (0.95, 0.7, 0.4, 0.1)]
        assert all(later >= earlier - 1e-9 for earlier, later in zip(values, values[1:])), (name, values)
        assert values[-1] > values[0] + 0.5, (name, values)


def test_bad_inputs():
    with pytest.raises(ValueError):
        eigv(np.zeros((0, 0)))
    with pytest.raises(ValueError):
        degmat(np.ones((2, 3)))
    with pytest.raises(ValueError):
        lexsim([[1.0, float("nan")], [0.0, 1.0]])
    with pytest.raises(ValueError, match="estimator must be one of lexsim, "):
        get_estimator("entropy")


@pytest.mark.parametrize("threshold", [float("nan"), 0.0, -0.5, 2.5, float("inf")])
def test_ecc_threshold_out_of_range_is_refused(threshold, tmp_path):
    with pytest.raises(InvalidOption, match=r"^ecc_threshold must be a number in \(0, 2\]"):
        ecc(TWO_CLUSTERS, ecc_threshold=threshold)
    with pytest.raises(InvalidOption, match=r"^ecc_threshold must be a number in \(0, 2\]"):
        estimate("ecc", TWO_CLUSTERS, ecc_threshold=threshold)
    with pytest.raises(InvalidOption, match=r"^ecc_threshold must be a number in \(0, 2\]"):
        beam_uncertainty_outputs([["a b", "a c"]], "rougel", estimators=["ecc"], ecc_threshold=threshold)
    with pytest.raises(InvalidOption, match=r"^ecc_threshold must be a number in \(0, 2\]"):
        beam_uncertainties([["a b", "a c"]], "rougel", ["ecc"], settings=EstimatorSettings(ecc_threshold=threshold),
                           cache=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()  # refused before any similarity matrix


def test_ecc_threshold_bounds():
    assert ecc(TWO_CLUSTERS, ecc_threshold=2.0) == pytest.approx(math.sqrt(3))  # every eigenvector
    assert ecc(TWO_CLUSTERS, ecc_threshold=1e-9) >= 0.0


def test_equal_uncertainties_are_exact_ties_not_solver_noise():
    """Identical candidates at different k are equally certain: exactly equal values, so PRR sees a tie."""
    for name, certain in (("lexsim", 0.0), ("eigv", 1.0), ("ecc", 0.0), ("degmat", 0.0)):
        values = {estimate(name, np.ones((k, k))) for k in range(1, 11)}
        assert values == {certain}, (name, values)
    rng = np.random.default_rng(0)
    m = rng.random((6, 6))
    a = (m + m.T) / 2
    np.fill_diagonal(a, 1.0)
    p = rng.permutation(6)  # the same candidates in another order: the same value to the last bit
    for name in ("eigv", "ecc", "degmat", "lexsim"):
        assert estimate(name, a) == estimate(name, a[np.ix_(p, p)]), name


# --- estimators beyond the paper's four, stacks and the entry point by name --------------------------------

from lsplits.errors import ConfigError  # noqa: E402
from lsplits.uncertainty.estimators import (  # noqa: E402
    ESTIMATORS,
    EstimatorSettings,
    estimate_many,
    estimator_names,
    estimator_options,
    kle,
    luq,
)


def binary_entropy(p: float) -> float:
    return -(p * math.log(p) + (1 - p) * math.log(1 - p))


def test_luq_by_hand():
    s = np.array([[1.0, 0.8, 0.2], [0.6, 1.0, 0.4], [0.0, 0.2, 1.0]])
    # mean similarity of each candidate to the other two: 0.5, 0.5, 0.1 -> 1 - 1.1 / 3
    assert luq(s) == pytest.approx(1 - 1.1 / 3)
    assert luq([[1.0]]) == 0.0
    assert luq(np.ones((4, 4))) == pytest.approx(0.0)
    assert luq(np.eye(4)) == pytest.approx(1.0)
    sym = (s + s.T) / 2  # with the diagonal 1, LUQ = DegMat * k / (k - 1)
    assert luq(sym) == pytest.approx(degmat(sym) * 3 / 2)


def test_kle_two_candidates_by_hand():
    # W = 2A: L = [[2s, -2s], [-2s, 2s]] with eigenvalues 0 and 4s; K = expm(-tL) has equal diagonal (1 + e) / 2
    # with e = exp(-4ts), so the unit-trace kernel has eigenvalues 1 / (1 + e) and e / (1 + e)
    s, t = 0.5, 0.3
    e = math.exp(-4 * t * s)
    a = np.array([[1, s], [s, 1]])
    assert kle(a, kle_scale=False) == pytest.approx(binary_entropy(1 / (1 + e)))
    assert kle(a) == pytest.approx(binary_entropy(1 / (1 + e)) / math.log(2))
    assert kle(a, kle_t=1.0) == pytest.approx(binary_entropy(1 / (1 + math.exp(-2.0))) / math.log(2))
    # without normalisation the entropy is over the eigenvalues 1 and e of K itself
    assert kle(a, kle_normalize=False, kle_scale=False) == pytest.approx(-e * math.log(e))


@pytest.mark.parametrize("k", [2, 3, 6])
def test_kle_identical_and_invalid_candidates(k):
    # identical: L = 2(kI - J), eigenvalues 0 once and 2k (k - 1 times); unit-trace kernel: 1 and e = exp(-2tk)
    # (k - 1 times) over 1 + (k - 1) e
    e = math.exp(-2 * 0.3 * k)
    shares = np.array([1.0] + [e] * (k - 1)) / (1 + (k - 1) * e)
    assert kle(np.ones((k, k))) == pytest.approx(float(-(shares * np.log(shares)).sum()) / math.log(k))
    assert kle(np.eye(k)) == pytest.approx(1.0)  # all invalid: K = I, maximal entropy log k, scaled to 1
    assert kle(np.eye(k), kle_scale=False) == pytest.approx(math.log(k))
    assert kle(np.ones((k, k)), kle_t=50.0) == pytest.approx(0.0, abs=1e-9)  # the kernel tends to rank one


def test_kle_single_candidate_and_bad_t():
    assert kle([[1.0]]) == 0.0 and kle([[1.0]], kle_scale=False) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="^kle_t must be a number > 0"):
        kle(np.eye(2), kle_t=0.0)


def random_stack(n: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    stack = rng.random((n, k, k))
    stack[:, np.arange(k), np.arange(k)] = 1.0
    return stack


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_a_stack_gives_the_per_matrix_values(name):
    stack = random_stack(6, 5, seed=3)
    options = EstimatorSettings(sets_threshold=0.6).options(name)
    together = estimate(name, stack, **options)
    assert together.shape == (6,)
    assert together == pytest.approx([estimate(name, m, **options) for m in stack], abs=1e-12)


def test_estimate_many_mixes_sizes():
    matrices = [random_stack(1, k, seed=k)[0] for k in (3, 1, 5, 3)]
    values = estimate_many("kle", matrices)
    assert values == pytest.approx([kle(m) for m in matrices])


def test_estimate_by_name_and_its_options():
    a = np.array([[1, 0.5], [0.5, 1]])
    assert estimate("ECC", a, ecc_threshold=0.5) == pytest.approx(0.0, abs=1e-12) == ecc(a, ecc_threshold=0.5)
    assert estimator_options("ecc") == {"ecc_threshold": 0.9}
    assert estimator_options("kle") == {"kle_t": 0.3, "kle_normalize": True, "kle_scale": True}
    assert estimator_options("numsemsets") == {"sets_threshold": 0.85}
    with pytest.raises(ConfigError, match="estimator 'eigv' does not take option.*ecc_threshold"):
        estimate("eigv", a, ecc_threshold=0.5)
    with pytest.raises(ConfigError, match="estimator 'ecc' does not take option.*threshold.*takes: ecc_threshold"):
        estimate("ecc", a, threshold=0.5)
    with pytest.raises(ValueError, match="estimator must be one of lexsim, "):
        estimate("entropy", a)


def test_every_estimator_option_is_a_settings_field_of_the_same_name_and_default():
    """One name per option: an estimator's keyword is the EstimatorSettings field, ``lsplits ue``'s flag and the
    beam_uncertainty metric's keyword, with one default."""
    import dataclasses
    import inspect

    from lsplits.cli.parser import option_flags

    fields = {f.name: f.default for f in dataclasses.fields(EstimatorSettings)}
    flags = option_flags("ue")
    metric = inspect.signature(beam_uncertainty_outputs).parameters  # the metric module's keywords (test_metric_modules)
    taken = set()
    for name in estimator_names():
        for option, default in estimator_options(name).items():
            assert fields[option] == default, (name, option)
            assert metric[option].default == default, (name, option)
            taken.add(option)
    assert taken == set(fields)  # every field is some estimator's option
    assert {flags[f] for f in fields if f in flags} == {"--ecc-threshold", "--sets-threshold", "--kle-t", "--sar-t"}


def test_lexsim_takes_the_candidate_strings():
    # ROUGE-1 of "a b c" / "a b d": 2 of 3 unigrams, F = 2/3 -> 1 - 2/3; default ROUGE-L: LCS 2, the same
    assert estimate("lexsim", ["a b c", "a b d"], similarity="rouge1") == pytest.approx(1 / 3)
    assert estimate("lexsim", ["a b c", "a b d", "a b c"]) == pytest.approx(1 - (2 / 3 + 2 / 3 + 1) / 3)
    assert estimate("lexsim", ["only one"]) == 0.0
    with pytest.raises(ConfigError, match="similarity must be one of rouge1, .*, got 'smatchpp'"):
        estimate("lexsim", ["a", "b"], similarity="smatchpp")


def test_eigv_and_ecc_from_one_eigendecomposition_match_the_separate_estimators():
    from lsplits.uncertainty.estimators import ecc, eigv, eigv_and_ecc, spectral_many

    rng = np.random.default_rng(7)
    matrices = []
    for k in (1, 2, 3, 5, 5, 8):
        values = rng.random((k, k))
        values = (values + values.T) / 2
        np.fill_diagonal(values, 1.0)
        matrices.append(values)
    joint = spectral_many(matrices, 0.8)
    np.testing.assert_allclose(joint["eigv"], [eigv(m) for m in matrices], rtol=0, atol=1e-11)
    np.testing.assert_allclose(joint["ecc"], [ecc(m, 0.8) for m in matrices], rtol=0, atol=1e-11)
    assert eigv_and_ecc(np.eye(4)) == (4.0, pytest.approx(np.sqrt(3)))  # all invalid: the maxima
