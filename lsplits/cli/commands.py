"""Implementations of the core CLI subcommands (score, build, push, demo, analyze).

Each takes the parsed ``argparse.Namespace`` and returns an exit code; errors are raised as
:class:`~lsplits.errors.LsplitsError` and printed by :func:`lsplits.cli.parser.main` as one line.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from lsplits.api import build as build_dataset
from lsplits.api import resolve_data, score_loaded, score_plan
from lsplits.builders.registry import is_builder
from lsplits.building.pipeline import DatasetSpec, check_build, plan_build, score_records
from lsplits.building.provenance import recorded_settings, warn_if_input_changed
from lsplits.building.record import BuildRecord
from lsplits.building.settings import BuildSettings, RunSettings, ScoreSettings
from lsplits.cli.parser import settings_of
from lsplits.data.loading import LoadedData
from lsplits.errors import ConfigError, LsplitsError
from lsplits.runtime.stages import stage

if TYPE_CHECKING:
    import argparse

    import pandas as pd
    import pyarrow as pa

    from lsplits.lm.plan import RunPlan

logger = logging.getLogger(__name__)

SCORE_SETTINGS_KEY = "lsplits_settings"
"""The schema-metadata key of ``lsplits score``'s parquet file that holds its recorded settings (JSON)."""

def resolve_dataset(settings: RunSettings) -> tuple[DatasetSpec, LoadedData]:
    """The dataset spec and loaded examples for DATA / --data-files and the generic-task fields
    (:func:`lsplits.api.resolve_data`, which the Python API runs too)."""
    return resolve_data(settings.data, query_field=settings.query_field, prompt_template=settings.prompt_template,
                        label_field=settings.label_field, data_files=settings.data_files,
                        options=settings.load_options())


def input_paths(args: argparse.Namespace) -> list[Path]:
    """The local files and folders a command reads (DATA when it is a path, and every --data-files file)."""
    from lsplits.data.loading import parse_data_files

    paths = [path for _, path in parse_data_files(args.data_files)] if getattr(args, "data_files", None) else []
    if getattr(args, "data", None) and not is_builder(args.data) and Path(args.data).exists():
        paths.append(Path(args.data))
    return paths


def check_out(args: argparse.Namespace, expect: Literal["folder", "file"]) -> None:
    """Refuse ``--out`` before any work when writing it would destroy what lsplits did not write: a build's
    dataset folder (:func:`lsplits.building.additions.check_rebuild`), or score's parquet file."""
    from lsplits.building.additions import check_rebuild
    from lsplits.io.guard import check_output

    caches = [args.cache_dir] if getattr(args, "cache_dir", None) is not None else []
    if expect == "folder":
        check_rebuild(args.out, inputs=input_paths(args), caches=caches)
    else:  # score writes parquet whatever the name says: a .csv name is refused, not filled with parquet
        check_output(args.out, expect="file", suffix=".parquet", inputs=input_paths(args), caches=caches)


def warn_if_lm_changed(path: Path, settings: BuildSettings) -> None:
    """With ``--from-record``: warn loudly when the LM's weights are not the recorded ones (another Hub revision,
    other local weights), since the rebuild's scores will then differ."""
    from lsplits.lm.model_files import model_identity

    try:
        record = BuildRecord.from_file(path)
    except LsplitsError:
        return  # a file of settings alone records no LM identity
    recorded = record.lm_identity
    if not recorded or record.lm != settings.lm:
        return
    current = model_identity(settings.lm)
    if current != recorded:
        logger.warning("--from-record %s: the LM %s is not the one recorded (recorded %s, now %s); the scores and "
                       "splits will differ from the recorded build", path, settings.lm, recorded, current)


def builder_after_data_files(args: argparse.Namespace) -> None:
    """``--data-files f.jsonl snli``: argparse reads ``snli`` as a second file (``nargs="+"``). A registered builder
    name that is no file is taken as DATA, as if typed first; ConfigError (one line) when DATA is given too."""
    files = list(getattr(args, "data_files", None) or ())
    named = [item for item in files if is_builder(item) and not Path(item).exists()]
    if not named:
        return
    if args.data is not None or len(named) > 1:
        raise ConfigError(f"--data-files {named[0]}: {named[0]!r} is a builder, not a file; give one DATA before the "
                          f"options: lsplits {args.command} {named[0]} --data-files FILE ...")
    args.data, args.data_files = named[0], [item for item in files if item != named[0]] or None
    logger.info("--data-files %s: %r is a builder, taken as DATA (files: %s)", " ".join(files), named[0],
                ", ".join(args.data_files or ["none"]))


