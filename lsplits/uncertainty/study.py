"""The AMR uncertainty study of one parser's beams (PRR per estimator x similarity x quality x k): what ``lsplits ue`` computes.

For every beam size k (3, 5, 8, 10 by truncation, up to what the beams hold), every estimator x
similarity function (LexSim on ROUGE-L; EigV, Ecc, DegMat on each graph similarity) and every
quality metric of the top-1 candidate against gold, :func:`run_study` computes PRR with a bootstrap
confidence interval, the Spearman correlations between estimators and the prediction-rejection curves.
Estimators (the paper's four by default, any of :data:`~lsplits.uncertainty.estimators.ESTIMATORS`)
and further evaluation metrics (ROC-AUC, PR-AUC, AURC, E-AURC, RPP, Spearman, Kendall, ECE of
:mod:`.ue_metrics`) are selectable. The result is an immutable :class:`Study`, which
:mod:`lsplits.uncertainty.report` writes as markdown, CSV and PNG.

Similarity matrices are computed once at the largest k (the smaller beams are their top-left
blocks) and cached on disk by content, so re-running with other estimators, quality metrics or beam
sizes recomputes no similarity.

Cheap checks come first: a :class:`~lsplits.uncertainty.study_config.StudyConfig` checks its options and names when it is built, and
missing input files are refused in one line before any file is read. Degenerate inputs are said, not
hidden: an estimator whose uncertainty is the same for every example (k = 1, or identical candidates
everywhere) is flagged (``PRRRow.constant_uncertainty``: it cannot rank examples, its PRR is 0 by
construction, and the report marks no best among such rows), and examples with no valid candidate are
counted (``Study.all_invalid``), since the graph estimators rate them maximally uncertain while
LexSim, on strings, may rate them certain.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lsplits.errors import ConfigError, DataError
from lsplits.io.storage import check_writable
from lsplits.runtime.progress import progress_bar
from lsplits.similarity import registry as similarity_registry
from lsplits.similarity.lexical import LEXICAL_SIMILARITIES
from lsplits.uncertainty.beam import LEXICAL_SIMILARITY
from lsplits.uncertainty.beam_scores import usable_estimators
from lsplits.uncertainty.bounds import auto_test, smallest_certifiable
from lsplits.uncertainty.estimators import (
    DISPLAY_NAMES,
)
from lsplits.uncertainty.inputs import Inputs, load_inputs
from lsplits.uncertainty.losses import quality_loss
from lsplits.uncertainty.matrix import SimilarityMatrix, build_matrices, validity_matrices
from lsplits.uncertainty.methods import (
    estimate_methods,
    method_pairs,
    needs_several_candidates,
    read_only,
    spearman,
)
from lsplits.uncertainty.prr import (
    PRRResult,
    RejectionCurve,
    UndefinedPRRWarning,
    prr_and_curve,
)
from lsplits.uncertainty.quality import placeholder_for, score_predictions
from lsplits.uncertainty.selective import (
    SelectiveThreshold,
    calibrate_threshold,
    calibration_mask,
    calibration_size_needed,
    selective_risk,
)
from lsplits.uncertainty.study_config import StudyConfig
from lsplits.uncertainty.ue_metrics import compute_metrics

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PRRRow:
    """PRR of one estimator (``method``) at beam size ``k`` for one quality metric."""

    k: int
    method: str
    quality: str
    result: PRRResult
    constant_uncertainty: bool = False  # the same uncertainty for every example: it cannot rank them


@dataclass(frozen=True)
class MetricRow:
    """One uncertainty-evaluation metric (``metric``, :mod:`.ue_metrics`) of one estimator at beam size ``k``."""

    k: int
    method: str
    quality: str
    metric: str
    value: float


@dataclass(frozen=True)
class SelectiveRow:
    """The certified threshold of one estimator (``method``) and quality metric at beam size ``k`` (target risk
    ``rule.target_risk``), with what it keeps of the held-out examples: ``coverage`` and the achieved ``risk``."""

    k: int
    method: str
    quality: str
    rule: SelectiveThreshold
    held_out: int
    coverage: float
    risk: float  # NaN when nothing is kept
    needed: int | None = None  # nothing certified: about how many calibration examples like these it would take


@dataclass(frozen=True)
class Study:
    """Everything the report shows, computed by :func:`run_study` and not changed afterwards (arrays read-only)."""

    config: StudyConfig
    inputs: Inputs
    beam_sizes: tuple[int, ...]
    methods: tuple[str, ...]
    uncertainties: dict[int, dict[str, np.ndarray]]
    qualities: dict[str, np.ndarray]
    corpus_quality: dict[str, float]
    invalid_top1: dict[str, int]
    invalid_candidates: dict[str, np.ndarray]
    nan_dropped: dict[str, int]
    short_examples: dict[int, int]
    all_invalid: dict[int, dict[str, tuple[int, ...]]] = field(default_factory=dict)  # k -> similarity -> examples
    prr: tuple[PRRRow, ...] = ()
    curves: dict[tuple[int, str], dict[str, RejectionCurve]] = field(default_factory=dict)
    spearman: dict[int, np.ndarray] = field(default_factory=dict)
    metrics: tuple[MetricRow, ...] = ()
    selective: tuple[SelectiveRow, ...] = ()
    selective_source: str = ""  # where the calibration examples came from, in words
    skipped_beam_sizes: tuple[int, ...] = ()  # requested sizes larger than any example's candidate list
    skipped_estimators: str = ""  # the line saying which score-based estimators the beams' scores did not allow


def method_family(method: str) -> str:
    """The estimator family of a row label (``EigV-Smatch++`` -> ``EigV``): the label before its first hyphen."""
    return method.split("-", 1)[0]


def choose_beam_sizes(requested: tuple[int, ...], available: int) -> tuple[int, ...]:
    """The requested sizes that the beams can supply; just ``available`` if none can."""
    sizes = sorted({k for k in requested if 1 <= k <= available})
    return tuple(sizes or [available])


def skipped_beam_sizes(requested: tuple[int, ...], used: tuple[int, ...], available: int) -> tuple[int, ...]:
    """The requested sizes the study could not use, logged as a warning (the report lists them too)."""
    skipped = tuple(sorted(set(requested) - set(used)))
    if skipped:
        instead = f"; k={used[0]} is used instead" if not set(requested) & set(used) else ""
        logger.warning("beam sizes %s skipped: the beams hold at most %d candidates per example%s",
                       ", ".join(map(str, skipped)), available, instead)
    return skipped


def check_several_candidates(config: StudyConfig, beam_sizes: Sequence[int], available: int,
                             one_candidate: str) -> None:
    """Refuse in one line, before any similarity, a study whose largest beam size is 1 when every estimator needs
    at least 2 candidates (:func:`~.estimators.needs_several_candidates`): each would give every example the same
    uncertainty, so every PRR, best and comparison would be noise. ``one_candidate`` names the beams (files or
    systems) with one candidate per example, "" if none; ``available``: the most candidates any beams hold."""
    if max(beam_sizes) >= 2 or not all(needs_several_candidates(e) for e in config.estimators):
        return  # with a gray-box estimator k = 1 still ranks the examples; the others are marked constant
    names = ", ".join(DISPLAY_NAMES[e] for e in config.estimators)
    why = (f"uncertainty from candidates needs at least 2 of them: {names} would give every example the same value "
           "(PRR 0 by construction, so every best and comparison would be noise)")
    if one_candidate:
        raise DataError(f"one candidate per example (k = 1), so only k = 1 is compared, and {why}; give beams with 2 or more candidates per "
                        "example (generate them with k = 5, say), or, for beams with scores, a gray-box estimator "
                        "({opt:estimators} msp)", source=one_candidate)
    raise ConfigError(f"{{opt:beam_sizes}}: only k = 1 would be compared, and {why}; give sizes of 2 or more "
                      f"(the beams hold up to {available} candidates per example)")


def _extra_metrics(config: StudyConfig, k: int, quality_name: str, u: np.ndarray, q: np.ndarray, method: str,
                   curve: RejectionCurve) -> list[MetricRow]:
    """The selected metrics other than PRR (computed with its interval) for one row, on its rejection curve."""
    extra = [m for m in config.metrics if m != "prr"]
    if not extra:
        return []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = compute_metrics(u, q, extra, bad_below=config.bad_below, normalizer=config.normalizer,
                                 curve=curve if config.max_rejection == 1.0 else None)
    for warning in caught:
        logger.debug("%s, k=%d, %s: %s", method, k, quality_name, warning.message)
    return [MetricRow(k, method, quality_name, name, value) for name, value in values.items()]


def _all_invalid(matrices: dict[str, list[SimilarityMatrix]], k: int) -> dict[str, tuple[int, ...]]:
    """Per similarity, the examples whose first k candidates are all invalid."""
    return {name: tuple(i for i, m in enumerate(found) if m.truncate(k).invalid.all())
            for name, found in matrices.items() if name != LEXICAL_SIMILARITY}


def check_input_files(beam_paths: Sequence[str | os.PathLike[str]], gold_path: str | os.PathLike[str],
                      what: str = "") -> None:
    """A DataError naming the first beams or gold path that is not an existing file (before anything is read);
    ``what`` qualifies them in the message (``calibration``)."""
    prefix = f"{what} " if what else ""
    for what, path in [*((f"{prefix}beams", p) for p in beam_paths), (f"{prefix}gold", gold_path)]:
        path = Path(path)
        if not path.exists():
            raise DataError(f"{what} file not found", source=str(path))
        if not path.is_file():
            raise DataError(f"the {what} must be a file, this is a folder", source=str(path))


def _score_top1(config: StudyConfig, inputs: Inputs, gold_path: str | os.PathLike[str]
                ) -> tuple[dict[str, np.ndarray], dict[str, float], dict[str, int]]:
    """Per quality metric: each top-1's score against gold, the corpus score and the number of invalid top-1s."""
    top1 = [candidates[0] for candidates in inputs.candidates]
    qualities: dict[str, np.ndarray] = {}
    corpus: dict[str, float] = {}
    invalid_top1: dict[str, int] = {}
    for name in config.qualities:  # gold problems surface here, before the similarity matrices
        metric = similarity_registry.get(name)
        scored = score_predictions(metric, top1, inputs.gold, placeholder=placeholder_for(metric),
                                   ids=inputs.ids, source=str(gold_path))
        qualities[name] = read_only(np.array(scored.scores, dtype=float))
        corpus[name] = scored.corpus
        invalid_top1[name] = len(scored.invalid_predictions)
    for name, values in qualities.items():  # ECE and the selective risk need qualities in [0, 1]: check before the matrices
        finite = values[~np.isnan(values)]
        if config.target_risk is not None and finite.size and (finite.min() < 0 or finite.max() > 1):
            raise ConfigError(f"{{opt:target_risk}}: the selective risk 1 - quality needs qualities in "
                              f"[0, 1], but {name!r} scores from {finite.min():g} to {finite.max():g}")
        if "ece" in config.metrics and finite.size and (finite.min() < 0 or finite.max() > 1):
            raise ConfigError(f"{{opt:metrics}}: ece needs qualities in [0, 1], but {name!r} scores from "
                              f"{finite.min():g} to {finite.max():g}")
    return qualities, corpus, invalid_top1


