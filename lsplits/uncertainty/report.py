"""``lsplits ue``: the AMR uncertainty study (METHOD B6) on one parser's beam outputs.

For every beam size k (3, 5, 8, 10 by truncation, up to what the beams hold), every estimator x
similarity function (LexSim on ROUGE-L; EigV, Ecc, DegMat on each graph similarity) and every
quality metric of the top-1 candidate against gold, it computes PRR with a bootstrap confidence
interval, the Spearman correlations between estimators and the prediction-rejection curves.
Estimators (``--estimators``: the paper's four by default, any of
:data:`~lsplits.uncertainty.estimators.ESTIMATORS`) and further evaluation metrics (``--metrics``:
ROC-AUC, PR-AUC, AURC, E-AURC, RPP, Spearman, Kendall, ECE of :mod:`.ue_metrics`) are selectable;
:mod:`lsplits.uncertainty.render` writes them as a markdown report with the paper's table shapes,
CSV files and PNG plots.

Similarity matrices are computed once at the largest k (the smaller beams are their top-left
blocks) and cached on disk by content, so re-running with other estimators, quality metrics or beam
sizes recomputes no similarity.

Cheap checks come first: options out of range and missing input files are refused in one line
before any file is read. Degenerate inputs are said, not hidden: an estimator whose uncertainty is
the same for every example (k = 1, or identical candidates everywhere) is flagged
(``PRRRow.constant_uncertainty``: it cannot rank examples, its PRR is 0 by construction, and the
report marks no best among such rows), and examples with no valid candidate are counted
(``Study.all_invalid``), since the graph estimators rate them maximally uncertain while LexSim,
on strings, may rate them certain.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from .. import similarity as similarity_registry
from ..errors import ConfigError, DataError
from .beam import LEXICAL_SIMILARITY
from .estimators import (
    DEFAULT_ECC_THRESHOLD,
    DEFAULT_KLE_T,
    DEFAULT_SETS_THRESHOLD,
    DISPLAY_NAMES,
    ESTIMATORS,
    LEXICAL_ESTIMATORS,
    EstimatorSettings,
    UncertaintyConfigError,
    check_estimators,
    estimate_many,
)
from .inputs import Inputs, load_inputs
from .lexical import LEXICAL_SIMILARITIES
from .matrix import SimilarityMatrix, build_matrices
from .normalization import get_normalizer
from .options import check_confidence, check_ecc_threshold, check_max_rejection, check_n_bootstrap, check_seed
from .prr import PRRResult, RejectionCurve, prr_with_ci, rejection_curve
from .quality import placeholder_for, score_predictions
from .ue_metrics import METRICS, PAPER_METRICS, check_metrics, compute_metrics

logger = logging.getLogger(__name__)

PAPER_SIMILARITIES = ("smatch", "smatchpp", "s2match", "sema", "wlk")
PAPER_QUALITIES = ("smatchpp", "s2match", "sembleu")
PAPER_BEAM_SIZES = (3, 5, 8, 10)
GRAPH_ESTIMATORS = ("eigv", "degmat", "ecc")
PAPER_REPORT_ESTIMATORS = ("lexsim", *GRAPH_ESTIMATORS)
SIMILARITY_DISPLAY = {"smatch": "Smatch", "smatchpp": "Smatch++", "s2match": "S2match", "sema": "SEMA",
                      "wlk": "WLK", "sembleu": "SemBLEU", "rougel": "ROUGE-L", "rouge1": "ROUGE-1",
                      "rouge2": "ROUGE-2", "bleu": "BLEU", "rougel_stem": "ROUGE-L+stem",
                      "rouge1_stem": "ROUGE-1+stem", "rouge2_stem": "ROUGE-2+stem"}


def display(name: str) -> str:
    """Paper-style display name of a similarity or quality metric."""
    return SIMILARITY_DISPLAY.get(name, name)


def default_cache_dir() -> Path:
    """``$LSPLITS_CACHE/matrices``, else ``$XDG_CACHE_HOME/lsplits/matrices`` (``~/.cache`` by default)."""
    root = os.environ.get("LSPLITS_CACHE") or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lsplits"
    return Path(root) / "matrices"


@dataclass
class StudyConfig:
    """What to compute; the defaults reproduce the paper's grid."""

    similarities: tuple[str, ...] = PAPER_SIMILARITIES
    qualities: tuple[str, ...] = PAPER_QUALITIES
    beam_sizes: tuple[int, ...] = PAPER_BEAM_SIZES
    ecc_threshold: float = DEFAULT_ECC_THRESHOLD
    max_rejection: float = 1.0
    n_bootstrap: int = 1000
    confidence: float = 0.95
    seed: int = 0
    workers: int = 0
    cache_dir: Path | None = None
    progress: bool = True
    estimators: tuple[str, ...] = PAPER_REPORT_ESTIMATORS
    lexical_similarities: tuple[str, ...] = (LEXICAL_SIMILARITY,)
    metrics: tuple[str, ...] = PAPER_METRICS
    bad_below: float | None = None
    normalizer: str = "minmax"
    sets_threshold: float = DEFAULT_SETS_THRESHOLD
    kle_t: float = DEFAULT_KLE_T

    def estimator_settings(self) -> EstimatorSettings:
        """The estimators' options under this configuration."""
        return EstimatorSettings(ecc_threshold=self.ecc_threshold, sets_threshold=self.sets_threshold,
                                 kle_t=self.kle_t)

    def check(self, names: Mapping[str, str] | None = None) -> None:
        """Refuse out-of-range numeric options (InvalidOption); ``names`` spells them as the caller does."""
        names = names or {}
        check_ecc_threshold(self.ecc_threshold, names.get("ecc_threshold", "ecc_threshold"))
        check_max_rejection(self.max_rejection, names.get("max_rejection", "max_rejection"))
        check_n_bootstrap(self.n_bootstrap, names.get("n_bootstrap", "n_bootstrap"))
        check_confidence(self.confidence, names.get("confidence", "confidence"))
        check_seed(self.seed, names.get("seed", "seed"))


