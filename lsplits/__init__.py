"""lsplits: Likelihood Splits for harder, fairer benchmarks, and black-box uncertainty with PRR.

The Python API (:mod:`lsplits.api`) is re-exported here: :func:`likelihood_splits`, :func:`score` and
:class:`LikelihoodSplits`. They are imported on first use, so ``import lsplits`` loads no torch,
transformers or datasets. See README.md for the command line, which runs the same code.
"""

import os

# torch's OpenMP threads busy-wait by default; on a shared CPU that makes training many times slower.
# It must be set before torch is first imported, so it is set here (users can still override it).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"

from lsplits.runtime.lazy import lazy_exports  # noqa: E402  (after OMP_WAIT_POLICY; it imports nothing heavy)

__all__ = ["LikelihoodSplits", "likelihood_splits", "score"]
__getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(__all__, "lsplits.api"))
