"""Cost of the checked JSON Lines reader against a plain ``json.loads`` loop over the same file.

:func:`lsplits.data.files.read_records` decodes each line itself (to name the line and byte offset of a
byte that is not UTF-8) and checks every string for lone surrogates. This prints both times and
their ratio on a file of SNLI-sized lines (the SNLI dev file repeated, or synthetic lines).

    PYTHONPATH=. python benchmarks/data_reading.py [--lines 550000] [--snli ../shared/data/snli/snli_1.0_dev.jsonl]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from data_paths import data_argument

from lsplits.data.files import read_records


def plain_read(path: Path) -> list[dict]:
    """The baseline: text-mode lines, ``json.loads``, no checks."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def sample_lines(snli: Path | None) -> list[str]:
    if snli is not None and snli.is_file():
        return [line for line in snli.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [json.dumps({"sentence1": f"A man in a blue shirt is playing guitar number {i}.",
                        "sentence2": "Someone plays an instrument café.", "gold_label": "entailment",
                        "annotator_labels": ["entailment"] * 5}) for i in range(10_000)]


def best_of(runs: int, fn, *args) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=550_000, help="lines in the test file (SNLI train: 550,152)")
    data_argument(parser, "--snli", "snli/snli_1.0_dev.jsonl", "SNLI JSONL")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    lines = sample_lines(args.snli)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for i in range(args.lines):
                out.write(lines[i % len(lines)] + "\n")
        size = path.stat().st_size
        assert read_records(path) == plain_read(path)
        baseline = best_of(args.runs, plain_read, path)
        checked = best_of(args.runs, read_records, path)
    print(f"{args.lines:,} lines, {size / 2**20:.0f} MiB (best of {args.runs})")
    print(f"plain json.loads loop : {baseline:6.2f} s  ({args.lines / baseline:,.0f} lines/s)")
    print(f"lsplits read_records  : {checked:6.2f} s  ({args.lines / checked:,.0f} lines/s)")
    print(f"ratio checked / plain : {checked / baseline:.2f}")


if __name__ == "__main__":
    main()
