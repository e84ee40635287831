"""``lsplits ue --system ...``: three systems built from the same real gold graphs, every cross-system table
checked against values recomputed here from the per-system reports' CSV files (and Table 1 from the beams)."""

from __future__ import annotations

import csv
import itertools
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from amr_edits import degrade, sample_gold
from amr_helpers import CALLS, COUNTING
from scipy.stats import permutation_test, spearmanr

from lsplits.cli.parser import parse_args
from lsplits.cli.ue import run as run_ue
from lsplits.errors import ConfigError, DataError
from lsplits.similarity import registry
from lsplits.uncertainty.study import run_study
from lsplits.uncertainty.study_config import StudyConfig
from lsplits.uncertainty.systems import SystemSpec, parse_systems, run_systems

LEVELS = range(4)
K = 5
# name -> (extra edits of the top-1 over the example's level, seed): different top-1s and candidates
SYSTEMS = {"strong": (0, 1), "middle": (1, 2), "weak": (2, 3)}
QUALITIES = ("smatchpp", "sembleu")
SIMILARITIES = ("smatchpp", "sema")
BEAM_SIZES = (3, 5)
@pytest.fixture(autouse=True)
def counting_similarity(monkeypatch):
    CALLS.clear()
    monkeypatch.setitem(registry._REGISTERED, COUNTING.name, COUNTING)


def system_beams(offset: int, seed: int) -> list[dict]:
    """Per (gold graph, level): top-1 = gold after level + offset - 1 edits, the others 1..level+1 more."""
    rng = random.Random(seed)
    rows = []
    for level in LEVELS:
        for example, text in sample_gold():
            top1 = degrade(text, max(0, level + offset - 1), rng)
            candidates = [top1] + [degrade(top1, rng.randint(1, level + 1), rng) for _ in range(K - 1)]
            rows.append({"id": f"{example}@{level}", "candidates": candidates})
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_penman_ranks(folder: Path, rows: list[dict]) -> list[Path]:
    """One PENMAN file per beam rank with '# ::id' lines (the BEAMS form of AMR parsers)."""
    paths = []
    for rank in range(K):
        path = folder / f"rank{rank + 1}.amr"
        path.write_text("".join(f"# ::id {row['id']}\n{row['candidates'][rank]}\n\n" for row in rows),
                        encoding="utf-8")
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Beams of the three systems (``weak`` as PENMAN rank files), the gold file and the candidates."""
    folder = tmp_path_factory.mktemp("systems")
    gold = dict(sample_gold())
    beams, paths = {}, {}
    for name, (offset, seed) in SYSTEMS.items():
        beams[name] = system_beams(offset, seed)
        if name == "weak":
            (folder / name).mkdir()
            paths[name] = write_penman_ranks(folder / name, beams[name])
        else:
            paths[name] = [write_jsonl(folder / f"{name}.jsonl", beams[name])]
    write_jsonl(folder / "gold.jsonl", [{"id": row["id"], "amr": gold[row["id"].split("@")[0]]}
                                        for row in beams["strong"]])
    return folder, beams, paths


def ue_args(paths: dict[str, list[Path]], gold: Path, out: Path, cache: Path, *extra: str):
    argv = [item for name, files in paths.items() for item in ("--system", f"{name}={','.join(map(str, files))}")]
    return parse_args(["ue", *argv, "--gold", str(gold), "--out", str(out), "--similarities", ",".join(SIMILARITIES),
                       "--qualities", ",".join(QUALITIES), "--beam-sizes", ",".join(map(str, BEAM_SIZES)),
                       "--n-bootstrap", "40", "--workers", "1", "--cache-dir", str(cache), "--no-progress", *extra])


@pytest.fixture(scope="module")
def report(inputs, tmp_path_factory):
    folder, _, paths = inputs
    out = tmp_path_factory.mktemp("report") / "out"
    assert run_ue(ue_args(paths, folder / "gold.jsonl", out, folder / "cache")) == 0
    return out


def read_csv(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def per_system_prr(out: Path) -> dict[tuple[str, str, int, str], float]:
    """(system, quality, k, method) -> PRR, read from each system's own prr.csv."""
    values = {}
    for name in SYSTEMS:
        for row in read_csv(out / name / "prr.csv"):
            values[name, row["quality"], int(row["k"]), row["method"]] = float(row["prr"])
    return values


