"""Cached, sharded beam runs: the work cut into shards keyed by the inputs, the model and the settings, one
atomically written file each, so a killed run resumes and ``accelerate launch`` processes share the shards.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lsplits.errors import DataError
from lsplits.generation.inputs import DEFAULT_SPLIT, BeamInputs
from lsplits.generation.models import check_model, load_generator
from lsplits.generation.search import (
    DEFAULT_MAX_NEW_TOKENS,
    FORMATS,
    check_template,
    encode_inputs,
    generate_beams,
)
from lsplits.lm.dtype import DEFAULT_DTYPE, check_dtype
from lsplits.params import check, check_choice

logger = logging.getLogger(__name__)

DEFAULT_SHARD_SIZE = 512


CACHE_VERSION = 1
"""Bump when a change would make previously cached candidates wrong."""

BEAM_CACHE = "the beam cache (--cache-dir)"
"""How a refused cache folder is named (:func:`lsplits.io.storage.check_writable`)."""


def default_cache_dir() -> Path:
    """Where beam shards are cached by default (:func:`lsplits.io.storage.cache_folder`)."""
    from lsplits.io.storage import cache_folder

    return cache_folder("beams")


CANDIDATE_SETTINGS = ("k", "prompt_template", "max_new_tokens", "shard_size")
"""The :class:`BeamSettings` that, with the inputs and the model, decide the cached candidates."""


@dataclass(frozen=True)
class BeamSettings:
    """What ``lsplits beams`` computes besides the model: which inputs, how many candidates of what length.
    Owns the CLI's defaults and checks itself when built (:func:`lsplits.params.check`, naming the option).

    Attributes:
        k: beam width = candidates per input.
        prompt_template: a prompt with ``{text}`` (causal LMs; None: the input as it is).
        max_new_tokens: longest candidate in tokens.
        shard_size: inputs per cached shard.
        input_field: JSONL/dataset field of the input (None: the first of ``INPUT_FIELDS`` present).
        id_field: JSONL/dataset field of the id (None: ``id`` when present, else the position).
        split: the dataset split read from a Hub dataset or dataset folder.
        format: ``text`` or ``penman`` (then every candidate is checked and the invalid ones counted).
        token_budget: beam-search tokens per batch (None: by device); changes speed, not candidates.
        dtype: ``auto``, ``fp32`` or ``bf16`` (:mod:`lsplits.lm.dtype`); the cache is keyed by the dtype it
            resolves to.
    """

    k: int = 10
    prompt_template: str | None = None
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    shard_size: int = DEFAULT_SHARD_SIZE
    input_field: str | None = None
    id_field: str | None = None
    split: str = DEFAULT_SPLIT
    format: str = FORMATS[0]
    token_budget: int | None = None
    dtype: str = DEFAULT_DTYPE

    def __post_init__(self) -> None:
        for name in ("k", "max_new_tokens", "shard_size", "token_budget"):
            check(name, getattr(self, name))
        check_choice("format", self.format, FORMATS)
        check_template(self.prompt_template)
        check_dtype(self.dtype)

    def candidate_key(self) -> dict[str, object]:
        """The settings that decide the candidates (:data:`CANDIDATE_SETTINGS`), for the cache key."""
        return {name: getattr(self, name) for name in CANDIDATE_SETTINGS}


@dataclass(frozen=True)
class BeamRun:
    """The candidates of every input (in input order) and how they were made: the model, the inputs' source, the
    settings as given and the dtype they resolved to (the cache's ``run.json`` and the beams' settings record)."""

    candidates: list[list[str]]
    record: dict[str, object]


def _run_key(inputs: BeamInputs, model: str, settings: BeamSettings, precision: str) -> str:
    from lsplits.lm.shards import folder_fingerprint

    digest = hashlib.sha256()
    for row in zip(inputs.ids, inputs.texts, strict=True):
        digest.update(json.dumps(row).encode())
    digest.update(json.dumps({"model": model, "files": folder_fingerprint(model), "version": CACHE_VERSION,
                              **settings.candidate_key(), "dtype": precision}, sort_keys=True).encode())
    return digest.hexdigest()[:20]


def _shard_path(folder: Path, number: int) -> Path:
    return folder / f"beams-{number:05d}.jsonl"


def generate_cached(model: str, inputs: BeamInputs, settings: BeamSettings, *, cache_dir: str | Path,
                    kind: str | None = None, token_budget: int | None = None, device=None,
                    progress: bool = True) -> BeamRun:
    """The candidates of every input (in input order), generating only the shards not cached yet.

    Under a launcher every process generates its share of the missing shards onto ``cache_dir``
    (which they must all reach), then every process reads all of them back.
    """
    import numpy as np

    from lsplits.io.atomic import atomic_write_text
    from lsplits.io.storage import check_writable
    from lsplits.lm.distributed import barrier, is_main, main_first, process_device, rank, world_size
    from lsplits.lm.dtype import unloaded_model_dtype
    from lsplits.lm.shards import missing_shards, split_into_shards, this_process_share

    check_writable(cache_dir, BEAM_CACHE)  # before the model is read (the CLI checks it earlier still)
    kind = kind or check_model(model)
    device = device or process_device()
    precision = unloaded_model_dtype(settings.dtype, model, device)
    folder = Path(cache_dir) / _run_key(inputs, model, settings, precision)
    folder.mkdir(parents=True, exist_ok=True)
    record = {"model": model, "source": inputs.source, "n_inputs": len(inputs.ids),
              "settings": dataclasses.asdict(settings), "dtype_used": precision}
    if is_main():
        logger.info("beam cache: %s (%d process%s, %s)", folder, world_size(), "" if world_size() == 1 else "es",
                    precision)
        atomic_write_text(folder / "run.json", json.dumps(record))
    shards = split_into_shards(np.arange(len(inputs.ids)), settings.shard_size)
    missing = missing_shards(shards, lambda number, _: _shard_path(folder, number).exists())
    if missing:
        mine = this_process_share(missing)
        if mine:
            with main_first():  # a Hub model is downloaded once, by rank 0
                loaded, tokenizer = load_generator(model, kind, device, dtype=precision)
        for number, shard in mine:
            beams = generate_beams(loaded, tokenizer, [inputs.texts[i] for i in shard], k=settings.k,
                                   prompt_template=settings.prompt_template,
                                   max_new_tokens=settings.max_new_tokens, token_budget=token_budget,
                                   progress=progress and is_main(), ids=[inputs.ids[i] for i in shard],
                                   dtype=precision)
            lines = [json.dumps({"position": int(i), "id": inputs.ids[i], "candidates": candidates})
                     for i, candidates in zip(shard, beams, strict=True)]
            atomic_write_text(_shard_path(folder, number), "".join(line + "\n" for line in lines))
            where = f" (process {rank()} of {world_size()})" if world_size() > 1 else ""
            logger.info("wrote beam shard %d of %d%s", number + 1, len(shards), where)
        barrier()
    else:
        logger.info("all %d beam shards cached", len(shards))
    return BeamRun(_collect(folder, inputs, len(shards)), record)


def _collect(folder: Path, inputs: BeamInputs, n_shards: int) -> list[list[str]]:
    """Every shard's candidates in input order, checked against the inputs."""
    from lsplits.errors import SplitInvariantError

    beams: list[list[str] | None] = [None] * len(inputs.ids)
    for number in range(n_shards):
        for line in _shard_path(folder, number).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            position = row["position"]
            if not 0 <= position < len(beams) or inputs.ids[position] != row["id"] or beams[position] is not None:
                raise SplitInvariantError(f"{folder}: the cached beams do not match the inputs; delete the folder "
                                          "and rerun")
            beams[position] = row["candidates"]
    if any(candidates is None for candidates in beams):
        raise SplitInvariantError(f"{folder}: cached beams are missing inputs; delete the folder and rerun")
    return beams  # type: ignore[return-value]


