"""S2Match (Opitz et al. 2020, "AMR Similarity Metrics from Principles"): Smatch with graded concepts.

Smatch counts an instance triple as matched only when the two concepts are identical. S2Match
credits similar concepts too (Opitz et al. 2020, following the reference code's defaults):

- identical concepts: 1;
- same lemma, different sense (``hit-01`` / ``hit-02``, or ``hit-01`` / ``hit``): 0.5;
- otherwise the cosine of the lemmas' embeddings if it is above the cutoff 0.5, multiplied by 0.5
  when either concept is a predicate (has a sense suffix such as ``-01``); else 0.

Everything else (triples, hill-climbing alignment, F1) is Smatch's: the alignment search of
:mod:`lsplits.similarity.amr.align` is simply given this concept score. Embeddings come from a pluggable
:class:`~lsplits.similarity.amr.embeddings.EmbeddingBackend`. Two are registered: ``s2match`` (``S2MATCH``)
has none, so it is Smatch plus half credit for sense-only differences; ``s2match-emb`` (``S2MATCH_EMB``,
built on first use) grades the other concept pairs with the offline all-MiniLM-L6-v2 of the ``embeddings``
extra. ``make_s2match(backend)`` builds one with any other backend (register it with
``lsplits.similarity.registry.register``).

An invalid output (scored as :data:`~lsplits.similarity.amr.graph.EMPTY_AMR`) matches nothing: 0, as
Smatch++ and SemBLEU score it, where Smatch's rules would credit its root triple against any reference.

Differences from the reference code (flipz357/amr-metric-suite, ``s2match.py``, GloVe vectors): a
multi-word lemma (``have-org-role``) is given to the backend as a phrase (``"have org role"``; the
dict backend sums its words, as the reference does for non-predicates), and the reference's GloVe
trick of adding the vector of ``lemma + "s"`` to a predicate's vector is not applied.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from lsplits.errors import InvalidInput
from lsplits.similarity.amr.align import MatchCounts, match_graphs, micro_f1, triple_count
from lsplits.similarity.amr.embeddings import EmbeddingBackend
from lsplits.similarity.amr.graph import EMPTY_AMR, AmrGraph, is_empty_stand_in, parse_amr
from lsplits.similarity.amr.smatch import DEFAULT_SEED
from lsplits.similarity.registry import Similarity

DEFAULT_CUTOFF = 0.5
DEFAULT_RESTARTS = 4
"""Random restarts after the smart start (the S2Match reference's 5 rounds); each graded climb costs more than
Smatch's, whose default was raised to match the official scorer's 20-restart search."""
DEFAULT_SENSE_WEIGHT = 0.5

_SENSE = re.compile(r"^(.+)-(\d+)$")


def split_sense(concept: str) -> tuple[str, bool]:
    """``"hit-01" -> ("hit", True)``; ``"boy" -> ("boy", False)``."""
    found = _SENSE.match(concept)
    return (found.group(1), True) if found else (concept, False)


def _cosine(first: np.ndarray, second: np.ndarray) -> float:
    norm = float(np.linalg.norm(first) * np.linalg.norm(second))
    return max(0.0, float(np.dot(first, second)) / norm) if norm > 0 else 0.0


class ConceptSimilarity:
    """The graded concept score of S2Match, cached per concept pair (symmetric)."""

    def __init__(self, backend: EmbeddingBackend | None = None, cutoff: float = DEFAULT_CUTOFF,
                 sense_weight: float = DEFAULT_SENSE_WEIGHT) -> None:
        self.backend = backend
        self.cutoff = cutoff
        self.sense_weight = sense_weight
        self._cache: dict[tuple[str, str], float] = {}

    @staticmethod
    def phrase(lemma: str) -> str:
        """Text given to the embedding backend: ``"have-org-role" -> "have org role"``."""
        return lemma.replace("-", " ")

    def __call__(self, concept_a: str, concept_b: str) -> float:
        if concept_a == concept_b:
            return 1.0
        key = (concept_a, concept_b) if concept_a < concept_b else (concept_b, concept_a)
        if key not in self._cache:
            self._cache[key] = self._score(concept_a, concept_b)
        return self._cache[key]

    def _score(self, concept_a: str, concept_b: str) -> float:
        lemma_a, predicate_a = split_sense(concept_a)
        lemma_b, predicate_b = split_sense(concept_b)
        predicate = predicate_a or predicate_b
        if predicate and lemma_a == lemma_b:
            return self.sense_weight
        if self.backend is None:
            return 0.0
        vector_a = self.backend.vector(self.phrase(lemma_a))
        vector_b = self.backend.vector(self.phrase(lemma_b))
        if vector_a is None or vector_b is None:
            return 0.0
        similarity = _cosine(vector_a, vector_b)
        if similarity <= self.cutoff:
            return 0.0
        return similarity * self.sense_weight if predicate else similarity


class S2MatchScorer:
    """Prepare / score / corpus-score functions of one S2Match setting (a class, so it pickles)."""

    def __init__(self, backend: EmbeddingBackend | None = None, cutoff: float = DEFAULT_CUTOFF,
                 sense_weight: float = DEFAULT_SENSE_WEIGHT, restarts: int = DEFAULT_RESTARTS,
                 seed: int = DEFAULT_SEED) -> None:
        self.backend = backend
        self.concept_score = ConceptSimilarity(backend, cutoff, sense_weight)
        self.restarts = restarts
        self.seed = seed

    def prepare(self, text: str) -> AmrGraph:
        """Parse a PENMAN string (raises InvalidOutput); embed its concepts' lemmas in one batch."""
        graph = parse_amr(text)
        if self.backend is not None:
            self.backend.warm(ConceptSimilarity.phrase(split_sense(concept)[0]) for concept in graph.concepts)
        return graph

    def counts(self, prediction: AmrGraph, reference: AmrGraph) -> MatchCounts:
        """Graded matched triples and each graph's triple count; none matched for an invalid output's stand-in."""
        if is_empty_stand_in(prediction) or is_empty_stand_in(reference):
            return MatchCounts(matched=0.0, total_a=triple_count(prediction), total_b=triple_count(reference))
        return match_graphs(prediction, reference, self.concept_score, restarts=self.restarts, seed=self.seed)

    def score(self, prediction: AmrGraph, reference: AmrGraph) -> float:
        """S2Match F1 in [0, 1]."""
        return self.counts(prediction, reference).f1

    def corpus_score(self, predictions: Sequence[AmrGraph], references: Sequence[AmrGraph]) -> float:
        """Micro-averaged corpus S2Match F1 (summed graded matches and triple counts)."""
        if len(predictions) != len(references):
            raise InvalidInput(f"{len(predictions)} predictions but {len(references)} references")
        return micro_f1([self.counts(p, r) for p, r in zip(predictions, references)])


def make_s2match(backend: EmbeddingBackend | None = None, *, cutoff: float = DEFAULT_CUTOFF,
                 sense_weight: float = DEFAULT_SENSE_WEIGHT, restarts: int = DEFAULT_RESTARTS,
                 seed: int = DEFAULT_SEED, name: str = "s2match", display_name: str = "S2match") -> Similarity:
    """Build an S2Match :class:`Similarity` with the given embedding backend and settings."""
    scorer = S2MatchScorer(backend, cutoff, sense_weight, restarts, seed)
    backend_name = backend.name if backend is not None else "none"
    return Similarity(
        invalid_stand_in=EMPTY_AMR,
        name=name,
        display_name=display_name,
        prepare=scorer.prepare,
        score=scorer.score,
        symmetric=False,
        description=f"S2Match (Opitz et al. 2020): Smatch with graded concepts, embeddings: {backend_name}",
        corpus_score=scorer.corpus_score,
        version="3",  # 2: the alignment also moves both ends of a relation; 3: an invalid output scores 0
        options={"embeddings": backend_name, "cutoff": cutoff, "sense_weight": sense_weight,
                 "restarts": restarts, "seed": seed},
    )


S2MATCH = make_s2match()
"""S2Match without embeddings (registered as ``s2match``)."""
_LAZY: dict[str, Similarity] = {}


def __getattr__(name: str) -> Similarity:
    """``S2MATCH_EMB`` (registered as ``s2match-emb``): S2Match on the MiniLM embeddings, built on first use, so
    that importing this module needs no ``embeddings`` extra (MissingExtra names it when it is missing)."""
    if name != "S2MATCH_EMB":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in _LAZY:
        from lsplits.similarity.amr.embeddings import MiniLMBackend

        _LAZY[name] = make_s2match(MiniLMBackend(), name="s2match-emb", display_name="S2match-emb")
    return _LAZY[name]