def methods_of(prr: dict) -> list[str]:
    return list(dict.fromkeys(key[3] for key in prr))


def corpus(metric: str, predictions: list[str], references: list[str]) -> float:
    """Corpus score straight from the metric (no invalid top-1 in these beams)."""
    similarity = registry.get(metric)
    p = [similarity.prepare(text) for text in predictions]
    r = [similarity.prepare(text) for text in references]
    if similarity.corpus_score is not None:
        return float(similarity.corpus_score(p, r))
    return float(np.mean([similarity.score(a, b) for a, b in zip(p, r, strict=True)]))


def gold_of(beams: dict[str, list[dict]]) -> list[str]:
    gold = dict(sample_gold())
    return [gold[row["id"].split("@")[0]] for row in beams["strong"]]


def test_systems_csv_has_the_per_system_numbers(report, inputs):
    _, beams, _ = inputs
    rows = read_csv(report / "systems.csv")
    assert list(rows[0]) == ["system", "quality", "k", "method", "prr", "ci_low", "ci_high", "top1_corpus", "n"]
    expected = {}
    for name in SYSTEMS:
        for row in read_csv(report / name / "prr.csv"):
            expected[name, row["quality"], row["k"], row["method"]] = (row["prr"], row["ci_low"], row["ci_high"],
                                                                        row["n"])
    got = {(r["system"], r["quality"], r["k"], r["method"]): (r["prr"], r["ci_low"], r["ci_high"], r["n"])
           for r in rows}
    assert got == expected and len(rows) == len(expected) == 3 * 2 * 2 * 7
    reference = gold_of(beams)
    for row in rows:
        top1 = [b["candidates"][0] for b in beams[row["system"]]]
        assert float(row["top1_corpus"]) == pytest.approx(corpus(row["quality"], top1, reference), abs=1e-12)


def test_table1_from_the_top1_candidates(report, inputs):
    _, beams, _ = inputs
    reference = gold_of(beams)
    table = {row["system"]: row for row in read_csv(report / "tables" / "table1.csv")}
    assert list(table) == list(SYSTEMS)
    for name in SYSTEMS:
        top1 = [b["candidates"][0] for b in beams[name]]
        for metric in ("smatch", "smatchpp"):
            assert float(table[name][metric]) == pytest.approx(corpus(metric, top1, reference), abs=1e-12)
    # more edits in the top-1, lower scores: the construction's order
    assert float(table["strong"]["smatchpp"]) > float(table["middle"]["smatchpp"]) > float(table["weak"]["smatchpp"])
    text = (report / "report.md").read_text(encoding="utf-8")
    assert f"| strong | {float(table['strong']['smatch']):.4f} | {float(table['strong']['smatchpp']):.4f} |" in text