def _matrices(inputs: Inputs, config: StudyConfig) -> dict[str, list[SimilarityMatrix]]:
    """Every similarity's matrices of the inputs that the estimators or the invalid-candidate counts need."""
    needed = dict.fromkeys(name for _, name, _ in method_pairs(config) if name is not None)
    matrices = {name: build_matrices(inputs.candidates, name, cache=config.cache_dir, progress=config.progress,
                                     ids=inputs.ids, workers=1 if name in LEXICAL_SIMILARITIES else config.workers)
                for name in needed}  # lexical ones are cheap: no pool
    # invalid candidates are counted for each similarity, also one no requested estimator reads: prepared only
    matrices.update({name: validity_matrices(inputs.candidates, name) for name in config.similarities
                     if name not in needed})
    return matrices


def _load_scored(beam_paths: Sequence[str | os.PathLike[str]], gold_path: str | os.PathLike[str],
                 config: StudyConfig) -> tuple[Inputs, dict[str, np.ndarray]]:
    """A calibration set's inputs and top-1 qualities (read and scored before any matrix is built)."""
    inputs = load_inputs(list(beam_paths), gold_path, pair_by_position=config.pair_by_position)
    return inputs, _score_top1(config, inputs, gold_path)[0]


def selective_rows(config: StudyConfig, k: int, uncertainties: dict[str, np.ndarray], qualities: dict[str, np.ndarray],
               ids: Sequence[str], calibration: tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None
               ) -> list[SelectiveRow]:
    """The certified threshold of every method x quality at beam size k and what it keeps of the held-out part.

    Without calibration files the examples are split by :func:`~.selective.calibration_mask` (the same ids
    calibrate every method, and every system of a cross-system study); with them, all examples are held out.
    """
    split = calibration_mask(ids, config.calibration_fraction, config.seed) if calibration is None else None
    rows = []
    for quality, q in qualities.items():
        for method, u in uncertainties.items():
            if calibration is None:
                known = ~np.isnan(q)
                cal_u, cal_q = u[split & known], q[split & known]
                test_u, test_q = u[~split & known], q[~split & known]
            else:
                cal_q = calibration[1][quality]
                cal_u, cal_q = calibration[0][method][~np.isnan(cal_q)], cal_q[~np.isnan(cal_q)]
                test_u, test_q = u[~np.isnan(q)], q[~np.isnan(q)]
            if not cal_u.size or not test_u.size:
                raise DataError(f"selective prediction needs calibration and held-out examples with a {quality} "
                                f"quality; got {cal_u.size} and {test_u.size}", field=quality)
            settings = {"target_risk": config.target_risk, "delta": config.delta, "method": config.selective_method,
                        "loss": quality_loss(config.selective_loss, config.bad_below), "seed": config.seed}
            rule = calibrate_threshold(cal_u, cal_q, multiple_testing=config.multiple_testing, **settings)
            coverage, risk = selective_risk(rule, test_u, test_q, loss=settings["loss"])
            needed = None if rule.certified else calibration_size_needed(
                cal_u, cal_q, multiple_testing=config.multiple_testing, **settings)
            rows.append(SelectiveRow(k, method, quality, rule, int(test_u.size), coverage, risk, needed))
    return rows