CLI_OPTIONS = {"ecc_threshold": "--ecc-threshold", "max_rejection": "--max-rejection", "n_bootstrap": "--bootstrap",
               "confidence": "--confidence", "seed": "--seed"}


@dataclass
class PRRRow:
    """PRR of one estimator (``method``) at beam size ``k`` for one quality metric."""

    k: int
    method: str
    quality: str
    result: PRRResult
    constant_uncertainty: bool = False  # the same uncertainty for every example: it cannot rank them


@dataclass
class MetricRow:
    """One uncertainty-evaluation metric (``metric``, :mod:`.ue_metrics`) of one estimator at beam size ``k``."""

    k: int
    method: str
    quality: str
    metric: str
    value: float


@dataclass
class Study:
    """Everything the report shows; see :func:`run_study`."""

    config: StudyConfig
    inputs: Inputs
    beam_sizes: list[int]
    methods: list[str]
    uncertainties: dict[int, dict[str, np.ndarray]]
    qualities: dict[str, np.ndarray]
    corpus_quality: dict[str, float]
    invalid_top1: dict[str, int]
    invalid_candidates: dict[str, np.ndarray]
    nan_dropped: dict[str, int]
    short_examples: dict[int, int]
    all_invalid: dict[int, dict[str, list[int]]] = field(default_factory=dict)  # k -> similarity -> examples
    prr: list[PRRRow] = field(default_factory=list)
    curves: dict[tuple[int, str], dict[str, RejectionCurve]] = field(default_factory=dict)
    spearman: dict[int, np.ndarray] = field(default_factory=dict)
    metrics: list[MetricRow] = field(default_factory=list)


def method_name(estimator: str, similarity: str | None) -> str:
    """Row label as in the paper: ``LexSim`` or ``EigV-Smatch++``."""
    label = DISPLAY_NAMES[estimator]
    return label if similarity is None else f"{label}-{display(similarity)}"


def choose_beam_sizes(requested: tuple[int, ...], available: int) -> list[int]:
    """The requested sizes that the beams can supply; just ``available`` if none can."""
    sizes = sorted({k for k in requested if 1 <= k <= available})
    return sizes or [available]


def _method_pairs(config: StudyConfig) -> list[tuple[str, str, str | None]]:
    """(estimator, similarity whose matrices it uses, similarity named in the row label) per report row."""
    pairs: list[tuple[str, str, str | None]] = []
    for estimator in config.estimators:
        if estimator in LEXICAL_ESTIMATORS:
            pairs += [(estimator, lexical, None if lexical == LEXICAL_SIMILARITY else lexical)
                      for lexical in config.lexical_similarities]
        else:
            pairs += [(estimator, name, name) for name in config.similarities]
    return pairs


def _estimate(matrices: dict[str, list[SimilarityMatrix]], k: int, config: StudyConfig) -> dict[str, np.ndarray]:
    """Every method's uncertainty per example at beam size k (each estimator vectorised over the examples)."""
    settings = config.estimator_settings()
    return {method_name(estimator, label): estimate_many(estimator, [m.truncate(k).values for m in matrices[name]],
                                                         **settings.options(estimator))
            for estimator, name, label in _method_pairs(config)}


