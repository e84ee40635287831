"""Regenerate the Space's three-system example from the shipped gold graphs (``amr_gold.amr``).

Usage (from the repository root)::

    python spaces/lsplits-demo/examples/make_systems_example.py

It writes ``amr_system_strong.jsonl``, ``amr_system_middle.jsonl`` and ``amr_system_weak.jsonl`` next
to this script: beams of k = 5 candidates for the same 12 examples, standing in for three parsers. Each
is made by controlled edits (:mod:`lsplits.similarity.amr.edits`): example i has a level ``i % 5``; a system's
top-1 carries ``level + offset`` edits (offset 0, 1, 2: strong to weak) and its other candidates 1 to
``level + 1`` further edits, so the systems differ in both top-1 quality and candidates. Seeded: the
output is the same on every run.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from lsplits.similarity.amr.edits import degrade
from lsplits.uncertainty.inputs import read_penman_file

HERE = Path(__file__).resolve().parent
BEAM_SIZE = 5
SYSTEMS = {"strong": (0, 11), "middle": (1, 12), "weak": (2, 13)}  # name -> (extra top-1 edits, seed)


def make_system(gold: list[tuple[str, str]], offset: int, seed: int) -> list[dict]:
    """Beam rows ``{"id", "candidates"}`` of one simulated system (see the module docstring)."""
    rng = random.Random(seed)
    rows = []
    for number, (example, text) in enumerate(gold):
        level = number % 5
        top1 = degrade(text, level + offset, rng)
        candidates = [top1] + [degrade(top1, rng.randint(1, level + 1), rng) for _ in range(BEAM_SIZE - 1)]
        rows.append({"id": example, "candidates": candidates})
    return rows


def main() -> None:
    gold = [(block.id, block.text) for block in read_penman_file(HERE / "amr_gold.amr")]
    for name, (offset, seed) in SYSTEMS.items():
        rows = make_system(gold, offset, seed)
        path = HERE / f"amr_system_{name}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        print(f"wrote {len(rows)} x {BEAM_SIZE} candidates to {path}")


if __name__ == "__main__":
    main()