def test_figures_1_2_families_and_stability_are_means_of_the_per_system_prr(report):
    prr = per_system_prr(report)
    methods = methods_of(prr)
    assert len(methods) == 7  # LexSim + 3 estimators x 2 similarities
    figure1 = {(r["system"], r["quality"]): float(r["mean_prr"]) for r in read_csv(report / "tables" /
                                                                                    "figure1_mean_prr.csv")}
    assert len(figure1) == 6
    for (name, quality), value in figure1.items():
        assert value == pytest.approx(np.mean([prr[name, quality, k, m] for k in BEAM_SIZES for m in methods]))
    figure2 = read_csv(report / "tables" / "figure2_mean_prr_by_k.csv")
    assert len(figure2) == 6
    for row in figure2:
        values = [prr[row["system"], q, int(row["k"]), m] for q in QUALITIES for m in methods]
        assert float(row["mean_prr"]) == pytest.approx(np.mean(values))
    families = read_csv(report / "tables" / "families.csv")
    assert {r["family"] for r in families} == {"LexSim", "EigV", "DegMat", "Ecc"} and len(families) == 3 * 2 * 2 * 4
    for row in families:
        members = [m for m in methods if m.split("-")[0] == row["family"]]
        assert len(members) == (1 if row["family"] == "LexSim" else 2)
        values = [prr[row["system"], row["quality"], int(row["k"]), m] for m in members]
        assert float(row["mean_prr"]) == pytest.approx(np.mean(values))
    stability = read_csv(report / "tables" / "figure5_stability.csv")
    assert len(stability) == 2 * 7 * 2
    for row in stability:
        values = [prr[name, row["quality"], int(row["k"]), row["method"]] for name in SYSTEMS]
        assert float(row["mean_prr"]) == pytest.approx(np.mean(values))
    for name in ("figure1_mean_prr", "figure2_mean_prr_by_k", "figure5_stability", "families_smatchpp",
                 "families_sembleu", "agreement_smatchpp", "agreement_sembleu", "figure4_performance_vs_prr"):
        assert (report / "figures" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_table4_is_the_largest_beam_with_the_best_marked(report):
    prr = per_system_prr(report)
    rows = read_csv(report / "tables" / "table4.csv")
    assert len(rows) == 7 * 3 * 2 and {r["k"] for r in rows} == {"5"}
    text = (report / "report.md").read_text(encoding="utf-8")
    for name, quality in itertools.product(SYSTEMS, QUALITIES):
        column = {r["method"]: r for r in rows if r["system"] == name and r["quality"] == quality}
        for method, row in column.items():
            assert float(row["prr"]) == prr[name, quality, 5, method]
        best = max(column, key=lambda m: prr[name, quality, 5, m])
        assert [m for m, r in column.items() if r["best"] == "1"] == [best]
        assert f"**{prr[name, quality, 5, best]:.4f}**" in text


def test_estimator_agreement_is_spearman_over_systems_and_beam_sizes(report):
    prr = per_system_prr(report)
    methods = methods_of(prr)
    for quality in QUALITIES:
        points = np.array([[prr[name, quality, k, m] for m in methods] for name in SYSTEMS for k in BEAM_SIZES])
        expected = spearmanr(points).statistic
        rows = read_csv(report / "tables" / f"agreement_{quality}.csv")
        got = np.array([[float(row[m]) for m in methods] for row in rows])
        assert [row["method"] for row in rows] == methods
        np.testing.assert_allclose(got, expected, atol=1e-12)


def test_performance_correlation_against_scipy(report, inputs):
    _, beams, _ = inputs
    reference = gold_of(beams)
    prr = per_system_prr(report)
    methods = methods_of(prr)
    smatch = {name: corpus("smatch", [b["candidates"][0] for b in beams[name]], reference) for name in SYSTEMS}
    rows = {r["quality"]: r for r in read_csv(report / "tables" / "performance_correlation.csv")}
    assert list(rows) == list(QUALITIES)
    for quality, row in rows.items():
        # 3 systems: below the 5 points of any reported rank correlation, so no rho and no p (exact p >= 1/3)
        assert math.isnan(float(row["rho_systems"])) and math.isnan(float(row["p_systems"]))
        assert row["n_systems"] == "3" and row["performance"] == "smatch"
        x = [smatch[n] for n in SYSTEMS for _ in BEAM_SIZES]
        y = [np.mean([prr[n, quality, k, m] for m in methods]) for n in SYSTEMS for k in BEAM_SIZES]
        points = spearmanr(x, y)
        assert float(row["rho_points"]) == pytest.approx(points.statistic)
        exact = permutation_test((y,), lambda b, x=x: spearmanr(x, b).statistic, permutation_type="pairings",
                                 n_resamples=np.inf, alternative="two-sided").pvalue
        assert float(row["p_points"]) == pytest.approx(exact)  # 6 points: the exact p, not the t approximation
        assert row["n_points"] == "6"


def test_pairwise_differences_are_figure1_differences(report):
    figure1 = {(r["system"], r["quality"]): float(r["mean_prr"])
               for r in read_csv(report / "tables" / "figure1_mean_prr.csv")}
    rows = read_csv(report / "tables" / "pairwise.csv")
    assert [(r["quality"], r["system_a"], r["system_b"]) for r in rows] == [
        (q, a, b) for q in QUALITIES for a, b in itertools.combinations(SYSTEMS, 2)]
    for row in rows:
        a, b, quality = row["system_a"], row["system_b"], row["quality"]
        assert float(row["prr_a"]) == pytest.approx(figure1[a, quality])
        assert float(row["difference"]) == pytest.approx(figure1[a, quality] - figure1[b, quality])
        assert float(row["ci_low"]) < float(row["ci_high"])
        assert row["n"] == "32" and row["resamples"] == "40"
    text = (report / "report.md").read_text(encoding="utf-8")
    assert "## Is one system more reliable than another? (paired bootstrap)" in text
    for name in SYSTEMS:
        assert (report / name / "report.md").exists()


def small_config(cache: Path, **changes) -> StudyConfig:
    settings = dict(similarities=(COUNTING.name,), qualities=("smatchpp",), beam_sizes=(3, 5), n_bootstrap=40,
                    workers=1, progress=False, cache_dir=cache)
    settings.update(changes)
    return StudyConfig(**settings)


def test_same_candidates_cost_nothing_twice_and_pair_exactly(inputs, tmp_path):
    """A copy of a system (other file, same content) adds no similarity computation and no cache file, and
    its paired difference is exactly 0 with interval [0, 0]: both are resampled on the same examples."""
    folder, beams, paths = inputs
    copy = write_jsonl(tmp_path / "copy.jsonl", beams["strong"])
    run_study(paths["strong"], folder / "gold.jsonl", small_config(tmp_path / "alone"))
    alone = CALLS["score"]
    assert alone > 0
    CALLS.clear()
    specs = [SystemSpec("strong", tuple(map(str, paths["strong"]))), SystemSpec("copy", (str(copy),))]
    study = run_systems(specs, folder / "gold.jsonl", small_config(tmp_path / "shared"))
    assert CALLS["score"] == alone
    files = lambda root: sorted(p.name for p in root.rglob("*.npz") if COUNTING.name in str(p))  # noqa: E731
    assert files(tmp_path / "shared") == files(tmp_path / "alone") and files(tmp_path / "alone")
    [difference] = study.pairwise
    assert (difference.difference, difference.ci_low, difference.ci_high) == (0.0, 0.0, 0.0)
    assert difference.resamples == 40


def test_no_cache_still_shares_matrices_between_systems(inputs, tmp_path):
    folder, beams, paths = inputs
    copy = write_jsonl(tmp_path / "copy.jsonl", beams["strong"])
    args = ue_args({"strong": paths["strong"], "copy": [copy]}, folder / "gold.jsonl", tmp_path / "out",
                   tmp_path / "unused", "--no-cache", "--similarities", COUNTING.name, "--qualities", "smatchpp",
                   "--beam-sizes", "5", "--n-bootstrap", "0")
    assert run_ue(args) == 0
    shared = CALLS["score"]
    CALLS.clear()
    run_study(paths["strong"], folder / "gold.jsonl", small_config(None, n_bootstrap=0, beam_sizes=(5,)))
    assert shared == CALLS["score"] > 0
    assert not (tmp_path / "unused").exists()


def test_different_examples_are_an_error_before_any_work(inputs, tmp_path):
    folder, beams, paths = inputs
    fewer = write_jsonl(tmp_path / "fewer.jsonl", beams["middle"][:-2])
    specs = [SystemSpec("strong", tuple(map(str, paths["strong"]))), SystemSpec("fewer", (str(fewer),))]
    with pytest.raises(DataError) as error:
        run_systems(specs, folder / "gold.jsonl", small_config(tmp_path / "cache"))
    message = str(error.value)
    missing = [row["id"] for row in beams["middle"][-2:]]
    assert "fewer.jsonl" in message and "system fewer lacks 2 example(s) that system strong has" in message
    assert all(example in message for example in missing)
    assert CALLS["score"] == 0 and not (tmp_path / "cache").exists()


def test_system_options_are_checked(inputs, tmp_path):
    folder, _, paths = inputs
    good = str(paths["strong"][0])
    with pytest.raises(ConfigError, match="expected NAME=BEAMS"):
        parse_systems([good])
    with pytest.raises(ConfigError, match="the name is given twice"):
        parse_systems([f"a={good}", f"A={good}"])
    with pytest.raises(ConfigError, match="no such file"):
        parse_systems([f"a={tmp_path / 'missing.jsonl'}"])
    with pytest.raises(ConfigError, match="must be a folder name"):
        parse_systems([f"figures={good}"])
    both = ue_args({"a": paths["strong"]}, folder / "gold.jsonl", tmp_path / "out", tmp_path / "cache")
    both.beams = [good]
    with pytest.raises(ConfigError, match="not both"):
        run_ue(both)
    assert not (tmp_path / "out").exists()


def test_a_system_without_a_common_beam_size(inputs, tmp_path):
    folder, beams, paths = inputs
    short = write_jsonl(tmp_path / "short.jsonl", [{**row, "candidates": row["candidates"][:2]}
                                                   for row in beams["middle"]])
    specs = [SystemSpec("strong", tuple(map(str, paths["strong"]))), SystemSpec("short", (str(short),))]
    with pytest.raises(ConfigError, match=r"share no beam size \(strong: 3, 5; short: 2\)"):
        run_systems(specs, folder / "gold.jsonl", small_config(tmp_path / "cache"))
    assert CALLS["score"] == 0


def test_one_shared_beam_size_and_two_points_skip_the_degenerate_parts(inputs, tmp_path):
    """Two systems compared at a single beam size: no against-k figures or Figure-5 difference column, no
    estimator-agreement heatmap and no rho from 2 points; the report says why for each."""
    folder, _, paths = inputs
    two = {name: paths[name] for name in ("strong", "middle")}
    out = tmp_path / "out"
    assert run_ue(ue_args(two, folder / "gold.jsonl", out, folder / "cache", "--beam-sizes", "3")) == 0
    figures = sorted(p.stem for p in (out / "figures").iterdir())
    assert figures == ["figure1_mean_prr"]  # no Figure 4 either: its rho would rest on 2 points
    text = (out / "report.md").read_text(encoding="utf-8")
    assert text.count("share a single beam size (k = 3)") == 2
    assert "k=3 - k=3" not in text
    assert text.count("Figure not drawn. Not computed: 2 system x beam-size configuration(s)") == len(QUALITIES)
    assert "Figure 4 not drawn. Not computed: 2 system x beam-size point(s)" in text
    assert "figure4_performance_vs_prr.png" not in text
    assert "| Smatch++ | n/a | none (n = 2) | 2 | n/a | none (n = 2) | 2 |" in text
    assert "needs at least 5 points" in text


def test_systems_with_one_candidate_are_refused_before_any_work(inputs, tmp_path):
    """Single-output parsers (issue 38): no uncertainty from candidates, so no cross-system report of noise."""
    folder, beams, paths = inputs
    single = {name: write_jsonl(tmp_path / f"{name}1.jsonl", [{**row, "candidates": row["candidates"][:1]}
                                                              for row in beams[name]]) for name in SYSTEMS}
    out = tmp_path / "out"
    with pytest.raises(DataError) as error:
        run_ue(ue_args({name: [path] for name, path in single.items()}, folder / "gold.jsonl", out,
                       tmp_path / "cache", "--similarities", COUNTING.name))
    message = str(error.value)
    assert message.startswith(", ".join(f"system {name} ({single[name]})" for name in SYSTEMS)
                              + ": one candidate per example (k = 1)")
    assert "LexSim, EigV, DegMat, Ecc would give every example the same value" in message
    assert CALLS["score"] == 0 and not out.exists() and not (tmp_path / "cache").exists()
    mixed = [SystemSpec("strong", tuple(map(str, paths["strong"]))), SystemSpec("weak", (str(single["weak"]),))]
    with pytest.raises(DataError, match=rf"^system weak \({single['weak']}\): one candidate per example"):
        run_systems(mixed, folder / "gold.jsonl", small_config(tmp_path / "cache", beam_sizes=(1, 3)))
    assert CALLS["score"] == 0


def _table_cells(text: str, title: str) -> dict[str, dict[str, str]]:
    """A markdown table of report.md after the heading ``title``: row label -> column header -> cell."""
    lines = text.split(title, 1)[1].strip().splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0]] = dict(zip(header[1:], cells[1:], strict=True))
    return rows


