"""Tests for S2Match (lsplits.similarity.amr.s2match): graded concept matching on top of Smatch.

Hand-computed with Smatch's triple counts: two one-node graphs have 2 triples each (instance +
TOP), so F1 = (1 + concept score) / 2 when the roots are aligned.
"""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import pytest
from amr_helpers import brute_force_matches

from lsplits.similarity import registry as similarity
from lsplits.similarity.amr.embeddings import DictBackend, MiniLMBackend
from lsplits.similarity.amr.graph import parse_amr
from lsplits.similarity.amr.s2match import S2MATCH, ConceptSimilarity, make_s2match, split_sense
from lsplits.similarity.amr.smatch import SMATCH


def score(metric, a: str, b: str) -> float:
    return metric.score(metric.prepare(a), metric.prepare(b))


def test_registered_under_its_name():
    assert similarity.get("s2match") is S2MATCH
    assert S2MATCH.symmetric is False and S2MATCH.options["embeddings"] == "none"


def test_split_sense():
    assert split_sense("hit-01") == ("hit", True)
    assert split_sense("have-org-role-91") == ("have-org-role", True)
    assert split_sense("boy") == ("boy", False)
    assert split_sense("date-entity") == ("date-entity", False)


def test_sense_change_gets_half_credit_without_embeddings():
    # 4 triples each; Smatch matches 3, S2Match 3.5.
    a, b = "(w / want-01 :ARG0 (b / boy))", "(w / want-02 :ARG0 (b / boy))"
    assert score(SMATCH, a, b) == pytest.approx(0.75)
    assert score(S2MATCH, a, b) == pytest.approx(2 * 3.5 / 8)


def test_predicate_against_its_bare_lemma_gets_half_credit():
    assert score(S2MATCH, "(h / hit-01)", "(h / hit)") == pytest.approx((1 + 0.5) / 2)


def test_different_concepts_get_nothing_without_embeddings():
    assert score(S2MATCH, "(c / cat)", "(d / dog)") == pytest.approx(0.5)  # TOP only


def test_role_change_is_scored_as_in_smatch():
    a, b = "(w / want-01 :ARG0 (b / boy))", "(w / want-01 :ARG1 (b / boy))"
    assert score(S2MATCH, a, b) == score(SMATCH, a, b) == pytest.approx(0.75)


VECTORS = {"cat": [1.0, 0.0], "dog": [0.8, 0.6], "hit": [1.0, 0.0], "punch": [0.6, 0.8],
           "slap": [0.4, math.sqrt(1 - 0.16)], "even": [1.0, 1.0, 1.0, 1.0], "odd": [1.0, 0.0, 0.0, 0.0],
           "have": [1.0, 0.0], "role": [0.0, 1.0], "relation": [1.0, 1.0]}


def test_embedding_similarity_above_cutoff_is_credited():
    metric = make_s2match(DictBackend(VECTORS))
    assert score(metric, "(c / cat)", "(d / dog)") == pytest.approx((1 + 0.8) / 2)  # cos 0.8


def test_predicates_get_half_of_the_embedding_similarity():
    metric = make_s2match(DictBackend(VECTORS))
    assert score(metric, "(h / hit-01)", "(p / punch-01)") == pytest.approx((1 + 0.6 * 0.5) / 2)
    assert score(metric, "(h / hit-01)", "(p / punch)") == pytest.approx((1 + 0.6 * 0.5) / 2)


def test_similarity_at_or_below_the_cutoff_counts_nothing():
    metric = make_s2match(DictBackend(VECTORS))
    assert score(metric, "(h / hit)", "(s / slap)") == pytest.approx(0.5)  # cos 0.4
    assert score(metric, "(e / even)", "(o / odd)") == pytest.approx(0.5)  # cos exactly 0.5: not above
    lower = make_s2match(DictBackend(VECTORS), cutoff=0.3)
    assert score(lower, "(h / hit)", "(s / slap)") == pytest.approx((1 + 0.4) / 2)


def test_multi_word_concepts_sum_their_words():
    concept_score = ConceptSimilarity(DictBackend(VECTORS))
    # "have-role-91" -> "have role" -> (1, 1); "relation" -> (1, 1): cosine 1, predicate -> 0.5.
    assert concept_score("have-role-91", "relation") == pytest.approx(0.5)
    assert concept_score("relation", "have-role-91") == concept_score("have-role-91", "relation")


def test_unknown_words_count_nothing():
    assert ConceptSimilarity(DictBackend(VECTORS))("cat", "zebra") == 0.0


