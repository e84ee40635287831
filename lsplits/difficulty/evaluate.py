"""The numbers of the difficulty report (the paper's Tables 2-5 and 14), from per-example correctness.

- accuracy with a percentile bootstrap 95% interval over the test examples;
- relative error increase of a config against ``random``, ``(err_config - err_random) / err_random``
  (the paper's headline number), with an interval from resampling both test sets independently;
- accuracy per bucket (query length, rare-word presence, Spider's SQL hardness, novel SQL compounds)
  with each bucket's share of the test set;
- the projection test (Table 5 / Table 14): re-weight ``random``'s per-bucket accuracy by another
  config's bucket mix, ``sum_b share_config(b) * acc_random(b)``, and compare with the accuracy
  measured on that config. A projection above the measured accuracy means the bucket mix alone
  does not explain why the config is harder;
- the split-LM check of Table 2: the gap between another model and the split LM on each config, and
  how much it changes from ``random`` (a paired bootstrap within each config). If the split were
  adversarial to the LM that made it, the gap would widen on the Likelihood Splits.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from lsplits.errors import InvalidInput
from lsplits.params import DEFAULT_CONFIDENCE
from lsplits.uncertainty.prr import DEFAULT_BOOTSTRAP

logger = logging.getLogger(__name__)

RANDOM = "random"
MIN_BUCKET_EXAMPLES = 20
"""A projection that weighs a ``random`` bucket of fewer test examples is marked as resting on a thin bucket."""
HARDER, EASIER, UNCLEAR = "harder", "easier", "not distinguishable"
HARDNESS_ORDER = ("easy", "medium", "hard", "extra")
RARE, NOT_RARE = "with a rare word", "without rare words"
NOVEL, NOT_NOVEL = "with a novel compound", "without novel compounds"


@dataclass(frozen=True)
class Interval:
    """A point estimate with its bootstrap interval (None where undefined) and the number of examples."""

    value: float | None
    low: float | None
    high: float | None
    n: int

    def to_dict(self) -> dict:
        return asdict(self)


def _percentiles(samples: np.ndarray, confidence: float) -> tuple[float | None, float | None]:
    samples = samples[np.isfinite(samples)]
    if samples.size == 0:
        return None, None
    alpha = (1.0 - confidence) / 2
    low, high = np.quantile(samples, [alpha, 1.0 - alpha])
    return float(low), float(high)


def _resampled_means(values: np.ndarray, n_bootstrap: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``n_bootstrap`` resamples (with replacement) of ``values``."""
    return values[rng.integers(0, values.size, size=(n_bootstrap, values.size))].mean(axis=1)


def bootstrap_accuracy(correct: Sequence[float], *, n_bootstrap: int = DEFAULT_BOOTSTRAP, confidence: float = DEFAULT_CONFIDENCE,
                       seed: int = 0) -> Interval:
    """Mean of ``correct`` (0/1 per example) with a percentile bootstrap interval.

    >>> bootstrap_accuracy([1, 1, 1, 0]).value
    0.75
    """
    values = np.asarray(correct, dtype=float)
    if values.size == 0:
        return Interval(None, None, None, 0)
    low = high = None
    if n_bootstrap > 0:
        low, high = _percentiles(_resampled_means(values, n_bootstrap, np.random.default_rng(seed)), confidence)
    return Interval(float(values.mean()), low, high, int(values.size))


def relative_error_increase(correct: Sequence[float], correct_random: Sequence[float], *, n_bootstrap: int = DEFAULT_BOOTSTRAP,
                            confidence: float = DEFAULT_CONFIDENCE, seed: int = 0) -> Interval:
    """``(err - err_random) / err_random`` with an interval from resampling both test sets independently.

    The value is None (with a warning) when the random split has no errors; resamples without an
    error on the random side are left out of the interval.

    >>> relative_error_increase([1, 1, 0, 0], [1, 1, 1, 0], n_bootstrap=0).value
    1.0
    """
    mine = np.asarray(correct, dtype=float)
    base = np.asarray(correct_random, dtype=float)
    err, err_random = 1.0 - mine.mean(), 1.0 - base.mean()
    if err_random <= 0:
        logger.warning("the random split has no test errors: the relative error increase is undefined")
        return Interval(None, None, None, int(mine.size))
    low = high = None
    if n_bootstrap > 0:
        rng = np.random.default_rng(seed)
        errs = 1.0 - _resampled_means(mine, n_bootstrap, rng)
        errs_random = 1.0 - _resampled_means(base, n_bootstrap, rng)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.where(errs_random > 0, (errs - errs_random) / errs_random, np.nan)
        low, high = _percentiles(ratios, confidence)
    return Interval(float((err - err_random) / err_random), low, high, int(mine.size))


def direction(interval: Interval) -> str:
    """``harder`` when the whole interval of a relative error increase lies above 0, ``easier`` below."""
    if interval.low is None or interval.high is None:
        return UNCLEAR
    if interval.low > 0:
        return HARDER
    if interval.high < 0:
        return EASIER
    return UNCLEAR


@dataclass(frozen=True)
class BucketStat:
    """Accuracy on one bucket, its size and its share of the evaluated examples."""

    accuracy: float
    n: int
    share: float


