"""Handlers of the "Uncertainty & PRR" tab: beam candidates and gold in, PRR table and plots out.

The study itself is :func:`lsplits.uncertainty.study.run_study` (what ``lsplits ue`` runs) on one
similarity function and one quality metric at the largest beam size; several systems are compared by
:func:`lsplits.uncertainty.systems.run_systems` (what ``lsplits ue --system ...`` runs), and beams can be
generated from a model with ``lsplits beams``'s function where it is installed (:func:`beam_generator`).
This module only turns the user's pasted text or uploads into files for them and their results into
tables and figures (drawn by :mod:`lsplits.uncertainty.plots`, as in the reports).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import math
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from limits import SpaceLimits, one_large_request
from matplotlib.figure import Figure
from ui_common import SpaceSettings, hosted_hub_id, model_source

from lsplits.errors import ConfigError, InvalidOption, LsplitsError
from lsplits.generation.cache import write_beams
from lsplits.runtime import tempfolders
from lsplits.similarity import registry as similarity_registry
from lsplits.similarity.registry import display
from lsplits.uncertainty._format import too_few_points
from lsplits.uncertainty.bounds import smallest_certifiable
from lsplits.uncertainty.estimators import DISPLAY_NAMES, ESTIMATORS, PAPER_ESTIMATORS, SCORED_ESTIMATORS
from lsplits.uncertainty.inputs import load_inputs, read_score_fields
from lsplits.uncertainty.matrix import build_matrices
from lsplits.uncertainty.plots import (
    figure1,
    figure2,
    operating_points,
    p_value_figure,
    rejection_figure,
    similarity_matrix_figure,
)
from lsplits.uncertainty.prr import RejectionCurve
from lsplits.uncertainty.selective import (
    DEFAULT_MULTIPLE_TESTING,
    MULTIPLE_TESTING,
    calibrate_threshold,
    calibration_size_needed,
)
from lsplits.uncertainty.study import run_study
from lsplits.uncertainty.study_config import StudyConfig
from lsplits.uncertainty.systems import TABLE1_METRICS, SystemSpec, run_systems, system_name_problem
from lsplits.uncertainty.systems_report import constant_line, figure1_markdown
from lsplits.uncertainty.ue_metrics import DISPLAY_NAMES as METRIC_NAMES
from lsplits.uncertainty.ue_metrics import METRICS, PAPER_METRICS

logger = logging.getLogger(__name__)

EXAMPLES = {"parser": ("lpp_parser_beams.jsonl", "lpp_test.jsonl"), "synthetic": ("amr_beams.jsonl", "amr_gold.amr")}
"""The built-in examples (files of examples/): the shipped parser's real k = 5 beams, with their scores, of the 143
Little Prince test sentences (made by ``make demo``'s ``lsplits beams``), and a labelled synthetic one: 12 gold
graphs with candidates made by controlled edits (make_amr_example.py)."""
EXAMPLE_GOLD = EXAMPLES["synthetic"][1]  # the gold of the systems example (make_systems_example.py)
EXAMPLE_SYSTEMS = ("strong", "middle", "weak")  # examples/amr_system_NAME.jsonl (make_systems_example.py)
ESTIMATOR_CHOICES = [(DISPLAY_NAMES[name], name) for name in ESTIMATORS]
DEFAULT_ESTIMATORS = list(PAPER_ESTIMATORS)
METRIC_CHOICES = [(METRIC_NAMES[name], name) for name in METRICS]
DEFAULT_METRICS = list(PAPER_METRICS)


def similarity_choices() -> list[tuple[str, str]]:
    """(label, name) of every registered similarity that can be loaded here."""
    choices = []
    for name in similarity_registry.available():
        try:
            similarity_registry.get(name)
        except LsplitsError as exc:
            logger.info("similarity %s is not offered: %s", name, exc)
            continue
        choices.append((display(name), name))
    return choices


def example_texts(settings: SpaceSettings, which: str = "parser") -> tuple[str, str]:
    """A built-in example (:data:`EXAMPLES`): beams as JSONL and gold graphs as JSONL or PENMAN text."""
    beams, gold = EXAMPLES[which]
    return ((settings.example_dir / beams).read_text(encoding="utf-8"),
            (settings.example_dir / gold).read_text(encoding="utf-8"))


def _check_sizes(limits: SpaceLimits, beams_text: str, gold_text: str, beam_uploads: Sequence[str] | None,
                 gold_upload: str | None) -> None:
    """Refuse an upload or pasted text above the Space's size limit, before anything is read."""
    limits.check_files(beam_uploads, "beam file")
    limits.check_files([gold_upload] if gold_upload else None, "gold file")
    limits.check_text(beams_text, "beam candidates")
    limits.check_text(gold_text, "gold graphs")


def offered_estimators(beams_text: str, beam_uploads: Sequence[str] | None,
                       settings: SpaceSettings) -> list[tuple[str, str]]:
    """The estimator choices for these beams: the black-box ones, and the gray-box and hybrid ones whose scores
    (logprobs, n_tokens, token_entropies) the beams carry; only the black-box ones while the beams cannot be read
    (running them says why)."""
    fields: tuple[str, ...] = ()
    try:
        _check_sizes(settings.limits, beams_text or "", "", beam_uploads, None)
        if beam_uploads:
            fields = read_score_fields(list(beam_uploads))
        elif (beams_text or "").strip():
            with tempfolders.temporary_folder(prefix="pasted-") as tmp:
                path = Path(tmp) / "pasted-beams.jsonl"
                path.write_text(beams_text, encoding="utf-8")
                fields = read_score_fields([path])
    except LsplitsError:
        fields = ()
    return ESTIMATOR_CHOICES + [(DISPLAY_NAMES[name], name) for name, estimator in SCORED_ESTIMATORS.items()
                                if set(estimator.fields) <= set(fields)]


def _input_files(beams_text: str, gold_text: str, beam_uploads: Sequence[str] | None,
                 gold_upload: str | None, folder: Path) -> tuple[list[str], str]:
    """Paths for :func:`load_inputs`: the uploads when given, else the pasted text written to ``folder``."""
    if beam_uploads:
        beams = [str(path) for path in beam_uploads]
    elif beams_text.strip():
        path = folder / "pasted-beams.jsonl"
        path.write_text(beams_text, encoding="utf-8")
        beams = [str(path)]
    else:
        raise ConfigError("paste beam candidates (JSONL: {\"id\", \"candidates\": [...]}) or upload them, "
                          "or click 'Load the example'")
    return beams, _gold_file(gold_text, gold_upload, folder)


def _gold_file(gold_text: str, gold_upload: str | None, folder: Path) -> str:
    """The uploaded gold file, else the pasted gold text written to ``folder``."""
    if gold_upload:
        return str(gold_upload)
    if not gold_text.strip():
        raise ConfigError("paste the gold graphs (PENMAN with '# ::id' lines, or JSONL) or upload them")
    suffix = ".jsonl" if gold_text.lstrip().startswith("{") else ".amr"
    gold = folder / f"pasted-gold{suffix}"
    gold.write_text(gold_text, encoding="utf-8")
    return str(gold)


@dataclass
class UncertaintyResult:
    """What the tab keeps between events: the candidates (for the heatmap) and the similarity used; for the
    target-risk control, each method's uncertainties, the qualities and the rejection curves."""

    ids: list[str]
    candidates: list[list[str]]
    similarity: str
    quality: str = ""
    uncertainties: dict[str, Any] = field(default_factory=dict)
    qualities: Any = None
    curves: dict[str, RejectionCurve] = field(default_factory=dict)
    k: int = 0


def run_uncertainty(beams_text: str, gold_text: str, beam_uploads: Sequence[str] | None, gold_upload: str | None,
                    similarity: str, quality: str, estimators: Sequence[str],
                    settings: SpaceSettings, *, metrics: Sequence[str] = PAPER_METRICS,
                    bad_below: float | None = None) -> tuple[UncertaintyResult, str, pd.DataFrame, pd.DataFrame, Figure]:
    """Run the study; returns the state, a summary, the metrics table, per-example values and the rejection curves.

    The Space's limits (:class:`limits.SpaceLimits`) are checked before any similarity is computed."""
    if not estimators:  # an empty checkbox group: said as the form asks it, before the inputs are read
        raise ConfigError("choose at least one uncertainty estimator")
    settings.work_dir.mkdir(parents=True, exist_ok=True)
    _check_sizes(settings.limits, beams_text, gold_text, beam_uploads, gold_upload)
    with tempfolders.temporary_folder(prefix="pasted-") as tmp:
        beams, gold = _input_files(beams_text, gold_text, beam_uploads, gold_upload, Path(tmp))
        inputs = load_inputs(beams, gold)
        units = settings.limits.check_beams(inputs.ids, inputs.candidates, inputs.gold)
        k = max(len(candidates) for candidates in inputs.candidates)
        config = StudyConfig(similarities=(similarity,), qualities=(quality,), beam_sizes=(k,),
                             workers=1, cache_dir=settings.work_dir / "matrices",
                             estimators=tuple(estimators), metrics=tuple(metrics or PAPER_METRICS),
                             bad_below=bad_below)
        with one_large_request(units, settings.limits):
            study = run_study(beams, gold, config)
    methods = list(study.methods)  # gray-box rows name no similarity; those the beams' scores lack are skipped
    rows = {row.method: row.result for row in study.prr if row.k == k and row.quality == quality}
    prr_table = pd.DataFrame({
        "UE method": methods,
        "PRR": [rows[m].prr for m in methods],
        "CI low": [rows[m].ci_low for m in methods],
        "CI high": [rows[m].ci_high for m in methods],
    })
    extra = {(row.method, row.metric): row.value for row in study.metrics if row.k == k and row.quality == quality}
    for metric in dict.fromkeys(name for _, name in extra):
        prr_table[METRIC_NAMES[metric]] = [extra[m, metric] for m in methods]
    prr_table = prr_table.round(3)
    quality_label = display(quality)
    per_example = pd.DataFrame({"id": study.inputs.ids, "candidates": [len(c) for c in study.inputs.candidates],
                                f"invalid ({display(similarity)})": study.invalid_candidates[similarity],
                                f"quality ({quality_label})": study.qualities[quality]})
    for method in methods:
        per_example[f"u: {method}"] = study.uncertainties[k][method]
    per_example = per_example.round(3)
    figure = rejection_figure(study.curves[k, quality], quality_label, f"Prediction-rejection curves (k = {k})", methods)
    summary = _summary(study, similarity, quality, k)
    if study.skipped_estimators:
        summary += f"\n\n{study.skipped_estimators}."
    if prr_table["PRR"].isna().any():
        summary += ("\n\nPRR is undefined (NaN) where rejecting cannot help: every top-1 has the same quality, "
                    "or there are too few examples.")
    state = UncertaintyResult(list(study.inputs.ids), [list(c) for c in study.inputs.candidates], similarity,
                              quality, {m: study.uncertainties[k][m] for m in methods}, study.qualities[quality],
                              study.curves[k, quality], k)
    return state, summary, prr_table, per_example, figure


def certify_threshold(state: UncertaintyResult | None, target_risk: float | None, delta: float | None,
                      procedure: str = DEFAULT_MULTIPLE_TESTING) -> tuple[str, pd.DataFrame, Figure, Figure]:
    """The threshold certified at the target risk for each method, calibrated on the analysed examples
    (:func:`lsplits.uncertainty.selective.calibrate_threshold` with the testing ``procedure``): a summary, the
    table, the marked curves and the p-value curve of every candidate threshold."""
    if state is None or not state.uncertainties:
        raise ConfigError("run the analysis first: its examples are the calibration set")
    if target_risk is None or delta is None:
        raise ConfigError("give a target risk and a delta, both in (0, 1)")
    known = ~np.isnan(state.qualities)
    q = state.qualities[known]
    if q.size and (q.min() < 0 or q.max() > 1):
        raise ConfigError(f"the risk 1 - quality needs qualities in [0, 1]; {display(state.quality)} scores from "
                          f"{q.min():g} to {q.max():g}")
    if procedure not in MULTIPLE_TESTING:
        raise ConfigError(f"the testing procedure must be one of {', '.join(MULTIPLE_TESTING)}, got {procedure!r}")
    rules = {m: calibrate_threshold(u[known], q, target_risk=target_risk, delta=delta, multiple_testing=procedure)
             for m, u in state.uncertainties.items()}
    test = next(iter(rules.values())).method
    test_name = {"ltt-wsr": "the Waudby-Smith-Ramdas bound", "ltt-binomial": "the exact binomial test (0/1 losses)",
                 "ltt-hb": "the Hoeffding-Bentkus bound", "ltt-hoeffding": "the Hoeffding bound"}[test]
    table = pd.DataFrame({
        "UE method": list(rules),
        "threshold": [r.threshold if r.certified else None for r in rules.values()],
        "risk bound": [r.bound if r.certified else None for r in rules.values()],
        "share kept": [r.coverage for r in rules.values()],
        "risk of kept": [r.risk if r.certified else None for r in rules.values()],
    }).round(4)
    lines = [f"Keep an output when its uncertainty is at most the threshold: with probability at least "
             f"{1 - delta:g} over calibration sets, the mean 1 - {display(state.quality)} of the kept outputs is "
             f"then at most {target_risk:g} (Learn-then-Test with {test_name} and {procedure} testing, calibrated "
             f"on these {q.size} examples, for new outputs from the same source). The p-value plot shows every "
             "candidate threshold: those under delta that the procedure certified are filled."]
    if not any(r.certified for r in rules.values()):
        floor = smallest_certifiable(test, target_risk, delta, 1_000_000, binary=test == "ltt-binomial")
        sizes = [calibration_size_needed(u[known], q, target_risk=target_risk, delta=delta, multiple_testing=procedure)
                 for u in state.uncertainties.values()]
        estimate = min((s for s in sizes if s is not None), default=None)
        lines.append(f"**No threshold is certified**, so every output would be rejected: {q.size} examples are too "
                     f"few for a risk of {target_risk:g} at delta {delta:g} (even all-correct outputs need {floor}, "
                     "and the sequence starts at twice that or 10%)"
                     + (f"; examples like these would need about {estimate}" if estimate else
                        "; at no coverage is the risk of these examples below the target")
                     + ": give more examples or a looser target.")
    points = {m: (1 - r.coverage, 1 - r.risk) for m, r in rules.items() if r.certified}
    figure = rejection_figure(state.curves, display(state.quality),
                              f"Target risk {target_risk:g} (k = {state.k})",
                              list(state.uncertainties),
                              decorate=operating_points(points, 1 - target_risk, f"target: risk {target_risk:g}",
                                                        "certified threshold"))
    pvalues = p_value_figure(rules, f"p-value of each candidate threshold, target {target_risk:g} ({procedure})")
    return "\n\n".join(lines), table, figure, pvalues


def _summary(study, similarity: str, quality: str, k: int) -> str:
    inputs = study.inputs
    invalid = int(study.invalid_candidates[similarity].sum())
    total = sum(len(c) for c in inputs.candidates)
    lines = [f"{len(inputs.ids)} examples, beam size {k}. Top-1 quality ({display(quality)}): corpus "
             f"{study.corpus_quality[quality]:.3f}, {study.invalid_top1[quality]} invalid top-1. "
             f"Invalid candidates for {display(similarity)}: {invalid} of {total} (similarity 0 with the others). "
             f"PRR: 1 = rejects like an oracle, 0 = like random, < 0 = harmful; CI: 95% bootstrap over examples."]
    for label, ids in (("only in the beams", inputs.only_in_beams), ("only in the gold", inputs.only_in_gold),
                       ("without candidates", inputs.without_candidates)):
        if ids:
            lines.append(f"Left out, {label}: {', '.join(ids[:10])}{' ...' if len(ids) > 10 else ''}.")
    return "\n\n".join(lines)


def heatmap_figure(state: UncertaintyResult | None, example_id: str, settings: SpaceSettings) -> Figure:
    """The similarity matrix of one example's candidates (invalid candidates marked)."""
    if state is None:
        raise ConfigError("run the analysis first")
    if example_id not in state.ids:
        raise ConfigError(f"no example {example_id!r} in the analysed input")
    candidates = state.candidates[state.ids.index(example_id)]
    matrix = build_matrices([candidates], state.similarity, cache=settings.work_dir / "matrices",
                            progress=False)[0]
    labels = [f"#{i + 1}" + (" (invalid)" if bad else "") for i, bad in enumerate(matrix.invalid)]
    return similarity_matrix_figure(matrix.values, labels, f"{example_id}\n{display(state.similarity)} between its candidates")


# --- several systems ------------------------------------------------------------------------------


def system_names(files: Sequence[str], names_text: str) -> list[str]:
    """The names typed (comma-separated, one per file), else the file names without ``amr_system_`` and suffix."""
    typed = [name.strip() for name in names_text.split(",") if name.strip()]
    if typed:
        if len(typed) != len(files):
            raise ConfigError(f"{len(typed)} system name(s) for {len(files)} beam file(s): give one name per file, "
                              "separated by commas, or none to use the file names")
        seen: set[str] = set()
        for name in typed:  # said in the form's words, before any file is read
            problem = system_name_problem(name)
            if problem:
                raise InvalidOption(f"{SYSTEM_NAMES_FIELD}: {problem}")
            if name.lower() in seen:
                raise InvalidOption(f"{SYSTEM_NAMES_FIELD}: {name!r}: the name is given twice (ignoring case); each system "
                                    "needs its own name")
            seen.add(name.lower())
        return typed
    names = []
    for path in files:
        stem = re.sub(r"[^A-Za-z0-9._+-]+", "-", Path(path).name.split(".")[0]).strip("-._+") or "system"
        stem = stem.removeprefix("amr_system_")
        name, number = stem, 2
        while name.lower() in {n.lower() for n in names} or system_name_problem(name):
            name, number = f"{stem}-{number}", number + 1
        names.append(name)
    return names


def systems_example(settings: SpaceSettings) -> tuple[list[str], str, str]:
    """The three-system example: beam files (copied where the app may serve them), their names and the gold text."""
    folder = Path(tempfile.gettempdir()) / "lsplits-space-systems-example"
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for name in EXAMPLE_SYSTEMS:
        target = folder / f"amr_system_{name}.jsonl"
        shutil.copyfile(settings.example_dir / target.name, target)
        files.append(str(target))
    return files, ", ".join(EXAMPLE_SYSTEMS), (settings.example_dir / EXAMPLE_GOLD).read_text(encoding="utf-8")


def run_systems_comparison(files: Sequence[str] | None, names_text: str, gold_text: str, gold_upload: str | None,
                           similarity: str, qualities: Sequence[str], settings: SpaceSettings
                           ) -> tuple[str, pd.DataFrame, Figure, Figure, pd.DataFrame]:
    """Every system's study and the comparison: summary, Table 1, Figures 1 and 2, the pairwise differences."""
    if not files:
        raise ConfigError("upload one beam file per system (JSONL), or click 'Load the 3-system example'")
    if not qualities:
        raise ConfigError("choose at least one quality metric")
    limits = settings.limits
    limits.check_count(len(files), "systems", "systems")
    _check_sizes(limits, "", gold_text, files, gold_upload)
    names = system_names(files, names_text)
    specs = [SystemSpec(name, (str(path),)) for name, path in zip(names, files, strict=True)]
    settings.work_dir.mkdir(parents=True, exist_ok=True)
    with tempfolders.temporary_folder(prefix="pasted-") as tmp:
        gold = _gold_file(gold_text, gold_upload, Path(tmp))
        units = 0
        for name, path in zip(names, files, strict=True):
            inputs = load_inputs([path], gold)
            units += limits.check_beams(inputs.ids, inputs.candidates, inputs.gold, what=f"system {name!r}")
        config = StudyConfig(similarities=(similarity,), qualities=tuple(qualities),
                             workers=1, cache_dir=settings.work_dir / "matrices")
        with one_large_request(units * len(qualities), limits):
            study = run_systems(specs, gold, config)
    table1 = pd.DataFrame({"System": study.names,
                           **{display(m): [study.table1[n][m] for n in study.names] for m in TABLE1_METRICS},
                           "examples": len(study.ids)}).round(4)
    pairwise = pd.DataFrame([{"Quality": display(d.quality), "A": d.system_a, "B": d.system_b,
                              "mean PRR A": d.prr_a, "mean PRR B": d.prr_b, "A - B": d.difference,
                              "CI low": d.ci_low, "CI high": d.ci_high, "verdict": d.verdict}
                             for d in study.pairwise],
                            columns=["Quality", "A", "B", "mean PRR A", "mean PRR B", "A - B", "CI low", "CI high",
                                     "verdict"]).round(3)
    lines = [f"{len(study.names)} systems on the same {len(study.ids)} examples; beam sizes "
             f"{', '.join(map(str, study.beam_sizes))}; {len(study.methods)} estimators on {display(similarity)}. "
             "Figure 1: mean PRR over estimators and beam sizes; the pairwise table compares it between two systems "
             "with a 95% paired bootstrap interval (the same examples resampled for both).", "",
             figure1_markdown(study), ""]
    if study.undefined:
        lines += [f"{study.undefined} PRR value(s) are undefined (every top-1 has the same quality, or too few "
                  "examples) and left out of the means.", ""]
    constant = constant_line(study)
    if constant:
        lines += [constant, ""]
    for c in study.correlations:
        few = too_few_points(c.n_systems, "systems")
        lines.append(f"Spearman rho between top-1 Smatch and mean PRR ({display(c.quality)}): "
                     + (few if few else f"{_rounded(c.rho_systems)} over {c.n_systems} systems."))
    return "\n".join(lines), table1, figure1(study), figure2(study), pairwise


def _rounded(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


# --- beams from a model (online) ----------------------------------------------------------------------

# The Python entry point of `lsplits beams` (tried in order, the first importable one is used; a vendored
# package without it makes the tab ask for beam files). Called as ``function(model, sentences, k=k)``, it
# returns, per sentence, its k candidates (a list of strings, or a dict with "candidates").
BEAM_GENERATOR: tuple[tuple[str, str], ...] = (("lsplits.generation.models", "beams_from_model"),)


def beam_generator() -> Callable[..., Any]:
    """The beam-search function of ``lsplits beams``; ConfigError saying so when this installation lacks it."""
    for module_name, attribute in BEAM_GENERATOR:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue
            raise
        function = getattr(module, attribute, None)
        if callable(function):
            return function
    wanted = " or ".join(f"{m}.{a}" for m, a in BEAM_GENERATOR)
    raise ConfigError(f"generating beams needs lsplits' beam generator ({wanted}, from `lsplits beams`), which this "
                      "installation does not have: upload beam files instead")


SYSTEM_NAMES_FIELD = "System names"
"""How errors name the system-names field of "Compare systems"."""
MODEL_FIELD = "Model"
"""How errors name the model field of "Generate a system's beams"."""
GENERATED_PREFIX = "lsplits-generated-"
GENERATED_SECONDS = 3600
"""Generated beams are served from the temporary folder (where Gradio serves files from) for this long."""


def generated_folder() -> Path:
    """A new folder for one generation's beams; folders of earlier generations older than
    :data:`GENERATED_SECONDS` are removed now, and this app's own when it exits."""
    cutoff = time.time() - GENERATED_SECONDS
    for old in Path(tempfile.gettempdir()).glob(GENERATED_PREFIX + "*"):
        with contextlib.suppress(OSError):
            if old.is_dir() and not old.is_symlink() and old.stat().st_mtime < cutoff:
                shutil.rmtree(old, ignore_errors=True)
    return tempfolders.make(GENERATED_PREFIX)  # removed when the app exits


def generate_system(model: str, sentences_text: str, k: int, files: Sequence[str] | None, names_text: str,
                    settings: SpaceSettings) -> tuple[list[str], str]:
    """Beams of ``model`` for the pasted sentences (ids s1, s2, ...), added as one more system."""
    model = model.strip()
    sentences = [line.strip() for line in sentences_text.splitlines() if line.strip()]
    hosted = not settings.open_local
    if not model:
        raise ConfigError(f"{MODEL_FIELD}: give a Hub model id (a seq2seq AMR parser)"
                          + ("" if hosted else " or a local model folder"))
    if hosted:  # from the text alone, before anything else: a hosted Space reads no folder the user names
        hosted_hub_id(model, MODEL_FIELD, "a Hub model id (a seq2seq AMR parser)")
    if not sentences:
        raise ConfigError("paste the sentences to parse, one per line")
    settings.limits.check_text(sentences_text, "sentences")
    settings.limits.check_count(len(sentences), "sentences", "sentences to parse")
    if int(k) < 1:
        raise InvalidOption(f"beam size k must be at least 1, got {k}")
    settings.limits.check_count(int(k), "candidates", "candidates per sentence (beam size k)")
    source = model_source(model, settings, MODEL_FIELD, "a Hub model id")
    generate = beam_generator()
    produced = list(generate(source, sentences, k=int(k)))
    if len(produced) != len(sentences):
        raise ConfigError(f"the beam generator returned {len(produced)} beams for {len(sentences)} sentences")
    folder = generated_folder()
    name = re.sub(r"[^A-Za-z0-9._+-]+", "-", model.rstrip("/").split("/")[-1]).strip("-._+") or "model"
    path = folder / f"{name}.jsonl"
    write_beams(path, [f"s{number}" for number in range(1, len(produced) + 1)],
                [beam["candidates"] if isinstance(beam, dict) else beam for beam in produced])
    existing = [str(f) for f in files or []]
    names = system_names(existing, names_text) if existing else []
    logger.info("generated %d beams of %s into %s", len(produced), model, path)
    return [*existing, str(path)], ", ".join([*names, name])