def too_few_to_certify(config: StudyConfig, calibration_size: int) -> str | None:
    """One sentence when ``calibration_size`` examples cannot certify the target even if every output were right
    (a tiny ``--calibration-fraction``), else None: known before any matrix is built."""
    method = config.selective_method
    binary = config.selective_loss == "bad"
    if method == "auto":  # the losses are not read yet: 1 - quality is taken to be bounded, not 0/1
        method = auto_test(binary)
    need = smallest_certifiable(method, config.target_risk, config.delta, 10_000_000, binary=binary)
    if calibration_size >= need:
        return None
    return (f"the calibration part has {calibration_size} example(s), and at delta {config.delta:g} certifying a "
            f"selective risk of {config.target_risk:g} takes at least {need} ({method}, every kept output right): "
            "nothing can be certified; raise {opt:calibration_fraction}, give {opt:calibration}, or loosen {opt:target_risk}")


def _selective_source(config: StudyConfig, calibration, inputs: Inputs) -> str:
    if calibration is None:
        return (f"a random {config.calibration_fraction:g} of the {len(inputs.ids)} examples (seed {config.seed}) "
                "calibrates, the rest is held out")
    return (f"calibration set {', '.join(f'`{p}`' for p in calibration[0])} with gold `{calibration[1]}`; "
            f"all {len(inputs.ids)} examples are held out")


