"""What ``lsplits difficulty`` needs of a built dataset beyond opening it: a fingerprint of a config's content.

The dataset itself is opened by :func:`lsplits.building.dataset.open_dataset` (a local folder or a Hub
repo), the one opener that ``analyze`` and the Space use too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import pandas as pd

from lsplits.building.export import SPLIT_NAMES as SPLITS


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
