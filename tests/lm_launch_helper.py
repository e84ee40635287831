"""Run by the multi-process tests under ``accelerate launch`` (not a test module itself).

``python lm_launch_helper.py CACHE_DIR OUT [--hang]`` computes the k-fold scores of
:func:`lm_fixtures.tiny_records` with :func:`launch_run_kwargs` on however many processes it was
started with and writes them to OUT (rank 0). ``--hang``: every process sleeps for good after
writing its first score shard, so the test can kill the launch mid-run.
"""

from __future__ import annotations

import sys
import time

from lm_fixtures import TINY_SCRATCH, TINY_TRAIN, tiny_records


def launch_run_kwargs() -> dict:
    """k-fold settings whose training does not depend on the number of processes: dropout off."""
    from lsplits.lm import ScratchConfig, TrainConfig

    return dict(lm="scratch", folds=2, seed=0, train_config=TrainConfig.scratch(**TINY_TRAIN),
                scratch_config=ScratchConfig(**TINY_SCRATCH, dropout=0.0), shard_size=4, progress=False)


def main(cache_dir: str, out: str, hang: bool) -> None:
    import lsplits.lm.pipeline as pipeline
    from lsplits.io.atomic import atomic_write_parquet
    from lsplits.lm.distributed import is_main

    if hang:
        def write_then_hang(path, table):
            atomic_write_parquet(path, table)
            time.sleep(600)

        pipeline.atomic_write_parquet = write_then_hang
    scores = pipeline.compute_scores(tiny_records(), cache_dir=cache_dir, **launch_run_kwargs())
    if is_main():
        atomic_write_parquet(out, scores)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], "--hang" in sys.argv[3:])
