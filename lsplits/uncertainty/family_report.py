"""The report's comparison of estimator families: black-box (similarities), gray-box (the model's scores) and
hybrid (both), side by side (:data:`~lsplits.uncertainty.methods.FAMILIES`).

For each quality metric one table lists every method grouped by family with PRR and its bootstrap interval at
each beam size (the best of each family per column in bold), followed by the best method of each family at the
largest k; then the Spearman correlations between the estimators of different families at that k (how much a
gray-box estimator ranks examples like a black-box one). Nothing is computed here: the PRRs and the Spearman
matrix are the study's. Written only when the study has a gray-box or hybrid row; when the beams' scores did not
allow the ones asked for, the line saying so (:attr:`~lsplits.uncertainty.study.Study.skipped_estimators`).
"""

from __future__ import annotations

import math

from lsplits.similarity.registry import display
from lsplits.uncertainty._format import CONSTANT_MARK as _CONSTANT_MARK
from lsplits.uncertainty._format import number as _number
from lsplits.uncertainty._format import table as _table
from lsplits.uncertainty._format import too_few_points
from lsplits.uncertainty.methods import FAMILIES, label_family
from lsplits.uncertainty.study import Study


def _by_family(study: Study) -> dict[str, list[str]]:
    """The study's methods per family present, in :data:`FAMILIES` order."""
    groups = {family: [m for m in study.methods if label_family(m) == family] for family in FAMILIES}
    return {family: methods for family, methods in groups.items() if methods}


def _family_table(study: Study, quality: str, groups: dict[str, list[str]]) -> list[str]:
    """One quality's table: family, method, PRR [CI] per beam size; the best per family and column in bold."""
    lookup = {(row.k, row.method): row for row in study.prr if row.quality == quality}
    rows = []
    for family, methods in groups.items():
        best = {k: max((lookup[k, m].result.prr for m in methods if not lookup[k, m].constant_uncertainty
                        and not math.isnan(lookup[k, m].result.prr)), default=math.nan) for k in study.beam_sizes}
        for method in methods:
            cells = [family, method]
            for k in study.beam_sizes:
                row = lookup[k, method]
                text = f"{_number(row.result.prr)} [{_number(row.result.ci_low)}, {_number(row.result.ci_high)}]"
                cells.append(text + _CONSTANT_MARK if row.constant_uncertainty
                             else f"**{text}**" if row.result.prr == best[k] else text)
            rows.append(cells)
    k = study.beam_sizes[-1]
    leaders = []
    for family, methods in groups.items():
        ranked = [m for m in methods if not lookup[k, m].constant_uncertainty and not math.isnan(lookup[k, m].result.prr)]
        if ranked:
            top = max(ranked, key=lambda m: lookup[k, m].result.prr)
            leaders.append(f"{family} {top} ({_number(lookup[k, top].result.prr)})")
    return ["", f"### Quality: {display(quality)}", "",
            *_table(["family", "UE method", *(f"k={size}" for size in study.beam_sizes)], rows),
            *(["", f"Best at k = {k}: {'; '.join(leaders)}."] if leaders else [])]


def _cross_spearman(study: Study, groups: dict[str, list[str]]) -> list[str]:
    """Spearman between the estimators of each pair of families at the largest beam size (rows one, columns the
    other)."""
    k = study.beam_sizes[-1]
    matrix = study.spearman[k]
    index = {method: i for i, method in enumerate(study.methods)}
    families = list(groups)
    lines: list[str] = []
    for a, first in enumerate(families):
        for second in families[a + 1:]:
            rows = [[m, *(_number(matrix[index[m], index[n]], 2) for n in groups[second])] for m in groups[first]]
            lines += ["", f"{first} (rows) x {second} (columns):", "", *_table(["UE method", *groups[second]], rows)]
    if not lines:
        return []
    title = ["", f"### Spearman correlation across families (k = {k})", ""]
    note = too_few_points(len(study.inputs.ids), "example(s)")
    if note:
        return [*title, note]
    return [*title,
            "How alike two estimators of different families rank the examples (1: the same order; NaN where one is "
            "constant).", *lines]


def family_sections(study: Study) -> list[str]:
    """The markdown of the family comparison (empty for a study of black-box estimators only)."""
    groups = _by_family(study)
    if not set(groups) - {FAMILIES[0]}:
        return []
    level = round(study.config.confidence * 100)
    lines = ["", "## Black-box, gray-box and hybrid estimators", "",
             f"PRR [{level}% bootstrap CI] at each beam size, the estimators grouped by what they read: black-box the "
             "similarities between candidates, gray-box the model's own scores of its candidates (log-probability, "
             "token count, token entropy), hybrid both; the best of each family per column in bold "
             f"({_CONSTANT_MARK}: constant uncertainty, never bold). SentenceSAR t = {study.config.sar_t:g}."]
    if study.skipped_estimators:
        lines += ["", f"**Note:** {study.skipped_estimators}."]
    for quality in study.qualities:
        lines += _family_table(study, quality, groups)
    return lines + _cross_spearman(study, groups)


def skipped_lines(study: Study) -> list[str]:
    """The Inputs-section line naming the score-based estimators the beams did not allow (none if none)."""
    return [f"- {study.skipped_estimators}"] if study.skipped_estimators else []