def score(args: argparse.Namespace) -> int:
    """``lsplits score``: write per-example scores to a parquet file (:func:`lsplits.api.score_loaded`)."""
    from lsplits.io.atomic import atomic_write_parquet
    from lsplits.lm.distributed import is_main

    builder_after_data_files(args)
    settings = settings_of(args, ScoreSettings)
    if not args.dry_run:
        check_out(args, "file")
    spec, loaded = resolve_dataset(settings)
    if SCORER_FOLD in loaded.columns:  # before any scoring: the parquet keeps every field of the data beside it
        raise ConfigError(f"lsplits score writes its own {SCORER_FOLD!r} (the fold that scored each example) next to "
                          f"your fields and would overwrite yours; keep your values with --rename "
                          f"{SCORER_FOLD}={SCORER_FOLD}_orig")
    plan = score_plan(spec, settings)
    if args.dry_run:
        from lsplits.lm.pipeline import check_lm

        records = score_records(loaded.examples, spec.task, settings.setting)
        check_lm(plan.lm, records)  # the check scoring makes first
        return dry_run({settings.setting: (records, plan)})
    frame = score_loaded(spec, loaded, settings, plan=plan, cache_dir=args.cache_dir,
                         progress=not args.no_progress, compile=args.compile)
    if is_main():
        from lsplits.lm.distributed import process_device
        from lsplits.lm.scoring import resolve_device

        recorded = recorded_settings(settings, {settings.setting: plan},
                                     {settings.setting: plan.resolved_dtype(resolve_device(process_device()))})
        atomic_write_parquet(args.out, scored_examples(loaded, frame), mark="score",
                             metadata={SCORE_SETTINGS_KEY: json.dumps(recorded, default=str)})
        logger.info("wrote %d examples with their scores to %s", len(frame), args.out)
    return 0


SCORER_FOLD = "fold"
"""The column of ``lsplits score``'s parquet with the fold whose LM scored the example (-1 for ``--setting pt``)."""


def scored_examples(loaded: LoadedData, scores: pd.DataFrame) -> pa.Table:
    """Every example in input order, its fields (renamed ones under their new name) kept and typed as a build
    types them, then ``ll_score``, ``ll_tokens`` (the columns :func:`lsplits.api.score` gives) and
    :data:`SCORER_FOLD`: the parquet file needs no join back to the data."""
    import pandas as pd

    from lsplits.building.export import dataset_schema, to_arrow

    table = pd.DataFrame(loaded.examples)
    by_id = scores.set_index("id").loc[table["id"]]  # in the examples' order, whatever the scorer's
    table = table.assign(**{name: by_id[name].to_numpy() for name in ("ll_score", "ll_tokens", SCORER_FOLD)})
    schema, text_columns = dataset_schema({"": {"": table}}, features=loaded.features)
    return to_arrow(table, schema, text_columns)


def dry_run(runs: dict[str, tuple[list[dict], RunPlan]]) -> int:
    """``--dry-run``: print the estimated tokens, time and disk of each setting's run, score nothing."""
    from lsplits.lm.distributed import is_main
    from lsplits.lm.estimate import estimate_run
    from lsplits.runtime.progress import format_bytes, format_duration

    estimates = [estimate_run(records, plan=plan) for records, plan in runs.values()]
    if is_main():
        print("\n".join(estimate.report() for estimate in estimates))
        if len(estimates) > 1:
            print(f"all settings: about {format_duration(sum(e.total_s for e in estimates))} and "
                  f"{format_bytes(sum(e.disk_bytes for e in estimates))}")
    return 0


def build(args: argparse.Namespace) -> int:
    """``lsplits build``: score and split (:func:`lsplits.api.build`), write and optionally push."""
    builder_after_data_files(args)
    settings = settings_of(args, BuildSettings)
    if args.from_record is not None:
        warn_if_lm_changed(args.from_record, settings)
    if not args.dry_run:
        check_out(args, "folder")
        if args.push_to_hub:
            from lsplits.hub.push import check_hub_access

            check_hub_access(args.push_to_hub, option="push_to_hub")
    with stage("load"):
        spec, loaded = resolve_dataset(settings)
    if args.from_record is not None:
        warn_if_input_changed(args.from_record, spec.task, loaded.examples)
    if args.dry_run:
        plan = plan_build(spec, settings)
        check_build(spec, loaded.examples, settings, plan)  # what the build refuses, the dry run refuses
        return dry_run({kind: (score_records(loaded.examples, spec.task, kind), run)
                        for kind, run in plan.runs.items()})
    splits = build_dataset(spec, loaded, settings, cache_dir=args.cache_dir, progress=not args.no_progress,
                           compile=args.compile)
    from lsplits.lm.distributed import is_main

    if not is_main():
        return 0
    out = splits.write(args.out, repo_hint=args.push_to_hub)  # skipped configs: the build's warning said it
    print(f"wrote {len(splits)} configs ({', '.join(splits)}) to {out}")
    if args.push_to_hub:
        from lsplits.hub.push import push_folder

        url = push_folder(out, args.push_to_hub, repo_type="dataset", private=args.private)
        print(f"pushed to {url}")
    return 0

def demo(args: argparse.Namespace) -> int:
    """``lsplits demo``: the offline end-to-end run."""
    from lsplits.building.demo import DemoSettings, run_demo

    summary = run_demo(args.out, settings_of(args, DemoSettings), cache_dir=args.cache_dir,
                       progress=not args.no_progress, scratch_steps=args.scratch_steps)
    print(summary.render())
    return 0


def analyze(args: argparse.Namespace) -> int:
    """``lsplits analyze``: print the statistics of every config in a built folder."""
    from lsplits.building.report import analyze_folder

    print(analyze_folder(args.folder, configs=args.configs))
    return 0