def bucket_accuracy(correct: Sequence[float], buckets: Sequence[str],
                    order: Sequence[str] | None = None) -> dict[str, BucketStat]:
    """Accuracy and share of every bucket (in ``order`` when given, else sorted), empty buckets left out."""
    values = np.asarray(correct, dtype=float)
    labels = np.asarray(buckets, dtype=object)
    if values.shape != labels.shape:
        raise InvalidInput(f"{values.size} correctness values for {labels.size} bucket labels")
    names = list(order) if order is not None else sorted(set(labels.tolist()))
    out = {}
    for name in names:
        mask = labels == name
        if mask.any():
            out[name] = BucketStat(float(values[mask].mean()), int(mask.sum()), float(mask.mean()))
    return out


def projected_accuracy(reference: Mapping[str, BucketStat | float], shares: Mapping[str, BucketStat | float]) -> float | None:
    """``sum_b shares[b] * reference[b]``: the reference's per-bucket accuracy under another bucket mix.

    None when a bucket of ``shares`` has no reference accuracy (the projection would be a guess).

    >>> round(projected_accuracy({"easy": .923, "medium": .823, "hard": .784, "extra": .629},
    ...                          {"easy": .077, "medium": .435, "hard": .233, "extra": .254}), 4)
    0.7715
    """
    total = 0.0
    for name, share in shares.items():
        weight = share.share if isinstance(share, BucketStat) else float(share)
        if weight == 0:
            continue
        if name not in reference:
            return None
        accuracy = reference[name]
        total += weight * (accuracy.accuracy if isinstance(accuracy, BucketStat) else float(accuracy))
    return total


def gap_change(model_config: Sequence[float], split_lm_config: Sequence[float], model_random: Sequence[float],
               split_lm_random: Sequence[float], *, n_bootstrap: int = DEFAULT_BOOTSTRAP, confidence: float = DEFAULT_CONFIDENCE,
               seed: int = 0) -> tuple[float, Interval]:
    """The accuracy gap (model - split LM) on a config, and its change from ``random``, with an interval.

    Both models are scored on the same examples of a config, so the examples are resampled jointly
    within a config (paired) and independently between the config and ``random``.

    Returns:
        ``(gap on the config, change = gap(config) - gap(random) with its interval)``.
    """
    a, b = np.asarray(model_config, dtype=float), np.asarray(split_lm_config, dtype=float)
    ar, br = np.asarray(model_random, dtype=float), np.asarray(split_lm_random, dtype=float)
    if a.shape != b.shape or ar.shape != br.shape:
        raise InvalidInput("the two models must be scored on the same examples of each config")
    gap, gap_random = float(a.mean() - b.mean()), float(ar.mean() - br.mean())
    low = high = None
    if n_bootstrap > 0:
        rng = np.random.default_rng(seed)
        differences, differences_random = a - b, ar - br
        samples = (_resampled_means(differences, n_bootstrap, rng)
                   - _resampled_means(differences_random, n_bootstrap, rng))
        low, high = _percentiles(samples, confidence)
    return gap, Interval(gap - gap_random, low, high, int(a.size))


# --- buckets --------------------------------------------------------------------------------------------


def length_edges(lengths: Sequence[int], n_buckets: int = 4) -> list[int]:
    """Lower bounds of up to ``n_buckets`` query-length buckets at the quantiles of ``lengths`` (ints, distinct)."""
    values = np.asarray(lengths, dtype=float)
    if values.size == 0:
        return [0]
    cuts = np.quantile(values, np.linspace(0, 1, n_buckets + 1)[1:-1])
    edges = sorted({int(values.min())} | {int(np.floor(c)) + 1 for c in cuts})
    return [e for e in edges if e <= values.max()]


def length_labels(lengths: Sequence[int], edges: Sequence[int]) -> list[str]:
    """The bucket name of each length: ``"7-9"`` for edges ``[.., 7, 10, ..]``, ``"13+"`` for the last."""
    names = [f"{lo}-{hi - 1}" if hi - 1 > lo else f"{lo}" for lo, hi in zip(edges, edges[1:])] + [f"{edges[-1]}+"]
    index = np.searchsorted(np.asarray(edges), np.asarray(lengths), side="right") - 1
    return [names[max(i, 0)] for i in index]


def length_order(edges: Sequence[int]) -> list[str]:
    """The bucket names of ``edges`` from shortest to longest."""
    return length_labels(list(edges), edges)


def rare_word_labels(texts: Sequence[str]) -> list[str]:
    """Per text: whether it holds a rare word (at most 1 per million in English, by wordfreq)."""
    from lsplits.building.analysis import rare_word_counts

    counts = rare_word_counts(texts, progress=False)
    return [RARE if rare > 0 else NOT_RARE for rare in counts[:, 0]]


def hardness_labels(sqls: Sequence[str], hardness: Sequence[str] | None = None) -> list[str]:
    """Spider's SQL hardness of each query (the built ``hardness`` column when given)."""
    if hardness is not None:
        return [str(h) for h in hardness]
    from lsplits.splits.hardness import spider_hardness

    return [spider_hardness(sql) for sql in sqls]


def novel_compound_labels(test_sqls: Sequence[str], train_sqls: Sequence[str]) -> list[str]:
    """Per test query: whether one of its SQL compounds never occurs in the train split (Table 14)."""
    from lsplits.splits.sql_tree import sql_compounds

    seen: set[str] = set()
    for sql in train_sqls:
        seen.update(sql_compounds(sql))
    return [NOVEL if set(sql_compounds(sql)) - seen else NOT_NOVEL for sql in test_sqls]
