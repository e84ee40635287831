"""``lsplits ue``: the parsed options -> a checked :class:`~lsplits.uncertainty.study.StudyConfig` -> the study
of one system (:mod:`.report`) or of several (``--system``, :mod:`.systems_report`).

Everything cheap is refused first, in one line and before any matrix: the output folder
(:func:`lsplits.io.guard.check_output`), then every option (the config validates itself when built).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsplits.cli.parser import settings_of
from lsplits.errors import ConfigError
from lsplits.runtime.tempfolders import temporary_folder
from lsplits.uncertainty.report import main_table_markdown, selective_markdown, write_report
from lsplits.uncertainty.study import run_study
from lsplits.uncertainty.study_config import DEFAULT_CALIBRATION_FRACTION, StudyConfig
from lsplits.uncertainty.systems import parse_systems, run_systems
from lsplits.uncertainty.systems_report import summary_markdown, write_systems_report

if TYPE_CHECKING:
    from argparse import Namespace


def config_from_args(args: Namespace) -> StudyConfig:
    """The study's settings from the command line (:func:`~lsplits.cli.parser.settings_of`, as every command),
    refused in one line naming the option when out of range."""
    return settings_of(
        args, StudyConfig, cache_dir=None if args.no_cache else args.cache_dir,
        progress=not args.no_progress,
        calibration_fraction=(DEFAULT_CALIBRATION_FRACTION if args.calibration_fraction is None
                              else args.calibration_fraction))


def calibration_from_args(args: Namespace) -> tuple[list[str], str] | None:
    """The ``--calibration BEAMS --calibration-gold GOLD`` pair, or None; ConfigError (one line) when they
    are given without each other, with ``--calibration-fraction``, ``--system`` or without ``--target-risk``."""
    given = [name for name, value in (("--calibration", args.calibration), ("--calibration-gold",
                                      args.calibration_gold), ("--calibration-fraction", args.calibration_fraction))
             if value is not None]
    if given and args.target_risk is None:
        raise ConfigError(f"{given[0]} calibrates a selective threshold: give --target-risk too")
    if args.calibration is None and args.calibration_gold is None:
        return None
    if args.calibration is None or args.calibration_gold is None:
        raise ConfigError("give the calibration beams and their gold together: --calibration BEAMS "
                          "--calibration-gold GOLD")
    if args.calibration_fraction is not None:
        raise ConfigError("--calibration-fraction splits BEAMS; with --calibration the calibration set is given: "
                          "use one or the other")
    if args.system:
        raise ConfigError("--calibration is for one system; with --system, use --calibration-fraction")
    return list(args.calibration), args.calibration_gold


def _system_files(values: Sequence[str] | None) -> list[str]:
    """The beam files named by ``--system NAME=FILE[,FILE...]`` values (malformed ones are refused later)."""
    return [path for value in values or () if "=" in value
            for path in value.split("=", 1)[1].split(",") if path]


def run(args: Namespace) -> int:
    """``lsplits ue``: check the output folder and the options, run the study, write the report; the exit code."""
    from lsplits.io.guard import check_output

    calibration = calibration_from_args(args)
    check_output(args.out, expect="folder", inputs=[*args.beams, *_system_files(args.system), args.gold,
                                                    *(calibration[0] if calibration else ()),
                                                    *(calibration[1:] if calibration else ())],
                 caches=[] if args.no_cache else [args.cache_dir])  # before any work
    config = config_from_args(args)
    if args.system or not args.beams:
        return _run_systems(args, config)
    study = run_study(args.beams, args.gold, config, calibration=calibration)
    report = write_report(study, args.out)
    print(main_table_markdown(study))
    if study.selective:
        print("\nRisk-controlled selective prediction\n" + "\n".join(selective_markdown(study)))
    print(f"\nreport written to {report}")
    return 0


@contextlib.contextmanager
def _shared_cache(config: StudyConfig, systems: int) -> Iterator[StudyConfig]:
    """With ``--no-cache`` and several systems, a temporary cache still shares matrices between systems."""
    if config.cache_dir is not None or systems < 2:
        yield config
        return
    with temporary_folder(prefix="lsplits-matrices-") as folder:
        yield dataclasses.replace(config, cache_dir=Path(folder))


def _run_systems(args: Namespace, config: StudyConfig) -> int:
    """``lsplits ue --system NAME=BEAMS ...``: the study of every system and the cross-system report."""
    if args.beams:
        raise ConfigError("give the beams either as BEAMS (one system) or with --system NAME=BEAMS (several), "
                          "not both")
    if not args.system:
        raise ConfigError("give the beams: BEAMS (one JSONL file or one PENMAN file per beam rank) or "
                          "--system NAME=BEAMS for each system")
    specs = parse_systems(args.system)
    with _shared_cache(config, len(specs)) as shared:
        study = run_systems(specs, args.gold, shared)
    report = write_systems_report(study, args.out)
    print(summary_markdown(study))
    print(f"\nreport written to {report}")
    return 0
