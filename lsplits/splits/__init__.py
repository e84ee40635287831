"""Split construction: the pure partition engine (:mod:`.engine`), the strategy protocol
(:mod:`.strategy`) and Spider's split policy (:mod:`.spider`, with its SQL parts alongside).

The package re-exports the engine's public API, as listed once in ``engine.__all__``.
"""

from lsplits.splits import engine as _engine
from lsplits.splits.engine import *  # noqa: F403 (exactly engine.__all__)

__all__ = list(_engine.__all__)
