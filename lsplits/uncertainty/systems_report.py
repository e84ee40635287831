"""Writing a :class:`~lsplits.uncertainty.systems.SystemsStudy`: per-system reports plus the cross-system one.

``DIR/NAME/`` holds each system's usual ``lsplits ue`` report (:func:`~lsplits.uncertainty.report.write_report`);
``DIR/report.md`` the cross-system tables in the paper's shapes (Table 1, Figures 1, 2, 4, 5, 6/8/11, 7/9/10,
Table 4, the pairwise differences), ``DIR/figures/`` their PNGs (drawn by :mod:`.plots`), ``DIR/tables/`` their
CSVs and ``DIR/systems.csv`` one row per (system, quality, k, method) with the per-system reports' numbers.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path

from lsplits.io.guard import output_folder
from lsplits.similarity.registry import display
from lsplits.uncertainty._format import CONSTANT_MARK, MIN_CORRELATION_POINTS, too_few_points
from lsplits.uncertainty._format import number as _number
from lsplits.uncertainty._format import rho as _rho_text
from lsplits.uncertainty._format import table as _table
from lsplits.uncertainty.plots import (
    agreement_figure,
    families_figure,
    figure1,
    figure2,
    performance_figure,
    stability_figure,
)
from lsplits.uncertainty.report import write_report
from lsplits.uncertainty.systems import (
    EXACT_P_VALUE_POINTS,
    PERFORMANCE_METRIC,
    TABLE1_METRICS,
    SystemsStudy,
    family_order,
    systems_rows,
)

SYSTEMS_CSV_COLUMNS = ("system", "quality", "k", "method", "prr", "ci_low", "ci_high", "top1_corpus", "n")
FAMILY_FIGURES = {"sembleu": "Figure 7", "smatchpp": "Figure 9", "s2match": "Figure 10"}
AGREEMENT_FIGURES = {"smatchpp": "Figure 6", "s2match": "Figure 8", "sembleu": "Figure 11"}


def _by_beam_size(study: SystemsStudy) -> bool:
    """Whether the against-beam-size tables and figures say anything: at least two beam sizes compared."""
    return len(study.beam_sizes) > 1


def _single_beam_note(study: SystemsStudy) -> str:
    return (f"Skipped: the systems share a single beam size (k = {study.beam_sizes[0]}), so there is no trend "
            "against beam size to show; Table 4 has the PRR at that size.")


def _p(value: float, n: int) -> str:
    """A p-value with its n, exact ones marked; "none" where there is none (too few points, constant input)."""
    if math.isnan(value):
        return f"none (n = {n})"
    return f"{value:.3f} ({'exact, ' if n <= EXACT_P_VALUE_POINTS else ''}n = {n})"


def _write_csv(path: Path, header: Sequence[str], rows) -> None:
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows(rows)


def _best(values: Sequence[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return max(finite) if finite else math.nan


# --- markdown ----------------------------------------------------------------------------------------


def table1_markdown(study: SystemsStudy) -> str:
    """Table 1: corpus Smatch and Smatch++ of each system's top-1 candidates."""
    rows = [[name, *(_number(study.table1[name][m], 4) for m in TABLE1_METRICS)] for name in study.names]
    return "\n".join(_table(["System", *map(display, TABLE1_METRICS)], rows))


def figure1_markdown(study: SystemsStudy) -> str:
    """Figure 1's numbers: mean PRR per system (rows) and quality metric (columns)."""
    rows = [[name, *(_number(study.mean_by_system[name, q]) for q in study.qualities)] for name in study.names]
    return "\n".join(_table(["System", *(f"mean PRR ({display(q)})" for q in study.qualities)], rows))


def figure2_markdown(study: SystemsStudy) -> str:
    """Figure 2's numbers: mean PRR per system (rows) and beam size (columns)."""
    rows = [[name, *(_number(study.mean_by_beam[name, k]) for k in study.beam_sizes)] for name in study.names]
    return "\n".join(_table(["System", *(f"k={k}" for k in study.beam_sizes)], rows))


