"""Results another command added to a built folder, and keeping them across a rebuild into that folder.

Today one command adds to a built dataset: ``lsplits difficulty`` writes a card section between two HTML
comments, a ``difficulty`` entry in ``lsplits.json`` and ``plots/difficulty.png``. The entry records the data
files it describes (their names hold a SHA-256 prefix of their bytes, :mod:`lsplits.building.export`), so
:func:`keep_additions` carries the three into a rebuilt folder when those files are unchanged, and otherwise
logs one WARNING line saying they were removed. Below :mod:`lsplits.difficulty`, which writes them.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

SECTION_START = "<!-- lsplits:difficulty:start (written by `lsplits difficulty`; rerun it to update) -->"
SECTION_END = "<!-- lsplits:difficulty:end -->"
METADATA_KEY = "difficulty"
"""The key of ``lsplits difficulty``'s entry in a built folder's ``lsplits.json``."""
DATA_FILES_KEY = "data_files"
"""In that entry: config -> split -> data file path, the files the results describe."""
FILES_KEY = "files"
"""In that entry: the files it added to the folder (its figure)."""
DEFAULT_FILES = ("plots/difficulty.png",)
"""The figure of an entry written before it listed its files."""
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


def _changed(recorded: Mapping[str, Any], new: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The configs of ``recorded`` whose data files differ in ``new`` (or are gone)."""
    now = described_files(new)
    return [config for config, splits in recorded.items() if now.get(config) != described_files({config: splits})[config]]


def keep_additions(old: Path, staged: Path, data_files: Mapping[str, Mapping[str, str]], *,
                   old_data_files: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
                   card_file: str = "README.md", metadata_file: str = "lsplits.json") -> bool:
    """Carry ``old``'s difficulty results into the rebuilt ``staged`` folder when their data files are unchanged.

    ``data_files`` are the rebuilt folder's (config -> split -> path); ``old_data_files`` the old card's, used
    for an entry written before entries recorded theirs (the results then describe the folder as it was).
    Returns whether they were kept; when the data changed, logs one WARNING line saying what was removed.
    """
    try:
        entry = json.loads((old / metadata_file).read_text(encoding="utf-8")).get(METADATA_KEY)
        section = read_section((old / card_file).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return False
    if not isinstance(entry, dict) and section is None:
        return False
    entry = entry if isinstance(entry, dict) else {}
    recorded = entry.get(DATA_FILES_KEY)
    if not isinstance(recorded, dict):
        configs = (entry.get("settings") or {}).get("configs") if isinstance(entry.get("settings"), dict) else None
        recorded = described_files(old_data_files or {}, configs if isinstance(configs, list) else None)
    files = [str(f) for f in entry.get(FILES_KEY, DEFAULT_FILES)]
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
        return False
    for name in files:
        if (old / name).is_file():
            (staged / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(old / name, staged / name)
    card = staged / card_file
    card.write_text(replace_section(card.read_text(encoding="utf-8"), section), encoding="utf-8")
    meta_path = staged / metadata_file
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
    meta[METADATA_KEY] = {**entry, DATA_FILES_KEY: recorded}
    meta_path.write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
    logger.info("kept the Difficulty results in %s: the splits they describe (%s) are unchanged",
                old, ", ".join(recorded))
    return True
