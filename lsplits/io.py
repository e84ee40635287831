"""Safe outputs: atomic file and folder writes, and the guard that lets lsplits replace only what it wrote.

The one output guard. Every command that writes (``build``, ``score``, ``demo``, ``ue``, ``beams``,
``difficulty``, ``push-metrics --stage``) calls :func:`check_output` on its output path before any
work, and writes through :func:`output_folder` / :func:`atomic_write_parquet`; a command that adds
files to a folder another command wrote (``difficulty`` adds its figure to a built dataset) checks
them with :func:`check_additions` first and lists them in its marker after.
lsplits marks what it writes: a folder holds a marker file listing the files written into it
(``lsplits.json`` in a built dataset, :data:`FOLDER_MARKER` elsewhere) and the subfolders it owns
whole (a difficulty report's ``runs/``), a parquet file carries :data:`PARQUET_MARK` in its schema
metadata, and the settings record written next to an output file (:func:`settings_record_path`) carries
:data:`RECORD_MARK`; a file known only by its record (a beams file, whose rows look like any parser's) is
lsplits' while the SHA-256 its record holds (:func:`record_digest_key`) is the file's. Only a marked output,
with no file added since, is ever replaced; anything else is refused in one line. Nothing is written inside
a built dataset folder but by the build that replaces it whole (and ``lsplits difficulty``'s additions).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Literal

from lsplits.errors import ConfigError
from lsplits.runtime import tempfolders

DATASET_MARKER = "lsplits.json"
"""The settings file of a built dataset folder; it also lists the files lsplits wrote there."""
FOLDER_MARKER = ".lsplits-output.json"
"""The marker of every other folder lsplits writes (``lsplits ue`` reports)."""
MARKER_FILES_KEY = "lsplits_files"
"""The key of a marker file that lists the files lsplits wrote into its folder."""
MARKER_FOLDERS_KEY = "lsplits_folders"
"""The key of a marker file that lists the subfolders lsplits owns whole (their files are all its own)."""
PARQUET_MARK = b"lsplits"
"""Schema-metadata key of parquet files written by lsplits (its value says what wrote it)."""
RECORD_MARK = "written_by"
"""The key of a settings record lsplits writes next to an output file (its value names the command)."""
RECORD_SUFFIX = ".settings.json"


STALE_STAGING_SECONDS = 6 * 3600
"""A staging folder (``.NAME.*.tmp``) untouched this long was left by a process that was killed: removed."""


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success put it in place of ``target`` in one step.

    Works for files and folders. A file, or a folder where nothing is there yet, is renamed into place; a
    folder replacing a folder is exchanged with it in one ``renameat2(RENAME_EXCHANGE)`` on Linux (two renames
    elsewhere, with a moment where ``target`` is missing). On error the temporary is removed and ``target`` is
    untouched. Staging folders of the same target left by a killed process are removed first
    (:data:`STALE_STAGING_SECONDS`). This replaces whatever ``target`` is: user-facing outputs go through
    :func:`check_output` first.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_staging(target)
    tmp = tempfolders.make(prefix=f".{target.name}.{_staging_owner()}.", suffix=".tmp", dir=target.parent)
    staged = tmp / target.name
    try:
        yield staged
        replacing_folder = target.is_dir() and not target.is_symlink()
        if replacing_folder and not _exchange(staged, target):
            os.replace(target, tmp / ".old")
            os.replace(staged, target)
        elif not replacing_folder:
            os.replace(staged, target)
    finally:
        tempfolders.remove(tmp)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2`` with ``RENAME_EXCHANGE``); False where unsupported."""
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # not glibc >= 2.28 / not Linux
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def _staging_owner() -> str:
    """``PID@HOST`` of this process, written into its staging folders' names so a later run can tell whether
    their writer is gone (:func:`_remove_stale_staging`)."""
    return f"{os.getpid()}@{socket.gethostname().replace('.', '-') or 'localhost'}"