def correlation_markdown(study: SystemsStudy) -> str:
    """RQ1: Spearman rho between top-1 Smatch and mean PRR, over systems and over system x beam points."""
    rows = [[display(c.quality), _rho_text(c.rho_systems, c.n_systems), _p(c.p_systems, c.n_systems), str(c.n_systems),
             _rho_text(c.rho_points, c.n_points), _p(c.p_points, c.n_points), str(c.n_points)]
            for c in study.correlations]
    lines = _table(["Quality metric", "rho (systems)", "p", "systems", "rho (system x k points)", "p", "points"], rows)
    if any(min(c.n_systems, c.n_points) < MIN_CORRELATION_POINTS for c in study.correlations):
        lines += ["", f"n/a: a rank correlation needs at least {MIN_CORRELATION_POINTS} points (below that even a "
                  "perfect one is not significant: n = 4: p = 0.083; n = 3: 0.333)."]
    lines += ["", f"p: two-sided, exact (over all n! orderings) up to {EXACT_P_VALUE_POINTS} points, from the t "
              "approximation above. The system x k points of one system share its top-1 score, so they are not "
              "independent. Systems and points whose mean PRR rests only on constant uncertainty are left out."]
    return "\n".join(lines)


def pairwise_markdown(study: SystemsStudy) -> str:
    """Every two systems: difference of mean PRR with its paired bootstrap interval."""
    level = round(study.config.confidence * 100)
    rows = [[display(d.quality), d.system_a, d.system_b, _number(d.prr_a), _number(d.prr_b), _number(d.difference),
             f"[{_number(d.ci_low)}, {_number(d.ci_high)}]", d.verdict] for d in study.pairwise]
    return "\n".join(_table(["Quality metric", "A", "B", "mean PRR A", "mean PRR B", "A - B", f"{level}% CI",
                             "verdict"], rows))


def _families_markdown(study: SystemsStudy, quality: str) -> list[str]:
    families = sorted({f for (_, q, _, f) in study.families if q == quality}, key=family_order)
    rows = [[name, family, *(_number(study.families[name, quality, k, family]) for k in study.beam_sizes)]
            for name in study.names for family in families]
    return _table(["System", "Estimator family", *(f"k={k}" for k in study.beam_sizes)], rows)


def _stability_markdown(study: SystemsStudy, quality: str) -> list[str]:
    ks = study.beam_sizes
    rows = []
    for method in study.methods:
        values = [study.stability[quality, method, k] for k in ks]
        rows.append([method, *map(_number, values), _number(values[-1] - values[0])])
    return _table(["UE method", *(f"k={k}" for k in ks), f"k={ks[-1]} - k={ks[0]}"], rows)


def _table4_best(study: SystemsStudy) -> dict[tuple[str, str], float]:
    """The best PRR of each (system, quality) column of Table 4, among the estimators whose uncertainty varies."""
    k = study.beam_sizes[-1]
    return {(s, q): _best([study.comparable_prr(s, k, m, q) for m in study.methods])
            for s in study.names for q in study.qualities}


def table4_markdown(study: SystemsStudy) -> str:
    """Table 4: PRR at the largest beam size, estimator x (system, quality metric), best per column in bold (never
    a constant uncertainty's PRR, marked with a dagger)."""
    k = study.beam_sizes[-1]
    columns = [(s, q) for s in study.names for q in study.qualities]
    best = _table4_best(study)
    rows = []
    for method in study.methods:
        cells = [method]
        for system, quality in columns:
            value = study.largest[method, system, quality].prr
            text = _number(value, 4)
            cells.append(text + CONSTANT_MARK if study.is_constant(system, k, method, quality)
                         else f"**{text}**" if value == best[system, quality] else text)
        rows.append(cells)
    lines = _table(["UE method", *(f"{s} {display(q)}" for s, q in columns)], rows)
    if any(study.is_constant(s, k, m, q) for m in study.methods for s, q in columns):
        lines += ["", f"{CONSTANT_MARK} constant uncertainty: the estimator gives every example of that system the "
                  "same value, so it cannot rank them (PRR 0 by construction); never bold, and left out of every "
                  "mean, correlation and comparison."]
    return "\n".join(lines)


def selective_markdown(study: SystemsStudy) -> str:
    """The held-out coverage each system keeps at the target risk: estimator x system, one table per quality."""
    if not study.selective:
        return ""
    first = next(iter(study.selective.values()))
    loss = ("1 - quality" if study.config.selective_loss == "1-quality"
            else f"the rate of quality < {study.config.bad_below:g}")
    lines = [f"Share of held-out outputs each system keeps under the threshold certified to keep the selective risk "
             f"(mean {loss} of the kept) at most **{first.rule.target_risk:g}** with probability >= "
             f"{1 - first.rule.delta:g} ({first.rule.method}, {first.rule.multiple_testing}, k = {first.k}; "
             f"{first.rule.n} calibration examples, "
             f"the same ids in every system). Achieved held-out risk in brackets; \"none\": nothing certified, "
             "everything rejected. Thresholds and bounds are in `tables/selective.csv` and each system's report."]
    for quality in study.qualities:
        rows = []
        for method in study.methods:
            cells = [method]
            for system in study.names:
                row = study.selective[method, system, quality]
                cells.append(f"{_number(row.coverage)} [{_number(row.risk)}]" if row.rule.certified else "none")
            rows.append(cells)
        lines += ["", f"### Quality: {display(quality)}", "", *_table(["UE method", *study.names], rows)]
    return "\n".join(lines)


