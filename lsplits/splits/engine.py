"""Pure split engine: turn per-example scores (or lengths, or nothing) into a train/eval partition.

This is the last step of building a split: the LM has already scored every example,
and here we only decide which indices go to eval. Everything works on numpy index arrays (never on
copies of the data), is vectorised (600k examples take well under a second) and is deterministic
under ``seed``.

Every strategy reduces to one idea: rank the examples from "most eval-worthy" to "least", then take
the first ones, optionally within label classes (label balance) and within length buckets (length
control). The rank order is:

- likelihood splits: lowest ``ll_score`` first (``reverse=True``: highest first);
- random splits: a seeded random permutation;
- length splits: longest first.

Ties always keep the original dataset order (stable sorts). The returned :class:`Partition` lists
both train and eval in that rank order, so callers that swap examples later (the Spider atom
constraint) can walk "least likely first" by iterating the arrays.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lsplits.errors import ConfigError, InvalidInput, InvalidOption, SplitInvariantError
from lsplits.params import check

logger = logging.getLogger(__name__)

__all__ = [
    "Partition",
    "bucket_quotas",
    "check_label_quotas",
    "check_partition",
    "length_partition",
    "likelihood_partition",
    "random_partition",
    "resolve_eval_size",
    "split_eval",
]


# --------------------------------------------------------------------------------------------------
# Sizes and the result type
# --------------------------------------------------------------------------------------------------

def resolve_eval_size(eval_size: int | float, n: int) -> int:
    """Return the eval set size as a count of examples.

    ``eval_size`` is either a count (an int >= 1) or a fraction in (0, 1) of the ``n`` examples,
    rounded half up (``0.5 * 5`` gives 3) and never below 1. Raises :class:`InvalidInput` for an empty
    dataset, :class:`InvalidOption` for a size that is not positive, and :class:`ConfigError` for one that
    leaves nothing for train (size >= n).

    >>> resolve_eval_size(0.1, 95), resolve_eval_size(10, 95)
    (10, 10)
    """
    if n <= 0:
        raise InvalidInput("cannot split an empty dataset (0 examples)")
    if eval_size is None:
        raise InvalidOption(name="eval_size", problem="must be a count or a fraction", value=None)
    eval_size = check("eval_size", eval_size)  # the shape's one rule (lsplits.params); the fit to n is below
    if isinstance(eval_size, int):
        count = eval_size
    else:
        count = max(1, int(np.floor(eval_size * n + 0.5)))
    if count >= n:
        raise ConfigError(
            f"eval size {eval_size!r} means {count} of {n} examples in eval, which leaves train empty"
        )
    return count


@dataclass(frozen=True, eq=False)
class Partition:
    """Indices of a train/eval split, both in rank order (most eval-worthy first).

    For likelihood splits that is least likely first (most likely first for reverse splits);
    for random splits the seeded random order; for length splits longest first. The arrays are
    read-only int64 copies. Compare partitions with ``np.array_equal`` on the fields.
    """

    train: np.ndarray
    eval: np.ndarray

    def __post_init__(self) -> None:
        for name in ("train", "eval"):
            object.__setattr__(self, name, _as_index_array(getattr(self, name), name))


def _as_index_array(values: np.ndarray | Sequence[int], name: str) -> np.ndarray:
    """Copy ``values`` into a read-only 1-D int64 array, refusing non-integer input."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise SplitInvariantError(f"{name} indices must be a 1-D array, got shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise SplitInvariantError(f"{name} indices must be integers, got dtype {array.dtype}")
    result = np.array(array, dtype=np.int64)
    result.setflags(write=False)
    return result


# --------------------------------------------------------------------------------------------------
# Invariants
# --------------------------------------------------------------------------------------------------

def _plain(value: object) -> object:
    """Turn a numpy scalar into the Python value it holds, so messages read ``'cat'`` not ``np.str_``."""
    return value.item() if isinstance(value, np.generic) else value


def _preview(values: np.ndarray | list, limit: int = 5) -> str:
    """Show the first few offending values of an error, and how many there are."""
    values = list(values)
    shown = ", ".join(repr(_plain(v)) for v in values[:limit])
    more = f" and {len(values) - limit} more" if len(values) > limit else ""
    return f"{shown}{more}"