def _checked_config(config: StudyConfig) -> StudyConfig:
    """The configuration with its names lower-cased, after checking every name and option.

    Raises ConfigError naming the setting (and its ``lsplits ue`` option) before any input is read.
    """
    def checked(setting: str, check):
        try:
            return check()
        except UncertaintyConfigError as exc:
            raise ConfigError(f"{setting} (--{setting.replace('_', '-')}): {exc}") from None

    estimators = checked("estimators", lambda: check_estimators(config.estimators))
    metrics = checked("metrics", lambda: check_metrics(config.metrics, config.bad_below))
    config = dataclasses.replace(config, estimators=estimators, metrics=metrics)
    for setting in ("sets_threshold", "kle_t"):  # one at a time, to name the one at fault (ecc: StudyConfig.check)
        checked(setting, lambda s=setting: EstimatorSettings(**{s: getattr(config, s)}).check())
    checked("normalizer", lambda: get_normalizer(config.normalizer))
    for name in config.lexical_similarities:
        if name not in LEXICAL_SIMILARITIES:
            raise ConfigError(f"lexsim_similarities (--lexsim-similarities): LexSim needs lexical similarities; "
                              f"{name!r} is not one of {', '.join(LEXICAL_SIMILARITIES)}")
    return config


def _extra_metrics(study: Study, k: int, quality_name: str, u: np.ndarray, q: np.ndarray, method: str) -> None:
    """The selected metrics other than PRR (computed above with its interval) for one row."""
    extra = [m for m in study.config.metrics if m != "prr"]
    if not extra:
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values = compute_metrics(u, q, extra, bad_below=study.config.bad_below,
                                 normalizer=study.config.normalizer)
    for warning in caught:
        logger.debug("%s, k=%d, %s: %s", method, k, quality_name, warning.message)
    study.metrics += [MetricRow(k, method, quality_name, name, value) for name, value in values.items()]


def _spearman(values: dict[str, np.ndarray]) -> np.ndarray:
    """Spearman correlation matrix between methods (NaN where a method is constant)."""
    from scipy.stats import rankdata

    ranks = np.array([rankdata(v) for v in values.values()])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.corrcoef(ranks) if len(ranks) > 1 else np.ones((1, 1))


def _all_invalid(matrices: dict[str, list[SimilarityMatrix]], k: int) -> dict[str, list[int]]:
    """Per similarity, the examples whose first k candidates are all invalid."""
    return {name: [i for i, m in enumerate(found) if m.truncate(k).invalid.all()]
            for name, found in matrices.items() if name != LEXICAL_SIMILARITY}


def check_input_files(beam_paths: Sequence[str | os.PathLike[str]], gold_path: str | os.PathLike[str]) -> None:
    """A DataError naming the first beams or gold path that is not an existing file (before anything is read)."""
    for what, path in [*(("beams", p) for p in beam_paths), ("gold", gold_path)]:
        path = Path(path)
        if not path.exists():
            raise DataError(f"{what} file not found", source=str(path))
        if not path.is_file():
            raise DataError(f"the {what} must be a file, this is a folder", source=str(path))


