"""``lsplits beams``: check everything cheap first, then generate (resuming from the cache) and write."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsplits.cli.parser import settings_of
from lsplits.generation.cache import (
    BEAM_CACHE,
    BeamSettings,
    _check_lengths,
    duplicate_candidates,
    generate_cached,
    write_beams,
)
from lsplits.generation.decoding import OPTIONS, Decoding
from lsplits.generation.inputs import read_inputs
from lsplits.generation.models import check_model
from lsplits.generation.postprocess import load_postprocess, postprocess_beams, postprocess_spec
from lsplits.generation.search import invalid_penman
from lsplits.io.guard import check_output, check_settings_record
from lsplits.io.storage import check_writable

if TYPE_CHECKING:
    from argparse import Namespace

logger = logging.getLogger(__name__)


def decoding_of(args: Namespace) -> Decoding:
    """The decoding ``--decoding`` and its options ask for (an option of another strategy: InvalidOption)."""
    return Decoding.named(args.decoding, **{name: getattr(args, name) for name in OPTIONS})


def run_beams(args: Namespace) -> int:
    """``lsplits beams``: check everything cheap first, then generate (resuming from the cache) and write."""
    from lsplits.lm.distributed import is_main

    # lsplits' own AMR parser writes a linearisation: its folder names the postprocess that makes it PENMAN
    settings = settings_of(args, BeamSettings, decoding=decoding_of(args),
                           postprocess=postprocess_spec(args.model, args.postprocess))
    postprocess = load_postprocess(settings.postprocess) if settings.postprocess else None
    check_output(args.out, expect="file", suffix=".jsonl", inputs=[args.inputs],
                 caches=[args.cache_dir] if args.cache_dir else ())
    check_settings_record(args.out)
    check_writable(args.cache_dir, BEAM_CACHE)  # a read-only cache is refused here, before the model is read
    inputs = read_inputs(args.inputs, input_field=settings.input_field, id_field=settings.id_field,
                         split=settings.split)
    kind = check_model(args.model)
    _check_lengths(args.model, kind, inputs, settings)
    run = generate_cached(args.model, inputs, settings, cache_dir=args.cache_dir, kind=kind,
                          token_budget=settings.token_budget, progress=not args.no_progress)
    if not is_main():
        return 0
    beams = run.beams
    if postprocess is not None:
        beams, _ = postprocess_beams(beams, inputs.ids, postprocess, settings.postprocess)
    duplicates = duplicate_candidates(beams)
    write_beams(args.out, inputs.ids, beams, record=run.record.replace(duplicates=duplicates))
    total = sum(len(scored.candidates) for scored in beams)
    summary = (f"wrote {len(beams)} inputs x {settings.k} candidates ({kind} model, {settings.decoding.strategy}) "
               f"with their scores to {args.out}; {duplicates} of {total} repeat an earlier candidate (kept)")
    logger.info("%d of %d candidates repeat an earlier candidate of their input (%s; kept, and counted in the "
                "settings record)", duplicates, total, settings.decoding.describe())
    if settings.format == "penman":
        invalid = invalid_penman([scored.candidates for scored in beams])
        summary += f"; {invalid} of {total} candidates are not valid PENMAN (kept: lsplits ue counts them)"
        if invalid:
            logger.warning("%d of %d candidates are not valid PENMAN", invalid, total)
    print(summary)
    return 0