def test_constant_uncertainty_is_in_no_cross_system_number(inputs, tmp_path):
    """A system whose candidates are copies of its top-1: every estimator is constant, so its PRRs (0 by
    construction) are never bold, enter no mean, correlation or paired comparison, and are marked as in its own
    report; 2 other systems x 2 beam sizes are 4 points, too few for the estimator-agreement heatmaps."""
    folder, beams, paths = inputs
    copies = write_jsonl(tmp_path / "copies.jsonl", [{**row, "candidates": row["candidates"][:1] * K}
                                                     for row in beams["middle"]])
    systems = {"strong": paths["strong"], "weak": paths["weak"], "copies": [copies]}
    out = tmp_path / "out"
    assert run_ue(ue_args(systems, folder / "gold.jsonl", out, folder / "cache", "--qualities", "smatchpp")) == 0
    own = read_csv(out / "copies" / "prr.csv")
    assert {row["constant_uncertainty"] for row in own} == {"True"}  # the per-system decision the report reuses
    table4 = read_csv(out / "tables" / "table4.csv")
    for row in table4:
        assert row["constant_uncertainty"] == str(row["system"] == "copies")
    assert not [row for row in table4 if row["system"] == "copies" and row["best"] == "1"]
    assert sum(row["best"] == "1" for row in table4) == 2  # one best in each other column
    text = (out / "report.md").read_text(encoding="utf-8")
    cells = _table_cells(text, "## Table 4: PRR at beam size k = 5 (best per column in bold)")
    assert all(row["copies Smatch++"].endswith("†") and "**" not in row["copies Smatch++"] for row in cells.values())
    assert not any(row["strong Smatch++"].endswith("†") for row in cells.values())
    figure1 = {r["system"]: float(r["mean_prr"]) for r in read_csv(out / "tables" / "figure1_mean_prr.csv")}
    assert math.isnan(figure1["copies"]) and not math.isnan(figure1["strong"])
    for row in read_csv(out / "tables" / "pairwise.csv"):
        if "copies" in (row["system_a"], row["system_b"]):
            assert row["verdict"] == "n/a" and math.isnan(float(row["ci_low"])) and row["resamples"] == "0"
        else:
            assert float(row["ci_low"]) < float(row["ci_high"])
    [correlation] = read_csv(out / "tables" / "performance_correlation.csv")
    assert (correlation["n_systems"], correlation["n_points"]) == ("2", "4")
    assert "every estimator is constant for copies k=3, copies k=5" in text
    assert ("Figure not drawn. Not computed: 4 system x beam-size configuration(s) with a PRR of every estimator "
            "(constant uncertainties left out)") in text
    assert not (out / "figures" / "agreement_smatchpp.png").exists()
    assert not (out / "figures" / "figure4_performance_vs_prr.png").exists()


