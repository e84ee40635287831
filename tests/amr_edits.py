"""Real gold AMR graphs for the tests, and the controlled edits that turn them into simulated beams.

The edits live in :mod:`lsplits.similarity.amr.edits` (shared with the benchmarks); this module adds the gold
graphs of tests/fixtures/amr_sample.jsonl and re-exports the edit helpers for the tests.
"""

from __future__ import annotations

import json
from pathlib import Path

from lsplits.similarity.amr.edits import build_beams, degrade, edit_once

__all__ = ["SAMPLE", "build_beams", "degrade", "edit_once", "sample_gold"]

SAMPLE = Path(__file__).parent / "fixtures" / "amr_sample.jsonl"


def sample_gold() -> list[tuple[str, str]]:
    """(id, PENMAN) of the real gold graphs in tests/fixtures/amr_sample.jsonl."""
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(row["id"], row["amr"]) for row in rows]
