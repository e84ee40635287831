"""What an uncertainty study computes: :class:`StudyConfig` (the paper's grid by default, checked when built) and
the grid's named defaults; :mod:`lsplits.uncertainty.study` runs it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lsplits.errors import InvalidOption
from lsplits.io.storage import cache_folder
from lsplits.params import DEFAULT_CONFIDENCE, PARAMS, WHOLE_FROM_1, Checked, Each, Flag, Options, Param
from lsplits.similarity import registry as similarity_registry
from lsplits.similarity.lexical import LEXICAL_SIMILARITIES
from lsplits.uncertainty.beam import LEXICAL_SIMILARITY
from lsplits.uncertainty.bounds import DEFAULT_DELTA, DEFAULT_METHOD, METHODS
from lsplits.uncertainty.estimators import (
    DEFAULT_ECC_THRESHOLD,
    DEFAULT_KLE_T,
    DEFAULT_SAR_T,
    DEFAULT_SETS_THRESHOLD,
    ESTIMATOR_NAME,
    PAPER_ESTIMATORS,
    EstimatorSettings,
    check_estimators,
)
from lsplits.uncertainty.losses import DEFAULT_LOSS, QUALITY_LOSSES
from lsplits.uncertainty.normalization import DEFAULT_NORMALIZER, NORMALIZERS
from lsplits.uncertainty.prr import DEFAULT_BOOTSTRAP, DEFAULT_MAX_REJECTION
from lsplits.uncertainty.selective import DEFAULT_MULTIPLE_TESTING, MULTIPLE_TESTING
from lsplits.uncertainty.ue_metrics import METRIC_NAME, PAPER_METRICS, check_metrics

PAPER_SIMILARITIES = ("smatch", "smatchpp", "s2match", "sema", "wlk")
PAPER_QUALITIES = ("smatchpp", "s2match", "sembleu")
PAPER_BEAM_SIZES = (3, 5, 8, 10)
DEFAULT_CALIBRATION_FRACTION = 0.5
SELECTIVE_LOSSES = QUALITY_LOSSES


def default_cache_dir() -> Path:
    """Where similarity matrices are cached by default (:func:`lsplits.io.storage.cache_folder`)."""
    return cache_folder("matrices")


@dataclass(frozen=True)
class StudyConfig(Checked):
    """What to compute; the defaults reproduce the paper's grid. Checked when built, every field by its rule
    (:class:`lsplits.params.Checked`; lists item by item): InvalidOption, one line naming the field (the CLI and
    the Space say their own words instead). Estimator and metric names are lower-cased."""

    RULES = {
        "similarities": Param(Each(Options(similarity_registry.available)), why="registered similarities"),
        "qualities": Param(Each(Options(similarity_registry.available)), why="registered similarities"),
        "beam_sizes": Param(Each(WHOLE_FROM_1), why="candidates per input"),
        "estimators": Param(Each(ESTIMATOR_NAME)),
        "lexical_similarities": Param(Each(Options(tuple(LEXICAL_SIMILARITIES))),
                                      why="LexSim compares the candidate strings"),
        "metrics": Param(Each(METRIC_NAME)),
        "normalizer": Param(Options(tuple(NORMALIZERS), fold_case=True)),
        "target_risk": Param(PARAMS["target_risk"].rule, optional=True, why=PARAMS["target_risk"].why),
        "selective_method": Param(Options(METHODS)),
        "multiple_testing": Param(Options(MULTIPLE_TESTING)),
        "selective_loss": Param(Options(QUALITY_LOSSES)),
        "pair_by_position": Param(Flag()),
    }

    similarities: tuple[str, ...] = PAPER_SIMILARITIES
    qualities: tuple[str, ...] = PAPER_QUALITIES
    beam_sizes: tuple[int, ...] = PAPER_BEAM_SIZES
    ecc_threshold: float = DEFAULT_ECC_THRESHOLD
    max_rejection: float = DEFAULT_MAX_REJECTION
    n_bootstrap: int = DEFAULT_BOOTSTRAP
    confidence: float = DEFAULT_CONFIDENCE
    seed: int = 0
    workers: int = 0
    cache_dir: Path | None = None
    progress: bool = True
    estimators: tuple[str, ...] = PAPER_ESTIMATORS
    lexical_similarities: tuple[str, ...] = (LEXICAL_SIMILARITY,)
    metrics: tuple[str, ...] = PAPER_METRICS
    bad_below: float | None = None
    normalizer: str = DEFAULT_NORMALIZER
    sets_threshold: float = DEFAULT_SETS_THRESHOLD
    kle_t: float = DEFAULT_KLE_T
    sar_t: float = DEFAULT_SAR_T  # SentenceSAR's temperature
    target_risk: float | None = None  # selective prediction (.selective) when set
    delta: float = DEFAULT_DELTA
    calibration_fraction: float = DEFAULT_CALIBRATION_FRACTION  # used when no calibration files are given
    selective_method: str = DEFAULT_METHOD
    multiple_testing: str = DEFAULT_MULTIPLE_TESTING  # the Learn-then-Test procedure (.selective.MULTIPLE_TESTING)
    selective_loss: str = DEFAULT_LOSS  # or "bad": 1 when the quality is below bad_below (the exact binomial test)
    pair_by_position: bool = False  # pair beams and gold by order, whatever their ids (--pair-by-position)

    def check_together(self) -> None:
        """The rules across fields: known estimators (those that need the candidates' scores are kept or skipped
        once the beams are read); metrics and a ``bad`` loss that need ``bad_below``."""
        check_estimators(self.estimators, with_scores=True)
        check_metrics(self.metrics, self.bad_below)
        if self.target_risk is not None and self.selective_loss == "bad" and self.bad_below is None:
            raise InvalidOption(name="selective_loss", problem="'bad' needs bad_below: the quality under which an "
                                "output is bad")

    def estimator_settings(self) -> EstimatorSettings:
        """The estimators' options under this configuration."""
        return EstimatorSettings(ecc_threshold=self.ecc_threshold, sets_threshold=self.sets_threshold,
                                 kle_t=self.kle_t, sar_t=self.sar_t)
