"""Several systems (parsers) in one uncertainty study: the paper's cross-parser tables (section 4, appendix C).

Each system is studied exactly as ``lsplits ue`` studies one (:func:`~lsplits.uncertainty.study.run_study`,
similarity matrices shared through the on-disk cache, so systems with the same candidates cost nothing
twice); this module then compares them:

- Table 1: corpus Smatch and Smatch++ of each system's top-1 candidates against gold;
- Figure 1: mean PRR per system and quality metric, over estimators and beam sizes;
- Figure 2: mean PRR per system and beam size, over estimators and quality metrics;
- Figures 7/9/10: PRR per system, estimator family (LexSim, EigV, DegMat, Ecc: mean over similarity
  functions) and beam size, one figure per quality metric;
- Figure 5: estimator stability, the mean PRR over systems of each estimator at each beam size;
- Table 4: PRR of every estimator x system x quality metric at the largest beam size;
- Figures 6/8/11: Spearman correlation between estimators of their PRR over all systems x beam sizes,
  per quality metric (the paper's "across 6 parsers x 4 beams": one point per configuration);
- the Spearman correlation between top-1 Smatch and mean PRR, per quality metric, over systems (each
  system's Figure-1 value) and, as the paper's Figure 4, over system x beam-size points;
- with a target risk (``--target-risk``): the coverage each system keeps at that target, per estimator and
  quality metric at the largest common beam size (the certified threshold of :mod:`.selective`, calibrated on
  the same ids in every system, and its held-out coverage and risk);
- beyond the paper: for every two systems, the difference of their Figure-1 mean PRR with a paired
  bootstrap interval: each resample draws the same examples for both systems, so it needs both to
  cover the same example ids (checked before any computation).

Only the beam sizes every system offers enter the cross-system numbers; the per-system reports keep all
of theirs.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import os
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lsplits.errors import ConfigError, DataError, InvalidOption
from lsplits.runtime.progress import progress_bar
from lsplits.similarity import registry as similarity_registry
from lsplits.uncertainty._format import MIN_CORRELATION_POINTS
from lsplits.uncertainty.inputs import Inputs, load_inputs
from lsplits.uncertainty.methods import spearman
from lsplits.uncertainty.prr import PRRResult, _aucs, _ratio, _rejection_steps, prr
from lsplits.uncertainty.quality import placeholder_for, score_predictions
from lsplits.uncertainty.study import (
    SelectiveRow,
    Study,
    check_several_candidates,
    choose_beam_sizes,
    method_family,
    run_study,
    selective_rows,
    usable_config,
)
from lsplits.uncertainty.study_config import StudyConfig

logger = logging.getLogger(__name__)

TABLE1_METRICS = ("smatch", "smatchpp")
PERFORMANCE_METRIC = "smatch"  # the paper's x-axis of Figure 4 and its RQ1 correlation
FAMILIES = ("LexSim", "EigV", "DegMat", "Ecc")
RESERVED_NAMES = ("figures", "tables", "report.md", "systems.csv")  # what the cross-system report writes
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_CHUNK_ELEMENTS = 1 << 20  # resampled entries per bootstrap chunk


def family_order(family: str) -> int:
    """Where an estimator family sorts in tables and figures: the paper's order (:data:`FAMILIES`), others last."""
    return FAMILIES.index(family) if family in FAMILIES else len(FAMILIES)


@dataclass(frozen=True)
class SystemSpec:
    """One ``--system NAME=BEAMS``: a name (its report folder) and its beam files."""

    name: str
    beams: tuple[str, ...]


def system_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a system (it becomes a report folder), or None when it can."""
    if not _NAME.fullmatch(name) or name in RESERVED_NAMES:
        return (f"the name {name!r} must be a folder name of letters, digits and ._+- (starting with a letter or "
                f"digit), and none of {', '.join(RESERVED_NAMES)}")
    return None


def parse_system(text: str) -> SystemSpec:
    """``NAME=FILE`` or ``NAME=RANK1.amr,RANK2.amr,...``; ConfigError naming the option otherwise."""
    name, sep, files = text.partition("=")
    name = name.strip()
    paths = tuple(part.strip() for part in files.split(",") if part.strip())
    if not sep or not name or not paths:
        raise ConfigError(f"{{opt:system}} {text!r}: expected NAME=BEAMS (BEAMS: one JSONL file, or one PENMAN "
                          "file per beam rank separated by commas)")
    problem = system_name_problem(name)
    if problem:
        raise InvalidOption(f"{{opt:system}} {text!r}: {problem}")
    for path in paths:
        if not Path(path).is_file():
            raise ConfigError(f"{{opt:system}} {name}: no such file {path}")
    return SystemSpec(name, paths)


def parse_systems(texts: Sequence[str]) -> list[SystemSpec]:
    """Every ``--system`` value, checked: well-formed, existing files, distinct names."""
    specs = [parse_system(text) for text in texts]
    seen: set[str] = set()
    for spec in specs:
        if spec.name.lower() in seen:  # case-insensitive: the names become folders
            raise ConfigError(f"{{opt:system}} {spec.name}: the name is given twice (ignoring case: names become folders); "
                              "each system needs its own name")
        seen.add(spec.name.lower())
    return specs


@dataclass
class SystemResult:
    """One system's study and its top-1 corpus scores (Table 1)."""

    name: str
    beams: tuple[str, ...]
    study: Study
    top1: dict[str, float]