def _writer_gone(folder: Path) -> bool:
    """Whether the process named in a staging folder's name (:func:`_staging_owner`) has ended: it ran on this
    host and no process has its pid. False when that cannot be told (another host, an unnamed writer)."""
    found = re.search(r"\.(\d+)@([^.]+)\.[^.]*\.tmp$", folder.name)
    if found is None or found.group(2) != _staging_owner().split("@", 1)[1]:
        return False
    pid = int(found.group(1))
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


def _remove_stale_staging(target: Path) -> None:
    """Remove ``.NAME.*.tmp`` staging folders of ``target`` whose writer has ended (killed with ``kill -9``,
    out of memory), or that no process has touched for :data:`STALE_STAGING_SECONDS`."""
    import glob
    import time

    cutoff = time.time() - STALE_STAGING_SECONDS
    for old in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            if old.is_dir() and not old.is_symlink() and (_writer_gone(old) or old.stat().st_mtime < cutoff):
                shutil.rmtree(old, ignore_errors=True)


def atomic_write_text(target: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``target`` atomically (UTF-8)."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")


def atomic_write_parquet(target: str | os.PathLike[str], table, *, mark: str | None = None,
                         metadata: Mapping[str, str] | None = None) -> None:
    """Write a pyarrow Table or pandas DataFrame to a parquet file atomically.

    ``mark`` (e.g. ``"score"``) stores :data:`PARQUET_MARK` in the schema metadata, so that a later
    run may replace the file (see :func:`check_output`); ``metadata`` adds further schema metadata.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not isinstance(table, pa.Table):
        table = pa.Table.from_pandas(table, preserve_index=False)
    extra = {key.encode(): value.encode() for key, value in (metadata or {}).items()}
    if mark is not None:
        extra[PARQUET_MARK] = mark.encode()
    if extra:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **extra})
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp)


def _files(folder: Path) -> Iterator[str]:
    """Paths (relative, POSIX) of every file and link below ``folder``, not following links."""
    for root, dirs, names in os.walk(folder):
        base = Path(root).relative_to(folder)
        for name in names + [d for d in dirs if (Path(root) / d).is_symlink()]:
            yield (base / name).as_posix()


def _marker(folder: Path) -> tuple[str, set[str], set[str]] | None:
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


def foreign_files(folder: str | os.PathLike[str], limit: int = 3) -> list[str]:
    """Up to ``limit`` files in ``folder`` that lsplits did not write (any file, when it holds no marker)."""
    folder = Path(folder)
    marker = _marker(folder)
    found: list[str] = []
    for name in _files(folder):
        if marker is not None:
            _, listed, allowed = marker
            if name in listed or name.split("/", 1)[0] in allowed:
                continue
        found.append(name)
        if len(found) >= limit:
            break
    return found


def _is_marked_parquet(path: Path) -> bool:
    """True for a parquet file whose schema metadata carries :data:`PARQUET_MARK`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return PARQUET_MARK in (pq.read_schema(path).metadata or {})
    except (OSError, ValueError, pa.ArrowException):  # not parquet, unreadable, truncated: not ours
        return False


def _record_of(path: Path) -> dict | None:
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


def _described_by_record(path: Path) -> bool:
    """Whether the settings record lsplits wrote next to ``path`` holds ``path``'s SHA-256 (its
    :func:`record_digest_key`): the file is, byte for byte, the one that command wrote."""
    record_path = settings_record_path(path)
    record = None if record_path.is_symlink() or not record_path.is_file() else _record_of(record_path)
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
        return _record_of(path) is not None
    return _is_marked_parquet(path)


def settings_record_path(output: str | os.PathLike[str]) -> Path:
    """Where the settings an output file was made with are recorded: ``beams.jsonl`` -> ``beams.settings.json``."""
    path = Path(output).expanduser()
    return path.with_name(path.stem + RECORD_SUFFIX)


