"""Writing a :class:`~lsplits.uncertainty.study.Study` as a report folder (markdown, CSV, PNG): ``lsplits ue``'s output.

``report.md`` has the paper's table shapes: top-1 quality per metric (Table 1), PRR of every
estimator x similarity against every quality metric at the largest beam size (Table 4), PRR across
beam sizes per quality metric (Figure 5's numbers), the Spearman correlation matrix between
estimators (Figure 6) and the rejection curves (PNG, one per quality metric and beam size, drawn by
:mod:`.plots`). The numbers are also written as CSV files for further analysis. Nothing is computed
here: every number comes from the study.

Degenerate inputs are said where the numbers are: a PRR whose estimator gives every example the same
uncertainty is marked with a dagger and never bold (if every estimator is constant, a note says the
estimators cannot distinguish examples and no best is marked), and examples without any valid
candidate get a note on how each estimator rates them.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from lsplits.io.guard import output_folder
from lsplits.similarity.registry import display
from lsplits.uncertainty._format import CONSTANT_MARK, too_few_points
from lsplits.uncertainty._format import number as _number
from lsplits.uncertainty._format import table as _table
from lsplits.uncertainty.estimators import GRAPH_ESTIMATORS
from lsplits.uncertainty.family_report import family_sections, skipped_lines
from lsplits.uncertainty.methods import method_name
from lsplits.uncertainty.plots import operating_points, rejection_figure
from lsplits.uncertainty.study import PRRRow, SelectiveRow, Study, too_few_to_certify

if TYPE_CHECKING:
    from lsplits.generation.cache import BeamsRecord

_LISTED = 20  # ids listed in the markdown; the CSV files hold all of them


def _prr_lookup(study: Study) -> dict[tuple[int, str, str], PRRRow]:
    return {(row.k, row.method, row.quality): row for row in study.prr}


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(f"`{i}`" for i in ids[:_LISTED]) + (" ..." if len(ids) > _LISTED else "")


def degenerate_notes(study: Study, k: int) -> list[str]:
    """Notes on estimators that cannot rank the examples at beam size k and on examples without a valid candidate."""
    rows = [row for row in study.prr if row.k == k]
    constant = [m for m in study.methods if any(r.constant_uncertainty for r in rows if r.method == m)]
    notes = []
    if rows and all(row.constant_uncertainty for row in rows):
        notes.append(f"**Note:** at k = {k} every estimator gives every example the same uncertainty (one candidate "
                     "per example, or identical candidates in every example): the estimators cannot distinguish "
                     "examples, so each PRR is 0 by construction (n/a where all qualities are equal) and no best is "
                     "marked.")
    elif constant:
        notes.append(f"{CONSTANT_MARK} constant uncertainty at k = {k}: {', '.join(constant)} give(s) every example "
                     "the same value, so cannot distinguish examples (PRR 0 by construction; never marked best).")
    lexical = study.uncertainties[k].get(method_name("lexsim", None))
    groups: dict[tuple[int, ...], list[str]] = {}  # the same examples invalid for several similarities: one part
    for name, examples in study.all_invalid.get(k, {}).items():
        if examples:
            groups.setdefault(tuple(examples), []).append(name)
    if groups:  # one note for every similarity, not one each
        parts = [f"{len(examples)} example(s) have no valid candidate for {', '.join(map(display, names))} at k = {k} "
                 f"({_ids([study.inputs.ids[i] for i in examples])})" for examples, names in groups.items()]
        similarities = [name for names in groups.values() for name in names]
        graph = (", ".join(method_name(e, similarities[0]) for e in GRAPH_ESTIMATORS) if len(similarities) == 1
                 else f"{', '.join(method_name(e, None) for e in GRAPH_ESTIMATORS)} over those similarities")
        union = sorted({i for examples in groups for i in examples})
        certain = int((lexical[union] == 0).sum()) if lexical is not None else 0
        notes.append(f"**Note:** {'; '.join(parts)}: {graph} give them the largest uncertainty possible for their "
                     "number of candidates (every candidate its own cluster), while LexSim compares the strings"
                     + (f" and rates {certain} of them as certain (identical strings)." if certain else "."))
    return notes


def _best(values: list[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return max(finite) if finite else math.nan


def main_table_markdown(study: Study) -> str:
    """PRR [CI] at the largest beam size: rows estimator x similarity, columns quality metrics."""
    k = study.beam_sizes[-1]
    lookup = _prr_lookup(study)
    qualities = list(study.qualities)
    best = {q: _best([lookup[k, m, q].result.prr for m in study.methods if not lookup[k, m, q].constant_uncertainty])
            for q in qualities}
    rows = []
    for method in study.methods:
        cells = [method]
        for q in qualities:
            row = lookup[k, method, q]
            result = row.result
            text = f"{_number(result.prr)} [{_number(result.ci_low)}, {_number(result.ci_high)}]"
            if row.constant_uncertainty:
                cells.append(text + CONSTANT_MARK)
            else:
                cells.append(f"**{text}**" if result.prr == best[q] else text)
        rows.append(cells)
    level = round(study.config.confidence * 100)
    header = ["UE method", *(f"PRR ({display(q)})" for q in qualities)]
    marked = "best per column in bold" if any(not math.isnan(v) for v in best.values()) else "no best marked"
    title = f"PRR at beam size k = {k} ({len(study.inputs.ids)} examples; [{level}% bootstrap CI]; {marked})"
    notes = degenerate_notes(study, k)
    return "\n".join([title, "", *_table(header, rows), *(["", *notes] if notes else [])])


def _beam_tables(study: Study) -> list[str]:
    lookup = _prr_lookup(study)
    lines: list[str] = []
    for q in study.qualities:
        lines += ["", f"### Quality: {display(q)}", ""]
        rows = [[m, *(_number(lookup[k, m, q].result.prr) + (CONSTANT_MARK if lookup[k, m, q].constant_uncertainty
                                                             else "") for k in study.beam_sizes)]
                for m in study.methods]
        lines += _table(["UE method", *(f"k={k}" for k in study.beam_sizes)], rows)
    if any(row.constant_uncertainty for row in study.prr):
        lines += ["", f"{CONSTANT_MARK} constant uncertainty: the estimator gives every example the same value at "
                      "that k, so it cannot distinguish examples (PRR 0 by construction)."]
    return lines


def _metrics_section(study: Study) -> list[str]:
    """The selected evaluation metrics at the largest beam size: one table per quality metric (empty if only PRR)."""
    from lsplits.uncertainty.ue_metrics import DISPLAY_NAMES, HIGHER_IS_BETTER

    if not study.metrics:
        return []
    k = study.beam_sizes[-1]
    names = list(dict.fromkeys(row.metric for row in study.metrics))
    values = {(row.method, row.quality, row.metric): row.value for row in study.metrics if row.k == k}
    lookup = _prr_lookup(study)
    lines = ["", f"## Uncertainty-evaluation metrics (k = {k})", "",
             "Arrows give the better direction. Bad predictions (ROC-AUC, PR-AUC positive class): quality < "
             f"{study.config.bad_below}; ECE after the {study.config.normalizer} normaliser; all values per beam "
             "size in `ue_metrics.csv`."]
    header = ["UE method", "PRR ↑", *(f"{DISPLAY_NAMES[n]} {'↑' if HIGHER_IS_BETTER[n] else '↓'}" for n in names)]
    for q in study.qualities:
        rows = [[m, _number(lookup[k, m, q].result.prr), *(_number(values[m, q, n]) for n in names)] for m in study.methods]
        lines += ["", f"### Quality: {display(q)}", "", *_table(header, rows)]
    return lines


def _spearman_table(study: Study, k: int) -> list[str]:
    note = too_few_points(len(study.inputs.ids), "example(s)")
    if note:
        return [note]
    matrix = study.spearman[k]
    short = [str(i + 1) for i in range(len(study.methods))]
    rows = [[f"{i + 1}. {m}", *(_number(v, 2) for v in matrix[i])] for i, m in enumerate(study.methods)]
    return _table(["UE method", *short], rows)


def _quality_table(study: Study) -> list[str]:
    n = len(study.inputs.ids)
    rows = [[display(q), _number(study.corpus_quality[q], 4), _number(float(np.nanmean(v)), 4),
             str(study.invalid_top1[q]), str(study.nan_dropped[q])] for q, v in study.qualities.items()]
    return _table(["Quality metric", "corpus score", f"mean over {n}", "invalid top-1", "NaN dropped"], rows)


def _inputs_section(study: Study) -> list[str]:
    inputs = study.inputs
    ks = [len(c) for c in inputs.candidates]
    lines = [f"- examples: {len(inputs.ids)}; candidates per example: {min(ks)} to {max(ks)}",
             f"- beam sizes: {', '.join(map(str, study.beam_sizes))} (by truncation)"]
    if study.skipped_beam_sizes:
        lines.append(f"- beam sizes requested but **skipped**: {', '.join(map(str, study.skipped_beam_sizes))} "
                     f"(the beams hold at most {max(ks)} candidates per example)")
    if inputs.paired_by == "position":
        lines.append("- beams and gold paired **by position**: no input has `# ::id` lines "
                     "(ids below are 0-based positions)")
    elif inputs.paired_by == "order":
        lines.append("- beams and gold paired **by order** (`--pair-by-position`), whatever the beams' ids "
                     "(ids below are the gold's)")
    for k, short in study.short_examples.items():
        if short:
            lines.append(f"- k={k}: {short} example(s) have fewer candidates and use all they have")
    for label, ids in (("only in the beams (no gold)", inputs.only_in_beams),
                       ("only in the gold (no beams)", inputs.only_in_gold),
                       ("without any candidate", inputs.without_candidates)):
        if ids:
            lines.append(f"- left out, {label}: {len(ids)}: {_ids(ids)} (all in `left_out.csv`)")
    total = sum(ks)
    for name, counts in study.invalid_candidates.items():
        bad = int(counts.sum())
        worst = [inputs.ids[i] for i in np.argsort(-counts, kind="stable")[:5] if counts[i]]
        lines.append(f"- invalid candidates for {display(name)}: {bad} of {total} ({100 * bad / total:.2f}%)"
                     + (f"; most in {', '.join(f'`{i}`' for i in worst)}" if worst else "")
                     + " (per example in `invalid_candidates.csv`)")
    for k, per_similarity in study.all_invalid.items():
        for name, examples in per_similarity.items():
            if examples:
                lines.append(f"- k={k}: {len(examples)} example(s) without any valid candidate for {display(name)}: "
                             f"{_ids([inputs.ids[i] for i in examples])}")
    return lines + skipped_lines(study)


def selective_markdown(study: Study) -> list[str]:
    """The certified thresholds at the target risk, one table per quality metric (empty without a target)."""
    if not study.selective:
        return []
    first = study.selective[0]
    rule = first.rule
    config = study.config
    loss = ("1 - quality" if config.selective_loss == "1-quality"
            else f"the rate of bad outputs, quality < {config.bad_below:g}")
    order = {"fixed-sequence": "fixed-sequence over coverage levels 10%, 11%, ..., 100% in increasing order, from "
                               "the first level with enough examples for the target",
             "bonferroni": "Bonferroni over coverage levels 10%, 11%, ..., 100%",
             "holm": "Holm's step-down over coverage levels 10%, 11%, ..., 100%",
             "split-fixed-sequence": "fixed-sequence in the order learned on half of the calibration examples, "
                                     "tested on the other half"}[rule.multiple_testing]
    tests = sorted({row.rule.method for row in study.selective})
    lines = [f"Target: selective risk (mean {loss} of the kept outputs) at most **{rule.target_risk:g}** with "
             f"probability at least {1 - rule.delta:g} (delta = {rule.delta:g}) over calibration sets, at k = "
             f"{first.k}; test {', '.join(tests)} (Learn-then-Test, {order}); {study.selective_source}. Accept an "
             "output when its uncertainty is <= the threshold; \"none\": no threshold is certified, reject "
             "everything. Held-out risk is what the threshold achieved on examples it did not see (in "
             "`selective.csv` too)."]
    few = too_few_to_certify(config, rule.n)
    uncertified = [row for row in study.selective if not row.rule.certified]
    if few:
        lines += ["", f"**Nothing can be certified:** {few}."]
    elif uncertified:
        sizes = [row.needed for row in uncertified if row.needed is not None]
        lines += ["", f"**{len(uncertified)} of {len(study.selective)} rows certify nothing** at this delta"
                     + (f": the closest would need about {min(sizes):,} calibration examples like these (you have "
                        f"{rule.n}; the column \"calib. n needed\": these examples repeated, an estimate, not a guarantee)"
                        if sizes else ": at no coverage is the calibration risk below the target, so more examples "
                                      "of the same kind would not do; a looser target would")
                  + "."]
    for quality in study.qualities:
        rows = []
        for row in (r for r in study.selective if r.quality == quality):
            certified = row.rule.certified
            needed = "" if certified else (f"{row.needed:,}" if row.needed is not None else "more data would not do")
            rows.append([row.method, _number(row.rule.threshold, 4) if certified else "none",
                         _number(row.rule.bound) if certified else "n/a", _number(row.rule.coverage),
                         _number(row.rule.risk), f"{row.rule.n}", _number(row.coverage), _number(row.risk),
                         f"{row.held_out}", *([needed] if uncertified else [])])
        lines += ["", f"### Quality: {display(quality)}", "",
                  *_table(["UE method", "threshold", "risk bound", "calib. coverage", "calib. risk", "calib. n",
                           "held-out coverage", "held-out risk", "held-out n",
                           *(["calib. n needed"] if uncertified else [])], rows)]
    return lines


def _operating_points(rows: Sequence[SelectiveRow]):
    """The decorate hook marking each certified method's held-out operating point and the target (:mod:`.plots`)."""
    points = {row.method: (1 - row.coverage, 1 - row.risk) for row in rows
              if row.rule.certified and not math.isnan(row.risk)}
    target = rows[0].rule.target_risk
    return operating_points(points, 1 - target, f"target: risk {target:g} (mean quality {1 - target:g})",
                            "certified threshold (held-out)")