@dataclass(frozen=True)
class PairwiseDifference:
    """Figure-1 mean PRR of ``system_a`` minus that of ``system_b`` with a paired bootstrap interval."""

    quality: str
    system_a: str
    system_b: str
    prr_a: float
    prr_b: float
    difference: float
    ci_low: float
    ci_high: float
    n: int
    resamples: int  # resamples where both PRRs were defined

    @property
    def verdict(self) -> str:
        """Which system is more reliable, when the interval excludes 0."""
        if math.isnan(self.ci_low) or math.isnan(self.ci_high):
            return "n/a"
        if self.ci_low > 0:
            return f"{self.system_a} > {self.system_b}"
        if self.ci_high < 0:
            return f"{self.system_a} < {self.system_b}"
        return "no clear difference"


@dataclass(frozen=True)
class PerformanceCorrelation:
    """Spearman rho between top-1 performance and mean PRR for one quality metric."""

    quality: str
    rho_systems: float
    p_systems: float
    n_systems: int
    rho_points: float
    p_points: float
    n_points: int


@dataclass
class SystemsStudy:
    """Every cross-system table, computed by :func:`run_systems`; see the module docstring."""

    config: StudyConfig
    systems: list[SystemResult]
    ids: list[str]
    beam_sizes: list[int]
    methods: list[str]
    qualities: list[str]
    table1: dict[str, dict[str, float]] = field(default_factory=dict)
    mean_by_system: dict[tuple[str, str], float] = field(default_factory=dict)
    mean_by_beam: dict[tuple[str, int], float] = field(default_factory=dict)
    families: dict[tuple[str, str, int, str], float] = field(default_factory=dict)
    stability: dict[tuple[str, str, int], float] = field(default_factory=dict)
    largest: dict[tuple[str, str, str], PRRResult] = field(default_factory=dict)
    agreement: dict[str, np.ndarray] = field(default_factory=dict)
    agreement_points: dict[str, int] = field(default_factory=dict)
    correlations: list[PerformanceCorrelation] = field(default_factory=list)
    pairwise: list[PairwiseDifference] = field(default_factory=list)
    undefined: int = 0  # NaN PRR values left out of the means
    constant: int = 0  # PRR values of constant uncertainties (PRRRow.constant_uncertainty), left out likewise
    mean_by_point: dict[tuple[str, int, str], float] = field(default_factory=dict)  # Figure 4: (system, k, quality)
    selective: dict[tuple[str, str, str], SelectiveRow] = field(default_factory=dict)  # (method, system, quality)

    @property
    def names(self) -> list[str]:
        """System names in the order given."""
        return [system.name for system in self.systems]

    def prr(self, system: str, k: int, method: str, quality: str) -> PRRResult:
        """One PRR result of one system's study."""
        return self._lookup[system][k, method, quality].result

    def is_constant(self, system: str, k: int, method: str, quality: str) -> bool:
        """Whether that PRR rests on an uncertainty that is the same for every example (the per-system study's
        :attr:`~lsplits.uncertainty.study.PRRRow.constant_uncertainty`): it ranks nothing, so no cross-system
        mean, best, correlation or comparison uses it."""
        return self._lookup[system][k, method, quality].constant_uncertainty

    def comparable_prr(self, system: str, k: int, method: str, quality: str) -> float:
        """The PRR a cross-system number may use: NaN where it is undefined or rests on constant uncertainty."""
        return math.nan if self.is_constant(system, k, method, quality) else self.prr(system, k, method, quality).prr

    def __post_init__(self) -> None:
        self._lookup = {s.name: {(r.k, r.method, r.quality): r for r in s.study.prr} for s in self.systems}