@pytest.mark.slow  # over 10 s in-process: make check leaves it to make test
def test_coverage_at_the_same_target_risk_per_system(inputs, tmp_path, capsys):
    """With --target-risk, each system's threshold is calibrated on the same ids (at the common largest k),
    the cross-system report tabulates the held-out coverage, and tables/selective.csv holds the rules."""
    from lsplits.uncertainty.selective import calibrate_threshold, calibration_mask, selective_risk

    folder, _, paths = inputs
    out = tmp_path / "out"
    assert run_ue(ue_args(paths, folder / "gold.jsonl", out, folder / "cache", "--target-risk", "0.5",
                          "--delta", "0.2", "--calibration-fraction", "0.6")) == 0
    assert "Coverage at the same target risk" in capsys.readouterr().out
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Coverage at the same target risk" in report and "at most **0.5**" in report
    rows = read_csv(out / "tables" / "selective.csv")
    assert {r["system"] for r in rows} == set(SYSTEMS) and {r["k"] for r in rows} == {str(max(BEAM_SIZES))}
    study = run_systems([SystemSpec(name, tuple(map(str, files))) for name, files in paths.items()],
                        folder / "gold.jsonl", small_config(folder / "cache", similarities=SIMILARITIES,
                                                            qualities=QUALITIES, beam_sizes=BEAM_SIZES,
                                                            target_risk=0.5, delta=0.2, calibration_fraction=0.6))
    for system in study.systems:
        per = system.study
        split = calibration_mask(per.inputs.ids, 0.6, 0)
        calibrating = {i for i, c in zip(per.inputs.ids, split, strict=True) if c}
        assert len(calibrating) == round(0.6 * len(per.inputs.ids))
        for method in study.methods:
            row = study.selective[method, system.name, QUALITIES[0]]
            u, q = per.uncertainties[max(BEAM_SIZES)][method], per.qualities[QUALITIES[0]]
            rule = calibrate_threshold(u[split], q[split], target_risk=0.5, delta=0.2)
            assert (row.rule.threshold, row.rule.certified, row.rule.accepted, row.rule.n) == (
                rule.threshold, rule.certified, rule.accepted, rule.n)
            assert (row.coverage, row.risk) == pytest.approx(selective_risk(rule, u[~split], q[~split]), nan_ok=True)
        # the same ids calibrate every system
        assert calibrating == {i for i, c in zip(study.systems[0].study.inputs.ids,
                                                 calibration_mask(study.systems[0].study.inputs.ids, 0.6, 0),
                                                 strict=True) if c}