def _plot_curves(study: Study, folder: Path) -> list[str]:
    names = []
    for (k, q), curves in study.curves.items():
        rows = [row for row in study.selective if row.k == k and row.quality == q]
        figure = rejection_figure(curves, display(q), f"Prediction-rejection curves, k = {k}, quality {display(q)}",
                                  decorate=_operating_points(rows) if rows else None)
        name = f"curves/rejection_{q}_k{k}.png"
        figure.savefig(folder / name, dpi=110, bbox_inches="tight")
        names.append(name)
    return names


def _write_csv(path: Path, header: Sequence[str], rows) -> None:
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows(rows)


def _write_tables(study: Study, folder: Path) -> None:
    inputs = study.inputs
    _write_csv(folder / "prr.csv", ["k", "method", "quality", "prr", "ci_low", "ci_high", "auc_uncertainty",
                                    "auc_oracle", "auc_random", "n", "constant_uncertainty"],
               ([r.k, r.method, r.quality, r.result.prr, r.result.ci_low, r.result.ci_high,
                 r.result.auc_uncertainty, r.result.auc_oracle, r.result.auc_random, r.result.n,
                 r.constant_uncertainty]
                for r in study.prr))
    _write_csv(folder / "uncertainties.csv", ["id", "k", *study.methods],
               ([example, k, *(study.uncertainties[k][m][i] for m in study.methods)]
                for k in study.beam_sizes for i, example in enumerate(inputs.ids)))
    _write_csv(folder / "qualities.csv", ["id", "candidates", *study.qualities],
               ([example, len(inputs.candidates[i]), *(v[i] for v in study.qualities.values())]
                for i, example in enumerate(inputs.ids)))
    _write_csv(folder / "invalid_candidates.csv", ["id", *study.invalid_candidates],
               ([example, *(int(c[i]) for c in study.invalid_candidates.values())]
                for i, example in enumerate(inputs.ids)))
    if study.metrics:
        _write_csv(folder / "ue_metrics.csv", ["k", "method", "quality", "metric", "value"],
                   ([r.k, r.method, r.quality, r.metric, r.value] for r in study.metrics))
    if study.selective:
        _write_csv(folder / "selective.csv", ["k", "method", "quality", "target_risk", "delta", "bound_method",
                                              "certified", "threshold", "risk_bound", "calibration_coverage",
                                              "calibration_risk", "calibration_n", "held_out_coverage",
                                              "held_out_risk", "held_out_n", "multiple_testing",
                                              "calibration_n_needed"],
                   ([r.k, r.method, r.quality, r.rule.target_risk, r.rule.delta, r.rule.method, r.rule.certified,
                     r.rule.threshold, r.rule.bound, r.rule.coverage, r.rule.risk, r.rule.n, r.coverage, r.risk,
                     r.held_out, r.rule.multiple_testing, "" if r.needed is None else r.needed]
                    for r in study.selective))
    for k, matrix in study.spearman.items():
        _write_csv(folder / f"spearman_k{k}.csv", ["method", *study.methods],
                   ([m, *matrix[i]] for i, m in enumerate(study.methods)))
    left_out = [(i, "only in beams") for i in inputs.only_in_beams] + \
               [(i, "only in gold") for i in inputs.only_in_gold] + \
               [(i, "no candidates") for i in inputs.without_candidates]
    _write_csv(folder / "left_out.csv", ["id", "reason"], left_out)