@contextlib.contextmanager
def _quiet_inputs() -> Iterator[None]:
    """Silence the input reader's warnings during the pre-check (the studies log them afterwards)."""
    reader = logging.getLogger(load_inputs.__module__)
    level = reader.level
    reader.setLevel(logging.ERROR)
    try:
        yield
    finally:
        reader.setLevel(level)


def _describe(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(map(str, list(ids)[:limit]))
    return shown + (f" ... ({len(ids)} in all)" if len(ids) > limit else "")


def check_systems(specs: Sequence[SystemSpec], gold: str | os.PathLike[str],
                  config: StudyConfig) -> tuple[list[Inputs], list[int]]:
    """Read every system's inputs before any computation; the shared beam sizes.

    Raises DataError when the systems do not cover the same example ids (the paired comparison
    resamples the same examples for every system, and the cross-system means must rest on the same
    examples) and ConfigError when they share no beam size.
    """
    if not specs:
        raise ConfigError("{opt:system}: give at least one system")
    for name in (*config.similarities, *config.qualities, *TABLE1_METRICS):
        similarity_registry.get(name)  # an unknown name fails before any work
    with _quiet_inputs():
        loaded = [load_inputs(list(spec.beams), gold, pair_by_position=config.pair_by_position) for spec in specs]
    first, reference = specs[0], set(loaded[0].ids)
    for spec, inputs in zip(specs[1:], loaded[1:], strict=True):
        ids = set(inputs.ids)
        if ids != reference:
            missing = [i for i in loaded[0].ids if i not in ids]
            extra = [i for i in inputs.ids if i not in reference]
            parts = []
            if missing:
                parts.append(f"lacks {len(missing)} example(s) that system {first.name} has ({_describe(missing)})")
            if extra:
                parts.append(f"has {len(extra)} example(s) that system {first.name} lacks ({_describe(extra)})")
            raise DataError(f"system {spec.name} {' and '.join(parts)}: every system must cover the same examples "
                            "(after pairing with the gold), since systems are compared on the same examples",
                            source=", ".join(spec.beams), field="id")
    offered = {spec.name: choose_beam_sizes(config.beam_sizes, max(len(c) for c in inputs.candidates))
               for spec, inputs in zip(specs, loaded, strict=True)}
    common = sorted(set.intersection(*(set(sizes) for sizes in offered.values())))
    if not common:
        shown = "; ".join(f"{name}: {', '.join(map(str, sizes))}" for name, sizes in offered.items())
        raise ConfigError(f"{{opt:beam_sizes}}: the systems share no beam size ({shown}); give sizes every system's "
                          "beams can supply")
    return loaded, common


def _top1_scores(study: Study, gold: str | os.PathLike[str]) -> dict[str, float]:
    """Corpus Smatch and Smatch++ of the top-1 candidates (the study's own value where it has one)."""
    scores = {}
    top1 = [candidates[0] for candidates in study.inputs.candidates]
    for name in TABLE1_METRICS:
        if name in study.corpus_quality:
            scores[name] = study.corpus_quality[name]
            continue
        metric = similarity_registry.get(name)
        scores[name] = score_predictions(metric, top1, study.inputs.gold, placeholder=placeholder_for(metric),
                                         ids=study.inputs.ids, source=str(gold)).corpus
    return scores


def _mean(values: Sequence[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return float(np.mean(finite)) if finite else math.nan


EXACT_P_VALUE_POINTS = 9
"""Up to this many points the p-value is exact (all n! orderings of y); above, scipy's t approximation."""


def exact_spearman_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided permutation p-value of Spearman's rho: the share of the n! orderings of ``y`` whose |rho| is at
    least the observed one (ties by average ranks). Exact where the t approximation is not (n = 3, rho = 1: 1/3)."""
    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)
    orders = np.array(list(itertools.permutations(ry)))
    rx, orders = rx - rx.mean(), orders - orders.mean(axis=1, keepdims=True)
    denominator = np.sqrt((rx ** 2).sum() * (orders ** 2).sum(axis=1))
    if denominator[0] == 0:
        return math.nan
    rhos = np.abs(orders @ rx / denominator)
    observed = abs(float(rx @ (ry - ry.mean()))) / denominator[0]
    return float(np.mean(rhos >= observed - 1e-12))


def _spearman_pair(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Spearman rho and its two-sided p-value: exact up to :data:`EXACT_P_VALUE_POINTS` points, scipy's t
    approximation above; both NaN below :data:`~lsplits.uncertainty._format.MIN_CORRELATION_POINTS` points or
    for a constant input."""
    from scipy.stats import spearmanr

    if len(x) < MIN_CORRELATION_POINTS:
        return math.nan, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant input gives NaN, which the report shows as n/a
        result = spearmanr(x, y)
    rho = float(result.statistic)
    if math.isnan(rho):
        return rho, math.nan
    return rho, exact_spearman_p(x, y) if len(x) <= EXACT_P_VALUE_POINTS else float(result.pvalue)


def _tables(study: SystemsStudy) -> None:
    """Fill every derived table of ``study`` from the per-system PRR results."""
    names, ks, methods, qualities = study.names, study.beam_sizes, study.methods, study.qualities
    value = {(s, k, m, q): study.comparable_prr(s, k, m, q) for s in names for k in ks for m in methods
             for q in qualities}
    study.constant = sum(study.is_constant(*key) for key in value)
    study.undefined = sum(math.isnan(v) for v in value.values()) - study.constant
    for system in study.systems:
        study.table1[system.name] = dict(system.top1)
    for s, q in itertools.product(names, qualities):
        study.mean_by_system[s, q] = _mean([value[s, k, m, q] for k in ks for m in methods])
    for s, k in itertools.product(names, ks):
        study.mean_by_beam[s, k] = _mean([value[s, k, m, q] for m in methods for q in qualities])
    families = [f for f in FAMILIES if any(method_family(m) == f for m in methods)]
    for s, q, k, f in itertools.product(names, qualities, ks, families):
        study.families[s, q, k, f] = _mean([value[s, k, m, q] for m in methods if method_family(m) == f])
    for q, m, k in itertools.product(qualities, methods, ks):
        study.stability[q, m, k] = _mean([value[s, k, m, q] for s in names])
    for m, s, q in itertools.product(methods, names, qualities):
        study.largest[m, s, q] = study.prr(s, ks[-1], m, q)
    if study.config.target_risk is not None:  # at the common largest k, which may be below a system's own
        for system in study.systems:
            per = system.study
            for row in selective_rows(study.config, ks[-1], per.uncertainties[ks[-1]], per.qualities,
                                      per.inputs.ids, None):
                study.selective[row.method, system.name, row.quality] = row
    for s, k, q in itertools.product(names, ks, qualities):
        study.mean_by_point[s, k, q] = _mean([value[s, k, m, q] for m in methods])
    for q in qualities:
        points = [(s, k) for s in names for k in ks
                  if not any(math.isnan(value[s, k, m, q]) for m in methods)]
        study.agreement_points[q] = len(points)
        study.agreement[q] = spearman({m: np.array([value[s, k, m, q] for s, k in points]) for m in methods})
        systems = [s for s in names if not math.isnan(study.mean_by_system[s, q])]  # a mean that rests on something
        performance = [study.table1[s][PERFORMANCE_METRIC] for s in systems]
        by_system = [study.mean_by_system[s, q] for s in systems]
        defined = [(s, k) for s in names for k in ks if not math.isnan(study.mean_by_point[s, k, q])]
        point_x = [study.table1[s][PERFORMANCE_METRIC] for s, _ in defined]
        point_y = [study.mean_by_point[s, k, q] for s, k in defined]
        study.correlations.append(PerformanceCorrelation(
            q, *_spearman_pair(performance, by_system), len(systems), *_spearman_pair(point_x, point_y), len(point_x)))


def _aligned(system: SystemResult, ids: Sequence[str]) -> np.ndarray:
    """Positions of ``ids`` in the system's own example order."""
    position = {example: i for i, example in enumerate(system.study.inputs.ids)}
    return np.array([position[example] for example in ids], dtype=int)


def _resampled_means(system: SystemResult, rows: np.ndarray, quality: str, cells: Sequence[tuple[int, str]],
                     steps: int) -> np.ndarray:
    """Figure-1 mean PRR (over the (beam size, method) cells) of each resample; rows index the aligned examples."""
    q = system.study.qualities[quality][rows]
    total = np.zeros(rows.shape[0])
    for k, method in cells:
        total += _ratio(*_aucs(system.study.uncertainties[k][method][rows], q, steps))
    return total / len(cells)


def _point_mean(system: SystemResult, order: np.ndarray, quality: str, cells: Sequence[tuple[int, str]],
                max_rejection: float) -> float:
    if not cells:
        return math.nan
    q = system.study.qualities[quality][order]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined PRR: NaN, reported as n/a
        return float(np.mean([prr(system.study.uncertainties[k][m][order], q, max_rejection=max_rejection)
                              for k, m in cells]))


def paired_differences(study: SystemsStudy) -> list[PairwiseDifference]:
    """Every pair of systems, per quality metric: difference of mean PRR with a paired bootstrap interval.

    Resample r draws n example positions with replacement (seeded: the same draws for every system, so
    both systems of a pair are scored on the same examples); each system's mean PRR over estimators and
    beam sizes is computed on those examples and the two are subtracted. The interval is the percentile
    interval of the differences, over the resamples where both are defined. Examples whose quality is
    NaN in either system are left out first, and so are the (beam size, estimator) cells whose uncertainty is
    constant (:meth:`SystemsStudy.is_constant`), as in Figure 1: a system with no other cell has no mean and no
    interval (verdict n/a). A system's resampled means are computed once per set of examples and shared by all
    its pairs.
    """
    config = study.config
    orders = {s.name: _aligned(s, study.ids) for s in study.systems}
    computed: dict[tuple[str, str, bytes], tuple[float, np.ndarray]] = {}

    def means(system: SystemResult, quality: str, keep: np.ndarray) -> tuple[float, np.ndarray]:
        key = (system.name, quality, np.packbits(keep).tobytes())
        if key not in computed:
            order = orders[system.name][keep]
            n = order.size
            cells = [(k, m) for k in study.beam_sizes for m in study.methods
                     if not study.is_constant(system.name, k, m, quality)]
            point = _point_mean(system, order, quality, cells, config.max_rejection)
            chunks = []
            if config.n_bootstrap > 0 and n > 1 and cells:
                steps = _rejection_steps(n, config.max_rejection)
                rng = np.random.default_rng(config.seed)
                rows = max(1, _CHUNK_ELEMENTS // n)
                for start in range(0, config.n_bootstrap, rows):
                    draws = rng.integers(0, n, size=(min(rows, config.n_bootstrap - start), n))
                    chunks.append(_resampled_means(system, order[draws], quality, cells, steps))
            computed[key] = (point, np.concatenate(chunks) if chunks else np.empty(0))
        return computed[key]

    pairs = [(q, a, b) for q in study.qualities for a, b in itertools.combinations(study.systems, 2)]
    alpha = (1.0 - config.confidence) / 2
    results = []
    for quality, a, b in progress_bar(pairs, desc="paired bootstrap", unit="pair", disable=not config.progress):
        keep = ~(np.isnan(a.study.qualities[quality][orders[a.name]]) |
                 np.isnan(b.study.qualities[quality][orders[b.name]]))
        (prr_a, samples_a), (prr_b, samples_b) = means(a, quality, keep), means(b, quality, keep)
        samples = samples_a - samples_b if samples_a.size and samples_b.size else np.empty(0)  # none: no cells
        samples = samples[~np.isnan(samples)]
        low, high = (float(x) for x in np.quantile(samples, [alpha, 1 - alpha])) if samples.size \
            else (math.nan, math.nan)
        results.append(PairwiseDifference(quality, a.name, b.name, prr_a, prr_b, prr_a - prr_b, low, high,
                                          int(keep.sum()), int(samples.size)))
    return results


def run_systems(specs: Sequence[SystemSpec], gold: str | os.PathLike[str],
                config: StudyConfig | None = None) -> SystemsStudy:
    """Study every system (the per-system study of ``lsplits ue``) and compute the cross-system tables."""
    config = config or StudyConfig()
    loaded, beam_sizes = check_systems(specs, gold, config)
    shared = set.intersection(*(set(inputs.score_fields) for inputs in loaded))  # every system's rows the same
    config = usable_config(config, [name for name in loaded[0].score_fields if name in shared])[0]
    held = {spec.name: max(len(c) for c in inputs.candidates) for spec, inputs in zip(specs, loaded, strict=True)}
    check_several_candidates(config, beam_sizes, max(held.values()), ", ".join(
        f"system {spec.name} ({', '.join(spec.beams)})" for spec in specs if held[spec.name] < 2))
    systems = []
    for spec in specs:
        logger.info("system %s: %s", spec.name, ", ".join(spec.beams))
        study = run_study(list(spec.beams), gold, config)
        systems.append(SystemResult(spec.name, spec.beams, study, _top1_scores(study, gold)))
    result = SystemsStudy(config=config, systems=systems, ids=list(loaded[0].ids), beam_sizes=beam_sizes,
                          methods=list(systems[0].study.methods), qualities=list(config.qualities))
    _tables(result)
    result.pairwise = paired_differences(result)
    return result


def systems_rows(study: SystemsStudy) -> Iterator[list]:
    """Rows of ``systems.csv``: every PRR of every per-system report, with the system's top-1 corpus quality."""
    for system in study.systems:
        for row in system.study.prr:
            yield [system.name, row.quality, row.k, row.method, row.result.prr, row.result.ci_low,
                   row.result.ci_high, system.study.corpus_quality[row.quality], row.result.n]