def test_calibration_files_are_for_one_system(inputs, tmp_path):
    folder, _, paths = inputs
    with pytest.raises(ConfigError, match="--calibration is for one system"):
        run_ue(ue_args(paths, folder / "gold.jsonl", tmp_path / "out", tmp_path / "cache", "--target-risk", "0.5",
                       "--calibration", str(paths["strong"][0]), "--calibration-gold", str(folder / "gold.jsonl")))


def test_spearman_p_value_is_exact_for_few_points_and_absent_below_five():
    """3 systems gave `p = 0.000` (scipy's t approximation at rho = 1); the exact p there is 1/3, so neither rho
    nor p is given below 5 points."""
    from types import SimpleNamespace

    from lsplits.uncertainty.systems import PerformanceCorrelation, _spearman_pair, exact_spearman_p
    from lsplits.uncertainty.systems_report import correlation_markdown

    assert spearmanr([1, 2, 3], [1, 2, 3]).pvalue == 0.0  # what the report printed
    assert exact_spearman_p([1, 2, 3], [1, 2, 3]) == pytest.approx(1 / 3)
    rho, p = _spearman_pair([0.71, 0.74, 0.80], [0.2, 0.3, 0.5])
    assert np.isnan(rho) and np.isnan(p)
    assert all(np.isnan(_spearman_pair([1, 2, 3, 4], [1, 2, 3, 4])))  # n = 4: exact p 1/12 at best
    x, y = [0.3, 0.1, 0.5, 0.9, 0.7, 0.2, 0.4], [0.2, 0.3, 0.4, 0.8, 0.5, 0.3, 0.9]  # a tie in y
    scipy_exact = permutation_test((y,), lambda b: spearmanr(x, b).statistic, permutation_type="pairings",
                                   n_resamples=np.inf, alternative="two-sided").pvalue
    assert _spearman_pair(x, y)[1] == pytest.approx(scipy_exact, abs=1e-12)
    assert _spearman_pair(list(range(5)), list(range(5)))[1] == pytest.approx(2 / 120)
    study = SimpleNamespace(correlations=[PerformanceCorrelation("smatchpp", 1.0, math.nan, 3, 0.7, 0.0123, 12)])
    table = correlation_markdown(study)
    assert "| n/a | none (n = 3) |" in table and "| 0.012 (n = 12) |" in table
    assert "needs at least 5 points" in table