def render_markdown(study: Study, plots: Sequence[str]) -> str:
    """The whole ``report.md``."""
    k = study.beam_sizes[-1]
    config = study.config
    lines = ["# Uncertainty estimation report", "",
             "Uncertainty of each example's top-1 output, from its beam candidates (black-box) and, where the beams carry "
             "them, the model's own scores (gray-box, hybrid), evaluated with the Prediction Rejection Ratio "
             "(PRR: 1 = oracle, 0 = random, < 0 harmful).", "", "## Inputs", "", *_inputs_section(study),
             "", "## Top-1 quality against gold", "", *_quality_table(study),
             "", "## Main result", "", main_table_markdown(study), *family_sections(study),
             *_metrics_section(study),
             *(["", "## Risk-controlled selective prediction", "", *selective_markdown(study)]
               if study.selective else []),
             "", "## PRR across beam sizes", *_beam_tables(study),
             "", f"## Spearman correlation between estimators (k = {k})", "", *_spearman_table(study, k),
             "", "## Prediction-rejection curves", ""]
    lines += [f"![{name}]({name})" for name in plots]
    lines += ["", "## Settings", "",
              f"- similarities: {', '.join(map(display, config.similarities))}",
              f"- Ecc eigenvalue threshold: {config.ecc_threshold}; max rejection rate: {config.max_rejection}",
              f"- estimators: {', '.join(config.estimators)}; semantic-set threshold {config.sets_threshold}; "
              f"KLE t = {config.kle_t}; LexSim on {', '.join(map(display, config.lexical_similarities))}",
              f"- bootstrap: {config.n_bootstrap} resamples, seed {config.seed}; ties in uncertainty are "
              "averaged over (order-independent)",
              "- invalid candidates have similarity 0 with every other candidate (so a beam without any valid "
              "candidate gets the largest EigV, Ecc and DegMat for its size); an invalid top-1 is scored "
              "as the empty AMR graph `(a / amr-empty)`",
              "- estimator values are rounded to 12 decimals, so values equal up to eigen-solver noise are ties",
              *_made_by(study.inputs.made_by), ""]
    return "\n".join(lines)


