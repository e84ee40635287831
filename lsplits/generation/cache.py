"""Cached, sharded beam runs: the work cut into shards keyed by the inputs, the model and the settings, one
atomically written file each, so a killed run resumes and ``accelerate launch`` processes share the shards.

A shard holds, per input, the candidates and their scores (:data:`lsplits.generation.scores.SCORE_FIELDS`);
the beams file (:func:`write_beams`) carries both, and its settings record is a :class:`BeamsRecord`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsplits.errors import DataError, InvalidOption
from lsplits.generation.decoding import DECODINGS, Decoding
from lsplits.generation.inputs import DEFAULT_SPLIT, BeamInputs
from lsplits.generation.models import check_model, load_generator
from lsplits.generation.scores import SCORE_FIELDS, Scored
from lsplits.generation.search import (
    DEFAULT_K,
    DEFAULT_MAX_NEW_TOKENS,
    FORMATS,
    check_template,
    encode_inputs,
    generate_beams,
)
from lsplits.lm.dtype import DEFAULT_DTYPE
from lsplits.params import Checked, Either, Kind, Options, Param, Text

logger = logging.getLogger(__name__)

DEFAULT_SHARD_SIZE = 512


CACHE_VERSION = 3
"""Bump when a change would make previously cached candidates wrong (2: shards hold the scores, and the
decoding keys the cache; 3: candidates keep the model's spacing, :func:`~lsplits.generation.decoding.token_texts`)."""

BEAM_CACHE = "the beam cache ({opt:cache_dir})"
"""How a refused cache folder is named (:func:`lsplits.io.storage.check_writable`)."""


def default_cache_dir() -> Path:
    """Where beam shards are cached by default (:func:`lsplits.io.storage.cache_folder`)."""
    from lsplits.io.storage import cache_folder

    return cache_folder("beams")


CANDIDATE_SETTINGS = ("k", "prompt_template", "max_new_tokens", "shard_size", "decoding")
"""The :class:`BeamSettings` that, with the inputs and the model, decide the cached candidates (the
postprocess does not: the cache keeps the raw candidates)."""


@dataclass(frozen=True)
class BeamSettings(Checked):
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
        decoding: how the ``k`` candidates are decoded (:class:`~lsplits.generation.decoding.Decoding`, or a
            strategy's name for its defaults).
        postprocess: ``MODULE:FUNCTION`` run on every candidate before it is written
            (:mod:`lsplits.generation.postprocess`; None: written as generated).
    """

    k: int = DEFAULT_K
    prompt_template: str | None = None
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    shard_size: int = DEFAULT_SHARD_SIZE
    input_field: str | None = None
    id_field: str | None = None
    split: str = DEFAULT_SPLIT
    format: str = FORMATS[0]
    token_budget: int | None = None
    dtype: str = DEFAULT_DTYPE
    decoding: Decoding = Decoding()
    postprocess: str | None = None

    RULES = {"prompt_template": Param(Text(empty=True), optional=True, why="with {text}"),
             "input_field": Param(Text(), optional=True, why="a field name"),
             "id_field": Param(Text(), optional=True, why="a field name"),
             "split": Param(Text(), why="a dataset split"), "format": Param(Options(FORMATS)),
             "decoding": Param(Either((Kind((Decoding,), "a Decoding"), Options(DECODINGS)))),
             "postprocess": Param(Text(), optional=True, why="MODULE:FUNCTION")}

    def check_together(self) -> None:
        """The prompt template's placeholders; the decoding's groups divide ``k``."""
        check_template(self.prompt_template)
        decoding = Decoding(self.decoding) if isinstance(self.decoding, str) else self.decoding
        if decoding.strategy == "diverse-beam":
            decoding = dataclasses.replace(decoding, num_beam_groups=decoding.groups(self.k))
        object.__setattr__(self, "decoding", Decoding(**decoding.to_dict()))  # defaults filled in, as recorded

    def candidate_key(self) -> dict[str, object]:
        """The settings that decide the candidates (:data:`CANDIDATE_SETTINGS`), for the cache key."""
        return {name: getattr(self, name) for name in CANDIDATE_SETTINGS} | {"decoding": self.decoding.to_dict()}

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON values (the decoding as :meth:`Decoding.to_dict`, its options' defaults filled in)."""
        return {**dataclasses.asdict(self), "decoding": self.decoding.to_dict()}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], *, source: str) -> BeamSettings:
        """Settings as :meth:`to_dict` writes them; one line naming ``source`` and the key or option otherwise."""
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise DataError(f"unknown setting {unknown[0]!r} (known: {', '.join(known)})", source=source)
        decoding = values.get("decoding", {"strategy": DECODINGS[0]})
        if not isinstance(decoding, dict) or set(decoding) - {f.name for f in dataclasses.fields(Decoding)}:
            raise DataError("'settings.decoding' must be a JSON object of a Decoding's fields", source=source)
        try:
            return cls(**{**values, "decoding": Decoding(**decoding)})
        except InvalidOption as exc:
            raise exc.within(source) from None


