"""Open a built Likelihood-Split dataset for ``lsplits difficulty``: a local folder or a Hub repo.

The data is read only through ``datasets`` (``get_dataset_config_names`` / ``load_dataset``), so
any file layout that the card's YAML ``configs:`` describes works, on disk or on the Hub; what the
dataset is (task, query and label fields, the LM that split it) comes from ``lsplits.json``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from lsplits.build.report import METADATA_FILE
from lsplits.errors import ConfigError, DataError, hub_failures

logger = logging.getLogger(__name__)

SPLITS = ("train", "validation", "test")
_HUB_ID = re.compile(r"[\w.-]+/[\w.-]+")


@dataclass
class BuiltDataset:
    """A built dataset: where it is, its ``lsplits.json`` metadata and its config names.

    ``folder`` is the local folder when the dataset is one that lsplits wrote on this machine (the
    only case where its card and metadata are updated), None for a Hub repo.
    """

    location: str
    folder: Path | None
    meta: dict[str, Any]
    configs: list[str]
    _frames: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict, repr=False)

    @property
    def task(self) -> str:
        return str(self.meta.get("task", "generic"))

    def load(self, config: str) -> dict[str, pd.DataFrame]:
        """The train/validation/test splits of ``config`` as DataFrames (loaded once).

        Raises:
            DataError: the config lacks one of the three splits.
        """
        if config not in self._frames:
            import datasets

            # A local folder is re-read every time: datasets caches it by folder name and file paths, so
            # a folder rebuilt in place (or another of the same name) would otherwise load stale data.
            mode = datasets.DownloadMode.FORCE_REDOWNLOAD if self.folder is not None else None
            with _quiet_datasets():
                loaded = datasets.load_dataset(self.location, config, download_mode=mode)
            missing = [split for split in SPLITS if split not in loaded]
            if missing:
                raise DataError(f"config {config!r} has no {'/'.join(missing)} split (it has: "
                                f"{', '.join(loaded)}); difficulty needs train, validation and test",
                                source=self.location)
            self._frames[config] = {split: loaded[split].to_pandas() for split in SPLITS}
        return self._frames[config]


def open_built(location: str) -> BuiltDataset:
    """Open ``location`` (a folder written by ``lsplits build`` or a Hub dataset repo id).

    Raises:
        DataError: a local folder without ``lsplits.json``, or unreadable metadata.
        ConfigError: neither a folder nor a reachable Hub dataset repo.
    """
    text = str(location).strip()
    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ConfigError(f"{text}: a file, not a folder; give the folder that `lsplits build` wrote")
        meta_path = path / METADATA_FILE
        if not meta_path.is_file():
            raise DataError(f"no {METADATA_FILE}; is this a folder written by `lsplits build`?", source=text)
        meta = _read_meta(meta_path, text)
        configs = _config_names(str(path), text)
        return BuiltDataset(location=str(path), folder=path, meta=meta, configs=_ordered(configs, meta))
    if not _HUB_ID.fullmatch(text):
        raise ConfigError(f"{text}: no such folder, and not a Hub dataset repo id (org/name)")
    from huggingface_hub import hf_hub_download

    try:
        meta_path = Path(hf_hub_download(text, METADATA_FILE, repo_type="dataset"))
    except hub_failures() as exc:  # offline, unknown repo, no lsplits.json, no access: one readable line
        from lsplits.lm.model_files import first_line

        raise ConfigError(f"cannot download {METADATA_FILE} of the Hub dataset {text!r}: {first_line(exc)}") from exc
    meta = _read_meta(meta_path, text)
    return BuiltDataset(location=text, folder=None, meta=meta, configs=_ordered(_config_names(text, text), meta))


def _read_meta(path: Path, source: str) -> dict[str, Any]:
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{METADATA_FILE} is not readable JSON: {exc}", source=source) from exc
    if not isinstance(meta, dict):
        raise DataError(f"{METADATA_FILE} is not a JSON object", source=source)
    return meta


def _config_names(location: str, source: str) -> list[str]:
    import datasets

    try:
        with _quiet_datasets():
            return list(datasets.get_dataset_config_names(location))
    except hub_failures() as exc:  # a card without configs, unreadable YAML, an unreachable repo
        from lsplits.lm.model_files import first_line

        raise DataError(f"cannot list the dataset's configs: {first_line(exc)}", source=source) from exc


def _ordered(configs: Sequence[str], meta: dict[str, Any]) -> list[str]:
    """The configs in the order ``lsplits.json`` lists them (the build order), then any others."""
    listed = [name for name in meta.get("configs", []) if name in configs]
    return listed + [name for name in configs if name not in listed]


def frames_fingerprint(frames: dict[str, pd.DataFrame], columns: Sequence[str]) -> str:
    """A hash of a config's content that matters to training (ids per split and the given columns)."""
    digest = hashlib.sha256()
    for split in SPLITS:
        frame = frames[split]
        digest.update(split.encode())
        for column in ("id", *columns):
            if column in frame.columns:
                digest.update(json.dumps(frame[column].astype(str).tolist()).encode())
    return digest.hexdigest()


@contextlib.contextmanager
def _quiet_datasets() -> Iterator[None]:
    """Hide ``datasets``' progress bars and info logs while reading (they would precede our one-line errors)."""
    import datasets

    was_enabled = datasets.utils.logging.is_progress_bar_enabled()
    level = datasets.utils.logging.get_verbosity()
    datasets.utils.logging.disable_progress_bar()
    datasets.utils.logging.set_verbosity_error()
    try:
        yield
    finally:
        datasets.utils.logging.set_verbosity(level)
        if was_enabled:
            datasets.utils.logging.enable_progress_bar()