def _made_by(record: BeamsRecord | None) -> list[str]:
    """The settings line of beams that ``lsplits beams`` made (from their settings record); none otherwise."""
    if record is None:
        return []
    settings = record.settings
    return [f"- beams: made by `lsplits beams` with {record.model} from {record.source} "
            f"(k = {settings.k}, max_new_tokens = {settings.max_new_tokens}, decoding "
            f"{settings.decoding.describe()}, dtype {record.dtype_used}"
            + ("" if record.duplicates is None else f"; {record.duplicates} duplicate candidates, kept") + ")"]


SETTINGS_FILE = "settings.json"
"""The study's :class:`~lsplits.uncertainty.study.StudyConfig` as it ran (``dataclasses.asdict``), in every report."""


def write_report(study: Study, out: str | os.PathLike[str]) -> Path:
    """Write report.md, the CSV tables, the curve PNGs and the study's settings (:data:`SETTINGS_FILE`) into
    ``out`` (new, empty, or a report lsplits wrote, which is replaced atomically)."""
    out = Path(out)
    with output_folder(out) as folder:
        settings = {name: value for name, value in dataclasses.asdict(study.config).items() if name != "option_names"}
        if study.inputs.made_by is not None:
            settings["beams"] = study.inputs.made_by.to_dict()
        (folder / SETTINGS_FILE).write_text(json.dumps(settings, indent=1, default=str), encoding="utf-8")
        (folder / "curves").mkdir(parents=True)
        plots = _plot_curves(study, folder)
        _write_tables(study, folder)
        (folder / "report.md").write_text(render_markdown(study, plots), encoding="utf-8")
    return out / "report.md"
