"""Results another command added to a built folder, and keeping them across a rebuild into that folder.

Today one command adds to a built dataset: ``lsplits difficulty`` writes a card section between two HTML
comments, a ``difficulty`` entry in ``lsplits.json`` and ``plots/difficulty.png``. The entry records the data
files it describes (their names hold a SHA-256 prefix of their bytes, :mod:`lsplits.building.export`), so
:func:`keep_additions` carries the three into a rebuilt folder when those files are unchanged, and otherwise
logs one WARNING line saying they were removed. Only files the entry names that are inside the old folder are
carried: :func:`check_rebuild` refuses, before a build's work, an entry naming anything else (a path outside,
an absolute path, a symbolic link, not a regular file), since ``lsplits.json`` is a file anyone may edit.
Below :mod:`lsplits.difficulty`, which writes them.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from lsplits.building.record import BuildRecord
from lsplits.errors import ConfigError, LsplitsError, shown
from lsplits.io.guard import check_output
from lsplits.io.records import DATASET_MARKER

logger = logging.getLogger(__name__)

SECTION_START = "<!-- lsplits:difficulty:start (written by `lsplits difficulty`; rerun it to update) -->"
SECTION_END = "<!-- lsplits:difficulty:end -->"
METADATA_KEY = "difficulty"
"""The key of ``lsplits difficulty``'s entry in a built folder's ``lsplits.json``."""
DATA_FILES_KEY = "data_files"
"""In that entry: config -> split -> data file path, the files the results describe."""
FILES_KEY = "files"
"""In that entry: the files it added to the folder (its figure)."""
_SECTION = re.compile(re.escape(SECTION_START) + r".*?" + re.escape(SECTION_END) + r"\n?", re.DOTALL)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n.*?^---[ \t]*$\n?", re.DOTALL | re.MULTILINE)
_BEFORE = ("## How to load", "## Citation")


def _body_start(card: str) -> int:
    """Where the card's body begins: after the YAML front matter when there is one."""
    front = _FRONT_MATTER.match(card)
    return front.end() if front else 0


def replace_section(card: str, section: str) -> str:
    """``card`` with its Difficulty section replaced by ``section`` (markdown), or inserted.

    A card without the section gets it before "## How to load" (or "## Citation", else at the end).
    """
    block = f"{SECTION_START}\n{section.strip()}\n{SECTION_END}\n"
    if _SECTION.search(card):
        return _SECTION.sub(lambda _: block, card, count=1)
    body = _body_start(card)
    for heading in _BEFORE:
        found = re.search(rf"^{re.escape(heading)}\b", card[body:], flags=re.MULTILINE)
        if found:
            at = body + found.start()
            return card[:at] + block + "\n" + card[at:]
    return card.rstrip("\n") + "\n\n" + block


def read_section(card: str) -> str | None:
    """The Difficulty section of ``card`` (markdown, without the markers), or None when it has none."""
    found = _SECTION.search(card)
    if not found:
        return None
    return found.group(0)[len(SECTION_START):].rsplit(SECTION_END, 1)[0].strip()


def described_files(data_files: Mapping[str, Mapping[str, Sequence[str] | str]],
                    configs: Sequence[str] | None = None) -> dict[str, dict[str, list[str]]]:
    """config -> split -> sorted data file paths, for ``configs`` (all when None): what an entry records."""
    chosen = list(data_files) if configs is None else [c for c in configs if c in data_files]
    return {config: {split: sorted([paths] if isinstance(paths, str) else map(str, paths))
                     for split, paths in data_files[config].items()} for config in chosen}


def _path_problem(folder: Path, name: str) -> str | None:
    """What keeps the entry's file ``name`` from being carried out of ``folder`` (None: nothing; a missing file
    is skipped): an absolute path, one leading out of the folder, a symbolic link on the way, not a regular file."""
    pure = PurePosixPath(name)
    if not name.strip() or pure.is_absolute() or PureWindowsPath(name).is_absolute() or PureWindowsPath(name).drive:
        return "an absolute path" if name.strip() else "an empty path"
    if ".." in pure.parts or pure.parts in ((), (".",)):
        return "a path that leads out of the folder"
    current = folder
    for depth, part in enumerate(pure.parts, 1):
        current = current / part
        if current.is_symlink():
            return "a symbolic link" if depth == len(pure.parts) else f"under the symbolic link {'/'.join(pure.parts[:depth])}"
    if not current.exists():
        return None
    if not current.is_file():
        return "not a regular file"
    if not current.resolve().is_relative_to(folder.resolve()):
        return "a path that leads out of the folder"
    return None


