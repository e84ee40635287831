"""The "Difficulty" section of a built dataset's card (README.md) and its entry in ``lsplits.json``.

The section sits between two HTML comments, so a later ``lsplits difficulty`` replaces exactly
that section and nothing else: the YAML header and every other part of the card stay byte for byte.
A card without the section gets it before "## How to load" (or "## Citation", else at the end).
Light on imports: the Space reads the section with :func:`read_section`.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsplits.building.report import METADATA_FILE
from lsplits.io import atomic_path, atomic_write_text, record_files

SECTION_START = "<!-- lsplits:difficulty:start (written by `lsplits difficulty`; rerun it to update) -->"
SECTION_END = "<!-- lsplits:difficulty:end -->"
METADATA_KEY = "difficulty"
_SECTION = re.compile(re.escape(SECTION_START) + r".*?" + re.escape(SECTION_END) + r"\n?", re.DOTALL)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n.*?^---[ \t]*$\n?", re.DOTALL | re.MULTILINE)
_BEFORE = ("## How to load", "## Citation")


def _body_start(card: str) -> int:
    """Where the card's body begins: after the YAML front matter when there is one."""
    front = _FRONT_MATTER.match(card)
    return front.end() if front else 0


def replace_section(card: str, section: str) -> str:
    """``card`` with its Difficulty section replaced by ``section`` (markdown), or inserted."""
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


def update_folder(folder: Path, section: str, entry: dict[str, Any],
                  files: Mapping[str, Path] | None = None) -> None:
    """Write the section into ``folder/README.md`` and ``entry`` under ``difficulty`` in ``lsplits.json``.

    ``files`` maps a path in the folder (the card's figure) to a local file to copy there, listed
    then among lsplits' files in ``lsplits.json``. Every file is written atomically; only lsplits' own
    section, key and figure change (the caller checks them first with :func:`lsplits.io.check_additions`).
    """
    folder = Path(folder)
    for repo_path, local in (files or {}).items():
        with atomic_path(folder / repo_path) as staged:
            shutil.copyfile(local, staged)
    readme = folder / "README.md"
    card = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    atomic_write_text(readme, replace_section(card, section))
    meta_path = folder / METADATA_FILE
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta[METADATA_KEY] = entry
    atomic_write_text(meta_path, json.dumps(meta, indent=2, sort_keys=True))
    record_files(folder, list(files or {}))  # the figure is lsplits', so a rebuild may replace the folder
