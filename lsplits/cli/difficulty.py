"""``lsplits difficulty DIR --model M ... --out REPORT``: train a task model on every config, report how hard each is.

The shell only: the options become :class:`~lsplits.difficulty.settings.DifficultySettings` (checked when
built), :func:`lsplits.difficulty.run.plan` checks everything before any training, and
:func:`lsplits.difficulty.run.run_difficulty` trains, reports and updates the card; the tables are printed here.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from lsplits.cli.parser import settings_of
from lsplits.difficulty.settings import DifficultySettings

if TYPE_CHECKING:
    from argparse import Namespace


def run(args: Namespace) -> int:
    """``lsplits difficulty``: plan, train every (model, config), report, update the card, print the tables."""
    from lsplits.difficulty import report
    from lsplits.difficulty.run import plan, run_difficulty

    started = time.perf_counter()
    checked = plan(args.dataset, args.out, settings_of(args, DifficultySettings), cache_dir=args.cache_dir,
                   card=not args.no_card)
    result = run_difficulty(checked, progress=not args.no_progress, keep_models=args.keep_models)
    if result is None:  # not the main process of a distributed run
        return 0
    print(report.main_table(result.summary))
    print("\n".join(report.direction_lines(result.summary)))
    print(f"\nreport written to {result.report} ({time.perf_counter() - started:.0f} s)")
    return 0