def usable_config(config: StudyConfig, fields: Sequence[str], option: str = "{opt:estimators}") -> tuple[StudyConfig, str]:
    """``config`` without the estimators whose scores the beams lack, and the line saying so (logged; "" if none).
    ConfigError when every estimator needs them (:func:`~.beam_scores.usable_estimators`)."""
    kept, line = usable_estimators(config.estimators, fields, option)
    if line is None:
        return config, ""
    logger.warning("%s", line)
    return dataclasses.replace(config, estimators=kept), line


def _prr_grid(config: StudyConfig, qualities: dict[str, np.ndarray], uncertainties: dict[int, dict[str, np.ndarray]]
              ) -> tuple[list[PRRRow], list[MetricRow], dict[tuple[int, str], dict[str, RejectionCurve]]]:
    """PRR with its interval, the other metrics and the rejection curve of every k x quality x method."""
    prr_rows: list[PRRRow] = []
    metric_rows: list[MetricRow] = []
    all_curves: dict[tuple[int, str], dict[str, RejectionCurve]] = {}
    total = sum(len(values) for values in uncertainties.values()) * len(qualities)
    with progress_bar(total=total, desc="PRR", unit="estimate", disable=not config.progress) as grid:
        for k, by_method in uncertainties.items():
            for quality_name, q in qualities.items():
                keep = ~np.isnan(q)
                curves: dict[str, RejectionCurve] = {}
                for method, u in by_method.items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", UndefinedPRRWarning)  # said once per quality, below
                        result, curve = prr_and_curve(u[keep], q[keep], max_rejection=config.max_rejection,
                                                      n_bootstrap=config.n_bootstrap, confidence=config.confidence,
                                                      seed=config.seed)
                    constant = bool(u[keep].size) and bool(np.all(u[keep] == u[keep][0]))
                    prr_rows.append(PRRRow(k, method, quality_name, result, constant))
                    curves[method] = curve
                    metric_rows += _extra_metrics(config, k, quality_name, u[keep], q[keep], method, curve)
                    grid.update()
                all_curves[k, quality_name] = curves
    _say_undefined(config, qualities, prr_rows)
    return prr_rows, metric_rows, all_curves