def _agreement_markdown(study: SystemsStudy, quality: str) -> list[str]:
    matrix = study.agreement[quality]
    rows = [[f"{i + 1}. {m}", *(_number(v, 2) for v in matrix[i])] for i, m in enumerate(study.methods)]
    return _table(["UE method", *(str(i + 1) for i in range(len(study.methods)))], rows)


def _systems_section(study: SystemsStudy) -> list[str]:
    lines = []
    for system in study.systems:
        inputs = system.study.inputs
        total = sum(len(c) for c in inputs.candidates)
        invalid = ", ".join(f"{display(name)} {int(counts.sum())}" for name, counts in
                            system.study.invalid_candidates.items())
        lines.append(f"- **{system.name}**: {', '.join(f'`{b}`' for b in system.beams)}; {len(inputs.ids)} examples, "
                     f"{total} candidates; invalid candidates: {invalid or 'none checked'}; "
                     f"report: [{system.name}/report.md]({system.name}/report.md)")
    dropped = sorted({k for s in study.systems for k in s.study.beam_sizes} - set(study.beam_sizes))
    lines.append(f"- beam sizes compared: {', '.join(map(str, study.beam_sizes))}"
                 + (f" (only some systems offer {', '.join(map(str, dropped))}: in their own reports only)"
                    if dropped else ""))
    lines.append(f"- estimators: {len(study.methods)} ({', '.join(study.methods)}); quality metrics: "
                 f"{', '.join(map(display, study.qualities))}")
    if study.undefined:
        lines.append(f"- {study.undefined} PRR value(s) are undefined (NaN: equal qualities) and left out of the means")
    constant = constant_line(study)
    return lines + ([f"- {constant}"] if constant else [])


def constant_line(study: SystemsStudy) -> str | None:
    """The line saying how many PRR values rest on constant uncertainty, left out of every cross-system number, and
    which system x beam size has nothing else; None when none does."""
    if not study.constant:
        return None
    blind = [f"{s} k={k}" for s in study.names for k in study.beam_sizes
             if all(study.is_constant(s, k, m, q) for m in study.methods for q in study.qualities)]
    return (f"{CONSTANT_MARK} {study.constant} PRR value(s) rest on constant uncertainty (an estimator that gives "
            "every example the same value, as its system's report marks): left out of every mean, correlation, "
            "best and paired comparison (n/a where nothing else is left)"
            + (f"; every estimator is constant for {', '.join(blind)}" if blind else ""))


def _performance_drawn(study: SystemsStudy) -> bool:
    """Whether Figure 4 is drawn: some quality metric has enough system x beam-size points for its rho."""
    return any(c.n_points >= MIN_CORRELATION_POINTS for c in study.correlations)


def _performance_note(study: SystemsStudy) -> str:
    fewest = max(c.n_points for c in study.correlations)
    return f"Figure 4 not drawn. {too_few_points(fewest, 'system x beam-size point(s) with a mean PRR')}"


