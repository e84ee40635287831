"""Split construction: the pure partition engine (and, alongside it, Spider-specific constraints)."""

from lsplits.splits.engine import (
    Partition,
    bucket_quotas,
    check_partition,
    length_partition,
    likelihood_partition,
    random_partition,
    resolve_eval_size,
    split_eval,
)

__all__ = [
    "Partition",
    "bucket_quotas",
    "check_partition",
    "length_partition",
    "likelihood_partition",
    "random_partition",
    "resolve_eval_size",
    "split_eval",
]
