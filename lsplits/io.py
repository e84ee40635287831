"""Atomic file and folder writes, so an interrupted job never leaves a half-written output behind."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success rename it onto ``target`` in one step.

    Works for files and folders. On error the temporary is removed and ``target`` is untouched.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    staged = tmp / target.name
    try:
        yield staged
        if target.is_dir() and not target.is_symlink():
            old = tmp / ".old"
            os.replace(target, old)
            os.replace(staged, target)
        else:
            os.replace(staged, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def atomic_write_text(target: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``target`` atomically (UTF-8)."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def atomic_write_parquet(target: str | os.PathLike[str], table) -> None:
    """Write a pyarrow Table or pandas DataFrame to a parquet file atomically."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not isinstance(table, pa.Table):
        table = pa.Table.from_pandas(table, preserve_index=False)
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp)