@dataclass(frozen=True)
class BeamRun:
    """The candidates of every input (in input order) with their scores, and how they were made."""

    beams: list[Scored]
    record: BeamsRecord


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
    """The candidates of every input (in input order) with their scores, generating only the shards not cached
    yet.

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
    record = BeamsRecord(model=model, source=str(inputs.source), n_inputs=len(inputs.ids), settings=settings,
                         dtype_used=precision)
    if is_main():
        logger.info("beam cache: %s (%d process%s, %s, %s)", folder, world_size(),
                    "" if world_size() == 1 else "es", precision, settings.decoding.describe())
        atomic_write_text(folder / "run.json", record.to_json())
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
                                   dtype=precision, decoding=settings.decoding, return_scores=True)
            lines = [json.dumps({"position": int(i), "id": inputs.ids[i], **scored.row()})
                     for i, scored in zip(shard, beams, strict=True)]
            atomic_write_text(_shard_path(folder, number), "".join(line + "\n" for line in lines))
            where = f" (process {rank()} of {world_size()})" if world_size() > 1 else ""
            logger.info("wrote beam shard %d of %d%s", number + 1, len(shards), where)
        barrier()
    else:
        logger.info("all %d beam shards cached", len(shards))
    return BeamRun(_collect(folder, inputs, len(shards)), record)


def _collect(folder: Path, inputs: BeamInputs, n_shards: int) -> list[Scored]:
    """Every shard's candidates and scores in input order, checked against the inputs."""
    from lsplits.errors import SplitInvariantError

    beams: list[Scored | None] = [None] * len(inputs.ids)
    for number in range(n_shards):
        for line in _shard_path(folder, number).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            position = row["position"]
            if not 0 <= position < len(beams) or inputs.ids[position] != row["id"] or beams[position] is not None:
                raise SplitInvariantError(f"{folder}: the cached beams do not match the inputs; delete the folder "
                                          "and rerun")
            beams[position] = Scored(row["candidates"], **{name: row.get(name, []) for name in SCORE_FIELDS})
    if any(scored is None for scored in beams):
        raise SplitInvariantError(f"{folder}: cached beams are missing inputs; delete the folder and rerun")
    return beams  # type: ignore[return-value]


def duplicate_candidates(beams: Sequence[Scored | Sequence[str]]) -> int:
    """How many candidates repeat an earlier candidate of their input (kept in the beams file: sampling draws
    the likely outputs several times, and the estimators see them as the model drew them)."""
    return sum(len(c) - len(set(c)) for c in (b.candidates if isinstance(b, Scored) else b for b in beams))


def write_beams(path: str | Path, ids: Sequence[str], beams: Sequence[Scored | Sequence[str]], *,
                record: BeamsRecord | None = None) -> None:
    """Write the beams file ``lsplits ue`` reads: one ``{"id", "candidates"}`` line per input, atomically, with
    the scores of a :class:`~lsplits.generation.scores.Scored` beside its candidates (``logprobs``,
    ``n_tokens``, ``token_entropies``); with ``record``, also how they were made, next to it
    (:meth:`BeamsRecord.write`).

    A record left from an earlier file is removed first (the guard checked it is lsplits'), so a run stopped
    between the two writes leaves beams without a record, never beams with another run's record; the record
    holds the file's SHA-256, so an edited file is not credited to the run (:func:`read_beams_record`)."""
    from lsplits.io.atomic import atomic_write_text
    from lsplits.io.records import settings_record_path

    if record is not None:
        settings_record_path(path).unlink(missing_ok=True)
    rows = (beam.row() if isinstance(beam, Scored) else {"candidates": list(beam)} for beam in beams)
    text = "".join(json.dumps({"id": example, **row}) + "\n" for example, row in zip(ids, rows, strict=True))
    atomic_write_text(path, text)
    if record is not None:
        record.replace(beams_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest()).write(path)


def _check_lengths(model: str, kind: str, inputs: BeamInputs, settings: BeamSettings) -> None:
    """Every input fits the model's window (tokenizer and config only, before any model is loaded)."""
    from transformers import AutoConfig

    from lsplits.amr_parser.model import encoder_config, is_parser_folder, parser_tokenizer
    from lsplits.lm.model_files import load_tokenizer

    if is_parser_folder(model):
        tokenizer, config = parser_tokenizer(model), encoder_config()
    else:
        tokenizer, config = load_tokenizer(model), AutoConfig.from_pretrained(model)
    template = settings.prompt_template
    prompts = inputs.texts if template is None else [template.format(text=text) for text in inputs.texts]
    try:
        encode_inputs(tokenizer, config, kind, prompts, settings.max_new_tokens, ids=inputs.ids)
    except DataError as exc:
        raise DataError(str(exc), source=inputs.source) from exc


