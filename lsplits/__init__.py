"""lsplits: Likelihood Splits for harder, fairer benchmarks, and black-box uncertainty with PRR.

See README.md for the command line; the library modules are documented where they live.
"""

import os

# torch's OpenMP threads busy-wait by default; on a shared CPU that makes training many times slower.
# It must be set before torch is first imported, so it is set here (users can still override it).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