def _say_undefined(config: StudyConfig, qualities: dict[str, np.ndarray], rows: Sequence[PRRRow]) -> None:
    """One log line per quality metric whose PRR is undefined (NaN, n/a in the report) for some rows, and why."""
    for name, q in qualities.items():
        undefined = sum(np.isnan(row.result.prr) for row in rows if row.quality == name)
        if not undefined:
            continue
        known = q[~np.isnan(q)]
        why = (f"all {known.size} examples have the same {name} quality, {known[0]:g}" if np.all(known == known[0])
               else f"too few examples: n = {known.size}, max_rejection = {config.max_rejection:g}")
        total = sum(row.quality == name for row in rows)
        logger.warning("%s: PRR is undefined (n/a in the report) for %d of %d estimator x beam-size rows: the oracle "
                       "rejects no better than random (%s)", name, undefined, total, why)


def _check_before_loading(beam_paths: Sequence[str | os.PathLike[str]], gold_path: str | os.PathLike[str],
                          config: StudyConfig, calibration) -> None:
    """What :func:`run_study` refuses before it reads anything: unknown similarity or quality names, calibration
    files without a target risk, missing input files and a cache folder it cannot write."""
    for name in (*config.similarities, *config.qualities):
        similarity_registry.get(name)  # fail early, before any long computation, on an unknown name
    if calibration is not None and config.target_risk is None:
        raise ConfigError("{opt:calibration} files calibrate a selective threshold: give {opt:target_risk}")
    check_input_files(beam_paths, gold_path)
    if calibration is not None:
        check_input_files(calibration[0], calibration[1], what="calibration")
    if config.cache_dir is not None:  # a read-only cache is said now, not after the top-1 scores
        check_writable(config.cache_dir, "the similarity matrix cache ({opt:cache_dir})")


def _nan_dropped(qualities: dict[str, np.ndarray], n: int) -> dict[str, int]:
    """How many NaN qualities each metric has (dropped from PRR, with a warning); DataError when all ``n`` are."""
    dropped_by = {name: int(np.isnan(q).sum()) for name, q in qualities.items()}
    for name, dropped in dropped_by.items():
        if dropped == n:
            raise DataError(f"every example's {name} quality is NaN (no top-1 prediction could be scored "
                            "against its gold), so PRR is undefined", field=name)
        if dropped:
            logger.warning("%s: %d example(s) with NaN quality dropped from PRR", name, dropped)
    return dropped_by


