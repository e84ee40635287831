"""LM-Polygraph's side of benchmarks/vs_lm_polygraph.py: run its functions on saved inputs, time them.

Runs in the benchmark's own virtual environment (lm-polygraph==0.7.0), never in lsplits' one, and
imports nothing from lsplits. LM-Polygraph's package ``__init__`` files import every model adapter
(OpenAI clients, transformers models, vLLM hooks), none of which the measured functions use, so this
script registers empty package objects for ``lm_polygraph`` and its subpackages, plus a stand-in for
``lm_polygraph.utils.model`` (whose classes the stat calculators name only in type hints), and then
imports the modules that define the measured functions; their code runs unchanged.

    python lm_polygraph_side.py FOLDER   (reads FOLDER/inputs.npz and texts.json, writes FOLDER/lmpg.npz, lmpg.json)
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types
import warnings
from pathlib import Path

import numpy as np
from timing import Recorder


def _bare_packages() -> None:
    root = Path(importlib.util.find_spec("lm_polygraph").submodule_search_locations[0])
    for name in ("lm_polygraph", "lm_polygraph.estimators", "lm_polygraph.ue_metrics", "lm_polygraph.normalizers",
                 "lm_polygraph.utils", "lm_polygraph.stat_calculators"):
        module = types.ModuleType(name)
        module.__path__ = [str(root.joinpath(*name.split(".")[1:]))]
        sys.modules[name] = module
    model = types.ModuleType("lm_polygraph.utils.model")
    model.Model = type("Model", (), {})
    model.WhiteboxModel = type("WhiteboxModel", (model.Model,), {})
    sys.modules["lm_polygraph.utils.model"] = model


def main(folder: Path) -> None:
    _bare_packages()
    warnings.simplefilter("ignore")  # NLTK's zero-overlap warnings, log(0) of the LUQ logits
    from lm_polygraph.estimators.cocoa import CocoaMSP, CocoaMTE, CocoaPPL
    from lm_polygraph.estimators.deg_mat import DegMat
    from lm_polygraph.estimators.eccentricity import Eccentricity
    from lm_polygraph.estimators.eig_val_laplacian import EigValLaplacian
    from lm_polygraph.estimators.kernel_language_entropy import KernelLanguageEntropy
    from lm_polygraph.estimators.label_prob import LabelProb
    from lm_polygraph.estimators.lexical_similarity import LexicalSimilarity
    from lm_polygraph.estimators.luq import LUQ
    from lm_polygraph.estimators.max_probability import MaximumSequenceProbability
    from lm_polygraph.estimators.monte_carlo_sequence_entropy import MonteCarloSequenceEntropy
    from lm_polygraph.estimators.num_sem_sets import NumSemSets
    from lm_polygraph.estimators.perplexity import Perplexity
    from lm_polygraph.estimators.semantic_entropy import SemanticEntropy
    from lm_polygraph.estimators.sentence_sar import SentenceSAR
    from lm_polygraph.estimators.token_entropy import MeanTokenEntropy
    from lm_polygraph.normalizers.binned_pcc import BinnedPCCNormalizer
    from lm_polygraph.normalizers.isotonic_pcc import IsotonicPCCNormalizer
    from lm_polygraph.normalizers.minmax import MinMaxNormalizer
    from lm_polygraph.normalizers.quantile import QuantileNormalizer
    from lm_polygraph.stat_calculators.semantic_classes import SemanticClassesCalculator
    from lm_polygraph.ue_metrics.ece import ECE
    from lm_polygraph.ue_metrics.kendalltau import KendallTauCorrelation
    from lm_polygraph.ue_metrics.pr_auc import PRAUC
    from lm_polygraph.ue_metrics.pred_rej_area import PredictionRejectionArea
    from lm_polygraph.ue_metrics.rev_pairs_prop import ReversedPairsProportion
    from lm_polygraph.ue_metrics.risk_cov_curve import RiskCoverageCurveAUC
    from lm_polygraph.ue_metrics.roc_auc import ROCAUC
    from lm_polygraph.ue_metrics.spearmanr import SpearmanRankCorrelation
    from lm_polygraph.ue_metrics.ue_metric import get_random_scores, normalize, normalize_metric

    data = dict(np.load(folder / "inputs.npz"))
    texts = json.loads((folder / "texts.json").read_text(encoding="utf-8"))
    threshold = float(data["threshold"])
    recorder = Recorder()
    record, out, seconds = recorder.record, recorder.values, recorder.seconds

    def matrix_stats(m: np.ndarray, contra: np.ndarray | None = None) -> dict:
        return {"semantic_matrix_entail": m, "semantic_matrix_contra": contra if contra is not None else 1 - m,
                "sample_texts": [["x"] * m.shape[-1]] * m.shape[0]}

    def classes(m: np.ndarray) -> dict:
        calculator = SemanticClassesCalculator()
        found = calculator({"semantic_matrix_classes": (m >= threshold).astype(int), "entailment_id": 1,
                            "sample_texts": [["x"] * m.shape[-1]] * m.shape[0]}, [], None)
        return found["semantic_classes_entail"]

    def given_classes(labels: np.ndarray) -> dict:
        """LM-Polygraph's class tables for the semantic sets lsplits found (to compare the formulas alone)."""
        to_class, to_sample = {}, {}
        for i, row in enumerate(labels):
            names, index = np.unique(row, return_inverse=True)
            to_class[i] = {j: int(index[j]) for j in range(row.size)}
            to_sample[i] = [list(np.flatnonzero(index == c)) for c in range(names.size)]
        return {"sample_to_class": to_class, "class_to_sample": to_sample}

    for stack in ("random", "clustered", "edge5", "edge1"):
        m = data[f"matrices_{stack}"]
        suffix = "" if stack == "random" else f"@{stack}"
        texts_of = [["x"] * m.shape[-1]] * m.shape[0]
        stats = matrix_stats(m)
        record(f"eigv{suffix}", EigValLaplacian(), stats)
        record(f"ecc{suffix}", Eccentricity(thres=0.9), stats)
        record(f"degmat{suffix}", DegMat(), stats)
        sets = matrix_stats(m, np.full(m.shape, np.nextafter(threshold, -np.inf)))  # S > that  <=>  S >= threshold
        record(f"numsemsets{suffix}", NumSemSets(), sets)
        frequency = SemanticEntropy(class_probability_estimation="frequency")
        # LM-Polygraph's sets come from its stat calculator: its time counts, as lsplits' counts finding the sets
        record(f"labelprob{suffix}", lambda x: LabelProb()({"semantic_classes_entail": classes(x)}), m)
        record(f"semantic_entropy{suffix}",
               lambda x, f=frequency, t=texts_of: f({"semantic_classes_entail": classes(x), "sample_texts": t}), m)
        ours = given_classes(data[f"labels_{stack}"])
        out[f"labelprob_given_sets{suffix}"] = np.asarray(LabelProb()({"semantic_classes_entail": ours}))
        out[f"semantic_entropy_given_sets{suffix}"] = np.asarray(
            frequency({"semantic_classes_entail": ours, "sample_texts": texts_of}))
        with np.errstate(divide="ignore"):
            logits = {"semantic_matrix_entail_logits": np.log(m), "semantic_matrix_contra_logits": np.log(1 - m)}
        record(f"luq{suffix}", LUQ(), logits)  # exp(e) / (exp(e) + exp(c)) = S
        record(f"kle{suffix}", KernelLanguageEntropy(), matrix_stats(m))  # contra = 1 - S, so W = S + S^T

    def score_stats(stack: str) -> dict:
        """LM-Polygraph's statistics from the saved scores: per-token lists of the top-1, sums of every candidate."""
        top_ll, top_entropy = data[f"top_ll_{stack}"], data[f"top_entropy_{stack}"]
        m = data[f"matrices_{stack}"]
        present = ~np.isnan(top_ll)
        return {"greedy_log_likelihoods": [row[keep] for row, keep in zip(top_ll, present)],
                "entropy": [row[keep] for row, keep in zip(top_entropy, present)],
                "sample_log_probs": [list(row) for row in data[f"logprobs_{stack}"]],
                "sample_texts": [["x"] * m.shape[-1]] * m.shape[0],
                "sample_sentence_similarity": m,
                "greedy_sentence_similarity": (m[:, 0, 1:] + m[:, 1:, 0]) / 2}

    gray = {"msp": MaximumSequenceProbability(), "perplexity": Perplexity(), "mean_token_entropy": MeanTokenEntropy(),
            "mc_sequence_entropy": MonteCarloSequenceEntropy(), "sentence_sar": SentenceSAR(),
            "cocoa_msp": CocoaMSP(), "cocoa_ppl": CocoaPPL(), "cocoa_mte": CocoaMTE()}
    with_probability = SemanticEntropy()  # class probabilities "sum", entropy estimation "mean": its defaults
    for stack in ("random", "clustered", "edge5", "edge1", "underflow"):
        suffix = "" if stack == "random" else f"@{stack}"
        stats = score_stats(stack)
        names = ("sentence_sar",) if stack == "underflow" else tuple(gray)
        for name in names:
            record(f"{name}{suffix}", gray[name], stats)
        record(f"semantic_entropy_prob{suffix}",
               lambda x, st=stats: with_probability({**st, "semantic_classes_entail": classes(x)}),
               data[f"matrices_{stack}"])
        out[f"semantic_entropy_prob_given_sets{suffix}"] = np.asarray(
            with_probability({**stats, "semantic_classes_entail": given_classes(data[f"labels_{stack}"])}))

    for group, candidates in texts.items():
        stats = {"sample_texts": candidates}
        for metric in ("rouge1", "rouge2", "rougeL", "BLEU"):
            record(f"lexsim_{metric}@{group}", LexicalSimilarity(metric), stats)

    u, q, bad = data["u"], data["q"], data["bad"]
    area = PredictionRejectionArea()

    def prr_monte_carlo(u, q):
        auc_u, auc_o = area(u, q), area(-q, q)
        return normalize_metric(auc_u, auc_o, get_random_scores(area, q))

    def prr_exact_random(u, q):
        return normalize_metric(area(u, q), area(-q, q), float(np.mean(normalize(q))))

    record("prr", prr_monte_carlo, u, q)
    record("prr_exact_random", prr_exact_random, u, q)
    half = PredictionRejectionArea(max_rejection=0.5)
    out["prr_max_rejection_0.5"] = np.asarray(normalize_metric(half(u, q), half(-q, q),
                                                               float(np.mean(normalize(q)))))
    record("roc_auc", ROCAUC(), u, bad)
    record("pr_auc", PRAUC(), u, bad)
    rcc = RiskCoverageCurveAUC()
    record("aurc", rcc, u, q)
    record("e_aurc", lambda u, q: rcc(u, q) - rcc(-q, q), u, q)
    record("rpp", ReversedPairsProportion(), u, q)
    record("spearman", SpearmanRankCorrelation(), u, q)
    record("kendall", KendallTauCorrelation(), u, q)
    record("ece", ECE(normalize=True), u, q)
    tied, order = data["u_tied"], data["order"]
    out["prr_tied"] = np.asarray([prr_exact_random(tied, q), prr_exact_random(tied[order], q[order])])
    out["aurc_tied"] = np.asarray([rcc(tied, q), rcc(tied[order], q[order])])

    calibration_u, calibration_q, test_u = data["calibration_u"], data["calibration_q"], data["test_u"]

    def fitted(model, *fit_args):
        model.fit(*fit_args)
        return model

    record("minmax", lambda: fitted(MinMaxNormalizer(), calibration_u).transform(test_u))
    record("quantile", lambda: fitted(QuantileNormalizer(), calibration_u).transform(test_u))
    record("binned_pcc", lambda: fitted(BinnedPCCNormalizer(), calibration_q, calibration_u, 10).transform(test_u))
    record("isotonic_pcc", lambda: fitted(IsotonicPCCNormalizer(), calibration_q, calibration_u).transform(test_u))

    np.savez(folder / "lmpg.npz", **out)
    (folder / "lmpg.json").write_text(json.dumps(seconds), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