def check_settings_record(output: str | os.PathLike[str], option: str = "--out") -> Path:
    """Refuse, before any work, an output file whose settings record would replace a file lsplits did not write."""
    return check_output(settings_record_path(output), expect="file", suffix=".json",
                        option=f"the settings record next to {option}")


def write_settings_record(output: str | os.PathLike[str], command: str, record: Mapping[str, object]) -> Path:
    """Write how ``output`` was made next to it (atomically, marked with the command's name); the path."""
    path = settings_record_path(output)
    atomic_write_text(path, json.dumps({RECORD_MARK: f"lsplits {command}", **record}, indent=1, default=str))
    return path


def read_settings_record(output: str | os.PathLike[str]) -> dict | None:
    """The settings record lsplits wrote next to ``output``, or None (none there, or not lsplits')."""
    path = settings_record_path(output)
    return _record_of(path) if path.is_file() else None


def _within(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def built_dataset_of(path: str | os.PathLike[str], *, itself: bool = True) -> Path | None:
    """The built dataset folder (its marker is :data:`DATASET_MARKER`) that ``path`` lies in, or is (with
    ``itself``); None when there is none. A build replaces that folder whole, so nothing else writes there."""
    resolved = Path(path).expanduser().resolve()
    for folder in [resolved, *resolved.parents][0 if itself else 1:]:
        if (folder / DATASET_MARKER).is_file():
            found = _marker(folder)
            if found is not None and found[0] == DATASET_MARKER:
                return folder
    return None


def check_output(target: str | os.PathLike[str], *, expect: Literal["folder", "file"],
                 inputs: Iterable[str | os.PathLike[str]] = (), caches: Iterable[str | os.PathLike[str]] = (),
                 option: str = "--out", suffix: str | None = None, marker: str = FOLDER_MARKER) -> Path:
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
        _lock_output(resolved, where)
        return path
    if expect == "file":
        if path.is_dir():
            raise ConfigError(f"{where}: is a folder, not a file; give a file path such as {path / 'scores.parquet'}")
        if not _written_by_lsplits(path):
            known = (f" (lsplits knows its own by the {settings_record_path(path).name} it writes beside it)"
                     if path.suffix.lower() == ".jsonl" else "")
            raise ConfigError(f"{where}: an existing file that lsplits did not write{known}; give a new path "
                              "or remove the file yourself")
        _lock_output(resolved, where)
        return path
    if not path.is_dir():
        raise ConfigError(f"{where}: is a file, not a folder; give a new or empty folder")
    if os.path.ismount(path):  # the output is replaced by renaming a staged folder onto it: a mount point is busy
        raise ConfigError(f"{where}: is a mount point, which lsplits cannot replace (it writes its output beside "
                          f"the target and renames it into place); give a folder inside it, such as {path / 'out'}")
    if marker != DATASET_MARKER and (_marker(path) or ("",))[0] == DATASET_MARKER:
        raise ConfigError(f"{where}: is a dataset lsplits built (it holds {DATASET_MARKER}), which this command's "
                          "output would replace; give another folder")
    foreign = foreign_files(path, limit=4)
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        kind = "files" if _marker(path) is not None else "a non-empty folder"
        raise ConfigError(f"{where}: {kind} that lsplits did not write ({shown}); give a new or empty folder, "
                          "or move those files out first")
    _lock_output(resolved, where)
    return path


_LOCKS: dict[Path, tuple[int, Path]] = {}  # output path -> the descriptor and path of its lock file
_SCOPES: list[list[Path]] = []  # the outputs locked within each open holding_outputs() block


@contextlib.contextmanager
def holding_outputs() -> Iterator[None]:
    """Within the block, every output :func:`check_output` accepts is locked until the block ends (a command's
    whole run: ``lsplits.cli.parser.main``, :func:`output_folder`), so that a second command writing the same
    output is refused at once instead of both reporting success. Outside any block nothing is locked."""
    _SCOPES.append([])
    try:
        yield
    finally:
        for target in _SCOPES.pop():
            _unlock_output(target)


def _lock_output(target: Path, where: str) -> None:
    """Lock ``target`` (a ``.NAME.lsplits-lock`` file beside it) for the innermost :func:`holding_outputs` block.
    Only the main process of a launch locks (``RANK`` 0); the others write nothing there."""
    if not _SCOPES or target in _LOCKS or os.environ.get("RANK", "0") not in ("", "0"):
        return
    import fcntl

    lock = _lock_path(target)
    descriptor = _open_lock(lock, where)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(descriptor)
        raise ConfigError(f"{where}: another lsplits command (pid {holder}) is writing it now; wait for it to "
                          "finish, or give another path") from None
    os.ftruncate(descriptor, 0)  # ours: a regular file of one name holding at most a pid (_open_lock)
    os.pwrite(descriptor, str(os.getpid()).encode(), 0)
    _LOCKS[target] = descriptor, lock
    _SCOPES[-1].append(target)


def _open_lock(lock: Path, where: str) -> int:
    """Open (or create) the lock file ``lock`` without following a symbolic link, and only when it is one
    lsplits writes: a regular file with no other name (hard link) that holds at most a process id. Anything
    else planted there is refused rather than truncated.

    Raises:
        ConfigError: one line naming the output (``where``), the lock file and what it is.
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(lock, flags, 0o644)
    except OSError as exc:
        problem = {errno.ELOOP: "is a symbolic link", errno.EISDIR: "is a folder"}.get(
            exc.errno, f"cannot be opened ({exc.strerror or exc})")
        raise ConfigError(f"{where}: its lock file {lock} {problem}, not a lock file lsplits wrote; remove it "
                          "yourself or give another path") from None
    info = os.fstat(descriptor)
    problem = None
    if not stat.S_ISREG(info.st_mode):
        problem = "is not a regular file"
    elif info.st_nlink != 1:
        problem = f"has {info.st_nlink} names (hard links)"
    elif info.st_size > 32 or not re.fullmatch(rb"\d*\s*", os.pread(descriptor, 33, 0)):
        problem = "holds something other than a process id"
    if problem is not None:
        os.close(descriptor)
        raise ConfigError(f"{where}: its lock file {lock} {problem}, not a lock file lsplits wrote; remove it "
                          "yourself or give another path")
    return descriptor


def _lock_path(target: Path) -> Path:
    """``.NAME.lsplits-lock`` beside ``target``, or, while its folder does not exist yet, in the nearest folder
    above that does (named by the path below it: ``.out%beams.jsonl.lsplits-lock``)."""
    home = next(p for p in target.parents if p.is_dir())
    return home / f".{'%'.join(target.relative_to(home).parts)}.lsplits-lock"


def _unlock_output(target: Path) -> None:
    """Remove the lock file and release the lock (the kernel releases it anyway when a process dies)."""
    held = _LOCKS.pop(target, None)
    if held is not None:
        with contextlib.suppress(OSError):
            held[1].unlink()
        os.close(held[0])


def folder_files(folder: str | os.PathLike[str], marker: str, owned: Iterable[str] = ()) -> list[str]:
    """The files of ``folder`` its marker lists (sorted): every file but the marker and those of ``owned``."""
    owned = set(owned)
    return sorted(name for name in _files(Path(folder)) if name != marker and name.split("/", 1)[0] not in owned)


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


def check_additions(folder: str | os.PathLike[str], names: Iterable[str], *, what: str) -> None:
    """Refuse, before any work, to add ``names`` (paths inside ``folder``) to a folder lsplits did not write,
    or to replace one of them that is not lsplits' own.

    Raises:
        ConfigError: one line naming ``what`` (e.g. the dataset folder), the file and the problem.
    """
    folder = Path(folder)
    marker = _marker(folder)
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
                  option: str = "--out", mark: bool = True) -> Iterator[Path]:
    """Check ``target`` (:func:`check_output`), yield an empty staged folder, then mark it and move it into place.

    The previous output, if any, is replaced in one step (:func:`atomic_path`); on error nothing changes. With
    ``mark=False`` the caller writes the marker itself, listing :func:`folder_files` (a build writes its
    ``lsplits.json`` through :class:`lsplits.building.record.BuildRecord`).
    """
    with holding_outputs():
        target = check_output(target, expect="folder", option=option, marker=marker)
        with atomic_path(target) as staged:
            staged.mkdir(parents=True)
            yield staged
            if mark:
                mark_folder(staged, marker)


def check_writable(folder: str | os.PathLike[str], what: str) -> Path:
    """Refuse, before any work, a folder lsplits will write into (a cache) that must not or cannot be written:
    an empty path (the current folder), one inside a built dataset (:func:`built_dataset_of`), a read-only
    file system, no permission. A probe file is created and removed (``os.access`` misses read-only mounts for
    some users and ignores permissions for root). Returns the folder as a Path.

    Raises:
        ConfigError: one line naming ``what``, the folder and the reason.
    """
    if not str(folder).strip():  # Path("") is the current folder
        raise ConfigError(f"{what}: an empty path, which would put the cache into the current folder; give a folder")
    path = Path(folder).expanduser()
    dataset = built_dataset_of(path)
    if dataset is not None:
        raise ConfigError(f"{what} {folder}: lies inside the built dataset {dataset}, which a rebuild replaces as a "
                          "whole (and refuses while it holds files lsplits did not list); give a folder outside it")
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise ConfigError(f"{what} {folder}: lies under {existing}, which is a file, not a folder")
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".lsplits-probe-"):
            pass
    except OSError as exc:
        raise ConfigError(f"{what} {folder}: cannot write into {existing} ({exc.strerror or exc}); give a writable "
                          "folder") from exc
    return path


_STORAGE_ERRNOS = {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "the disk quota is used up",
                   errno.EROFS: "the file system is read-only"}


def _written_path(exc: OSError) -> str | None:
    """The file a failed write was writing, as the user knows it: a copy's destination (``shutil`` puts its
    source in ``filename`` and its destination in ``filename2``), the output a staging folder stands for
    (``.NAME.PID@HOST.XXXX.tmp/NAME/...`` is NAME), and a temporary folder of lsplits named as such (with ``TMPDIR``)."""
    name = exc.filename2 or exc.filename
    if not name:
        return None
    path = Path(os.fsdecode(name))
    for parent in path.parents:
        if parent.name.startswith(".") and parent.name.endswith(".tmp") and parent.parent != parent:
            inner = path.relative_to(parent)
            return str(parent.parent.joinpath(*inner.parts))  # the output's path: NAME/... beside the staging
    if tempfolders.holding(path) is not None:
        return f"{path} in the temporary folder {Path(tempfile.gettempdir())} (TMPDIR)"
    return str(path)


def storage_problem(exc: BaseException) -> str | None:
    """One line for a failure to write because the disk is full or read-only (an ``OSError``, or safetensors'
    error that wraps one), found anywhere in ``exc``'s chain; None for any other exception."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        number = exc.errno if isinstance(exc, OSError) else None
        if number is None and type(exc).__name__ == "SafetensorError":
            found = re.search(r"os error (\d+)", str(exc))
            number = int(found.group(1)) if found else None
        if number in _STORAGE_ERRNOS:
            written = _written_path(exc) if isinstance(exc, OSError) else None
            where = f" writing {written}" if written else ""
            return (f"{_STORAGE_ERRNOS[number]}{where}: free space or write the output (--out) and the caches "
                    "(--cache-dir) to another disk")
        exc = exc.__cause__ or exc.__context__
    return None


def cache_folder(kind: str) -> Path:
    """Where lsplits caches ``kind`` (``scores``, ``beams``, ``matrices``) by default.

    ``$LSPLITS_CACHE/KIND``, else ``$XDG_CACHE_HOME/lsplits/KIND`` (``~/.cache/lsplits/KIND``).
    """
    root = os.environ.get("LSPLITS_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lsplits"
    return Path(root).expanduser() / kind
