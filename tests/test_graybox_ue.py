"""Gray-box and hybrid estimators in ``lsplits ue``, the ``beam_uncertainty`` metric and the beams reader (issue 36,
items 3-5): scores read from JSONL and PENMAN beams, the family table of the report, beams without scores.

The estimator values are recomputed here from their definitions (numpy, on candidates whose similarity matrix is
known: a copy of the top-1 is similarity 1, an empty candidate is invalid, similarity 0) and the report's PRR must
equal :func:`lsplits.uncertainty.prr.prr` of them.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from beams_fixtures import PAIRS
from scipy.stats import spearmanr
from test_bad_inputs import run_in_process, write_jsonl

from lsplits.errors import DataError, InvalidInput, InvalidOption
from lsplits.uncertainty.beam import beam_uncertainty_outputs
from lsplits.uncertainty.inputs import load_inputs
from lsplits.uncertainty.prr import prr

GOLD = [graph for _, graph in PAIRS]
SAR_T = 0.5
# per example: the top-1 (index into GOLD), whether candidates 2 and 3 copy the top-1 (else ""), and the scores
PLAN = [(0, (True, True)), (2, (True, False)), (2, (False, False)), (3, (True, True)),
        (5, (False, True)), (5, (True, True)), (0, (False, False)), (7, (True, False))]
LOGPROBS = [[-0.2, -0.9, -1.5], [-1.1, -1.3, -4.0], [-3.0, -3.2, -3.9], [-0.6, -0.7, -2.2],
            [-2.4, -2.5, -2.6], [-0.3, -2.0, -2.1], [-5.0, -5.5, -6.0], [-1.8, -1.9, -2.0]]
N_TOKENS = [[4, 5, 6], [7, 7, 9], [3, 4, 4], [8, 8, 8], [5, 6, 5], [4, 4, 6], [9, 9, 9], [6, 5, 7]]
ENTROPIES = [[0.1, 0.2, 0.3], [0.5, 0.4, 0.6], [1.2, 1.0, 1.1], [0.2, 0.3, 0.1],
             [0.9, 0.8, 0.7], [0.3, 0.6, 0.2], [1.5, 1.4, 1.6], [0.4, 0.5, 0.6]]


def _candidates(i: int) -> list[str]:
    top, copies = PLAN[i]
    return [GOLD[top], *(GOLD[top] if copy else "" for copy in copies)]


def _write(folder: Path, *, scores: bool = True, drop: str | None = None) -> tuple[Path, Path]:
    """Beams JSONL (with scores unless ``scores`` is False; example ``drop`` without them) and gold JSONL."""
    rows = []
    for i in range(len(PLAN)):
        row = {"id": f"ex{i}", "candidates": _candidates(i)}
        if scores and f"ex{i}" != drop:
            row.update(logprobs=LOGPROBS[i], n_tokens=N_TOKENS[i], token_entropies=ENTROPIES[i])
        rows.append(row)
    beams = write_jsonl(folder / "beams.jsonl", rows)
    gold = write_jsonl(folder / "gold.jsonl", [{"id": f"ex{i}", "amr": GOLD[i]} for i in range(len(PLAN))])
    return beams, gold


def _similarity(i: int, k: int) -> np.ndarray:
    """The known Smatch matrix of example i's first k candidates: copies of the top-1 agree, "" is invalid."""
    valid = np.array([c != "" for c in _candidates(i)[:k]])
    matrix = (valid[:, None] & valid[None, :]).astype(float)
    np.fill_diagonal(matrix, 1.0)
    return matrix


def _independent(name: str, i: int, k: int) -> float:
    """Each estimator from its definition (LM-Polygraph 0.7's), on example i's first k candidates."""
    logprobs, s = np.array(LOGPROBS[i][:k]), _similarity(i, k)
    msp = -logprobs[0]
    dissimilarity = np.mean(1 - s[0, 1:]) if k > 1 else 0.0
    if name == "msp":
        return msp
    if name == "perplexity":
        return msp / N_TOKENS[i][0]
    if name == "mean_token_entropy":
        return ENTROPIES[i][0]
    if name == "cocoa_msp":
        return msp * dissimilarity
    if name == "sentence_sar":
        p = np.exp(logprobs)
        return float(np.mean([-np.log(p[j] + sum(s[j, m] * p[m] for m in range(k) if m != j) / SAR_T)
                              for j in range(k)]))
    if name == "degmat":
        return 1 - s.sum() / k**2
    raise AssertionError(name)


