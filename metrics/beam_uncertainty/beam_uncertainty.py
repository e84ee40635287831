"""Uncertainty of beam candidates from their similarities (LexSim, EigV, Ecc, DegMat, NumSemSets, LUQ, KLE, ...)
and, when given, the model's own scores of them (MSP, perplexity, token entropy; SAR, CoCoA, ...).

A thin evaluate wrapper over :mod:`lsplits.uncertainty.beam`; see README.md for the metric card.
The config name is the similarity function (``smatchpp``, ``smatch``, ``rougel``, ...).
"""

import evaluate

from lsplits.hub.metric_common import citation, metric_info
from lsplits.similarity.registry import from_config_name
from lsplits.uncertainty.beam import LEXICAL_SIMILARITY, beam_uncertainty_outputs, check_candidates
from lsplits.uncertainty.estimators import (
    DEFAULT_ECC_THRESHOLD,
    DEFAULT_KLE_NORMALIZE,
    DEFAULT_KLE_SCALE,
    DEFAULT_KLE_T,
    DEFAULT_SAR_T,
    DEFAULT_SETS_THRESHOLD,
    ESTIMATORS,
    GRAYBOX_ESTIMATORS,
    HYBRID_ESTIMATORS,
    PAPER_ESTIMATORS,
)

_DESCRIPTION = """\
Uncertainty of each example from its k beam candidates, without model probabilities: the more the
candidates disagree, the more uncertain. A similarity matrix between the candidates (the config
name chooses the similarity function; candidates it cannot parse get similarity 0) is turned into
one score per estimator: LexSim (1 - mean ROUGE-L between candidates, always lexical), EigV (sum
of max(0, 1 - eigenvalue) of the normalised graph Laplacian), Ecc (spread of the candidates in the
Laplacian eigenspace) and DegMat (1 - mean similarity), and on request NumSemSets, LabelProb and
semantic entropy (from the semantic sets: candidates equivalent at a similarity threshold), LUQ
(1 - mean similarity to the other candidates) and KLE (von Neumann entropy of a heat kernel).
Given the model's own scores of its candidates (log-probabilities, token counts, mean token entropies), also
the gray-box estimators (MSP, perplexity, mean token entropy, Monte-Carlo sequence entropy) and the hybrid
ones that combine scores and similarities (semantic entropy with probabilities, SentenceSAR, CoCoA).
Higher = more uncertain.
"""

_KWARGS_DESCRIPTION = f"""
Args:
    candidates (list of list of str): per example, its beam candidates (top-1 first); k may vary. Every candidate is
        a string ("" for an output the model did not give: counted invalid); anything else (None, a number, a list)
        is a ValueError naming the example and the candidate.
    estimators (list of str, default the paper's four {", ".join(map(repr, PAPER_ESTIMATORS))}, and with scores
        every estimator they allow): also {", ".join(repr(name) for name in ESTIMATORS if name not in PAPER_ESTIMATORS)};
        with logprobs / n_tokens / token_entropies the gray-box {", ".join(map(repr, GRAYBOX_ESTIMATORS))} and the
        hybrid {", ".join(map(repr, HYBRID_ESTIMATORS))} (over the config's similarity).
    logprobs (list of list of float, optional): per example, each candidate's sequence log-probability (sum of its
        tokens' natural-log probabilities, EOS included, <= 0), aligned with candidates.
    n_tokens (list of list of int, optional): per example, each candidate's token count (>= 1).
    token_entropies (list of list of float, optional): per example, each candidate's mean next-token entropy.
    sar_t (float > 0, default {DEFAULT_SAR_T}): SentenceSAR's temperature (LM-Polygraph's).
    ecc_threshold (float in (0, 2], default {DEFAULT_ECC_THRESHOLD}): Ecc keeps Laplacian eigenvectors with eigenvalue below it
        (out of range or NaN: ValueError, before any similarity is computed).
    sets_threshold (float, default {DEFAULT_SETS_THRESHOLD}): two candidates are in one semantic set when their
        similarity is at least this in both directions (numsemsets, labelprob, semantic_entropy).
    kle_t (float, default {DEFAULT_KLE_T}), kle_normalize (bool, default {DEFAULT_KLE_NORMALIZE}), kle_scale (bool, default {DEFAULT_KLE_SCALE}):
        KLE's heat-kernel time, unit-trace kernel, and division by log k (LM-Polygraph's defaults).
    lexical_similarity (str, default "{LEXICAL_SIMILARITY}"): LexSim's similarity: "rouge1", "rouge2", "rougel",
        "bleu", or "rouge1_stem", "rouge2_stem", "rougel_stem" with Porter stemming.
    workers (int, default 1): processes for the similarity matrices (0 = one per CPU core).
Returns:
    one list per requested estimator (one float per example), and
    invalid_candidates (list of int): per example, how many candidates the similarity could not parse.
Examples:
    >>> unc = evaluate.load("metrics/beam_uncertainty", "smatchpp")
    >>> out = unc.compute(candidates=[["(a / cat)", "(a / cat)"], ["(a / cat)", "(d / dog)"]],
    ...                   estimators=["degmat"])
    >>> out["degmat"]
    [0.0, 0.5]
    >>> out = unc.compute(candidates=[["(a / cat)", "(a / cat)"], ["(a / cat)", "(d / dog)"]],
    ...                   logprobs=[[-0.5, -1.5], [-2.0, -2.5]], estimators=["msp", "cocoa_msp"])
    >>> out["msp"], out["cocoa_msp"]
    ([0.5, 2.0], [0.0, 2.0])
"""

_CITATION = citation("lin2024generating")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BeamUncertainty(evaluate.Metric):
    """Per-example uncertainty of beam candidates; the config name is the similarity function."""

    def _info(self):
        from_config_name(self.config_name, LEXICAL_SIMILARITY)  # an unknown similarity is refused at load
        return metric_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, {"candidates": ["string"]},
                           ["https://openreview.net/forum?id=DWkJCSxKU5"])

    def add_batch(self, *, candidates=None, **kwargs):
        """Checked here, before evaluate's features cast a nested list or a number to a string (compute adds its
        inputs through this): InvalidInput naming the example and candidate."""
        if candidates is not None:
            check_candidates(candidates)
        return super().add_batch(candidates=candidates, **kwargs)

    def add(self, *, candidates=None, **kwargs):
        """One example's candidates, checked as :meth:`add_batch` checks them."""
        if candidates is not None:
            check_candidates([candidates])
        return super().add(candidates=candidates, **kwargs)

    def _compute(self, candidates, estimators=None, ecc_threshold=DEFAULT_ECC_THRESHOLD,
                 sets_threshold=DEFAULT_SETS_THRESHOLD, kle_t=DEFAULT_KLE_T,
                 kle_normalize=DEFAULT_KLE_NORMALIZE, kle_scale=DEFAULT_KLE_SCALE,
                 lexical_similarity=LEXICAL_SIMILARITY, workers=1, logprobs=None, n_tokens=None,
                 token_entropies=None, sar_t=DEFAULT_SAR_T):
        return beam_uncertainty_outputs(candidates, self.config_name, estimators=estimators,
                                        ecc_threshold=ecc_threshold, sets_threshold=sets_threshold, kle_t=kle_t,
                                        kle_normalize=kle_normalize, kle_scale=kle_scale,
                                        lexical_similarity=lexical_similarity,
                                        workers=workers, logprobs=logprobs, n_tokens=n_tokens,
                                        token_entropies=token_entropies, sar_t=sar_t)
