"""The one output guard: lsplits replaces only what it wrote, and writes nowhere it must not.

Every command that writes (``build``, ``score``, ``demo``, ``ue``, ``beams``, ``difficulty``,
``push-metrics --stage``) calls :func:`check_output` on its output path before any work, and writes through
:func:`output_folder` / :func:`lsplits.io.atomic.atomic_write_parquet`; a command that adds files to a folder
another command wrote (``difficulty`` adds its figure to a built dataset) checks them with
:func:`check_additions` first and lists them in its marker after. Only a marked output
(:mod:`lsplits.io.records`), with no file added since, is ever replaced; anything else is refused in one line.
Nothing is written inside a built dataset folder but by the build that replaces it whole (and
``lsplits difficulty``'s additions).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

from lsplits.errors import ConfigError
from lsplits.io.atomic import PARQUET_MARK, atomic_path
from lsplits.io.locks import holding_outputs, lock_output
from lsplits.io.records import (
    DATASET_MARKER,
    FOLDER_MARKER,
    RECORD_MARK,
    file_sha256,
    files_below,
    mark_folder,
    read_marker,
    read_record,
    record_digest_key,
    settings_record_path,
)


def foreign_files(folder: str | os.PathLike[str], limit: int = 3) -> list[str]:
    """Up to ``limit`` files in ``folder`` that lsplits did not write (any file, when it holds no marker)."""
    folder = Path(folder)
    marker = read_marker(folder)
    found: list[str] = []
    for name in files_below(folder):
        if marker is not None:
            _, listed, allowed = marker
            if name in listed or name.split("/", 1)[0] in allowed:
                continue
        found.append(name)
        if len(found) >= limit:
            break
    return found


def _is_marked_parquet(path: Path) -> bool:
    """True for a parquet file whose schema metadata carries :data:`lsplits.io.atomic.PARQUET_MARK`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return PARQUET_MARK in (pq.read_schema(path).metadata or {})
    except (OSError, ValueError, pa.ArrowException):  # not parquet, unreadable, truncated: not ours
        return False


def _described_by_record(path: Path) -> bool:
    """Whether the settings record lsplits wrote next to ``path`` holds ``path``'s SHA-256 (its
    :func:`record_digest_key`): the file is, byte for byte, the one that command wrote."""
    record_path = settings_record_path(path)
    record = None if record_path.is_symlink() or not record_path.is_file() else read_record(record_path)
    if record is None:
        return False
    digest = record.get(record_digest_key(str(record[RECORD_MARK]).removeprefix("lsplits").strip()))
    return isinstance(digest, str) and digest == file_sha256(path)


def _written_by_lsplits(path: Path) -> bool:
    """Whether an existing file is one lsplits wrote (a marked parquet file, a settings record, or a JSONL
    file its settings record describes), or is empty. A JSONL file is never taken for lsplits' by its rows:
    ``{id, candidates}`` is what users' own parsers write too."""
    if path.stat().st_size == 0:
        return True  # nothing to lose
    if path.suffix.lower() == ".jsonl":
        return _described_by_record(path)
    if path.suffix.lower() == ".json":
        return read_record(path) is not None
    return _is_marked_parquet(path)


def check_settings_record(output: str | os.PathLike[str], option: str = "{opt:out}") -> Path:
    """Refuse, before any work, an output file whose settings record would replace a file lsplits did not write."""
    return check_output(settings_record_path(output), expect="file", suffix=".json",
                        option=f"the settings record next to {option}")


