"""Gray-box and hybrid uncertainty estimators: the model's own scores of its candidates, alone or with a similarity matrix.

Inputs per example, aligned with its k candidates (best first; what ``generate_beams(..., return_scores=True)``
records, :data:`lsplits.generation.scores.SCORE_FIELDS`): ``logprobs`` l_j (sum of the natural-log
probabilities of the candidate's tokens, EOS included), ``n_tokens`` n_j and ``token_entropies`` h_j (mean
entropy of the next-token distribution over the candidate's positions); the hybrid estimators also take the
similarity matrix S of :mod:`lsplits.uncertainty.matrix`. Candidate 0 is the top-1. Each function takes one
example (``(k,)`` scores, a ``(k, k)`` matrix: a float back) or a stack of one size (``(n, k)`` and
``(n, k, k)``: one value per example, in one vectorised pass); :func:`scored_many` takes examples whose k
differs. Higher means more uncertain. Every definition is LM-Polygraph 0.7's (``benchmarks/vs_lm_polygraph.py``
compares them on the same numbers):

Gray-box (:data:`GRAYBOX_ESTIMATORS`, scores only):

- ``msp``: -l_0 (MaximumSequenceProbability).
- ``perplexity``: -l_0 / n_0, the mean negative log-likelihood per token, EOS included (Perplexity; like
  LM-Polygraph it is the log of the perplexity, which ranks the same).
- ``mean_token_entropy``: h_0 (MeanTokenEntropy).
- ``mc_sequence_entropy``: -(1/k) sum_j l_j (MonteCarloSequenceEntropy).

Hybrid (:data:`HYBRID_ESTIMATORS`, scores and the similarity matrix):

- ``semantic_entropy_prob``: semantic entropy with sequence probabilities (Kuhn et al. 2023; LM-Polygraph's
  SemanticEntropy with its defaults, class probabilities "sum" and entropy estimation "mean"). The classes
  are the semantic sets of :mod:`.semantic_sets` (candidates whose similarity is >= ``sets_threshold`` both ways,
  joined transitively); a class's log-probability is L_c = logsumexp of its members' l_j, and the value is
  -(1/k) sum_j L_c(j), each candidate contributing its class's log-probability.
  (``semantic_entropy_counts`` in :mod:`.semantic_sets` is the count-based form.)
- ``sentence_sar``: SentenceSAR (Duan et al. 2024): with p_j = exp(l_j), the relevance-shifted probability
  of candidate j is p_j + (1/t) sum_{l != j} S[j, l] p_l, and the value is the mean over j of minus its log;
  t (``sar_t``) defaults to LM-Polygraph's 0.001. Row j of S is used as given (LM-Polygraph's matrix has the same
  orientation) and its diagonal is not read.
- ``cocoa_msp``, ``cocoa_ppl``, ``cocoa_mte``: CoCoA (CocoaMSP, CocoaPPL, CocoaMTE): msp, perplexity or
  mean_token_entropy of the top-1 times d, its mean dissimilarity to the other candidates,
  d = mean_{l >= 1} (1 - (S[0, l] + S[l, 0]) / 2) (LM-Polygraph averages the two directions of its
  cross-encoder, as here).

Beams are not samples, and lsplits takes the scores as given, as LM-Polygraph does: no renormalisation over
the k candidates. The sequence probabilities of k beams sum to less than 1 and are the k largest the search
found, so ``mc_sequence_entropy`` and ``semantic_entropy_prob`` are then not Monte-Carlo estimates of an
entropy but deterministic functions of the top of the distribution (they still rank examples by how much
probability mass the model puts on its best candidates, which is the point); renormalising would discard
exactly that absolute level (k equally likely beams would score log k whether each had probability 0.2 or
1e-9). For sampled candidates the top-1 is the first draw (``generate_beams`` keeps the draw order), a sample
rather than LM-Polygraph's separate greedy decode, so msp, perplexity, mean_token_entropy and the CoCoA
estimators describe that sample. LM-Polygraph compares its greedy output with k further samples in CoCoA;
here the top-1 is one of the k candidates and is compared with the other k - 1 (its self-similarity 1 is
not counted).

Duplicates (common when sampling) are kept and counted as separate candidates everywhere, as LM-Polygraph
does by default: ``mc_sequence_entropy`` and ``sentence_sar`` average over every draw; in
``semantic_entropy_prob`` a duplicated candidate adds its probability to its class once per copy
(LM-Polygraph's ``use_unique_responses`` would count it once, but it needs the strings, which these
functions do not see); in CoCoA a duplicate of the top-1 counts as one agreeing candidate per copy.

Edge cases: k = 1 gives mc_sequence_entropy = msp, semantic_entropy_prob = msp (one class, one member),
sentence_sar = msp (no other candidate), and the CoCoA estimators 0 (d = 0: no disagreement is observable,
as LexSim gives 0; LM-Polygraph averages over no samples: NaN). Identical candidates (S all ones, equal
scores) give d = 0, so CoCoA 0, and one class holding all k. Where a probability underflows (a long
candidate, l_j < -745), LM-Polygraph's SentenceSAR takes log(0) = inf; lsplits computes the same value in
log space (a weighted logsumexp), so it stays finite and exact.

Checks (:class:`~lsplits.errors.InvalidInput`, naming the argument, example and candidate, before any
computation): the score lists must have one value per candidate (and match the matrix), log-probabilities must
be finite and <= 0, token counts whole numbers >= 1, token entropies finite and >= 0. Values are rounded to
12 decimals like every estimator's (:func:`lsplits.uncertainty._stacks.rounded`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from lsplits.errors import InvalidInput
from lsplits.generation.scores import SCORE_FIELDS
from lsplits.params import check
from lsplits.uncertainty._stacks import as_stack, one_or_many, rounded
from lsplits.uncertainty.semantic_sets import DEFAULT_SETS_THRESHOLD, set_labels

DEFAULT_SAR_T = 0.001
"""SentenceSAR's temperature, LM-Polygraph 0.7's value (``SentenceSAR().t``)."""

_KINDS = {"logprobs": "a log-probability", "n_tokens": "a token count", "token_entropies": "a mean token entropy"}


def _where(argument: str, index: tuple[int, ...], single: bool, examples: Sequence[int] | None) -> str:
    """``logprobs of example 3, candidate 1`` (``examples`` maps a stack row to the caller's example number)."""
    row, column = index
    if single:
        return f"{argument}, candidate {column}"
    return f"{argument} of example {examples[row] if examples is not None else row}, candidate {column}"


def _scores(values: object, argument: str) -> tuple[np.ndarray, bool]:
    """A score list ``(k,)`` or stack ``(n, k)`` as floats, and whether it was one example."""
    if values is None:
        raise InvalidInput(f"{argument} is missing: give one value per candidate")
    if isinstance(values, (str, bytes)):
        raise InvalidInput(f"{argument} must be numbers, one per candidate, got the string {values!r}")
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInput(f"{argument} must be numbers, one per candidate (examples whose number of candidates "
                           "differs go to scored_many / estimate_many)") from None
    single = array.ndim == 1
    if single:
        array = array[None]
    if array.ndim != 2:
        raise InvalidInput(f"{argument} must be one value per candidate, shape (k,) or (n, k), got shape "
                           f"{np.shape(values)}")
    if array.shape[1] == 0:
        raise InvalidInput(f"{argument} needs at least one candidate")
    return array, single


def _first_bad(bad: np.ndarray) -> tuple[int, int] | None:
    positions = np.argwhere(bad)
    return (int(positions[0][0]), int(positions[0][1])) if len(positions) else None


def _rules(name: str, array: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """(where ``array`` breaks the rule, what the rule says) for each rule of score field ``name``."""
    rules = [(~np.isfinite(array), "must be a finite number")]
    if name == "logprobs":
        rules.append((array > 0, "must be <= 0 (a sum of log-probabilities; a probability or a length-penalised "
                                 "beam score is not one)"))
    elif name == "n_tokens":
        rules += [(array < 1, "must be >= 1 (every candidate has at least one token)"),
                  (array != np.round(array), "must be a whole number")]
    else:
        rules.append((array < 0, "must be >= 0 (an entropy)"))
    return rules


def score_problem(name: str, values: object) -> str | None:
    """What is wrong with one candidate list's ``values`` of score field ``name`` (``candidate 2 is 0.5: a
    log-probability must be <= 0``), or None: the rules the estimators check, for readers of files to say first."""
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        return f"must be a list of numbers, one per candidate, got {str(values)[:40]}"
    if array.ndim != 1 or isinstance(values, (str, bytes)):
        return f"must be a list of numbers, one per candidate, got {str(values)[:40]}"
    for bad, problem in _rules(name, array):
        where = np.flatnonzero(bad)
        if where.size:
            return f"candidate {where[0]} is {array[where[0]]:g}: {_KINDS[name]} {problem}"
    return None


def _check_values(name: str, array: np.ndarray, single: bool, examples: Sequence[int] | None) -> None:
    """InvalidInput naming the first value of ``array`` that score field ``name`` cannot hold."""
    for bad, problem in _rules(name, array):
        where = _first_bad(bad)
        if where is not None:
            raise InvalidInput(f"{_where(name, where, single, examples)} is {array[where]:g}: "
                               f"{_KINDS[name]} {problem}")


@dataclass(frozen=True)
class _Inputs:
    """Checked inputs of one call: score stacks ``(n, k)``, the matrix stack ``(n, k, k)`` if given, single flag."""

    scores: dict[str, np.ndarray]
    matrix: np.ndarray | None
    single: bool


def _inputs(matrix: object = None, **fields: object) -> _Inputs:
    """Every argument checked and stacked; the shapes must agree (one value per candidate, per example)."""
    scores: dict[str, np.ndarray] = {}
    single = True
    for name, values in fields.items():
        array, one = _scores(values, name)
        if scores:
            first, reference = next(iter(scores.items()))
            if one != single or array.shape != reference.shape:
                raise InvalidInput(f"{name} has shape {np.shape(values)} but {first} has shape "
                                   f"{reference.shape[1:] if single else reference.shape}: give one value per "
                                   "candidate of each example")
        _check_values(name, array, one, None)
        scores[name], single = array, one
    stack = None
    if matrix is not None:
        stack, matrix_single = as_stack(matrix)
        first, reference = next(iter(scores.items()))
        if matrix_single != single or stack.shape[:2] != reference.shape:
            raise InvalidInput(f"{first} has shape {reference.shape[1:] if single else reference.shape} but the "
                               f"similarity matrix has shape {stack.shape[1:] if matrix_single else stack.shape}: "
                               "give one value per candidate (row) of the matrix")
    return _Inputs(scores, stack, single)


def _logsumexp(terms: np.ndarray) -> np.ndarray:
    """log(sum(exp)) over the last axis, where -inf terms (zero weights) drop out; each row has a finite term."""
    return logsumexp(terms, axis=-1)


def _top_dissimilarity(matrix: np.ndarray) -> np.ndarray:
    """d per matrix: mean over the other candidates of 1 - the top-1's similarity, both directions averaged."""
    k = matrix.shape[-1]
    if k == 1:
        return np.zeros(matrix.shape[0])
    both = (matrix[:, 0, 1:] + matrix[:, 1:, 0]) / 2
    return (1.0 - both).mean(axis=-1)


def msp(logprobs) -> float | np.ndarray:
    """Minus the top-1 candidate's log-probability (LM-Polygraph's MaximumSequenceProbability)."""
    given = _inputs(logprobs=logprobs)
    return one_or_many(rounded(-given.scores["logprobs"][:, 0]), given.single)


def perplexity(logprobs, n_tokens) -> float | np.ndarray:
    """The top-1's mean negative log-likelihood per token, EOS included (LM-Polygraph's Perplexity)."""
    given = _inputs(logprobs=logprobs, n_tokens=n_tokens)
    return one_or_many(rounded(-given.scores["logprobs"][:, 0] / given.scores["n_tokens"][:, 0]), given.single)


def mean_token_entropy(token_entropies) -> float | np.ndarray:
    """The top-1's mean next-token entropy (LM-Polygraph's MeanTokenEntropy)."""
    given = _inputs(token_entropies=token_entropies)
    return one_or_many(rounded(given.scores["token_entropies"][:, 0]), given.single)


def mc_sequence_entropy(logprobs) -> float | np.ndarray:
    """Minus the mean log-probability of the k candidates (LM-Polygraph's MonteCarloSequenceEntropy)."""
    given = _inputs(logprobs=logprobs)
    return one_or_many(rounded(-given.scores["logprobs"].mean(axis=-1)), given.single)


def semantic_entropy_prob(matrix, logprobs, sets_threshold: float = DEFAULT_SETS_THRESHOLD) -> float | np.ndarray:
    """Semantic entropy from sequence probabilities: -(1/k) sum_j logsumexp of candidate j's class members' l."""
    given = _inputs(matrix, logprobs=logprobs)
    values = given.scores["logprobs"]
    labels = set_labels(given.matrix, sets_threshold)  # (n, k): each candidate's class, named by its first member
    own_class = labels[:, :, None] == labels[:, None, :]  # (n, j, l): l is in candidate j's class
    own = _logsumexp(np.where(own_class, values[:, None, :], -np.inf))  # L_c(j), per candidate j
    return one_or_many(rounded(-own.mean(axis=-1)), given.single)


def sentence_sar(matrix, logprobs, sar_t: float = DEFAULT_SAR_T) -> float | np.ndarray:
    """SentenceSAR: mean over candidates of -log(p_j + sum_{l != j} S[j, l] p_l / t), t = ``sar_t`` (> 0: it divides
    the similarity-weighted probabilities), computed in log space."""
    t = check("sar_t", sar_t)
    given = _inputs(matrix, logprobs=logprobs)
    values, similarity = given.scores["logprobs"], given.matrix
    k = values.shape[-1]
    with np.errstate(divide="ignore"):  # a similarity of 0 weighs nothing: log 0 = -inf drops out
        log_weights = np.log(similarity) - np.log(t)
    log_weights[:, np.arange(k), np.arange(k)] = 0.0  # candidate j's own probability, unweighted
    shifted = _logsumexp(values[:, None, :] + log_weights)
    return one_or_many(rounded(-shifted.mean(axis=-1)), given.single)


def cocoa_msp(matrix, logprobs) -> float | np.ndarray:
    """CoCoA-MSP: msp of the top-1 times its mean dissimilarity to the other candidates (LM-Polygraph's CocoaMSP)."""
    given = _inputs(matrix, logprobs=logprobs)
    return one_or_many(rounded(-given.scores["logprobs"][:, 0] * _top_dissimilarity(given.matrix)), given.single)


def cocoa_ppl(matrix, logprobs, n_tokens) -> float | np.ndarray:
    """CoCoA-PPL: perplexity of the top-1 times its mean dissimilarity to the others (LM-Polygraph's CocoaPPL)."""
    given = _inputs(matrix, logprobs=logprobs, n_tokens=n_tokens)
    ppl = -given.scores["logprobs"][:, 0] / given.scores["n_tokens"][:, 0]
    return one_or_many(rounded(ppl * _top_dissimilarity(given.matrix)), given.single)


def cocoa_mte(matrix, token_entropies) -> float | np.ndarray:
    """CoCoA-MTE: mean token entropy of the top-1 times its mean dissimilarity to the others (CocoaMTE)."""
    given = _inputs(matrix, token_entropies=token_entropies)
    return one_or_many(rounded(given.scores["token_entropies"][:, 0] * _top_dissimilarity(given.matrix)),
                       given.single)


# ------------------------------------------------------------------------------------------------------
# The registry: which data each estimator reads, and calls by name with the scores of beams-file rows.

@dataclass(frozen=True)
class ScoredEstimator:
    """A gray-box or hybrid estimator: its function, the score fields it reads and whether it reads a matrix."""

    function: Callable[..., float | np.ndarray]
    fields: tuple[str, ...]
    matrix: bool

    def options(self) -> dict[str, object]:
        """Its options with their defaults (the parameters that are neither the matrix nor a score field)."""
        return {p.name: p.default for p in inspect.signature(self.function).parameters.values()
                if p.name != "matrix" and p.name not in SCORE_FIELDS}


SCORED_ESTIMATORS: dict[str, ScoredEstimator] = {
    "msp": ScoredEstimator(msp, ("logprobs",), False),
    "perplexity": ScoredEstimator(perplexity, ("logprobs", "n_tokens"), False),
    "mean_token_entropy": ScoredEstimator(mean_token_entropy, ("token_entropies",), False),
    "mc_sequence_entropy": ScoredEstimator(mc_sequence_entropy, ("logprobs",), False),
    "semantic_entropy_prob": ScoredEstimator(semantic_entropy_prob, ("logprobs",), True),
    "sentence_sar": ScoredEstimator(sentence_sar, ("logprobs",), True),
    "cocoa_msp": ScoredEstimator(cocoa_msp, ("logprobs",), True),
    "cocoa_ppl": ScoredEstimator(cocoa_ppl, ("logprobs", "n_tokens"), True),
    "cocoa_mte": ScoredEstimator(cocoa_mte, ("token_entropies",), True),
}
GRAYBOX_ESTIMATORS = tuple(name for name, e in SCORED_ESTIMATORS.items() if not e.matrix)
"""Estimators over the candidates' scores alone."""
HYBRID_ESTIMATORS = tuple(name for name, e in SCORED_ESTIMATORS.items() if e.matrix)
"""Estimators over the scores and the similarity matrix."""
SCORED_DISPLAY_NAMES = {"msp": "MSP", "perplexity": "PPL", "mean_token_entropy": "MTE",
                        "mc_sequence_entropy": "MCSE", "semantic_entropy_prob": "SemEntProb",
                        "sentence_sar": "SentenceSAR", "cocoa_msp": "CocoaMSP", "cocoa_ppl": "CocoaPPL",
                        "cocoa_mte": "CocoaMTE"}
"""Report labels (no hyphen: a report's method label is ``<estimator>-<similarity>``)."""


def score_fields(scores: object, fields: Sequence[str], estimator: str, where: str = "scores") -> dict[str, object]:
    """The ``fields`` of ``scores`` (a beams-file row or any mapping, or a :class:`~lsplits.generation.scores.Scored`);
    ``where`` names it in the error (``scores of example 3``)."""
    if scores is None and where == "scores":
        raise InvalidInput(f"estimator {estimator!r} needs the candidates' scores ({', '.join(fields)}): pass "
                           "scores=, e.g. a beams row written with scores or generate_beams(..., return_scores=True)")
    found = {}
    for name in fields:
        value = scores.get(name) if isinstance(scores, Mapping) else getattr(scores, name, None)
        if isinstance(value, np.ndarray) and value.size == 0:
            value = None
        if value is None or (isinstance(value, (list, tuple)) and not value):
            raise InvalidInput(f"estimator {estimator!r} needs the candidates' {name}, and {where} has none "
                               "(generate the candidates with return_scores=True; lsplits beams writes them)")
        found[name] = value
    return found


def estimate_scored(name: str, matrix: object, scores: object, **options: object) -> float | np.ndarray:
    """The estimator ``name`` of :data:`SCORED_ESTIMATORS` on one example or a stack (options already checked)."""
    estimator = SCORED_ESTIMATORS[name]
    data = score_fields(scores, estimator.fields, name)
    if estimator.matrix:
        if matrix is None:
            raise InvalidInput(f"estimator {name!r} needs the similarity matrix of the candidates as well as their "
                               "scores")
        data["matrix"] = matrix
    return estimator.function(**data, **options)


def scored_many(name: str, scores: Sequence[object], matrices: Sequence[object] | None = None,
                **options: object) -> np.ndarray:
    """One value per example of a list whose numbers of candidates may differ (each size one vectorised stack).

    ``scores`` holds one entry per example (a beams-file row, mapping or Scored); ``matrices`` one similarity
    matrix per example for the hybrid estimators. A bad value is named by its example's position in the list.
    """
    estimator = SCORED_ESTIMATORS[name]
    if scores is None:
        raise InvalidInput(f"estimator {name!r} needs the candidates' scores ({', '.join(estimator.fields)}): pass "
                           "scores=, one entry per example (a beams row written with scores, a Scored)")
    if isinstance(scores, (str, bytes, Mapping)) or not isinstance(scores, Sequence):
        raise InvalidInput("scores must be a list with one entry (the scores of its candidates) per example")
    if estimator.matrix:
        if matrices is None:
            raise InvalidInput(f"estimator {name!r} needs one similarity matrix per example as well as the scores")
        if len(matrices) != len(scores):
            raise InvalidInput(f"{len(scores)} examples have scores but {len(matrices)} have a similarity matrix")
    rows = [score_fields(entry, estimator.fields, name, f"the scores of example {i}") for i, entry in enumerate(scores)]
    by_size: dict[int, list[int]] = {}
    for index, row in enumerate(rows):
        values = row[estimator.fields[0]]
        size = len(values) if not isinstance(values, (str, bytes)) and np.ndim(values) == 1 else -1
        by_size.setdefault(size, []).append(index)
    out = np.empty(len(rows))
    for size, positions in by_size.items():
        if size < 0:
            raise InvalidInput(f"{estimator.fields[0]} of example {positions[0]} must be a list of numbers, one per "
                               "candidate")
        fields = {}
        for field in estimator.fields:
            column = [rows[i][field] for i in positions]
            for i, values in zip(positions, column):
                if np.ndim(values) != 1 or len(values) != size:
                    raise InvalidInput(f"{field} of example {i} has {np.shape(values)} values but "
                                       f"{estimator.fields[0]} has {size}: give one value per candidate")
            try:
                fields[field] = np.asarray(column, dtype=float)
            except (TypeError, ValueError):
                raise InvalidInput(f"{field} must be numbers, one per candidate (examples {positions[0]} and "
                                   f"on with {size} candidates)") from None
        for field, values in fields.items():  # named by the example's position in the whole list
            _check_values(field, values, False, positions)
        data: dict[str, object] = dict(fields)
        if estimator.matrix:
            stack = [np.asarray(matrices[i], dtype=float) for i in positions]
            for i, m in zip(positions, stack):
                if m.shape != (size, size):
                    raise InvalidInput(f"the similarity matrix of example {i} has shape {m.shape} but its scores "
                                       f"have {size} values: give one value per candidate (row) of the matrix")
            data["matrix"] = np.stack(stack)
        out[positions] = estimator.function(**data, **options)
    return out