def check_partition(partition: Partition, n: int, eval_size: int | float,
                    ids: Sequence[object] | None = None) -> None:
    """Raise :class:`SplitInvariantError` unless ``partition`` is a valid split of ``range(n)``.

    Checks: every index lies in ``[0, n)``; no index repeats within or across train and eval;
    every index appears; eval holds exactly ``resolve_eval_size(eval_size, n)`` examples; and, when
    ``ids`` (the example ids, by dataset position) are given, there is one per example and no id
    repeats, so no example can end up both in train and in eval under two positions.
    """
    expected_eval = resolve_eval_size(eval_size, n)
    counts: dict[str, np.ndarray] = {}
    for name, indices in (("train", partition.train), ("eval", partition.eval)):
        outside = indices[(indices < 0) | (indices >= n)]
        if outside.size:
            raise SplitInvariantError(f"{name} holds indices outside [0, {n}): {_preview(outside)}")
        counts[name] = np.bincount(indices, minlength=n)
        repeated = np.flatnonzero(counts[name] > 1)
        if repeated.size:
            raise SplitInvariantError(f"{name} repeats indices: {_preview(repeated)}")
    overlap = np.flatnonzero((counts["train"] > 0) & (counts["eval"] > 0))
    if overlap.size:
        raise SplitInvariantError(f"indices in both train and eval: {_preview(overlap)}")
    missing = np.flatnonzero((counts["train"] == 0) & (counts["eval"] == 0))
    if missing.size:
        raise SplitInvariantError(f"indices in neither train nor eval: {_preview(missing)}")
    if partition.eval.size != expected_eval:
        raise SplitInvariantError(
            f"eval holds {partition.eval.size} examples, expected {expected_eval} "
            f"(eval size {eval_size!r} of {n})"
        )
    if ids is not None:
        _check_unique_ids(ids, n)


def _check_unique_ids(ids: Sequence[object], n: int) -> None:
    """Raise :class:`SplitInvariantError` if ``ids`` is not one distinct id per example."""
    if len(ids) != n:
        raise SplitInvariantError(f"got {len(ids)} example ids for {n} examples")
    first_position: dict[object, int] = {}
    for position, example_id in enumerate(ids):
        earlier = first_position.setdefault(example_id, position)
        if earlier != position:
            raise SplitInvariantError(
                f"example id {example_id!r} is used twice (positions {earlier} and {position})"
            )


# --------------------------------------------------------------------------------------------------
# Input validation
# --------------------------------------------------------------------------------------------------

def _as_scores(scores: np.ndarray | Sequence[float]) -> np.ndarray:
    """Return scores as a 1-D float64 array; NaN is refused (it has no place in a ranking)."""
    try:
        array = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise InvalidInput(f"scores must be numbers: {error}") from error
    if array.ndim != 1:
        raise InvalidInput(f"scores must be a 1-D sequence, got shape {array.shape}")
    nan_positions = np.flatnonzero(np.isnan(array))
    if nan_positions.size:
        raise InvalidInput(
            f"score of example index {nan_positions[0]} is NaN "
            f"({nan_positions.size} NaN scores in all, first: {_preview(nan_positions)})"
        )
    return array