def write_beams(path: str | Path, ids: Sequence[str], beams: Sequence[Sequence[str]], *,
                record: dict[str, object] | None = None) -> None:
    """Write the beams file ``lsplits ue`` reads: one ``{"id", "candidates"}`` line per input, atomically; with
    ``record`` (a :class:`BeamRun`'s), also how they were made, next to it (:func:`lsplits.io.records.settings_record_path`).

    A record left from an earlier file is removed first (the guard checked it is lsplits'), so a run stopped
    between the two writes leaves beams without a record, never beams with another run's record; the record
    holds the file's SHA-256, so an edited file is not credited to the run (:func:`read_beams_record`)."""
    from lsplits.io.atomic import atomic_write_text
    from lsplits.io.records import record_digest_key, settings_record_path, write_settings_record

    if record is not None:
        settings_record_path(path).unlink(missing_ok=True)
    text = "".join(json.dumps({"id": example, "candidates": list(candidates)}) + "\n"
                   for example, candidates in zip(ids, beams, strict=True))
    atomic_write_text(path, text)
    if record is not None:
        record = {**record, record_digest_key("beams"): hashlib.sha256(text.encode("utf-8")).hexdigest()}
        write_settings_record(path, "beams", record)


def _check_lengths(model: str, kind: str, inputs: BeamInputs, settings: BeamSettings) -> None:
    """Every input fits the model's window (tokenizer and config only, before any model is loaded)."""
    from transformers import AutoConfig

    from lsplits.lm.model_files import load_tokenizer

    tokenizer = load_tokenizer(model)
    template = settings.prompt_template
    prompts = inputs.texts if template is None else [template.format(text=text) for text in inputs.texts]
    try:
        encode_inputs(tokenizer, AutoConfig.from_pretrained(model), kind, prompts, settings.max_new_tokens,
                      ids=inputs.ids)
    except DataError as exc:
        raise DataError(str(exc), source=inputs.source) from exc


def read_beams_record(path: str | Path) -> dict[str, object] | None:
    """How ``lsplits beams`` made the beams file ``path`` (its settings record), or None: no record, or the
    file was changed since (its SHA-256 differs; a warning says so, as the record would describe other beams)."""
    from lsplits.io.records import (
        RECORD_MARK,
        file_sha256,
        read_settings_record,
        record_digest_key,
        settings_record_path,
    )

    record = read_settings_record(path)
    if record is None or record.get(RECORD_MARK) != "lsplits beams":
        return None
    if file_sha256(path) != record.get(record_digest_key("beams")):
        logger.warning("%s changed since lsplits beams wrote it: its settings record %s is left out of the report",
                       path, settings_record_path(path))
        return None
    return record