def run_study(beam_paths: list[str | os.PathLike[str]], gold_path: str | os.PathLike[str],
              config: StudyConfig | None = None) -> Study:
    """Read the inputs and compute the whole grid of the report (options, names and files are checked first)."""
    config = config or StudyConfig()
    config.check()
    config = _checked_config(config)
    for name in (*config.similarities, *config.qualities):
        similarity_registry.get(name)  # fail early, before any long computation, on an unknown name
    check_input_files(beam_paths, gold_path)
    inputs = load_inputs(beam_paths, gold_path)
    top1 = [candidates[0] for candidates in inputs.candidates]
    qualities: dict[str, np.ndarray] = {}
    corpus: dict[str, float] = {}
    invalid_top1: dict[str, int] = {}
    for name in config.qualities:  # gold problems surface here, before the similarity matrices
        metric = similarity_registry.get(name)
        scored = score_predictions(metric, top1, inputs.gold, placeholder=placeholder_for(metric),
                                   ids=inputs.ids, source=str(gold_path))
        qualities[name] = np.array(scored.scores, dtype=float)
        corpus[name] = scored.corpus
        invalid_top1[name] = len(scored.invalid_predictions)
    for name, values in qualities.items():  # ECE compares confidences in [0, 1] with qualities: check before the matrices
        finite = values[~np.isnan(values)]
        if "ece" in config.metrics and finite.size and (finite.min() < 0 or finite.max() > 1):
            raise ConfigError(f"metrics (--metrics): ece needs qualities in [0, 1], but {name!r} scores from "
                              f"{finite.min():g} to {finite.max():g}")
    needed = dict.fromkeys(name for _, name, _ in _method_pairs(config))
    needed.update(dict.fromkeys(config.similarities))  # invalid candidates are counted for each similarity
    matrices = {name: build_matrices(inputs.candidates, name, cache=config.cache_dir, progress=config.progress,
                                     workers=1 if name in LEXICAL_SIMILARITIES else config.workers)  # cheap: no pool
                for name in needed}
    available = max(len(c) for c in inputs.candidates)
    beam_sizes = choose_beam_sizes(config.beam_sizes, available)
    study = Study(
        config=config, inputs=inputs, beam_sizes=beam_sizes, methods=[],
        uncertainties={k: _estimate(matrices, k, config) for k in beam_sizes},
        qualities=qualities, corpus_quality=corpus, invalid_top1=invalid_top1,
        invalid_candidates={name: np.array([m.invalid_count for m in matrices[name]])
                            for name in config.similarities},
        nan_dropped={name: int(np.isnan(q).sum()) for name, q in qualities.items()},
        short_examples={k: sum(len(c) < k for c in inputs.candidates) for k in beam_sizes},
        all_invalid={k: _all_invalid(matrices, k) for k in beam_sizes},
    )
    study.methods = list(study.uncertainties[beam_sizes[0]])
    for name, dropped in study.nan_dropped.items():
        if dropped == len(inputs.ids):
            raise DataError(f"every example's {name} quality is NaN (no top-1 prediction could be scored "
                            "against its gold), so PRR is undefined", field=name)
        if dropped:
            logger.warning("%s: %d example(s) with NaN quality dropped from PRR", name, dropped)
    grid = tqdm(total=len(beam_sizes) * len(qualities) * len(study.methods), desc="PRR", unit="estimate",
                disable=not config.progress)
    with grid:
        for k in beam_sizes:
            study.spearman[k] = _spearman(study.uncertainties[k])
            for quality_name, q in qualities.items():
                keep = ~np.isnan(q)
                curves: dict[str, RejectionCurve] = {}
                for method, u in study.uncertainties[k].items():
                    result = prr_with_ci(u[keep], q[keep], max_rejection=config.max_rejection,
                                         n_bootstrap=config.n_bootstrap, confidence=config.confidence,
                                         seed=config.seed)
                    constant = bool(u[keep].size) and bool(np.all(u[keep] == u[keep][0]))
                    study.prr.append(PRRRow(k, method, quality_name, result, constant))
                    curves[method] = rejection_curve(u[keep], q[keep], max_rejection=config.max_rejection)
                    _extra_metrics(study, k, quality_name, u[keep], q[keep], method)
                    grid.update()
                study.curves[k, quality_name] = curves
    undefined = sum(np.isnan(row.value) for row in study.metrics)
    if undefined:
        logger.warning("%d uncertainty-metric value(s) are undefined (NaN in the report): constant uncertainties "
                       "or qualities, or no bad / good prediction at bad_below=%s", undefined, config.bad_below)
    return study


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip().lower() for part in text.split(",") if part.strip())


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"beam sizes must be integers separated by commas, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("beam sizes must be positive")
    return sizes


