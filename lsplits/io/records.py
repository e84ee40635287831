"""How lsplits marks what it writes, so that it can later tell its own files from anyone else's.

A folder holds a marker file listing the files written into it (:data:`DATASET_MARKER` in a built dataset,
:data:`FOLDER_MARKER` elsewhere) and the subfolders it owns whole (a difficulty report's ``runs/``). An output
file has a settings record next to it (:func:`settings_record_path`) that carries :data:`RECORD_MARK` and says
how the file was made; a file known only by its record (a beams file, whose rows look like any parser's) is
lsplits' while the SHA-256 its record holds (:func:`record_digest_key`) is the file's. A parquet file carries
:data:`lsplits.io.atomic.PARQUET_MARK` in its schema metadata instead.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from lsplits.io.atomic import atomic_write_text

DATASET_MARKER = "lsplits.json"
"""The settings file of a built dataset folder; it also lists the files lsplits wrote there."""
FOLDER_MARKER = ".lsplits-output.json"
"""The marker of every other folder lsplits writes (``lsplits ue`` reports)."""
MARKER_FILES_KEY = "lsplits_files"
"""The key of a marker file that lists the files lsplits wrote into its folder."""
MARKER_FOLDERS_KEY = "lsplits_folders"
"""The key of a marker file that lists the subfolders lsplits owns whole (their files are all its own)."""
RECORD_MARK = "written_by"
"""The key of a settings record lsplits writes next to an output file (its value names the command)."""
RECORD_SUFFIX = ".settings.json"


def files_below(folder: Path) -> Iterator[str]:
    """Paths (relative, POSIX) of every file and link below ``folder``, not following links."""
    for root, dirs, names in os.walk(folder):
        base = Path(root).relative_to(folder)
        for name in names + [d for d in dirs if (Path(root) / d).is_symlink()]:
            yield (base / name).as_posix()


def read_marker(folder: Path) -> tuple[str, set[str], set[str]] | None:
    """The marker of a folder lsplits wrote: (marker name, files it lists, top-level entries it owns whole)."""
    for name in (DATASET_MARKER, FOLDER_MARKER):
        path = folder / name
        if not path.is_file() or path.is_symlink():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):  # nested too deep: not ours
            continue
        if not isinstance(data, dict):
            continue
        if isinstance(data.get(MARKER_FILES_KEY), list):
            folders = data.get(MARKER_FOLDERS_KEY)
            return (name, {str(f) for f in data[MARKER_FILES_KEY]} | {name},
                    {str(f) for f in folders} if isinstance(folders, list) else set())
    return None


def read_record(path: Path) -> dict | None:
    """The settings record in ``path`` when it is one lsplits wrote (a JSON object with :data:`RECORD_MARK`)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    return record if isinstance(record, dict) and str(record.get(RECORD_MARK, "")).startswith("lsplits") else None


def record_digest_key(command: str) -> str:
    """The key of ``lsplits COMMAND``'s settings record that holds the SHA-256 of the file it describes
    (``beams_sha256``): what tells that file, as it is now, for lsplits' own."""
    return f"{command}_sha256"


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes (hex), read in blocks."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def settings_record_path(output: str | os.PathLike[str]) -> Path:
    """Where the settings an output file was made with are recorded: ``beams.jsonl`` -> ``beams.settings.json``."""
    path = Path(output).expanduser()
    return path.with_name(path.stem + RECORD_SUFFIX)


def write_settings_record(output: str | os.PathLike[str], command: str, record: Mapping[str, object]) -> Path:
    """Write how ``output`` was made next to it (atomically, marked with the command's name); the path."""
    path = settings_record_path(output)
    atomic_write_text(path, json.dumps({RECORD_MARK: f"lsplits {command}", **record}, indent=1, default=str))
    return path


def read_settings_record(output: str | os.PathLike[str]) -> dict | None:
    """The settings record lsplits wrote next to ``output``, or None (none there, or not lsplits')."""
    path = settings_record_path(output)
    return read_record(path) if path.is_file() else None


def folder_files(folder: str | os.PathLike[str], marker: str, owned: Iterable[str] = ()) -> list[str]:
    """The files of ``folder`` its marker lists (sorted): every file but the marker and those of ``owned``."""
    owned = set(owned)
    return sorted(name for name in files_below(Path(folder)) if name != marker and name.split("/", 1)[0] not in owned)


def mark_folder(folder: str | os.PathLike[str], marker: str = FOLDER_MARKER, *,
                owned: Iterable[str] = ()) -> Path:
    """List every file of ``folder`` in its marker file (created, or merged into an existing JSON object).

    ``owned`` names top-level subfolders that lsplits owns whole (filled later, e.g. training runs):
    whatever they come to hold counts as lsplits'.
    """
    folder = Path(folder)
    path = folder / marker
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    owned = sorted(set(owned) | set(data.get(MARKER_FOLDERS_KEY) or ()))
    data[MARKER_FILES_KEY] = folder_files(folder, marker, owned)
    if owned:
        data[MARKER_FOLDERS_KEY] = owned
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True))
    return path