def _as_lengths(lengths: np.ndarray | Sequence[int], n: int) -> np.ndarray:
    """Return lengths as a 1-D int64 array of ``n`` non-negative whole numbers."""
    array = np.asarray(lengths)
    if array.ndim != 1 or array.size != n:
        raise InvalidInput(f"expected {n} lengths (one per example), got shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        if not np.issubdtype(array.dtype, np.number) or not np.all(np.mod(array, 1) == 0):
            raise InvalidInput(f"lengths must be whole numbers, got dtype {array.dtype}")
    array = array.astype(np.int64)
    negative = np.flatnonzero(array < 0)
    if negative.size:
        raise InvalidInput(f"length of example index {negative[0]} is negative ({array[negative[0]]})")
    return array


def _as_labels(labels: np.ndarray | Sequence[object], n: int) -> np.ndarray:
    """Return labels as a 1-D array of ``n`` sortable values (the classes sort for quota order)."""
    array = np.asarray(labels)
    if array.ndim != 1 or array.size != n:
        raise InvalidInput(f"expected {n} labels (one per example), got shape {array.shape}")
    return array


# --------------------------------------------------------------------------------------------------
# Quotas
# --------------------------------------------------------------------------------------------------

def _draw_bucket_quotas(bucket_sizes: np.ndarray, eval_count: int,
                        rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-bucket eval quotas: floor(E*n_b/N), plus one with probability equal to the fraction.

    Integer arithmetic keeps the floor and the fraction exact. Returns ``(quotas, got_extra,
    has_fraction)``: the drawn quotas, which buckets drew their extra one, and which buckets had a
    fractional share at all (only those may gain or lose one in the fix-up).
    """
    total = int(bucket_sizes.sum())
    exact_share = eval_count * bucket_sizes.astype(np.int64)
    floors, remainders = np.divmod(exact_share, total)
    got_extra = rng.random(bucket_sizes.size) < remainders / total
    return floors + got_extra, got_extra, remainders > 0


def bucket_quotas(lengths: np.ndarray | Sequence[int], eval_size: int | float,
                  seed: int) -> dict[int, int]:
    """Per-length eval quotas before the fix-up, as ``{length: quota}`` in increasing length.

    These are exactly the quotas :func:`likelihood_partition` draws for ``lengths`` with the same
    ``eval_size`` and ``seed`` when no labels are given (with labels each class draws its own).
    """
    length_array = _as_lengths(lengths, len(lengths))
    eval_count = resolve_eval_size(eval_size, length_array.size)
    values, sizes = np.unique(length_array, return_counts=True)
    quotas, _, _ = _draw_bucket_quotas(sizes, eval_count, np.random.default_rng(seed))
    return {int(value): int(quota) for value, quota in zip(values, quotas, strict=True)}


def _class_quotas(labels: np.ndarray, eval_count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(classes, class of each example, class sizes, eval quotas)``, classes sorted.

    Quota E // C per class, the remainder one each to the first classes. Raises
    :class:`ConfigError` naming a class too small for its quota.
    """
    classes, class_of, class_sizes = np.unique(labels, return_inverse=True, return_counts=True)
    quotas = _quotas(eval_count, classes.size)
    for label, size, quota in zip(classes, class_sizes, quotas, strict=True):
        if quota > size:
            fits = _largest_fitting_eval(class_sizes, eval_count)
            raise ConfigError(
                f"label class {_plain(label)!r} has {size} example{'' if size == 1 else 's'}, fewer than its eval quota of "
                f"{quota} ({eval_count} eval examples over {classes.size} classes); "
                + (f"an eval size of at most {fits} fits" if fits else "no eval size fits")
            )
    return classes, class_of.reshape(-1), class_sizes, quotas


def _quotas(eval_count: int, n_classes: int) -> np.ndarray:
    quotas = np.full(n_classes, eval_count // n_classes, dtype=np.int64)
    quotas[: eval_count % n_classes] += 1
    return quotas


def _largest_fitting_eval(class_sizes: np.ndarray, upper: int) -> int:
    """The largest eval count below ``upper`` whose per-class quotas all fit (quotas grow with it)."""
    low, high = 0, upper  # quotas(low) fit, quotas(high) do not
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if np.all(_quotas(middle, class_sizes.size) <= class_sizes) else (low, middle)
    return low


def check_label_quotas(labels: np.ndarray | Sequence[object] | None, eval_size: int | float, *,
                       field: str | None = None) -> None:
    """Raise :class:`ConfigError` when label balance cannot be met: a class smaller than its eval quota.

    The check the label-balanced strategies make, cheap enough to run before any scoring (so that
    hours of scoring do not end in this error). ``field`` names the label field in the message;
    ``labels=None`` (no label balance) checks nothing.
    """
    if labels is None:
        return
    array = _as_labels(labels, len(labels))
    count = resolve_eval_size(eval_size, array.size)
    try:
        _class_quotas(array, count)
    except ConfigError as error:
        classes, sizes = np.unique(array, return_counts=True)
        small = [_plain(label) for label, size, quota in zip(classes, sizes, _quotas(count, classes.size), strict=True)
                 if quota > size]
        drop = ", ".join(repr(label) for label in small)
        where = f"label field {field!r}: " if field else ""
        # named as eval_size, so that the CLI says --eval-size and --drop-label, and Python eval_size and drop_labels
        raise InvalidOption(name="eval_size", problem=f": {where}{error}, or drop the class{'es' if len(small) > 1 else ''}"
                                                      f" ({{opt:drop_labels}} {drop})") from None


def _class_groups(order: np.ndarray, labels: np.ndarray,
                  eval_count: int) -> list[tuple[np.ndarray, int]]:
    """Split ``order`` by label class (classes sorted) and give each class its eval quota.

    Quotas as in :func:`_class_quotas`; each group keeps rank order.
    """
    classes, class_of, class_sizes, quotas = _class_quotas(labels, eval_count)
    for label, size, quota in zip(classes, class_sizes, quotas, strict=True):
        if quota == size:
            logger.warning("label class %r goes entirely to eval (%d examples): none left in train",
                           _plain(label), size)
    grouped = order[np.argsort(class_of[order], kind="stable")]
    boundaries = np.cumsum(class_sizes)[:-1]
    return list(zip(np.split(grouped, boundaries), quotas.tolist(), strict=True))


# --------------------------------------------------------------------------------------------------
# Selection
# --------------------------------------------------------------------------------------------------

def _length_controlled(members: np.ndarray, lengths: np.ndarray, eval_count: int,
                       rng: np.random.Generator) -> np.ndarray:
    """Pick ``eval_count`` of ``members`` (given in rank order) with length control.

    Each distinct length is a bucket; a bucket with quota q sends its q first-ranked members to
    eval (q = 0 sends none). The drawn quotas sum to E only on average, so the fix-up then adds
    the first-ranked remaining member of buckets that did not draw their extra one, best ranked
    first, or removes the last-ranked chosen member of buckets that did, worst ranked first.
    Guarantee: every bucket ends with floor(E*n_b/N) or ceil(E*n_b/N) eval examples, within one
    of its drawn quota, and exactly its quota when the quotas already sum to E.
    """
    values, bucket_of, sizes = np.unique(lengths[members], return_inverse=True, return_counts=True)
    bucket_of = bucket_of.reshape(-1)
    quotas, got_extra, has_fraction = _draw_bucket_quotas(sizes, eval_count, rng)
    # Position of each member within its bucket, counted in rank order (0 = most eval-worthy).
    by_bucket = np.argsort(bucket_of, kind="stable")
    bucket_starts = np.cumsum(sizes) - sizes
    position = np.empty(members.size, dtype=np.int64)
    position[by_bucket] = np.arange(members.size) - np.repeat(bucket_starts, sizes)
    chosen = position < quotas[bucket_of]

    shortfall = eval_count - int(quotas.sum())
    if shortfall > 0:
        may_gain = has_fraction & ~got_extra
        candidates = np.flatnonzero((position == quotas[bucket_of]) & may_gain[bucket_of])
        moved = candidates[:shortfall]
        chosen[moved] = True
    elif shortfall < 0:
        candidates = np.flatnonzero((position == quotas[bucket_of] - 1) & got_extra[bucket_of])
        moved = candidates[shortfall:]
        chosen[moved] = False
    else:
        moved = candidates = np.empty(0, dtype=np.int64)
    if moved.size != abs(shortfall):  # impossible by construction; guard against regressions
        raise SplitInvariantError(
            f"length fix-up needed {abs(shortfall)} moves but found {candidates.size} candidates"
        )
    logger.debug("length control: %d buckets, fix-up moved %d examples %s eval", values.size,
                 abs(shortfall), "into" if shortfall > 0 else "out of")
    return members[chosen]


def _partition_by_rank(order: np.ndarray, eval_size: int | float, *,
                       labels: np.ndarray | Sequence[object] | None = None,
                       lengths: np.ndarray | Sequence[int] | None = None,
                       seed: int = 0) -> Partition:
    """Shared core: take the first-ranked examples of ``order`` into eval.

    With ``labels`` each class gets its own quota; with ``lengths`` each class (or the whole
    dataset) is length-controlled. The partition lists both sides in ``order``.
    """
    n = order.size
    eval_count = resolve_eval_size(eval_size, n)
    rng = np.random.default_rng(seed)
    length_array = None if lengths is None else _as_lengths(lengths, n)
    if labels is None:
        groups = [(order, eval_count)]
    else:
        groups = _class_groups(order, _as_labels(labels, n), eval_count)
    in_eval = np.zeros(n, dtype=bool)
    for members, quota in groups:
        if length_array is None:
            in_eval[members[:quota]] = True
        else:
            in_eval[_length_controlled(members, length_array, quota, rng)] = True
    ranked_in_eval = in_eval[order]
    partition = Partition(train=order[~ranked_in_eval], eval=order[ranked_in_eval])
    check_partition(partition, n, eval_count)
    logger.info("split %d examples: %d train, %d eval (%s%s)", n, partition.train.size,
                partition.eval.size, "label-balanced" if labels is not None else "global",
                ", length-controlled" if lengths is not None else "")
    return partition


# --------------------------------------------------------------------------------------------------
# Public strategies
# --------------------------------------------------------------------------------------------------

def likelihood_partition(scores: np.ndarray | Sequence[float], eval_size: int | float, *,
                         lengths: np.ndarray | Sequence[int] | None = None,
                         labels: np.ndarray | Sequence[object] | None = None,
                         reverse: bool = False, seed: int = 0) -> Partition:
    """Likelihood split: the least likely examples (lowest ``scores``) go to eval.

    ``reverse=True`` sends the most likely instead (the paper's control). ``lengths`` turns on
    length control (see :func:`_length_controlled` for the exact per-bucket guarantee), ``labels``
    label balance; both together length-control each class. Ties keep dataset order. ``-inf`` and
    ``inf`` are valid scores; NaN raises :class:`ConfigError`. ``seed`` only matters with lengths.
    """
    score_array = _as_scores(scores)
    rank_key = -score_array if reverse else score_array
    order = np.argsort(rank_key, kind="stable")
    return _partition_by_rank(order, eval_size, labels=labels, lengths=lengths, seed=seed)


def random_partition(n: int, eval_size: int | float, *,
                     labels: np.ndarray | Sequence[object] | None = None, seed: int = 0) -> Partition:
    """Random split of ``n`` examples with the same sizes and label balance as the other splits.

    Both sides are listed in the seeded random order that decided the split.
    """
    resolve_eval_size(eval_size, n)  # fail on bad sizes before drawing anything
    order = np.random.default_rng(seed).permutation(n)
    return _partition_by_rank(order, eval_size, labels=labels)


def length_partition(lengths: np.ndarray | Sequence[int], eval_size: int | float, *,
                     labels: np.ndarray | Sequence[object] | None = None) -> Partition:
    """Spider's ``length`` baseline: the longest examples go to eval, ties in dataset order."""
    length_array = _as_lengths(lengths, len(lengths))
    order = np.argsort(-length_array, kind="stable")
    return _partition_by_rank(order, eval_size, labels=labels)


def split_eval(eval_indices: np.ndarray | Sequence[int], seed: int = 0, *,
               labels: np.ndarray | Sequence[object] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Shuffle eval (seeded) and halve it into ``(validation, test)``, each label class halved when ``labels``
    (by example index) are given, so a label-balanced eval gives two label-balanced halves.

    The shuffle starts from the indices in ascending order, so which half an example lands in
    depends only on the eval set and the seed, not on the ranking order (tiny score differences
    between runs cannot move examples between validation and test). With an odd count validation
    gets the extra example. With labels each class gives half its examples, in the shuffled order, to each
    side; the one left over of each odd-sized class goes to validation and test in turn (validation first),
    so a class's two halves differ by at most one and the sizes are those without labels.
    """
    indices = np.sort(_as_index_array(eval_indices, "eval"))
    shuffled = indices[np.random.default_rng(seed).permutation(indices.size)]
    half = (shuffled.size + 1) // 2
    if labels is None:
        return shuffled[:half], shuffled[half:]
    classes = np.asarray(labels)[shuffled]
    to_validation = np.zeros(shuffled.size, dtype=bool)
    left_over = []
    for label in np.unique(classes):
        members = np.flatnonzero(classes == label)  # positions in the shuffled order
        to_validation[members[: members.size // 2]] = True
        if members.size % 2:
            left_over.append(members[-1])
    to_validation[np.sort(np.asarray(left_over, dtype=np.int64))[0::2]] = True
    return shuffled[to_validation], shuffled[~to_validation]
