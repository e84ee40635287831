"""Writing a built dataset as a folder in the exact Hugging Face Hub dataset layout (METHOD C).

Layout: ``DIR/README.md`` (card with YAML ``configs:``), ``DIR/{config}/{split}.parquet`` and any
extra files (plots). The folder is written to a temporary sibling and renamed into place, so a
crash never leaves a half-written dataset, and ``load_dataset(DIR, config)`` works on the result
exactly as ``load_dataset("org/name", config)`` does after a push.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .io import atomic_path

logger = logging.getLogger(__name__)

SPLIT_NAMES = ("train", "validation", "test")


def data_files_yaml(configs: Mapping[str, Mapping[str, pd.DataFrame]], default: str | None) -> list[dict]:
    """The ``configs:`` entries of the card's YAML for these configs (paths relative to the repo root)."""
    entries = []
    for name, splits in configs.items():
        entry: dict = {"config_name": name}
        if name == default:
            entry["default"] = True
        entry["data_files"] = [{"split": split, "path": f"{name}/{split}.parquet"} for split in splits]
        entries.append(entry)
    return entries


def to_arrow(frame: pd.DataFrame) -> pa.Table:
    """Convert a frame to Arrow; columns Arrow cannot type (mixed nested values, e.g. Spider's
    parsed ``sql``) are stored as JSON strings so that nothing is lost."""
    columns = {}
    for name in frame.columns:
        values = frame[name]
        try:
            columns[name] = pa.array(values, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            logger.warning("column %r has values of mixed nested types; storing it as JSON text", name)
            columns[name] = pa.array([json.dumps(v, sort_keys=True) for v in values], type=pa.string())
    return pa.table(columns)


def write_hub_folder(out: str | Path, configs: Mapping[str, Mapping[str, pd.DataFrame]], card: str,
                     extra_files: Mapping[str, Path] | None = None) -> Path:
    """Write every config's splits as parquet plus ``README.md`` and extra files, atomically.

    ``configs`` maps config name -> split name -> DataFrame; ``extra_files`` maps a path in the
    repo (e.g. ``plots/ll_split.png``) to a local file to copy in.
    """
    out = Path(out)
    with atomic_path(out) as tmp:
        tmp.mkdir(parents=True)
        for name, splits in configs.items():
            (tmp / name).mkdir()
            for split, frame in splits.items():
                pq.write_table(to_arrow(frame.reset_index(drop=True)), tmp / name / f"{split}.parquet")
        for repo_path, local in (extra_files or {}).items():
            target = tmp / repo_path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(local, target)
        (tmp / "README.md").write_text(card, encoding="utf-8")
    logger.info("wrote %d configs to %s", len(configs), out)
    return out
