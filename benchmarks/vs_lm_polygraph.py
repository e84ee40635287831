"""lsplits against LM-Polygraph 0.7.0, side by side on identical inputs: max difference and speed per function.

LM-Polygraph is not a dependency of lsplits: this script creates its own virtual environment
(``--venv``, default ``~/.cache/lsplits-bench/lmpg``) with ``torch==2.13.0`` (the CPU wheel) and
``lm-polygraph==0.7.0`` without its dependency list (model adapters, NLI and LLM clients the
compared functions never import), plus what the compared modules do import (numpy, scipy,
scikit-learn, rouge-score, nltk, absl-py, pillow, transformers). It writes the inputs as .npy files,
runs ``benchmarks/lm_polygraph_side.py`` with that environment's Python in a subprocess, and compares.

Inputs (seeded): 10,000 similarity matrices of k = 10 with independent entries in (0, 1) (the
"random" stack; NLI-like, asymmetric), 10,000 whose candidates fall in clusters (similarity >= 0.85
within, below it across, so equivalence is transitive), the edge cases (k = 1; k = 5 identical; k = 5
all invalid, i.e. the identity), n = 100,000 uncertainty/quality pairs without ties (qualities in
[0, 1], including 0 and 1), and candidate strings for LexSim (1,000 examples x 10 strings of 4 to 12
tokens; 300 x 5 of 1 to 6 tokens over three words). A similarity matrix S enters LM-Polygraph as its
``semantic_matrix_entail`` statistic, with ``semantic_matrix_contra`` = 1 - S (KLE's weights become
S + S^T), the constant just below the threshold (NumSemSets: S > it iff S >= threshold) or logits
log S and log(1 - S) (LUQ: its softmax gives back S). Speed is the best of five calls when a call
takes under half a second, else one call, and the best over ``--rounds`` alternations of the two
sides; the ratio is LM-Polygraph's time over lsplits'.

Gray-box and hybrid estimators (:mod:`lsplits.uncertainty.graybox`), on the same four matrix stacks with seeded
scores (their own generator, so the inputs above do not change): the top-1 candidate gets per-token
log-likelihoods and entropies (1 to 40 tokens; LM-Polygraph's ``greedy_log_likelihoods`` and ``entropy``),
from which lsplits gets what ``generate_beams(return_scores=True)`` records (their sum, the count, the mean);
every candidate's sequence log-probability is LM-Polygraph's ``sample_log_probs``, and S its
``sample_sentence_similarity`` (SentenceSAR). CoCoA's ``greedy_sentence_similarity`` is (S[0, l] + S[l, 0]) / 2
for l = 1 .. k - 1: LM-Polygraph's greedy output against its samples is lsplits' top-1 against the other
candidates. Known differences, each printed: LM-Polygraph's SemanticEntropy gets its classes from its greedy
calculator (see LabelProb; "same sets" compares the formula alone); SentenceSAR computes exp(l) and takes
log(0) = inf once a probability underflows (l < -745; an extra stack of 1,000 examples with l in [-900, -750]),
lsplits works in log space and stays finite; at k = 1 the CoCoA estimators average over no samples (NaN),
lsplits gives 0. Differences up to 5e-13 are lsplits rounding every estimator's value to 12 decimals.

    .venv/bin/python benchmarks/vs_lm_polygraph.py [--venv DIR] [--seed 0] [--keep FOLDER]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import Recorder

from lsplits.similarity.lexical import LEXICAL_SIMILARITIES, bleu_tokens, sentence_bleu
from lsplits.uncertainty import ue_metrics
from lsplits.uncertainty.estimators import EstimatorSettings, estimate
from lsplits.uncertainty.matrix import build_matrices
from lsplits.uncertainty.normalization import fit_normalizer
from lsplits.uncertainty.prr import prr
from lsplits.uncertainty.semantic_sets import set_labels

HERE = Path(__file__).resolve().parent
DEFAULT_VENV = Path.home() / ".cache" / "lsplits-bench" / "lmpg"
LM_POLYGRAPH = "lm-polygraph==0.7.0"
TORCH = "torch==2.13.0"
IMPORTED = ["numpy", "scipy", "scikit-learn", "rouge-score", "nltk", "absl-py", "pillow", "transformers"]
THRESHOLD = 0.85
N_MATRICES, K, N_VECTOR = 10_000, 10, 100_000
MAX_TOKENS = 40
STACKS = ("random", "clustered", "edge5", "edge1")
SCORED_NAMES = ("msp", "perplexity", "mean_token_entropy", "mc_sequence_entropy", "semantic_entropy_prob",
                "sentence_sar", "cocoa_msp", "cocoa_ppl", "cocoa_mte")
WORDS = ("the", "a", "cat", "cats", "dog", "dogs", "run", "runs", "running", "ran", "happy", "happily",
         "organization", "organize", "believe", "believed", "quick", "Quickly", "house", "houses", "(w", "/",
         "want-01", ":ARG0", "boy))", "generalizations", "general")


def ensure_venv(venv: Path) -> Path:
    """The environment's Python, creating the environment on first use (a few minutes, mostly torch)."""
    python = venv / "bin" / "python"
    probe = "import importlib.metadata as m; assert m.version('lm-polygraph') == '0.7.0'; import sklearn, rouge_score"
    if python.exists() and subprocess.run([str(python), "-c", probe], capture_output=True).returncode == 0:
        return python
    print(f"creating {venv} with {TORCH} and {LM_POLYGRAPH} (first run only) ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, TORCH], check=True)
    subprocess.run([*pip, "--no-deps", LM_POLYGRAPH], check=True)
    subprocess.run([*pip, *IMPORTED], check=True)
    return python


def _matrices(rng: np.random.Generator) -> dict[str, np.ndarray]:
    random = rng.uniform(0.001, 0.999, (N_MATRICES, K, K))
    random[:, np.arange(K), np.arange(K)] = 1.0
    cluster = rng.integers(0, rng.integers(1, K + 1, N_MATRICES)[:, None], (N_MATRICES, K))
    same = cluster[:, :, None] == cluster[:, None, :]
    clustered = np.where(same, rng.uniform(THRESHOLD, 0.999, (N_MATRICES, K, K)),
                         rng.uniform(0.001, THRESHOLD - 0.01, (N_MATRICES, K, K)))
    clustered[:, np.arange(K), np.arange(K)] = 1.0
    return {"random": random, "clustered": clustered, "edge5": np.stack([np.ones((5, 5)), np.eye(5)]),
            "edge1": np.ones((1, 1, 1))}


def _texts(rng: np.random.Generator) -> dict[str, list[list[str]]]:
    def sentence(low: int, high: int, words=WORDS) -> str:
        return " ".join(rng.choice(words, rng.integers(low, high + 1)))

    # short strings over three words share n-grams often, so three-token pairs meet BLEU's 0.33 weights
    return {"long": [[sentence(4, 12) for _ in range(10)] for _ in range(1000)],
            "short": [[sentence(1, 6, WORDS[:3]) for _ in range(5)] for _ in range(300)]}


def _scores(matrices: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """Seeded scores for each stack (and the underflow stack): per-token values of the top-1, sums for the others."""
    rng = np.random.default_rng([seed, 1])
    out: dict[str, np.ndarray] = {}
    stacks = {**matrices, "underflow": matrices["random"][:1000]}
    for name, m in stacks.items():
        n, k = m.shape[:2]
        length = rng.integers(1, MAX_TOKENS + 1, n)
        present = np.arange(MAX_TOKENS)[None, :] < length[:, None]
        top_ll = np.where(present, -rng.exponential(0.4, (n, MAX_TOKENS)), np.nan)
        top_entropy = np.where(present, rng.uniform(0.0, 4.0, (n, MAX_TOKENS)), np.nan)
        n_tokens = rng.integers(1, MAX_TOKENS + 1, (n, k))
        n_tokens[:, 0] = length
        logprobs = -rng.gamma(n_tokens, 0.4)
        logprobs[:, 0] = np.nansum(top_ll, axis=1)
        entropies = rng.uniform(0.0, 4.0, (n, k))
        entropies[:, 0] = np.nanmean(top_entropy, axis=1)
        if name == "edge5":  # identical scores for identical (and for all-invalid) candidates
            logprobs[:] = logprobs[:, :1]
        if name == "underflow":
            logprobs = -rng.uniform(750, 900, (n, k))
        out.update({f"top_ll_{name}": top_ll, f"top_entropy_{name}": top_entropy, f"n_tokens_{name}": n_tokens,
                    f"logprobs_{name}": logprobs, f"token_entropies_{name}": entropies})
    out["matrices_underflow"] = stacks["underflow"]
    return out


def make_inputs(folder: Path, seed: int) -> dict:
    """Every input, saved for the LM-Polygraph side; returns them for lsplits' side."""
    rng = np.random.default_rng(seed)
    data: dict = {f"matrices_{name}": m for name, m in _matrices(rng).items()}
    data.update(_scores({name: data[f"matrices_{name}"] for name in STACKS}, seed))
    for name in (*STACKS, "underflow"):
        data[f"labels_{name}"] = set_labels(data[f"matrices_{name}"], sets_threshold=THRESHOLD)
    q = rng.random(N_VECTOR)
    q[:2] = 0.0, 1.0  # LM-Polygraph min-max normalises q for PRR, AURC: the identity here
    u = -q + rng.normal(0, 0.3, N_VECTOR)
    inside = (u[N_VECTOR // 2:] > u[:N_VECTOR // 2].min()) & (u[N_VECTOR // 2:] < u[:N_VECTOR // 2].max())
    data.update(u=u, q=q, bad=(q < 0.5).astype(int), u_tied=np.round(u, 1), order=rng.permutation(N_VECTOR),
                calibration_u=u[:N_VECTOR // 2], calibration_q=q[:N_VECTOR // 2], test_u=u[N_VECTOR // 2:],
                test_inside=inside, threshold=np.array(THRESHOLD))
    np.savez(folder / "inputs.npz", **data)
    texts = _texts(rng)
    (folder / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
    data["texts"] = texts
    return data


def _lexsim(name: str, examples: list[list[str]]) -> np.ndarray:
    matrices = build_matrices(examples, LEXICAL_SIMILARITIES[name], progress=False)
    return np.array([estimate("lexsim", m.values) for m in matrices])


def _directed_bleu(examples: list[list[str]]) -> np.ndarray:
    """LM-Polygraph's pairing: each unordered pair once, the earlier candidate as the reference."""
    values = []
    for candidates in examples:
        tokens = [bleu_tokens(c) for c in candidates]
        pairs = [sentence_bleu(tokens[j], tokens[i]) for i in range(len(tokens)) for j in range(i + 1, len(tokens))]
        values.append(1 - np.mean(pairs))
    return np.array(values)


def ours(data: dict) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """lsplits' values and times, under the names the LM-Polygraph side uses."""
    recorder = Recorder()
    record, out = recorder.record, recorder.values

    settings = EstimatorSettings(sets_threshold=THRESHOLD)
    for stack in ("random", "clustered", "edge5", "edge1"):
        m = data[f"matrices_{stack}"]
        suffix = "" if stack == "random" else f"@{stack}"
        for name in ("eigv", "ecc", "degmat", "numsemsets", "labelprob", "semantic_entropy", "luq", "kle"):
            record(f"{name}{suffix}", lambda x, n=name: estimate(n, x, **settings.options(n)), m)
    for stack in (*STACKS, "underflow"):
        m = data[f"matrices_{stack}"]
        scores = {field: data[f"{field}_{stack}"] for field in ("logprobs", "n_tokens", "token_entropies")}
        suffix = "" if stack == "random" else f"@{stack}"
        names = ("semantic_entropy_prob", "sentence_sar") if stack == "underflow" else SCORED_NAMES
        for name in names:
            record(f"{name}{suffix}", lambda x, s, n=name: estimate(n, x, scores=s, **settings.options(n)), m, scores)
    for name in LEXICAL_SIMILARITIES.values():  # one-time imports (NLTK's stemmer) outside the timing, as theirs
        name.score(name.prepare("warm up"), name.prepare("warming up"))
    for group, examples in data["texts"].items():
        for metric, similarity in (("rouge1", "rouge1_stem"), ("rouge2", "rouge2_stem"), ("rougeL", "rougel_stem"),
                                   ("BLEU", "bleu")):
            record(f"lexsim_{metric}@{group}", _lexsim, similarity, examples)
        out[f"lexsim_rougeL_unstemmed@{group}"] = _lexsim("rougel", examples)
        out[f"lexsim_BLEU_directed@{group}"] = _directed_bleu(examples)
    u, q = data["u"], data["q"]
    record("prr", lambda: prr(u, q))
    out["prr_exact_random"] = out["prr"]
    out["prr_max_rejection_0.5"] = np.asarray(prr(u, q, max_rejection=0.5))
    for name in ("roc_auc", "pr_auc"):
        record(name, lambda n=name: getattr(ue_metrics, n)(u, q, bad_below=0.5))
    for name in ("aurc", "e_aurc", "rpp", "spearman", "kendall", "ece"):  # ece: min-max, as ECE(normalize=True)
        record(name, getattr(ue_metrics, name), u, q)
    tied, order = data["u_tied"], data["order"]
    out["prr_tied"] = np.asarray([prr(tied, q), prr(tied[order], q[order])])
    out["aurc_tied"] = np.asarray([ue_metrics.aurc(tied, q), ue_metrics.aurc(tied[order], q[order])])
    cal_u, cal_q, test_u = data["calibration_u"], data["calibration_q"], data["test_u"]
    record("minmax", lambda: fit_normalizer("minmax", cal_u).transform(test_u))
    record("quantile", lambda: fit_normalizer("quantile", cal_u).transform(test_u))
    record("binned_pcc", lambda: fit_normalizer("binned_pcc", cal_u, cal_q, num_bins=10).transform(test_u))
    record("isotonic_pcc", lambda: fit_normalizer("isotonic_pcc", cal_u, cal_q).transform(test_u))
    return out, recorder.seconds


def _difference(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.atleast_1d(a).astype(float), np.atleast_1d(b).astype(float)
    both_nan = np.isnan(a) & np.isnan(b)
    return float(np.max(np.where(both_nan, 0.0, np.abs(a - b)), initial=0.0))


ROWS = [  # (label, our key, their key, transform of ours to their convention, note)
    ("EigV", "eigv", "eigv", None, ""),
    ("Ecc (threshold 0.9)", "ecc", "ecc", None, ""),
    ("DegMat", "degmat", "degmat", None, ""),
    ("NumSemSets (random)", "numsemsets", "numsemsets", None, "both: connected components"),
    ("NumSemSets (clustered)", "numsemsets@clustered", "numsemsets@clustered", None, ""),
    ("LabelProb (clustered)", "labelprob@clustered", "labelprob@clustered", None,
     "transitive equivalence: greedy classes = components"),
    ("LabelProb (random)", "labelprob", "labelprob", None, "greedy first-member classes vs components (see below)"),
    ("LabelProb (random, same sets)", "labelprob", "labelprob_given_sets", None, "the formula alone"),
    ("SemEnt frequency (clustered)", "semantic_entropy@clustered", "semantic_entropy@clustered", None, ""),
    ("SemEnt frequency (random)", "semantic_entropy", "semantic_entropy", None, "greedy classes vs components"),
    ("SemEnt frequency (random, same sets)", "semantic_entropy", "semantic_entropy_given_sets", None,
     "the formula alone"),
    ("MSP", "msp", "msp", None, "ours -l_0 (the recorded sum), theirs -sum of the per-token values"),
    ("Perplexity", "perplexity", "perplexity", None, "ours -l_0 / n_0, theirs -mean of the per-token values"),
    ("MeanTokenEntropy", "mean_token_entropy", "mean_token_entropy", None, "ours: the mean recorded per candidate"),
    ("MC sequence entropy", "mc_sequence_entropy", "mc_sequence_entropy", None, ""),
    ("SemEnt prob (clustered)", "semantic_entropy_prob@clustered", "semantic_entropy_prob@clustered", None,
     "transitive equivalence: greedy classes = components"),
    ("SemEnt prob (random)", "semantic_entropy_prob", "semantic_entropy_prob", None, "greedy classes vs components"),
    ("SemEnt prob (random, same sets)", "semantic_entropy_prob", "semantic_entropy_prob_given_sets", None,
     "the formula alone"),
    ("SemEnt prob, l in [-900, -750], same sets", "semantic_entropy_prob@underflow",
     "semantic_entropy_prob_given_sets@underflow", None, "both in log space (logsumexp / logaddexp)"),
    ("SentenceSAR (t 0.001)", "sentence_sar", "sentence_sar", None, "ours in log space, theirs exp then log"),
    ("SentenceSAR (t 0.001, clustered)", "sentence_sar@clustered", "sentence_sar@clustered", None, ""),
    ("CocoaMSP", "cocoa_msp", "cocoa_msp", None, "their greedy vs k samples = our top-1 vs the other k - 1"),
    ("CocoaPPL", "cocoa_ppl", "cocoa_ppl", None, ""),
    ("CocoaMTE", "cocoa_mte", "cocoa_mte", None, ""),
    ("LUQ", "luq", "luq", None, ""),
    ("KLE (t 0.3, normalised, scaled)", "kle", "kle", None, "expm + eig vs two eigh; 1e-12 kernel jitter"),
    ("LexSim ROUGE-1, stemmed", "lexsim_rouge1@long", "lexsim_rouge1@long", "minus one", "ours 1 - mean, theirs -mean"),
    ("LexSim ROUGE-2, stemmed", "lexsim_rouge2@long", "lexsim_rouge2@long", "minus one", ""),
    ("LexSim ROUGE-L, stemmed", "lexsim_rougeL@long", "lexsim_rougeL@long", "minus one", ""),
    ("LexSim ROUGE-L, ours unstemmed", "lexsim_rougeL_unstemmed@long", "lexsim_rougeL@long", "minus one",
     "stemming (LM-Polygraph stems)"),
    ("LexSim BLEU, one direction", "lexsim_BLEU_directed@long", "lexsim_BLEU@long", "minus one",
     "same pairing as LM-Polygraph"),
    ("LexSim BLEU (both directions)", "lexsim_BLEU@long", "lexsim_BLEU@long", "minus one",
     "ours averages both directions"),
    ("LexSim BLEU, 1-6 tokens, one direction", "lexsim_BLEU_directed@short", "lexsim_BLEU@short", "minus one",
     "weights 1/3 vs 0.33 where the shorter has 3 tokens"),
    ("PRR (exact random baseline)", "prr_exact_random", "prr_exact_random", None, ""),
    ("PRR (LM-Polygraph's Monte-Carlo baseline)", "prr", "prr", None, "1,000 shuffles vs exact mean"),
    ("PRR, max rejection 0.5", "prr_max_rejection_0.5", "prr_max_rejection_0.5", None,
     "grid: r/n <= 0.5 (n/2 + 1 points) vs int(0.5 n)"),
    ("PRR, tied u, input order and shuffled", "prr_tied", "prr_tied", None, "ties: ours averaged, theirs by order"),
    ("ROC-AUC", "roc_auc", "roc_auc", None, ""),
    ("PR-AUC", "pr_auc", "pr_auc", None, ""),
    ("AURC (RCC-AUC)", "aurc", "aurc", None, ""),
    ("E-AURC", "e_aurc", "e_aurc", None, "theirs: RCC-AUC(u) - RCC-AUC(-q)"),
    ("AURC, tied u, input order and shuffled", "aurc_tied", "aurc_tied", None, "ties"),
    ("RPP", "rpp", "rpp", None, ""),
    ("Spearman", "spearman", "spearman", None, ""),
    ("Kendall tau-b", "kendall", "kendall", None, ""),
    ("ECE after min-max", "ece", "ece", None, "theirs: ECE(normalize=True)"),
    ("min-max normaliser", "minmax", "minmax", None, ""),
    ("quantile normaliser", "quantile", "quantile", None, ""),
    ("binned PCC normaliser (10 bins)", "binned_pcc", "binned_pcc", "inside", "inside the calibration range"),
    ("isotonic PCC normaliser", "isotonic_pcc", "isotonic_pcc", "inside", "inside the calibration range"),
]
EDGE_NAMES = ("eigv", "ecc", "degmat", "numsemsets", "labelprob", "semantic_entropy", "luq", "kle")


def report(data: dict, mine: dict, my_seconds: dict, theirs: dict, their_seconds: dict) -> None:
    n_matrix, n_vector = f"{N_MATRICES} x k={K}", f"n={N_VECTOR}"
    print("| function | inputs | max abs difference | lsplits s | LM-Polygraph s | speed ratio | known difference |")
    print("|---|---|---|---|---|---|---|")
    inside = data["test_inside"]
    for label, key, their_key, change, note in ROWS:
        a, b = mine[key], theirs[their_key]
        if change == "minus one":
            a = a - 1.0
        if change == "inside":
            a, b = a[inside], b[inside]
        size = n_matrix if key.split("@")[0] in (*EDGE_NAMES, *SCORED_NAMES) else n_vector
        if key.endswith("@underflow"):
            size = f"1000 x k={K}"
        if key.startswith("lexsim"):
            group = key.split("@")[1]
            size = f"{len(data['texts'][group])} x k={len(data['texts'][group][0])} strings"
        if key in ("minmax", "quantile", "binned_pcc", "isotonic_pcc"):
            size = f"fit {N_VECTOR // 2}, map {int(inside.sum()) if change else N_VECTOR // 2}"
        timing = key in my_seconds and their_key in their_seconds and key == their_key
        ours_s = f"{my_seconds[key]:.4f}" if timing else ""
        their_s = f"{their_seconds[their_key]:.4f}" if timing else ""
        ratio = f"{their_seconds[their_key] / my_seconds[key]:.1f}x" if timing else ""
        print(f"| {label} | {size} | {_difference(a, b):.2e} | {ours_s} | {their_s} | {ratio} | {note} |")
    random_sets = data["labels_random"]
    print(f"\nSemantic sets at threshold {THRESHOLD} on the random stack: NumSemSets differs in "
          f"{int((mine['numsemsets'] != theirs['numsemsets']).sum())} of {N_MATRICES} matrices; LabelProb in "
          f"{int((np.abs(mine['labelprob'] - theirs['labelprob']) > 1e-12).sum())} (LM-Polygraph's greedy classes "
          f"split chains that are one connected component); mean sets per matrix "
          f"{np.mean([np.unique(r).size for r in random_sets]):.2f}")
    for name in ("prr_tied", "aurc_tied"):
        print(f"{name.split('_')[0].upper()} with u rounded to 0.1 (ties), input order vs shuffled: lsplits "
              f"{mine[name][0]:.6f} / {mine[name][1]:.6f}, LM-Polygraph {theirs[name][0]:.6f} / {theirs[name][1]:.6f}")
    outside = int((~inside).sum())
    for name in ("binned_pcc", "isotonic_pcc"):
        gap = _difference(mine[name][~inside], theirs[name][~inside]) if outside else 0.0
        print(f"{name}: {outside} test uncertainties outside the calibration range, max difference there "
              f"{gap:.3f} (LM-Polygraph: last bin / set-order extrapolation; lsplits: the nearest end)")
    ours_sar, their_sar = mine["sentence_sar@underflow"], theirs["sentence_sar@underflow"]
    print(f"SentenceSAR with every l in [-900, -750] (1000 x k={K}): LM-Polygraph inf in "
          f"{int(np.isinf(their_sar).sum())} examples (exp(l) underflows to 0, log 0); lsplits finite in "
          f"{int(np.isfinite(ours_sar).sum())}, from {ours_sar.min():.1f} to {ours_sar.max():.1f}")
    print("\nEdge cases (lsplits / LM-Polygraph): k = 1 | k = 5 identical | k = 5 all invalid (identity)")
    for name in (*EDGE_NAMES, *SCORED_NAMES):
        one_ours, one_theirs = mine[f"{name}@edge1"][0], theirs[f"{name}@edge1"][0]
        five_ours, five_theirs = mine[f"{name}@edge5"], theirs[f"{name}@edge5"]
        cells = [f"{one_ours:.4g} / {one_theirs:.4g}", f"{five_ours[0]:.4g} / {five_theirs[0]:.4g}",
                 f"{five_ours[1]:.4g} / {five_theirs[1]:.4g}"]
        print(f"- {name}: " + " | ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, default=None, help="keep inputs and outputs in this folder")
    parser.add_argument("--rounds", type=int, default=2,
                        help="alternate the two sides this often and keep each function's best time (default 2), "
                             "so that a change of load on a shared machine does not favour either side")
    args = parser.parse_args()
    python = ensure_venv(args.venv)
    with tempfile.TemporaryDirectory(prefix="vs-lmpg-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        data = make_inputs(folder, args.seed)
        env = {**os.environ, "PYTHONPATH": ""}  # the same thread settings as this process, none of lsplits
        their_time = my_time = 0.0
        their_seconds: dict[str, float] = {}
        my_seconds: dict[str, float] = {}
        for _ in range(max(1, args.rounds)):
            start = time.perf_counter()
            subprocess.run([str(python), str(HERE / "lm_polygraph_side.py"), str(folder)], check=True, env=env)
            their_time += time.perf_counter() - start
            with np.load(folder / "lmpg.npz") as loaded:
                theirs = dict(loaded)
            for name, took in json.loads((folder / "lmpg.json").read_text(encoding="utf-8")).items():
                their_seconds[name] = min(took, their_seconds.get(name, math.inf))
            start = time.perf_counter()
            mine, seconds = ours(data)
            my_time += time.perf_counter() - start
            for name, took in seconds.items():
                my_seconds[name] = min(took, my_seconds.get(name, math.inf))
    print(f"{args.rounds} rounds, best time per function; LM-Polygraph 0.7.0 side: {their_time:.0f} s in all; "
          f"lsplits side: {my_time:.0f} s in all "
          f"(OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, load {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores)\n")
    report(data, mine, my_seconds, theirs, their_seconds)


if __name__ == "__main__":
    main()