def render_markdown(study: SystemsStudy) -> str:
    """The whole cross-system ``report.md``."""
    config = study.config
    k = study.beam_sizes[-1]
    level = round(config.confidence * 100)
    n = len(study.ids)
    lines = ["# Uncertainty estimation across systems", "",
             f"{len(study.systems)} systems on the same {n} examples. PRR: 1 = oracle, 0 = random, < 0 harmful. "
             "Each system's own report (every table of `lsplits ue`) is in its folder.", "",
             "## Systems", "", *_systems_section(study),
             "", "## Table 1: top-1 performance (corpus scores)", "", table1_markdown(study),
             "", "## Figure 1: mean PRR per system and quality metric", "",
             "Averaged over all estimators and beam sizes.", "", figure1_markdown(study), "",
             "![Figure 1](figures/figure1_mean_prr.png)",
             "", "## Figure 2: mean PRR against beam size", "",
             *(["Averaged over all estimators and quality metrics.", "", figure2_markdown(study), "",
                "![Figure 2](figures/figure2_mean_prr_by_k.png)"] if _by_beam_size(study)
               else [_single_beam_note(study)]),
             "", "## Does a better parser give more reliable uncertainty? (RQ1, Figure 4)", "",
             f"Spearman rho between top-1 {display(PERFORMANCE_METRIC)} and mean PRR: over systems (each system's "
             "Figure-1 value), and, as the paper's Figure 4, over system x beam-size points (mean PRR over "
             "estimators at each beam size; a system's points share its top-1 score). The paper reports 0.388 "
             "(Smatch++), 0.317 (S2match), 0.360 (SemBLEU) over 6 parsers x 4 beam sizes. Fewer than 3 systems "
             "say little.", "", correlation_markdown(study), "",
             "![Figure 4](figures/figure4_performance_vs_prr.png)" if _performance_drawn(study)
             else _performance_note(study),
             "", "## Is one system more reliable than another? (paired bootstrap)", "",
             f"Difference of the Figure-1 mean PRR of A and B, with a {level}% percentile interval over "
             f"{config.n_bootstrap} paired bootstrap resamples: each resample draws the same examples for both "
             "systems. The verdict names the more reliable system when the interval excludes 0.", "",
             pairwise_markdown(study) if study.pairwise else "(one system: nothing to compare)"]
    if _by_beam_size(study):
        for quality in study.qualities:
            figure = FAMILY_FIGURES.get(quality, "Figures 7/9/10")
            lines += ["", f"## {figure}: PRR against beam size per system, {display(quality)}", "",
                      "Each estimator family is the mean over its similarity functions; random rejection is 0.", "",
                      *_families_markdown(study, quality), "", f"![{figure}](figures/families_{quality}.png)"]
        lines += ["", "## Figure 5: estimator stability across beam sizes (mean PRR over systems)", "",
                  "Last column: the change of mean PRR from the smallest to the largest beam size.", ""]
        for quality in study.qualities:
            lines += [f"### Quality: {display(quality)}", "", *_stability_markdown(study, quality), ""]
        lines += ["![Figure 5](figures/figure5_stability.png)"]
    else:
        lines += ["", "## Figures 7/9/10 and 5: PRR against beam size", "", _single_beam_note(study)]
    lines += ["", f"## Table 4: PRR at beam size k = {k} (best per column in bold)", "", table4_markdown(study)]
    if study.selective:
        lines += ["", "## Coverage at the same target risk (risk-controlled selective prediction)", "",
                  selective_markdown(study)]
    for quality in study.qualities:
        figure = AGREEMENT_FIGURES.get(quality, "Figures 6/8/11")
        points = study.agreement_points[quality]
        lines += ["", f"## {figure}: Spearman correlation between estimators, {display(quality)}", ""]
        note = too_few_points(points, "system x beam-size configuration(s) with a PRR of every estimator "
                                      "(constant uncertainties left out)")
        if note is None:
            lines += [f"Correlation of the estimators' PRR over {points} system x beam-size configurations.", "",
                      *_agreement_markdown(study, quality), "", f"![{figure}](figures/agreement_{quality}.png)"]
        else:
            lines += [f"Figure not drawn. {note}"]
    lines += ["", "## Settings", "",
              f"- similarities: {', '.join(map(display, config.similarities))}; LexSim uses ROUGE-L",
              f"- bootstrap: {config.n_bootstrap} resamples, seed {config.seed}, {level}% intervals",
              "- every number is in a CSV: `systems.csv` (one row per system, quality, k, method) and `tables/`", ""]
    return "\n".join(lines)


def summary_markdown(study: SystemsStudy) -> str:
    """What the CLI prints: Table 1, Figure 1's numbers, the performance-PRR correlation, the pairwise table."""
    return "\n\n".join(["Table 1: top-1 performance", table1_markdown(study),
                         "Figure 1: mean PRR over estimators and beam sizes", figure1_markdown(study),
                         *filter(None, [constant_line(study)]),
                         f"Top-1 {display(PERFORMANCE_METRIC)} vs mean PRR (Spearman)", correlation_markdown(study),
                         "Paired bootstrap differences of mean PRR",
                         pairwise_markdown(study) if study.pairwise else "(one system: nothing to compare)",
                         *(["Coverage at the same target risk", selective_markdown(study)] if study.selective
                           else [])])


# --- CSV -----------------------------------------------------------------------------------------------