def read_beams_record(path: str | Path) -> BeamsRecord | None:
    """How ``lsplits beams`` made the beams file ``path`` (its settings record), or None: no record, or the
    file was changed since (its SHA-256 differs; a warning says so, as the record would describe other beams).

    Raises:
        DataError: a record lsplits beams wrote that is not one (edited by hand), naming it and the key.
    """
    from lsplits.io.records import RECORD_MARK, file_sha256, read_settings_record, settings_record_path

    values = read_settings_record(path)
    if values is None or values.get(RECORD_MARK) != BEAMS_MARK:
        return None
    record = BeamsRecord.from_dict(values, source=str(settings_record_path(path)))
    if file_sha256(path) != record.beams_sha256:
        logger.warning("%s changed since lsplits beams wrote it: its settings record %s is left out of the report",
                       path, settings_record_path(path))
        return None
    return record


BEAMS_MARK = "lsplits beams"
"""The :data:`lsplits.io.records.RECORD_MARK` of a beams settings record."""
_RECORD_KINDS: dict[str, type | tuple[type, ...]] = {
    "model": str, "source": str, "n_inputs": int, "dtype_used": str, "duplicates": (int, type(None)),
    "beams_sha256": (str, type(None))}
"""The JSON kind of each plain field of :class:`BeamsRecord`, checked when a record is read."""


@dataclass(frozen=True)
class BeamsRecord:
    """How ``lsplits beams`` made a beams file: its settings record ``beams.settings.json`` (and the cache's
    ``run.json``), written and read only through this type, each value once.

    Attributes:
        model: the model, as given (a Hub id or a folder).
        source: where the inputs were read from.
        n_inputs: the inputs.
        settings: the :class:`BeamSettings` (the dtype asked for among them; the decoding with its options).
        dtype_used: the dtype ``settings.dtype`` resolved to.
        duplicates: candidates equal to an earlier candidate of their input (kept; None in the cache's run.json).
        beams_sha256: the beams file's SHA-256 (None in the cache's run.json).
    """

    model: str
    source: str
    n_inputs: int
    settings: BeamSettings
    dtype_used: str
    duplicates: int | None = None
    beams_sha256: str | None = None

    def replace(self, **changes: Any) -> BeamsRecord:
        """This record with ``changes`` (field -> value)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON values, marked as lsplits beams' (:data:`lsplits.io.records.RECORD_MARK`), in field order."""
        from lsplits.io.records import RECORD_MARK

        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {RECORD_MARK: BEAMS_MARK, **values, "settings": self.settings.to_dict()}

    def to_json(self) -> str:
        """The text of the record file."""
        return json.dumps(self.to_dict(), indent=1)

    def write(self, beams: str | Path) -> Path:
        """Write the record next to the beams file ``beams`` (``beams.settings.json``, atomically); the path."""
        from lsplits.io.atomic import atomic_write_text
        from lsplits.io.records import settings_record_path

        path = settings_record_path(beams)
        atomic_write_text(path, self.to_json())
        return path

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], *, source: str) -> BeamsRecord:
        """The record in ``values`` (as :meth:`to_dict` writes it); DataError naming ``source`` and the key."""
        from lsplits.io.records import RECORD_MARK

        fields = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(values) - {*fields, RECORD_MARK})
        if unknown:
            raise DataError(f"unknown key {unknown[0]!r} (a beams record holds: {', '.join(fields)})",
                            source=source)
        for name, kind in _RECORD_KINDS.items():
            if not isinstance(values.get(name), kind) or isinstance(values.get(name), bool):
                raise DataError(f"{name!r} is {type(values.get(name)).__name__}, not what lsplits beams writes",
                                source=source)
        if not isinstance(values.get("settings"), dict):
            raise DataError("'settings' must be a JSON object", source=source)
        found = {name: values[name] for name in fields if name != "settings" and name in values}
        return cls(settings=BeamSettings.from_dict(values["settings"], source=source), **found)

    @classmethod
    def from_file(cls, path: str | Path) -> BeamsRecord:
        """The record in the file ``path`` (a ``beams.settings.json``); DataError naming it when it is not one."""
        from lsplits.data.files import read_json_file

        try:
            values = read_json_file(Path(path))
        except OSError as exc:
            raise DataError(f"not readable ({exc.strerror or exc})", source=str(path)) from None
        if not isinstance(values, dict):
            raise DataError("not a JSON object", source=str(path))
        return cls.from_dict(values, source=str(path))