def add_ue_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``lsplits ue`` (the lead's CLI adds the subcommand and calls :func:`run_ue`)."""
    parser.add_argument("beams", nargs="*", metavar="BEAMS",
                        help="one JSONL file ({id, candidates: [...]}) or one PENMAN file per beam rank")
    parser.add_argument("--system", action="append", metavar="NAME=BEAMS",
                        help="one system of a cross-system study (repeat it; BEAMS: a JSONL file or PENMAN files "
                             "per rank separated by commas): reports in OUT/NAME/, the comparison in OUT/report.md")
    parser.add_argument("--gold", required=True, help="gold graphs: a PENMAN file or JSONL ({id, amr})")
    parser.add_argument("--out", required=True,
                        help="report folder (new or empty; a report lsplits wrote is replaced as a whole)")
    parser.add_argument("--similarities", type=_names, default=PAPER_SIMILARITIES,
                        help=f"comma-separated similarity functions (default {','.join(PAPER_SIMILARITIES)})")
    parser.add_argument("--qualities", type=_names, default=PAPER_QUALITIES,
                        help=f"comma-separated quality metrics (default {','.join(PAPER_QUALITIES)})")
    parser.add_argument("--beam-sizes", type=_sizes, default=PAPER_BEAM_SIZES,
                        help="comma-separated beam sizes, by truncation (default 3,5,8,10)")
    parser.add_argument("--ecc-threshold", type=float, default=DEFAULT_ECC_THRESHOLD,
                        help=f"Ecc keeps Laplacian eigenvectors with eigenvalue below it, in (0, 2] "
                             f"(default {DEFAULT_ECC_THRESHOLD})")
    parser.add_argument("--estimators", type=_names, default=PAPER_REPORT_ESTIMATORS,
                        help=f"comma-separated estimators, of {','.join(ESTIMATORS)} "
                             f"(default the paper's {','.join(PAPER_REPORT_ESTIMATORS)})")
    parser.add_argument("--lexsim-similarities", type=_names, default=(LEXICAL_SIMILARITY,),
                        help=f"lexical similarities of LexSim, of {','.join(LEXICAL_SIMILARITIES)} (default rougel)")
    parser.add_argument("--metrics", type=_names, default=PAPER_METRICS,
                        help=f"comma-separated uncertainty metrics, of {','.join(METRICS)} (default prr; "
                             "PRR with its interval is always in the report)")
    parser.add_argument("--bad-below", type=float, default=None,
                        help="quality under which a prediction is bad (the positive class of roc_auc, pr_auc)")
    parser.add_argument("--normalizer", default="minmax",
                        help="normaliser of the uncertainties before ECE: minmax, quantile, binned_pcc, isotonic_pcc")
    parser.add_argument("--sets-threshold", type=float, default=DEFAULT_SETS_THRESHOLD,
                        help="similarity at which two candidates are in one semantic set "
                             f"(numsemsets, labelprob, semantic_entropy; default {DEFAULT_SETS_THRESHOLD})")
    parser.add_argument("--kle-t", type=float, default=DEFAULT_KLE_T, help="heat-kernel time of KLE (default 0.3)")
    parser.add_argument("--max-rejection", type=float, default=1.0,
                        help="largest rejection rate in the PRR area, in (0, 1] (default 1: the whole curve)")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the CI (0: none)")
    parser.add_argument("--confidence", type=float, default=0.95, help="level of the bootstrap CI (default 0.95)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=0, help="processes (default 0: one per CPU core)")
    parser.add_argument("--cache", default=None,
                        help=f"similarity-matrix cache folder (default {default_cache_dir()})")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the matrix cache")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _config_from_args(args: argparse.Namespace) -> StudyConfig:
    """The study's settings from the command line, refused in one line (naming the option) when out of range."""
    config = StudyConfig(
        similarities=tuple(args.similarities), qualities=tuple(args.qualities),
        beam_sizes=tuple(args.beam_sizes), ecc_threshold=args.ecc_threshold,
        max_rejection=args.max_rejection, n_bootstrap=args.bootstrap, confidence=args.confidence, seed=args.seed,
        workers=args.workers,
        cache_dir=None if args.no_cache else Path(args.cache) if args.cache else default_cache_dir(),
        progress=not args.no_progress, estimators=tuple(args.estimators),
        lexical_similarities=tuple(args.lexsim_similarities), metrics=tuple(args.metrics), bad_below=args.bad_below,
        normalizer=args.normalizer, sets_threshold=args.sets_threshold, kle_t=args.kle_t,
    )
    config.check(CLI_OPTIONS)
    return config


def _system_files(values: Sequence[str] | None) -> list[str]:
    """The beam files named by ``--system NAME=FILE[,FILE...]`` values (malformed ones are refused later)."""
    return [path for value in values or () if "=" in value
            for path in value.split("=", 1)[1].split(",") if path]


def run_ue(args: argparse.Namespace) -> int:
    """Run the study and write the report; returns the exit code."""
    from ..io import check_output
    from .render import main_table_markdown, write_report

    check_output(args.out, expect="folder", inputs=[*args.beams, *_system_files(args.system), args.gold],
                 caches=[] if args.no_cache else [args.cache or default_cache_dir()])  # before any work
    config = _config_from_args(args)
    if args.system or not args.beams:
        from .systems_report import run_systems_ue

        return run_systems_ue(args, config)
    study = run_study(args.beams, args.gold, config)
    report = write_report(study, args.out)
    print(main_table_markdown(study))
    print(f"\nreport written to {report}")
    return 0
