"""Where the benchmarks' real data lives: ``$LSPLITS_BENCH_DATA``, else a ``shared/data`` folder beside the repo.

A clone has no such folder, so :func:`data_argument` makes the option required there (argparse's one-line
"the following arguments are required") and refuses a path that does not exist, naming the option.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA_ENV = "LSPLITS_BENCH_DATA"


def data_root() -> Path | None:
    """``$LSPLITS_BENCH_DATA``, else the first ``shared/data`` in a folder above the repo; None without one."""
    explicit = os.environ.get(DATA_ENV)
    if explicit:
        return Path(explicit)
    return next((p / "shared" / "data" for p in REPO.parents if (p / "shared" / "data").is_dir()), None)


def default_data(relative: str) -> Path | None:
    """``relative`` (e.g. ``amr/lpp_amr_v1.6_test.jsonl``) under :func:`data_root` when it exists there, else None."""
    root = data_root()
    path = root / relative if root is not None else None
    return path if path is not None and path.exists() else None


def data_argument(parser: argparse.ArgumentParser, flag: str, relative: str, what: str) -> None:
    """Add ``flag`` (a path): its default is ``relative`` under the data root when that exists, else it is required."""
    default = default_data(relative)

    def existing(text: str) -> Path:
        path = Path(text).expanduser()
        if not path.exists():
            raise argparse.ArgumentTypeError(f"{path} does not exist")
        return path

    where = f"default {default}" if default is not None else \
        f"required here: no {relative} under ${DATA_ENV} or a shared/data folder above the repo"
    parser.add_argument(flag, type=existing, default=default, required=default is None, help=f"{what} ({where})")
