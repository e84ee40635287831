"""``lsplits push``, ``push-metrics`` and ``push-space``: check the Hub access first, then upload in one commit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsplits.building.card import with_repo_id
from lsplits.errors import ConfigError, InvalidOption
from lsplits.hub import demo_space, metric_spaces
from lsplits.hub.push import check_hub_access, push_folder, pushed_files

if TYPE_CHECKING:
    from argparse import Namespace


def push(args: Namespace) -> int:
    """``lsplits push``: upload a built folder in one commit."""
    if not (args.folder / "README.md").exists():
        raise ConfigError(f"{args.folder}: no README.md; is this a folder written by `lsplits build`?")
    if args.dry_run:  # what the push would send, without the Hub
        files = pushed_files(args.folder)
        print(f"a push of {args.folder} to {args.repo_id} would send {len(files)} files:")
        for name, _ in files:
            print(f"  {name}")
        return 0
    check_hub_access(args.repo_id)
    card = with_repo_id((args.folder / "README.md").read_text(encoding="utf-8"), args.repo_id)  # "How to load"
    url = push_folder(args.folder, args.repo_id, repo_type="dataset", private=args.private,
                      replace={"README.md": card.encode("utf-8")})
    print(f"pushed to {url}")
    return 0


def push_metrics(args: Namespace) -> int:
    """Stage the modules as self-contained Spaces; with ``--stage DIR`` only that, else check the access and push."""
    modules = tuple(part.strip() for part in args.only.split(",") if part.strip())
    unknown = [m for m in modules if m not in metric_spaces.METRIC_MODULES]
    if unknown:
        raise InvalidOption(f"unknown metric module(s) {', '.join(unknown)}; choose from {', '.join(metric_spaces.METRIC_MODULES)}")
    if args.stage is not None:
        staged = metric_spaces.stage_metrics(args.stage, metrics_dir=args.metrics_dir, modules=modules)
        for name in modules:
            print(f"{staged / name}  ->  evaluate.load(\"{staged / name}\")")
        return 0
    if args.org is None:
        raise ConfigError("push-metrics: give the Hub user or organisation ORG, or --stage DIR to write the Spaces only")
    root = Path(args.metrics_dir) if args.metrics_dir is not None else metric_spaces.default_metrics_dir()
    metric_spaces.check_modules(root, modules)
    check_hub_access(f"{metric_spaces.check_org(args.org)}/{modules[0]}", token=args.token)
    urls = metric_spaces.push_metrics(args.org, metrics_dir=args.metrics_dir, modules=modules, private=args.private,
                                      token=args.token)
    for name, url in urls.items():
        print(f"{args.org}/{name}: {url}  ->  evaluate.load(\"{args.org}/{name}\")")
    return 0


def push_space(args: Namespace) -> int:
    """``lsplits push-space``: stage and upload (or only stage, with ``--stage``); ships what ``lsplits demo``
    built and trains nothing."""
    options = dict(space_dir=args.space_dir, demo_data=args.demo_data, assets=not args.no_assets)
    if args.stage is None and args.repo_id is None:
        raise ConfigError("give the Space REPO_ID, or --stage DIR to write the Space's folder only")
    if args.stage is None:
        check_hub_access(args.repo_id)  # before staging
    if not args.no_assets:
        demo_space.demo_assets(args.demo_data)  # no demo build: one line saying to run `lsplits demo`
    if args.stage is not None:
        print(f"staged the Space in {demo_space.stage_space(args.stage, **options)}")
        return 0
    url = demo_space.push_space(args.repo_id, private=args.private, **options)
    print(f"pushed the Space to {url}")
    return 0
