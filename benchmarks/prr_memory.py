"""Time and peak memory of PRR's bootstrap interval: the old all-at-once draw against the chunked one.

Both run on the same synthetic input (n examples, qualities uniform in [0, 1], uncertainties a
noisy, rounded (so partly tied) decreasing function of quality) with the same seed, each in a fresh
subprocess that reports the wall time of the bootstrap and its peak resident memory (``VmHWM`` from
``/proc/self/status``, minus the resident memory just before the call). The old method draws the
whole ``(n_bootstrap, n)`` index matrix and computes every resample in one array pass (the code of
``prr_with_ci`` before chunking, kept here as the baseline); the new one is
``lsplits.uncertainty.prr._bootstrap_prrs``. The script also checks that both give the same PRR of
every resample, bit for bit, and prints the ratios new / old.

    .venv/bin/python benchmarks/prr_memory.py [--n 100000] [--bootstrap 1000] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lsplits.uncertainty import prr as prr_module  # noqa: E402

BYTES_PER_ENTRY_OLD = 80  # resident bytes per resampled entry that the old method needs at its peak (measured)


def synthetic(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Qualities and uncertainties of n examples; uncertainties rounded to 2 decimals, so many ties."""
    rng = np.random.default_rng(12345)
    q = rng.random(n)
    return np.round(-q + rng.normal(0.0, 0.5, n), 2), q


def all_at_once(u: np.ndarray, q: np.ndarray, steps: int, n_bootstrap: int, seed: int) -> np.ndarray:
    """The method before chunking: one (n_bootstrap, n) draw, every resample's PRR in one array pass."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, u.size, size=(n_bootstrap, u.size))
    u_drawn, q_drawn = u[draws], q[draws]
    auc_u = prr_module._curve_values(prr_module._tie_averaged(u_drawn, q_drawn), steps).mean(axis=-1)
    auc_o = prr_module._curve_values(-np.sort(-q_drawn, axis=-1), steps).mean(axis=-1)
    return prr_module._ratio(auc_u, auc_o, q_drawn.mean(axis=-1))


def _resident_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def worker(method: str, n: int, n_bootstrap: int, seed: int, samples_path: Path) -> None:
    """Run one method in this (fresh) process and print its figures as JSON."""
    u, q = synthetic(n)
    steps = n  # max_rejection = 1: the whole curve
    function = all_at_once if method == "all-at-once" else prr_module._bootstrap_prrs
    before = _resident_kib("VmRSS")
    start = time.perf_counter()
    samples = function(u, q, steps, n_bootstrap, seed)
    seconds = time.perf_counter() - start
    peak = _resident_kib("VmHWM")
    np.save(samples_path, samples)
    print(json.dumps({"method": method, "seconds": seconds, "peak_rss_mib": peak / 1024,
                      "extra_rss_mib": (peak - before) / 1024}))


def _available_mib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return float("inf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", choices=("all-at-once", "chunked"), help=argparse.SUPPRESS)
    parser.add_argument("--samples", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.n, args.bootstrap, args.seed, args.samples)
        return

    need = BYTES_PER_ENTRY_OLD * args.n * args.bootstrap / 2**20
    if need > 0.8 * _available_mib():
        sys.exit(f"the all-at-once baseline needs about {need:.0f} MiB, but only {_available_mib():.0f} MiB are "
                 "available: use a smaller --n or --bootstrap")
    print(f"PRR bootstrap at n = {args.n:,}, {args.bootstrap:,} resamples, seed {args.seed} "
          f"(chunks of {prr_module._CHUNK_ELEMENTS:,} resampled entries: "
          f"{max(1, prr_module._CHUNK_ELEMENTS // args.n)} resamples at a time)")
    results = {}
    with tempfile.TemporaryDirectory(prefix="prr-memory-") as folder:
        for method in ("all-at-once", "chunked"):
            path = Path(folder) / f"{method}.npy"
            command = [sys.executable, __file__, "--worker", method, "--n", str(args.n),
                       "--bootstrap", str(args.bootstrap), "--seed", str(args.seed), "--samples", str(path)]
            output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            results[method] = json.loads(output.strip().splitlines()[-1])
            results[method]["samples"] = np.load(path)
    print(f"{'method':<12} {'time (s)':>9} {'peak RSS (MiB)':>15} {'of it for the bootstrap (MiB)':>30}")
    for method, figures in results.items():
        print(f"{method:<12} {figures['seconds']:>9.2f} {figures['peak_rss_mib']:>15.0f} "
              f"{figures['extra_rss_mib']:>30.0f}")
    old, new = results["all-at-once"], results["chunked"]
    print(f"ratio chunked / all-at-once: time {new['seconds'] / old['seconds']:.2f}, "
          f"peak RSS {new['peak_rss_mib'] / old['peak_rss_mib']:.3f}")
    identical = np.array_equal(old["samples"], new["samples"], equal_nan=True)
    print(f"PRR of all {args.bootstrap} resamples identical bit for bit: {identical}")
    if not identical:
        sys.exit(f"resamples differ: largest difference {np.nanmax(np.abs(old['samples'] - new['samples'])):.3g}")


if __name__ == "__main__":
    main()