def run_study(beam_paths: list[str | os.PathLike[str]], gold_path: str | os.PathLike[str],
              config: StudyConfig | None = None,
              calibration: tuple[Sequence[str | os.PathLike[str]], str | os.PathLike[str]] | None = None) -> Study:
    """Read the inputs and compute the whole grid of the report (names and files are checked first).

    With ``config.target_risk``, also the risk-controlled selective threshold of every estimator x quality at
    the largest beam size, calibrated on ``calibration`` (beam files, gold file) when given, else on a random
    ``config.calibration_fraction`` of the examples (:class:`SelectiveRow`).
    """
    config = config or StudyConfig()
    _check_before_loading(beam_paths, gold_path, config, calibration)
    inputs = load_inputs(beam_paths, gold_path, pair_by_position=config.pair_by_position)
    config, skipped_estimators = usable_config(config, inputs.score_fields)  # before the top-1 scores and matrices
    available = max(len(c) for c in inputs.candidates)
    beam_sizes = choose_beam_sizes(config.beam_sizes, available)
    check_several_candidates(config, beam_sizes, available, ", ".join(map(str, beam_paths)) if available < 2 else "")
    qualities, corpus, invalid_top1 = _score_top1(config, inputs, gold_path)
    calibration_set = _load_scored(calibration[0], calibration[1], config) if calibration is not None else None
    if calibration_set is not None:
        config, also = usable_config(config, calibration_set[0].score_fields, "{opt:calibration}")
        skipped_estimators = "; ".join(filter(None, (skipped_estimators, also)))
    if config.target_risk is not None and len(set(inputs.ids)) >= 2:  # said before the matrices, and in the report
        size = (len(calibration_set[0].ids) if calibration_set is not None else
                int(calibration_mask(inputs.ids, config.calibration_fraction, config.seed).sum()))
        note = too_few_to_certify(config, size)
        if note:
            logger.warning("%s", note)
    matrices = _matrices(inputs, config)
    skipped = skipped_beam_sizes(config.beam_sizes, beam_sizes, available)
    uncertainties = {k: estimate_methods(matrices, k, config, inputs.scores) for k in beam_sizes}
    methods = tuple(uncertainties[beam_sizes[0]])
    nan_dropped = _nan_dropped(qualities, len(inputs.ids))
    prr_rows, metric_rows, all_curves = _prr_grid(config, qualities, uncertainties)
    selective: list[SelectiveRow] = []
    if config.target_risk is not None:
        k = beam_sizes[-1]
        calibrated = None
        if calibration_set is not None:
            cal_inputs, cal_qualities = calibration_set
            calibrated = (estimate_methods(_matrices(cal_inputs, config), k, config, cal_inputs.scores), cal_qualities)
        selective = selective_rows(config, k, uncertainties[k], qualities, inputs.ids, calibrated)
    undefined = sum(np.isnan(row.value) for row in metric_rows)
    if undefined:
        logger.warning("%d uncertainty-metric value(s) are undefined (NaN in the report): constant uncertainties "
                       "or qualities, or no bad / good prediction at bad_below=%s", undefined, config.bad_below)
    return Study(
        config=config, inputs=inputs, beam_sizes=beam_sizes, methods=methods, uncertainties=uncertainties,
        qualities=qualities, corpus_quality=corpus, invalid_top1=invalid_top1,
        invalid_candidates={name: read_only(np.array([m.invalid_count for m in matrices[name]]))
                            for name in config.similarities},
        nan_dropped=nan_dropped,
        short_examples={k: sum(len(c) < k for c in inputs.candidates) for k in beam_sizes},
        all_invalid={k: _all_invalid(matrices, k) for k in beam_sizes},
        prr=tuple(prr_rows), curves=all_curves,
        spearman={k: read_only(spearman(uncertainties[k])) for k in beam_sizes},
        metrics=tuple(metric_rows),
        selective=tuple(selective),
        selective_source=_selective_source(config, calibration, inputs) if config.target_risk is not None else "",
        skipped_beam_sizes=skipped, skipped_estimators=skipped_estimators,
    )