def _csv(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


def _ue(tmp_path, monkeypatch, capsys, beams: list[Path], gold: Path, estimators: str, *extra: str):
    argv = ["ue", *map(str, beams), "--gold", str(gold), "--out", str(tmp_path / "out"), "--no-cache",
            "--similarities", "smatch", "--qualities", "smatch", "--beam-sizes", "2,3", "--workers", "1",
            "--n-bootstrap", "20", "--no-progress", "--estimators", estimators, *extra]
    return run_in_process(argv, tmp_path, monkeypatch, capsys)


LABELS = {"degmat": "DegMat-Smatch", "msp": "MSP", "perplexity": "PPL", "mean_token_entropy": "MTE",
          "cocoa_msp": "CocoaMSP-Smatch", "sentence_sar": "SentenceSAR-Smatch"}


def test_ue_with_scores_writes_the_family_table_whose_prr_is_that_of_the_estimators(tmp_path, monkeypatch, capsys):
    beams, gold = _write(tmp_path)
    result = _ue(tmp_path, monkeypatch, capsys, [beams], gold,
                 "degmat,msp,perplexity,mean_token_entropy,cocoa_msp,sentence_sar", "--sar-t", str(SAR_T))
    assert result.returncode == 0, result.stderr[-3000:]
    out = tmp_path / "out"
    qualities = {row["id"]: float(row["smatch"]) for row in _csv(out / "qualities.csv")}
    q = np.array([qualities[f"ex{i}"] for i in range(len(PLAN))])
    assert all(q[i] == 1.0 for i, (top, _) in enumerate(PLAN) if top == i) and q.min() < 1.0
    reported = {(int(row["k"]), row["method"]): float(row["prr"]) for row in _csv(out / "prr.csv")}
    for k in (2, 3):
        for name, label in LABELS.items():
            values = [_independent(name, i, k) for i in range(len(PLAN))]
            assert reported[k, label] == pytest.approx(prr(values, q), abs=1e-9), (k, name)
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Black-box, gray-box and hybrid estimators" in report
    for family, label in (("black-box", "DegMat-Smatch"), ("gray-box", "MSP"), ("hybrid", "CocoaMSP-Smatch")):
        assert f"| {family} | {label} |" in report
    assert "black-box (rows) x gray-box (columns)" in report and "skipped" not in report
    spearman = {row["method"]: row for row in _csv(out / "spearman_k3.csv")}
    rho = spearmanr([_independent("degmat", i, 3) for i in range(len(PLAN))],
                    [_independent("msp", i, 3) for i in range(len(PLAN))]).statistic
    assert float(spearman["DegMat-Smatch"]["MSP"]) == pytest.approx(rho, abs=1e-9)
    assert json.loads((out / "settings.json").read_text())["sar_t"] == SAR_T


def test_ue_without_scores_skips_the_graybox_rows_in_one_line(tmp_path, monkeypatch, capsys):
    beams, gold = _write(tmp_path, scores=False)
    result = _ue(tmp_path, monkeypatch, capsys, [beams], gold, "degmat,msp,cocoa_msp")
    assert result.returncode == 0, result.stderr[-3000:]
    line = "gray-box and hybrid rows skipped: the beams carry no scores (msp, cocoa_msp)"
    assert [entry for entry in result.stderr.splitlines() if "skipped" in entry and "msp" in entry] == [
        f"WARNING lsplits.uncertainty.study: {line}"]
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"- {line}" in report
    methods = {row["method"] for row in _csv(tmp_path / "out" / "prr.csv")}
    assert methods == {"DegMat-Smatch"}


def test_scores_on_some_examples_only_is_one_line_naming_the_first_without(tmp_path, monkeypatch, capsys):
    beams, gold = _write(tmp_path, drop="ex3")
    result = _ue(tmp_path, monkeypatch, capsys, [beams], gold, "degmat,msp")
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1, result.stderr[-3000:]
    assert "line 4" in lines[0] and "example 'ex3'" in lines[0] and "no logprobs" in lines[0]
    assert "example 'ex0'" in lines[0] and not (tmp_path / "out").exists()


def test_a_score_list_whose_length_is_not_the_candidates_is_one_line(tmp_path):
    beams, gold = _write(tmp_path)
    rows = [json.loads(line) for line in beams.read_text().splitlines()]
    rows[5]["n_tokens"] = rows[5]["n_tokens"][:2]
    write_jsonl(beams, rows)
    with pytest.raises(DataError) as error:
        load_inputs([beams], gold)
    assert "line 6" in str(error.value) and "example 'ex5'" in str(error.value)
    assert "field 'n_tokens'" in str(error.value) and "has 2 values but there are 3 candidates" in str(error.value)


def _penman_ranks(folder: Path, with_logprob: bool = True) -> list[Path]:
    files = []
    for rank in range(3):
        blocks = []
        for i in range(len(PLAN)):
            text = _candidates(i)[rank] or "(x / broken"
            meta = f"# ::id ex{i}\n" + (f"# ::logprob {LOGPROBS[i][rank]}\n" if with_logprob else "")
            blocks.append(meta + text)
        files.append(folder / f"rank{rank}.amr")
        files[-1].write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return files


def test_penman_logprob_lines_are_read_and_only_logprob_estimators_run(tmp_path, monkeypatch, capsys):
    _, gold = _write(tmp_path)
    ranks = _penman_ranks(tmp_path)
    inputs = load_inputs(ranks, gold)
    assert inputs.score_fields == ("logprobs",)
    assert inputs.scores == [{"logprobs": LOGPROBS[i]} for i in range(len(PLAN))]
    result = _ue(tmp_path, monkeypatch, capsys, ranks, gold, "degmat,msp,perplexity")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "gray-box rows skipped: the beams carry logprobs but no n_tokens (perplexity)" in result.stderr
    reported = {(int(row["k"]), row["method"]): float(row["prr"]) for row in _csv(tmp_path / "out" / "prr.csv")}
    q = np.array([float(row["smatch"]) for row in _csv(tmp_path / "out" / "qualities.csv")])
    assert reported[3, "MSP"] == pytest.approx(prr([-LOGPROBS[i][0] for i in range(len(PLAN))], q), abs=1e-9)
    assert (3, "PPL") not in reported


def test_penman_logprob_on_some_graphs_only_names_the_first_without(tmp_path):
    _, gold = _write(tmp_path)
    ranks = _penman_ranks(tmp_path)
    text = ranks[1].read_text().replace(f"# ::logprob {LOGPROBS[2][1]}\n", "")
    ranks[1].write_text(text)
    with pytest.raises(DataError) as error:
        load_inputs(ranks, gold)
    assert "rank1.amr" in str(error.value) and "example 'ex2'" in str(error.value)
    assert "no logprobs" in str(error.value)


def test_the_metric_computes_graybox_and_hybrid_estimators_when_given_scores():
    candidates = [_candidates(i) for i in range(len(PLAN))]
    plain = beam_uncertainty_outputs(candidates, "smatch")
    assert set(plain) == {"lexsim", "eigv", "ecc", "degmat", "invalid_candidates"}
    scored = beam_uncertainty_outputs(candidates, "smatch", logprobs=LOGPROBS, n_tokens=N_TOKENS,
                                      token_entropies=ENTROPIES, sar_t=SAR_T)
    for name in ("msp", "perplexity", "mean_token_entropy", "cocoa_msp", "sentence_sar", "degmat"):
        assert scored[name] == pytest.approx([_independent(name, i, 3) for i in range(len(PLAN))], abs=1e-9), name
    assert {"mc_sequence_entropy", "semantic_entropy_prob", "cocoa_ppl", "cocoa_mte"} <= set(scored)
    only_logprobs = beam_uncertainty_outputs(candidates, "smatch", logprobs=LOGPROBS)
    assert "msp" in only_logprobs and "perplexity" not in only_logprobs
    with pytest.raises(InvalidInput, match="n_tokens"):
        beam_uncertainty_outputs(candidates, "smatch", logprobs=LOGPROBS, estimators=["perplexity"])
    with pytest.raises(InvalidInput, match="logprobs of example 1 must hold one value per candidate"):
        beam_uncertainty_outputs(candidates, "smatch", logprobs=[LOGPROBS[0], [-1.0], *LOGPROBS[2:]])
    with pytest.raises(InvalidOption, match="'msp' needs the candidates' log-probabilities"):
        beam_uncertainty_outputs(candidates, "smatch", estimators=["msp"])


def test_the_space_offers_the_scored_estimators_when_the_beams_have_scores(tmp_path):
    from space_helpers import space_settings

    settings = space_settings(tmp_path, tmp_path / "no-dataset")
    import uncertainty_tab

    beams, gold = _write(tmp_path)
    offered = [name for _, name in uncertainty_tab.offered_estimators("", [str(beams)], settings)]
    assert {"msp", "perplexity", "mean_token_entropy", "cocoa_msp", "sentence_sar"} <= set(offered)
    assert not {"msp", "cocoa_msp"} & {name for _, name in uncertainty_tab.offered_estimators(
        beams.read_text().replace('"logprobs"', '"other"'), None, settings)}
    _, summary, table, _, _ = uncertainty_tab.run_uncertainty(
        beams.read_text(), gold.read_text(), None, None, "smatch", "smatch", ["degmat", "msp", "cocoa_msp"], settings)
    assert list(table["UE method"]) == ["DegMat-Smatch", "MSP", "CocoaMSP-Smatch"]
    assert table["PRR"].notna().all() and "skipped" not in summary
    unscored, _ = _write(tmp_path / "plain", scores=False)
    _, summary, table, _, _ = uncertainty_tab.run_uncertainty(
        unscored.read_text(), gold.read_text(), None, None, "smatch", "smatch", ["degmat", "msp"], settings)
    assert list(table["UE method"]) == ["DegMat-Smatch"]
    assert "gray-box rows skipped: the beams carry no scores (msp)" in summary


def test_decoding_strategies_compare_as_systems_with_their_scores(tmp_path, monkeypatch, capsys):
    """Two scored beams files (say beam and sample) as systems: the gray-box rows in each system's report and in
    the paired comparison; a system without scores drops them for every system, with the skipped line."""
    beams, gold = _write(tmp_path)
    sample = tmp_path / "sample.jsonl"
    rows = [json.loads(line) for line in beams.read_text().splitlines()]
    write_jsonl(sample, [{**row, "logprobs": [v * (1 + i % 3) for v in row["logprobs"]]} for i, row in enumerate(rows)])
    plain, _ = _write(tmp_path / "plain", scores=False)
    common = ["ue", "--gold", str(gold), "--no-cache", "--similarities", "smatch", "--qualities", "smatch",
              "--beam-sizes", "3", "--workers", "1", "--n-bootstrap", "20", "--no-progress",
              "--estimators", "degmat,msp,cocoa_msp"]
    result = run_in_process([*common, "--system", f"beam={beams}", "--system", f"sample={sample}",
                             "--out", str(tmp_path / "out")], tmp_path, monkeypatch, capsys)
    assert result.returncode == 0, result.stderr[-3000:]
    q = np.array([float(row["smatch"]) for row in _csv(tmp_path / "out" / "sample" / "qualities.csv")])
    reported = {row["method"]: float(row["prr"]) for row in _csv(tmp_path / "out" / "sample" / "prr.csv")}
    msp = [-LOGPROBS[i][0] * (1 + i % 3) for i in range(len(PLAN))]
    assert reported["MSP"] == pytest.approx(prr(msp, q), abs=1e-9) and "CocoaMSP-Smatch" in reported
    (pair,) = _csv(tmp_path / "out" / "tables" / "pairwise.csv")  # mean PRR over the three rows, paired
    assert (pair["system_a"], pair["system_b"]) == ("beam", "sample") and int(pair["resamples"]) > 0
    assert float(pair["prr_b"]) == pytest.approx(np.mean(list(reported.values())), abs=1e-9)
    mixed = run_in_process([*common, "--system", f"beam={beams}", "--system", f"plain={plain}",
                            "--out", str(tmp_path / "mixed")], tmp_path, monkeypatch, capsys)
    assert mixed.returncode == 0, mixed.stderr[-3000:]
    assert "rows skipped: the beams carry no scores (msp, cocoa_msp)" in mixed.stderr
    assert {row["method"] for row in _csv(tmp_path / "mixed" / "beam" / "prr.csv")} == {"DegMat-Smatch"}
