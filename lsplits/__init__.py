"""lsplits: Likelihood Splits for harder, fairer benchmarks, and black-box uncertainty with PRR.

The Python API (:mod:`lsplits.api`) is re-exported here: :func:`likelihood_splits`, :func:`score` and
:class:`LikelihoodSplits`. They are imported on first use, so ``import lsplits`` loads no torch,
transformers or datasets. See README.md for the command line, which runs the same code.
"""

import os
from typing import Any

# torch's OpenMP threads busy-wait by default; on a shared CPU that makes training many times slower.
# It must be set before torch is first imported, so it is set here (users can still override it).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"

from lsplits import _moved  # noqa: E402  (old module paths, with a FutureWarning)

_moved.install()

__all__ = ["LikelihoodSplits", "likelihood_splits", "score"]


def __getattr__(name: str) -> Any:
    """``lsplits.likelihood_splits`` and the rest of :data:`__all__`, imported from :mod:`lsplits.api` when first used."""
    if name in __all__:
        from lsplits import api

        return getattr(api, name)
    raise AttributeError(f"module 'lsplits' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
