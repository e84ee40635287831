"""``lsplits beams``: check everything cheap first, then generate (resuming from the cache) and write."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsplits.errors import ConfigError, InvalidOption
from lsplits.generation.cache import (
    BeamSettings,
    _check_lengths,
    check_settings,
    generate_cached,
    write_beams,
)
from lsplits.generation.inputs import read_inputs
from lsplits.generation.models import check_model
from lsplits.generation.search import FORMATS, invalid_penman
from lsplits.io import check_beams_output

if TYPE_CHECKING:
    from argparse import Namespace

logger = logging.getLogger(__name__)


def run_beams(args: Namespace) -> int:
    """``lsplits beams``: check everything cheap first, then generate (resuming from the cache) and write."""
    from lsplits.lm.distributed import is_main

    if args.format not in FORMATS:
        raise ConfigError(f"--format {args.format!r} is not one of {', '.join(FORMATS)}")
    if args.token_budget is not None and args.token_budget < 1:
        raise InvalidOption(f"--token-budget must be at least 1, got {args.token_budget}")
    settings = BeamSettings(k=args.k, prompt_template=args.prompt_template, max_new_tokens=args.max_new_tokens,
                            shard_size=args.shard_size)
    check_settings(settings)
    check_beams_output(args.out, args.inputs)
    inputs = read_inputs(args.inputs, input_field=args.input_field, id_field=args.id_field, split=args.split)
    kind = check_model(args.model)
    _check_lengths(args.model, kind, inputs, settings)
    beams = generate_cached(args.model, inputs, settings, cache_dir=args.cache_dir, kind=kind,
                            token_budget=args.token_budget, progress=not args.no_progress)
    if not is_main():
        return 0
    write_beams(args.out, inputs.ids, beams)
    summary = f"wrote {len(beams)} inputs x {settings.k} candidates ({kind} model) to {args.out}"
    if args.format == "penman":
        invalid = invalid_penman(beams)
        total = sum(len(candidates) for candidates in beams)
        summary += f"; {invalid} of {total} candidates are not valid PENMAN (kept: lsplits ue counts them)"
        if invalid:
            logger.warning("%d of %d candidates are not valid PENMAN", invalid, total)
    print(summary)
    return 0