def test_graded_search_finds_the_brute_force_optimum():
    concept_score = ConceptSimilarity(DictBackend(VECTORS))
    metric = make_s2match(DictBackend(VECTORS))
    graphs = ["(h / hit-01 :ARG0 (c / cat) :ARG1 (d / dog))", "(p / punch-02 :ARG0 (d / dog) :ARG1 (c / cat))",
              "(h / hit-01 :ARG0 (c / cat) :ARG1 (c2 / cat))", "(s / slap-01 :ARG1 (d / dog :mod (c / cat)))"]
    for a, b in itertools.product(graphs, repeat=2):
        graph_a, graph_b = parse_amr(a), parse_amr(b)
        total = 2 * brute_force_matches(graph_a, graph_b, concept_score)
        expected = total / (graph_a.size + len(graph_a.relations) + graph_b.size + len(graph_b.relations) + 2)
        assert metric.score(graph_a, graph_b) == pytest.approx(expected), (a, b)


def test_corpus_score_sums_graded_matches():
    predictions = [S2MATCH.prepare("(w / want-01 :ARG0 (b / boy))"), S2MATCH.prepare("(c / cat)")]
    references = [S2MATCH.prepare("(w / want-02 :ARG0 (b / boy))"), S2MATCH.prepare("(c / cat)")]
    assert S2MATCH.corpus_score(predictions, references) == pytest.approx(2 * (3.5 + 2) / (8 + 4))


@pytest.fixture(scope="module")
def minilm(monkeypatch_module):
    monkeypatch_module.setenv("HF_HUB_OFFLINE", "1")
    return MiniLMBackend()


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.mark.slow
def test_minilm_backend_loads_offline_and_scores_by_cosine(minilm):
    cat, dog = minilm.vector("cat"), minilm.vector("dog")
    assert cat.shape == (384,) and np.linalg.norm(cat) == pytest.approx(1.0, abs=1e-5)
    cosine = float(np.dot(cat, dog))
    assert cosine > 0.5  # related animals are above S2Match's cutoff with this model
    metric = make_s2match(minilm)
    assert metric.options["embeddings"] == "all-minilm-l6-v2"
    assert score(metric, "(c / cat)", "(d / dog)") == pytest.approx((1 + cosine) / 2, rel=1e-5)
    # Predicates: half the cosine of the lemmas' embeddings, or nothing below the cutoff.
    run, walk = minilm.vector("run"), minilm.vector("walk")
    expected = float(np.dot(run, walk)) * 0.5 if float(np.dot(run, walk)) > 0.5 else 0.0
    assert ConceptSimilarity(minilm)("run-01", "walk-01") == pytest.approx(expected, rel=1e-5)


def test_pickles_for_worker_processes():
    copy = pickle.loads(pickle.dumps(S2MATCH))
    a, b = "(w / want-01 :ARG0 (b / boy))", "(w / want-02 :ARG0 (b / boy))"
    assert score(copy, a, b) == score(S2MATCH, a, b) == pytest.approx(0.875)


def test_an_invalid_output_scores_zero_as_smatchpp_and_sembleu_score_it():
    """S2Match credited the stand-in graph's root triple (0.133 for a garbage string, 0.128 for 12/12 invalid
    outputs); it now scores it 0 like the other quality metrics, and counts its reference triples as missed."""
    from lsplits.uncertainty.quality import similarity_outputs

    reference = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"  # 3 instances, TOP, 3 relations
    predictions = ["this is no graph", "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))", "(x"]
    results = {name: similarity_outputs(name, predictions, [reference] * 3, default="smatchpp")
               for name in ("s2match", "smatchpp", "sembleu")}
    for name, result in results.items():
        assert result[f"{name}_scores"][0] == result[f"{name}_scores"][2] == 0.0, name
        assert result[f"{name}_scores"][1] == pytest.approx(1.0), name
        assert result[f"{name}_invalid_predictions"] == 2
    # micro F1: 7 matched of 7 + 7 triples for the valid one; each invalid adds 2 + 7 triples and no match
    assert results["s2match"]["s2match"] == pytest.approx(2 * 7 / (14 + 2 * 9))
    assert score(S2MATCH, "(a / amr-empty)", reference) == 0.0


@pytest.mark.slow
def test_s2match_emb_is_registered_and_grades_concepts_with_the_offline_minilm(minilm):
    """The README's `embeddings` extra is S2Match's: `s2match-emb` uses the MiniLM it ships, `s2match` none."""
    emb = similarity.get("s2match-emb")
    assert emb.options["embeddings"] == "all-minilm-l6-v2" and similarity.get("s2match").options["embeddings"] == "none"
    cosine = float(np.dot(minilm.vector("cat"), minilm.vector("dog")))
    assert score(emb, "(c / cat)", "(d / dog)") == pytest.approx((1 + cosine) / 2, rel=1e-5)
    assert score(S2MATCH, "(c / cat)", "(d / dog)") == pytest.approx(0.5)  # TOP only
    assert score(emb, "(a / amr-empty)", "(c / cat)") == 0.0
    copy = pickle.loads(pickle.dumps(emb))  # to a matrix worker, without the loaded model
    assert score(copy, "(c / cat)", "(d / dog)") == pytest.approx(score(emb, "(c / cat)", "(d / dog)"))