def _entry_files(folder: Path, entry: Mapping[str, Any]) -> tuple[list[str], list[tuple[str, str]]]:
    """The files of ``entry`` (its ``files``) that a rebuild may carry out of ``folder``, and the others, each
    with its problem (:func:`_path_problem`)."""
    files = entry.get(FILES_KEY, [])
    if not isinstance(files, list | tuple) or not all(isinstance(name, str) for name in files):
        return [], [(shown(files), "not a list of file paths")]
    carried, refused = [], []
    for name in files:
        problem = _path_problem(folder, name)
        if problem is None:
            carried.append(name)
        else:
            refused.append((name, problem))
    return carried, refused


def _entry(folder: Path) -> dict | None:
    """``lsplits difficulty``'s entry in ``folder``'s record (``lsplits.json``), or None (none, or no readable
    record: a rebuild then carries nothing)."""
    if (folder / DATASET_MARKER).is_symlink():
        return None
    try:
        return BuildRecord.of_folder(folder).difficulty
    except LsplitsError:
        return None


def check_rebuild(out: str | os.PathLike[str], *, inputs: Iterable[str | os.PathLike[str]] = (),
                  caches: Iterable[str | os.PathLike[str]] = (), option: str = "{opt:out}") -> Path:
    """Refuse, before any work, a build's output folder: :func:`lsplits.io.guard.check_output` for a dataset folder,
    and, where it replaces a built one, an ``lsplits.json`` whose Difficulty entry names a file a rebuild must
    not carry (:func:`_path_problem`: it would copy a file from anywhere into the new folder, and a push).

    Raises:
        ConfigError: one line naming ``option``, the folder, the entry's file and the problem.
    """
    path = check_output(out, expect="folder", inputs=inputs, caches=caches, option=option, marker=DATASET_MARKER)
    entry = _entry(path) if path.is_dir() else None
    if entry is not None:
        for name, problem in _entry_files(path, entry)[1][:1]:
            raise ConfigError(f"{option} {out}: its {DATASET_MARKER} lists {name!r} among the files `lsplits "
                              f"difficulty` added ({METADATA_KEY}.{FILES_KEY}), {problem}; a rebuild carries only "
                              "regular files inside the folder: remove that entry (or the folder) first")
    return path


def _changed(recorded: Mapping[str, Any], new: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The configs of ``recorded`` whose data files differ in ``new`` (or are gone)."""
    now = described_files(new)
    return [config for config, splits in recorded.items() if now.get(config) != described_files({config: splits})[config]]


def keep_additions(old: Path, staged: Path, data_files: Mapping[str, Mapping[str, str]], *,
                   old_data_files: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
                   card_file: str = "README.md") -> dict[str, Any] | None:
    """Carry ``old``'s difficulty results into the rebuilt ``staged`` folder when their data files are unchanged:
    its figure and card section, and the entry returned for the new record (None: nothing kept).

    ``data_files`` are the rebuilt folder's (config -> split -> path); ``old_data_files`` the old folder's, used
    for an entry written before entries recorded theirs (the results then describe the folder as it was).
    When the data changed, logs one WARNING line saying what was removed.
    """
    entry = _entry(old)
    try:
        section = read_section((old / card_file).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    if entry is None and section is None:
        return None
    entry = entry or {}
    recorded = entry.get(DATA_FILES_KEY)
    if not isinstance(recorded, dict):
        configs = (entry.get("settings") or {}).get("configs") if isinstance(entry.get("settings"), dict) else None
        recorded = described_files(old_data_files or {}, configs if isinstance(configs, list) else None)
    files, refused = _entry_files(old, entry)
    for name, problem in refused:  # check_rebuild refused them before the build; changed since
        logger.warning("%s: not carrying %r, listed among the Difficulty files in %s (%s.%s), into the rebuild: "
                       "it is %s", old, name, DATASET_MARKER, METADATA_KEY, FILES_KEY, problem)
    changed = _changed(recorded, data_files) if recorded else []
    if section is None or not entry or not recorded:
        reason = "they were incomplete (card section or lsplits.json entry missing)"
    elif changed:
        reason = f"the splits they describe changed ({', '.join(changed)})"
    else:
        reason = None
    if reason:
        logger.warning("removed the previous Difficulty results from %s (card section, lsplits.json `%s`, %s): "
                       "%s; rerun `lsplits difficulty` to add them again", old, METADATA_KEY, ", ".join(files), reason)
        return None
    for name in files:
        if (old / name).is_file() and not (old / name).is_symlink():
            (staged / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(old / name, staged / name, follow_symlinks=False)
    card = staged / card_file
    card.write_text(replace_section(card.read_text(encoding="utf-8"), section), encoding="utf-8")
    logger.info("kept the Difficulty results in %s: the splits they describe (%s) are unchanged",
                old, ", ".join(recorded))
    return {**entry, DATA_FILES_KEY: recorded, **({FILES_KEY: files} if FILES_KEY in entry else {})}
