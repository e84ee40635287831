"""The "Difficulty" section of a built dataset's card (README.md) and its entry in ``lsplits.json``.

The section sits between two HTML comments, so a later ``lsplits difficulty`` replaces exactly
that section and nothing else: the YAML header and every other part of the card stay byte for byte.
A card without the section gets it before "## How to load" (or "## Citation", else at the end).
The markers and their reader live in :mod:`lsplits.building.additions`, which also keeps the three
across a rebuild whose splits are unchanged; the Space reads the section with
:func:`lsplits.building.additions.read_section`.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lsplits.building.additions import DATA_FILES_KEY, FILES_KEY, described_files, replace_section
from lsplits.building.export import listed_data_files
from lsplits.building.record import BuildRecord
from lsplits.io.atomic import atomic_path, atomic_write_text


def update_folder(folder: Path, section: str, entry: dict[str, Any],
                  files: Mapping[str, Path] | None = None, *, configs: Sequence[str] | None = None) -> None:
    """Write the section into ``folder/README.md`` and ``entry`` under ``difficulty`` in ``lsplits.json``.

    ``files`` maps a path in the folder (the card's figure) to a local file to copy there, listed
    then among lsplits' files in ``lsplits.json``. Every file is written atomically; only lsplits' own
    section, entry and figure change (the caller checks them first with :func:`lsplits.io.guard.check_additions`);
    the record is read and written as a :class:`~lsplits.building.record.BuildRecord`. The entry also records
    the data files of ``configs`` (all the record lists when None) and ``files``, so a rebuild into the folder
    keeps all three while those data files are unchanged.
    """
    folder = Path(folder)
    for repo_path, local in (files or {}).items():
        with atomic_path(folder / repo_path) as staged:
            shutil.copyfile(local, staged)
    readme = folder / "README.md"
    card = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    atomic_write_text(readme, replace_section(card, section))
    record = BuildRecord.of_folder(folder)
    described = described_files(listed_data_files(folder, record)[1], configs)
    entry = {**entry, DATA_FILES_KEY: described, FILES_KEY: sorted(files or {})}
    record.replace(difficulty=entry).adding_files(files or {}).write(folder)  # the figure is lsplits' own