def _write_tables(study: SystemsStudy, folder: Path) -> None:
    tables = folder / "tables"
    tables.mkdir()
    _write_csv(folder / "systems.csv", SYSTEMS_CSV_COLUMNS, systems_rows(study))
    _write_csv(tables / "table1.csv", ["system", *TABLE1_METRICS, "n"],
               ([s, *(study.table1[s][m] for m in TABLE1_METRICS), len(study.ids)] for s in study.names))
    _write_csv(tables / "figure1_mean_prr.csv", ["system", "quality", "mean_prr"],
               ([s, q, v] for (s, q), v in study.mean_by_system.items()))
    _write_csv(tables / "figure2_mean_prr_by_k.csv", ["system", "k", "mean_prr"],
               ([s, k, v] for (s, k), v in study.mean_by_beam.items()))
    _write_csv(tables / "families.csv", ["system", "quality", "k", "family", "mean_prr"],
               ([*key, v] for key, v in study.families.items()))
    _write_csv(tables / "figure5_stability.csv", ["quality", "method", "k", "mean_prr"],
               ([*key, v] for key, v in study.stability.items()))
    k = study.beam_sizes[-1]
    best = _table4_best(study)
    _write_csv(tables / "table4.csv", ["method", "system", "quality", "k", "prr", "ci_low", "ci_high", "best",
                                       "constant_uncertainty"],
               ([m, s, q, k, r.prr, r.ci_low, r.ci_high, int(not study.is_constant(s, k, m, q) and r.prr == best[s, q]),
                 study.is_constant(s, k, m, q)] for (m, s, q), r in study.largest.items()))
    for quality, matrix in study.agreement.items():
        _write_csv(tables / f"agreement_{quality}.csv", ["method", *study.methods],
                   ([m, *matrix[i]] for i, m in enumerate(study.methods)))
    _write_csv(tables / "performance_correlation.csv",
               ["quality", "performance", "rho_systems", "p_systems", "n_systems", "rho_points", "p_points",
                "n_points"],
               ([c.quality, PERFORMANCE_METRIC, c.rho_systems, c.p_systems, c.n_systems, c.rho_points, c.p_points,
                 c.n_points] for c in study.correlations))
    if study.selective:
        _write_csv(tables / "selective.csv",
                   ["method", "system", "quality", "k", "target_risk", "delta", "bound_method", "certified",
                    "threshold", "risk_bound", "calibration_coverage", "calibration_risk", "calibration_n",
                    "held_out_coverage", "held_out_risk", "held_out_n"],
                   ([m, s, q, r.k, r.rule.target_risk, r.rule.delta, r.rule.method, r.rule.certified, r.rule.threshold,
                     r.rule.bound, r.rule.coverage, r.rule.risk, r.rule.n, r.coverage, r.risk, r.held_out]
                    for (m, s, q), r in study.selective.items()))
    _write_csv(tables / "pairwise.csv",
               ["quality", "system_a", "system_b", "prr_a", "prr_b", "difference", "ci_low", "ci_high", "n",
                "resamples", "verdict"],
               ([d.quality, d.system_a, d.system_b, d.prr_a, d.prr_b, d.difference, d.ci_low, d.ci_high, d.n,
                 d.resamples, d.verdict] for d in study.pairwise))


# --- figures -------------------------------------------------------------------------------------------


def _plot_figures(study: SystemsStudy, folder: Path) -> None:
    figures = folder / "figures"
    figures.mkdir()
    made = {"figure1_mean_prr": figure1(study)}
    if _performance_drawn(study):
        made["figure4_performance_vs_prr"] = performance_figure(study)
    if _by_beam_size(study):
        made["figure2_mean_prr_by_k"] = figure2(study)
        made["figure5_stability"] = stability_figure(study)
        made.update((f"families_{quality}", families_figure(study, quality)) for quality in study.qualities)
    made.update((f"agreement_{quality}", agreement_figure(study, quality)) for quality in study.qualities
                if study.agreement_points[quality] >= MIN_CORRELATION_POINTS)
    for name, figure in made.items():
        figure.savefig(figures / f"{name}.png", dpi=110, bbox_inches="tight")


# --- the whole folder ------------------------------------------------------------------------


def write_systems_report(study: SystemsStudy, out: str | Path) -> Path:
    """Write every per-system report into ``out/NAME/`` and the cross-system report into ``out`` (atomically)."""
    out = Path(out)
    with output_folder(out) as folder:
        for system in study.systems:
            write_report(system.study, folder / system.name)
        _write_tables(study, folder)
        _plot_figures(study, folder)
        (folder / "report.md").write_text(render_markdown(study), encoding="utf-8")
    return out / "report.md"
