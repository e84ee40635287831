"""Open a built Likelihood-Split dataset, a local folder or a Hub dataset repo: the one opener.

``lsplits analyze``, ``lsplits difficulty``, the Space and the demo Space's scratch LM all read a
built dataset through :func:`open_dataset`. A Hub repo is downloaded (card, ``lsplits.json`` and
parquet files only) and read exactly like a local folder: the data files its record (``lsplits.json``,
:class:`~lsplits.building.record.BuildRecord`) lists, or its card's YAML ``configs:`` when the record lists
none (:func:`lsplits.building.export.data_file_paths`), with what the dataset is (task, query and label fields,
the LM that split it) from the record.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from lsplits.building.export import (
    METADATA_FILE,
    SPLIT_NAMES,
    data_file_paths,
    listed_data_files,
    read_data_file,
)
from lsplits.building.record import BuildRecord
from lsplits.errors import ConfigError, DataError
from lsplits.runtime.failures import hub_snapshot

HUB_ID = re.compile(r"[\w.-]+/[\w.-]+")
"""What a Hub dataset repo id looks like (``org/name``)."""
_HUB_FILES = ["README.md", METADATA_FILE, "*.parquet"]  # all a reader needs; the plots stay on the Hub


@dataclass
class BuiltDataset:
    """A built dataset: where it is, its record (``lsplits.json``) and its config names, configs read on demand.

    ``folder`` is the local folder when ``location`` is one on this machine (the only case where
    lsplits may update its card), None for a Hub repo; ``files`` is where the files are read from
    (the folder, or the Hub download).
    """

    location: str
    folder: Path | None
    files: Path
    record: BuildRecord
    configs: list[str]
    _frames: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict, repr=False)

    @property
    def task(self) -> str:
        """The builder's task name recorded at build time (``generic`` when none was)."""
        return self.record.task.name

    def load(self, config: str, required: Sequence[str] = SPLIT_NAMES) -> dict[str, pd.DataFrame]:
        """The splits of ``config`` as DataFrames (read once), in train/validation/test order.

        Raises:
            DataError: no such config, or it lacks one of the ``required`` splits (by default all three,
                as difficulty needs; the statistics take whatever splits there are).
        """
        if config not in self._frames:
            if config not in self.configs:
                raise DataError(f"no config {config!r} (it has: {', '.join(self.configs) or 'none'})",
                                source=self.location)
            # a Hub snapshot's files are links into its cache folder (snapshots/REV/x -> ../../blobs/...)
            paths = data_file_paths(self.files, config, record=self.record,
                                    links_within=None if self.folder is not None else self.files.parents[1])
            self._frames[config] = {split: pd.concat([read_data_file(p) for p in paths[split]], ignore_index=True)
                                    for split in SPLIT_NAMES if paths.get(split)}
        frames = self._frames[config]
        missing = [split for split in required if split not in frames]
        if missing:
            raise DataError(f"config {config!r} has no {'/'.join(missing)} split (it has: "
                            f"{', '.join(frames) or 'none'}); a built config has train, validation and test",
                            source=self.location)
        return frames

    def frames(self, configs: Sequence[str] | None = None, required: Sequence[str] = ()
               ) -> dict[str, dict[str, pd.DataFrame]]:
        """config -> split -> DataFrame for ``configs`` (default: every config, in build order)."""
        return {name: self.load(name, required) for name in (list(configs) if configs else self.configs)}


def open_dataset(location: str | Path) -> BuiltDataset:
    """Open ``location``: a folder written by ``lsplits build``, or a Hub dataset repo id (``org/name``).

    Raises:
        DataError: a folder without ``lsplits.json``, or one that is not a record (:class:`BuildRecord`).
        ConfigError: a file, nothing there and no Hub id, or a Hub repo that cannot be downloaded.
    """
    text = str(location).strip()
    if not text:
        raise ConfigError("give a folder built by `lsplits build` or a Hub dataset repo id (org/name)")
    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ConfigError(f"{text}: a file, not a folder; give the folder that `lsplits build` wrote")
        folder, files = path, path
    elif not HUB_ID.fullmatch(text):
        raise ConfigError(f"{text}: no such folder, and not a Hub dataset repo id (org/name)")
    else:
        return open_hub_dataset(text)
    record = BuildRecord.of_folder(files, source=text)
    return BuiltDataset(location=str(path), folder=folder, files=files, record=record,
                        configs=_config_names(files, record))


def open_hub_dataset(repo_id: str) -> BuiltDataset:
    """Open the Hub dataset repo ``repo_id``, downloaded (card, ``lsplits.json`` and parquet files) into the
    Hugging Face cache; a folder of this machine with the same name is never read (what a hosted Space needs).

    Raises:
        ConfigError: the repo cannot be downloaded (offline and not cached, unknown, gated).
        DataError: its ``lsplits.json`` is missing or not a record (:class:`BuildRecord`).
    """
    files = hub_snapshot(repo_id, repo_type="dataset", allow_patterns=_HUB_FILES, what="dataset")
    record = BuildRecord.of_folder(files, source=repo_id)
    return BuiltDataset(location=repo_id, folder=None, files=files, record=record,
                        configs=_config_names(files, record))


def _config_names(files: Path, record: BuildRecord) -> list[str]:
    """The configs the record lists, in build order; those the card lists when the record lists none."""
    return list(listed_data_files(files, record)[1])