def _within(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def built_dataset_of(path: str | os.PathLike[str], *, itself: bool = True) -> Path | None:
    """The built dataset folder (its marker is :data:`DATASET_MARKER`) that ``path`` lies in, or is (with
    ``itself``); None when there is none. A build replaces that folder whole, so nothing else writes there."""
    resolved = Path(path).expanduser().resolve()
    for folder in [resolved, *resolved.parents][0 if itself else 1:]:
        if (folder / DATASET_MARKER).is_file():
            found = read_marker(folder)
            if found is not None and found[0] == DATASET_MARKER:
                return folder
    return None


def check_output(target: str | os.PathLike[str], *, expect: Literal["folder", "file"],
                 inputs: Iterable[str | os.PathLike[str]] = (), caches: Iterable[str | os.PathLike[str]] = (),
                 option: str = "{opt:out}", suffix: str | None = None, marker: str = FOLDER_MARKER) -> Path:
    """Refuse, before any work, an output path whose replacement would destroy what lsplits did not write.

    Refused: the current folder or one above it, a path that is, holds or lies inside an input
    (``inputs``) or that is or holds a cache folder (``caches``), a path inside a built dataset folder, a
    symbolic link, a file where a folder is expected (or the reverse), a file name not ending in ``suffix``
    (when given), a built dataset where another kind of folder is written (``marker``: the folder's marker
    to be, :data:`DATASET_MARKER` for a build's), a non-empty folder without an lsplits marker or with files
    added since lsplits wrote it, and an existing non-empty file lsplits did not write. Returns ``target``
    as a Path.

    Raises:
        ConfigError: one line naming ``option``, the path and the problem.
    """
    path = Path(target).expanduser()
    where = f"{option} {target}"
    resolved = path.resolve()
    cwd = Path.cwd().resolve()
    if _within(cwd, resolved):
        what = "is the current folder" if cwd == resolved else f"holds the current folder {cwd}"
        raise ConfigError(f"{where}: {what}; lsplits replaces its output as a whole, give a new folder")
    for given in inputs:
        source = Path(given).expanduser().resolve()
        if source == resolved:
            raise ConfigError(f"{where}: is the input {given}; write the output to another path")
        if _within(source, resolved):
            kind = "folder" if source.is_dir() else "file"
            raise ConfigError(f"{where}: holds the input {kind} {given}; write the output to another folder")
        if source.is_dir() and _within(resolved, source):
            raise ConfigError(f"{where}: lies inside the input folder {given}; write the output elsewhere")
    for given in caches:
        if _within(Path(given).expanduser().resolve(), resolved):
            raise ConfigError(f"{where}: is or holds the cache folder {given}; write the output elsewhere")
    if path.is_symlink():
        raise ConfigError(f"{where}: is a symbolic link; give the real path")
    dataset = built_dataset_of(resolved, itself=False)
    if dataset is not None:
        what = "is a file of" if path.is_file() else "lies inside"
        raise ConfigError(f"{where}: {what} the built dataset {dataset}, which lsplits replaces only as a whole "
                          "(a rebuild); write the output elsewhere")
    if expect == "file" and suffix is not None and path.suffix.lower() != suffix and not path.is_dir():
        raise ConfigError(f"{where}: the file name must end in {suffix}")
    if not path.exists():
        parent = next(p for p in resolved.parents if p.exists())
        if not parent.is_dir():
            raise ConfigError(f"{where}: lies under {parent}, which is a file, not a folder")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise ConfigError(f"{where}: cannot create it, {parent} is not writable")
        lock_output(resolved, where)
        return path
    if expect == "file":
        if path.is_dir():
            raise ConfigError(f"{where}: is a folder, not a file; give a file path such as {path / 'scores.parquet'}")
        if not _written_by_lsplits(path):
            known = (f" (lsplits knows its own by the {settings_record_path(path).name} it writes beside it)"
                     if path.suffix.lower() == ".jsonl" else "")
            raise ConfigError(f"{where}: an existing file that lsplits did not write{known}; give a new path "
                              "or remove the file yourself")
        lock_output(resolved, where)
        return path
    if not path.is_dir():
        raise ConfigError(f"{where}: is a file, not a folder; give a new or empty folder")
    if os.path.ismount(path):  # the output is replaced by renaming a staged folder onto it: a mount point is busy
        raise ConfigError(f"{where}: is a mount point, which lsplits cannot replace (it writes its output beside "
                          f"the target and renames it into place); give a folder inside it, such as {path / 'out'}")
    if marker != DATASET_MARKER and (read_marker(path) or ("",))[0] == DATASET_MARKER:
        raise ConfigError(f"{where}: is a dataset lsplits built (it holds {DATASET_MARKER}), which this command's "
                          "output would replace; give another folder")
    foreign = foreign_files(path, limit=4)
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        kind = "files" if read_marker(path) is not None else "a non-empty folder"
        raise ConfigError(f"{where}: {kind} that lsplits did not write ({shown}); give a new or empty folder, "
                          "or move those files out first")
    lock_output(resolved, where)
    return path


def check_additions(folder: str | os.PathLike[str], names: Iterable[str], *, what: str) -> None:
    """Refuse, before any work, to add ``names`` (paths inside ``folder``) to a folder lsplits did not write,
    or to replace one of them that is not lsplits' own.

    Raises:
        ConfigError: one line naming ``what`` (e.g. the dataset folder), the file and the problem.
    """
    folder = Path(folder)
    marker = read_marker(folder)
    if marker is None:
        raise ConfigError(f"{what} {folder}: not a folder lsplits wrote (no {DATASET_MARKER} or {FOLDER_MARKER} "
                          "listing its files); lsplits adds files only to its own folders")
    _, listed, allowed = marker
    for name in names:
        path = folder / name
        if (path.exists() or path.is_symlink()) and name not in listed and name.split("/", 1)[0] not in allowed:
            raise ConfigError(f"{what} {folder}: {name} exists and lsplits did not write it; move it out first")


@contextlib.contextmanager
def output_folder(target: str | os.PathLike[str], *, marker: str = FOLDER_MARKER,
                  option: str = "{opt:out}", mark: bool = True) -> Iterator[Path]:
    """Check ``target`` (:func:`check_output`), yield an empty staged folder, then mark it and move it into place.

    The previous output, if any, is replaced in one step (:func:`lsplits.io.atomic.atomic_path`); on error
    nothing changes. With ``mark=False`` the caller writes the marker itself, listing
    :func:`lsplits.io.records.folder_files` (a build writes its ``lsplits.json`` through
    :class:`lsplits.building.record.BuildRecord`).
    """
    with holding_outputs():
        target = check_output(target, expect="folder", option=option, marker=marker)
        with atomic_path(target) as staged:
            staged.mkdir(parents=True)
            yield staged
            if mark:
                mark_folder(staged, marker)
