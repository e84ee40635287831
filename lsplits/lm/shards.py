"""Long jobs as numbered shards of work, one cached file per shard, dealt among processes.

Shared by LM scoring (:mod:`lsplits.lm.pipeline`) and beam generation (:mod:`lsplits.generation`):
the work is cut into shards of a fixed size; a shard whose file exists is done (files are written
atomically, so an existing file is a finished one); every process lists the missing shards before
any process writes one, then takes every ``world_size``-th of them (see
:mod:`lsplits.lm.distributed`). A killed run started again computes only the missing shards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from lsplits.lm.distributed import barrier, rank, world_size

T = TypeVar("T")


def split_into_shards(index: np.ndarray, size: int) -> list[np.ndarray]:
    """``index`` cut into consecutive shards of ``size`` items (the last one shorter)."""
    return [index[start:start + size] for start in range(0, len(index), size)]


def missing_shards(shards: Sequence[np.ndarray],
                   is_cached: Callable[[int, np.ndarray], bool]) -> list[tuple[int, np.ndarray]]:
    """``(number, shard)`` of every shard not (validly) cached; returns once every process has listed them."""
    missing = [(number, shard) for number, shard in enumerate(shards) if not is_cached(number, shard)]
    barrier()  # nobody writes a shard before every process has seen what is missing
    return missing


def this_process_share(items: Sequence[T]) -> list[T]:
    """This process's part of ``items``: every ``world_size``-th one from its rank (all of them when alone)."""
    return list(items[rank()::world_size()])


def folder_fingerprint(path: str | Path) -> list | None:
    """(name, size, mtime) of the files of a local folder (None if it is not one), so that a cache keyed
    by it is invalidated when a model folder is retrained or replaced."""
    path = Path(path)
    if not path.is_dir():
        return None
    return [(str(p.relative_to(path)), p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(path.rglob("*")) if p.is_file()]
