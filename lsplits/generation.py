"""k-best candidates by beam search from any Hugging Face model, in the form ``lsplits ue`` reads.

:func:`generate_beams` runs beam search (``num_beams=k, num_return_sequences=k``) on a model a user
already holds, inside their own evaluation loop: a seq2seq model (``AutoModelForSeq2SeqLM``: AMR
parsers, text-to-SQL models) or a causal LM given a prompt template with ``{text}``, of whose output
only the continuation is kept. Inputs are batched longest first under a token budget (what beam
search keeps in memory grows with ``k * (input + max_new_tokens)``), in bf16 on a GPU that has it.

``lsplits beams MODEL INPUTS --k 10 --out beams.jsonl`` (:func:`run_beams`) does the same for a text
file (one input a line), a JSONL file or a Hub dataset, and writes one ``{"id", "candidates"}`` line
per input, best candidate first, in input order: the beams file of ``lsplits ue``. The work is cut
into shards cached under ``--cache-dir`` (one atomically written file per shard, keyed by the
inputs, the model and the settings), so a killed run resumes without generating a finished shard
again, and under ``accelerate launch`` each process generates its share of the shards
(:mod:`lsplits.lm.shards`). ``--format penman`` checks every candidate with the AMR metrics' own
reader and reports the invalid ones; they are kept, since the study counts them.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError, DataError

if TYPE_CHECKING:
    from argparse import Namespace

logger = logging.getLogger(__name__)

CPU_TOKEN_BUDGET = 16384
"""Beam-search tokens (rows x k x (input + new tokens)) per batch on a CPU."""
GPU_TOKEN_BUDGET = 1 << 19
"""The same on a GPU; raise it on one with memory to spare."""
DEFAULT_SHARD_SIZE = 512
DEFAULT_MAX_NEW_TOKENS = 512
CACHE_VERSION = 1
"""Bump when a change would make previously cached candidates wrong."""
FORMATS = ("text", "penman")
INPUT_FIELDS = ("text", "sentence", "snt", "input", "question", "source")
"""Fields tried, in order, when ``--input-field`` is not given."""
_TEXT_SUFFIXES = {".txt", ".text", ".tsv", ".jsonl", ".json"}


def default_cache_dir() -> Path:
    """Where beam shards are cached by default (:func:`lsplits.io.cache_folder`)."""
    from .io import cache_folder

    return cache_folder("beams")


def check_template(template: str | None) -> None:
    """Raise ConfigError unless ``template`` is None or a format string whose only field is ``{text}``."""
    if template is None:
        return
    try:
        filled = template.format(text="\0")
    except (KeyError, IndexError, ValueError) as exc:
        raise ConfigError(f"--prompt-template {template!r} is not a template with only {{text}} in it "
                          f"({type(exc).__name__}: {exc}); write literal braces as {{{{ and }}}}") from exc
    if "\0" not in filled:
        raise ConfigError(f"--prompt-template {template!r} has no {{text}} placeholder for the input")


def _model_kind(model) -> str:
    """``"seq2seq"`` or ``"causal"``; ConfigError for a model that cannot generate."""
    if getattr(model.config, "is_encoder_decoder", False):
        return "seq2seq"
    if not hasattr(model, "generate") or not getattr(model, "can_generate", lambda: True)():
        raise ConfigError(f"{type(model).__name__} cannot generate text: use a seq2seq model or a causal LM")
    return "causal"


def generate_beams(model, tokenizer, texts: Sequence[str], *, k: int = 10, prompt_template: str | None = None,
                   max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, token_budget: int | None = None,
                   progress: bool = True, ids: Sequence[str] | None = None, **generate_kwargs: Any) -> list[list[str]]:
    """The ``k`` best outputs of beam search for each text, best first, in the order of ``texts``.

    Args:
        model: a Hugging Face seq2seq model or causal LM, on the device to run on (bf16 autocast on a
            CUDA GPU that supports it).
        tokenizer: its tokenizer.
        texts: the inputs.
        k: beam width and number of candidates returned per input.
        prompt_template: ``"...{text}..."``, applied to each input (required in practice for a causal
            LM, whose continuation of the filled template is returned; optional for seq2seq).
        max_new_tokens: longest candidate, in tokens.
        token_budget: beam-search tokens per batch (default: :data:`CPU_TOKEN_BUDGET` or
            :data:`GPU_TOKEN_BUDGET`).
        progress: show a progress bar.
        ids: example ids, for error messages.
        generate_kwargs: passed on to ``model.generate`` (e.g. ``length_penalty``).

    Raises:
        ConfigError: ``k`` or ``max_new_tokens`` below 1, a bad template, a model that cannot generate.
        DataError: an input longer than the model's window.
    """
    import torch
    from tqdm.auto import tqdm

    from .lm.scoring import autocast_for, token_budget_batches

    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    if max_new_tokens < 1:
        raise ConfigError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
    check_template(prompt_template)
    kind = _model_kind(model)
    texts = [str(text) for text in texts]
    prompts = texts if prompt_template is None else [prompt_template.format(text=text) for text in texts]
    device = next(model.parameters()).device
    budget = token_budget or (GPU_TOKEN_BUDGET if device.type == "cuda" else CPU_TOKEN_BUDGET)
    encoded, max_new_tokens = encode_inputs(tokenizer, model.config, kind, prompts, max_new_tokens, ids=ids)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    if pad_id is None:
        raise ConfigError("the tokenizer has neither a padding nor an end-of-sequence token to pad batches with")
    settings = dict(num_beams=k, num_return_sequences=k, do_sample=False, max_new_tokens=max_new_tokens,
                    pad_token_id=pad_id, **generate_kwargs)
    results: list[list[str]] = [[] for _ in texts]
    was_training = model.training
    model.eval()
    bar = tqdm(total=len(texts), desc=f"beam search (k={k})", unit="ex", disable=not progress, leave=False)
    try:
        for batch in token_budget_batches([k * (len(tokens) + max_new_tokens) for tokens in encoded], budget):
            rows = [encoded[i] for i in batch]
            width = max(len(row) for row in rows)
            input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
            attention = torch.zeros((len(rows), width), dtype=torch.long)
            for r, row in enumerate(rows):  # causal LMs continue from the last token: pad on the left
                start = width - len(row) if kind == "causal" else 0
                input_ids[r, start:start + len(row)] = torch.tensor(row, dtype=torch.long)
                attention[r, start:start + len(row)] = 1
            with torch.inference_mode(), autocast_for(device):
                output = model.generate(input_ids=input_ids.to(device), attention_mask=attention.to(device),
                                        **settings)
            if kind == "causal":
                output = output[:, width:]
            decoded = tokenizer.batch_decode(output, skip_special_tokens=True, clean_up_tokenization_spaces=True)
            for r, index in enumerate(batch):
                results[index] = [text.strip() for text in decoded[r * k:(r + 1) * k]]
            bar.update(len(batch))
    finally:
        bar.close()
        model.train(was_training)
    return results


def encode_inputs(tokenizer, config, kind: str, prompts: Sequence[str], max_new_tokens: int, *,
                  ids: Sequence[str] | None = None) -> tuple[list[list[int]], int]:
    """Token ids of each prompt, checked against the model's window, and the candidate length to use
    (``max_new_tokens``, capped by a seq2seq decoder's window).

    Raises:
        DataError: a prompt longer than the encoder's window (seq2seq) or than the window less
            ``max_new_tokens`` (causal), naming the example.
    """
    from types import SimpleNamespace

    from .lm.encode import model_window

    encoded = tokenizer(list(prompts), add_special_tokens=True)["input_ids"]
    try:
        window = model_window(SimpleNamespace(config=config), tokenizer)
    except ConfigError:  # no stated window (e.g. relative positions): nothing to check
        return encoded, max_new_tokens
    room = window if kind == "seq2seq" else window - max_new_tokens
    for position, tokens in enumerate(encoded):
        if len(tokens) > room:
            name = ids[position] if ids is not None else f"#{position}"
            detail = "" if kind == "seq2seq" else f" less --max-new-tokens {max_new_tokens}"
            raise DataError(f"input of {len(tokens)} tokens does not fit the model's window of {window}{detail}",
                            example=str(name))
    if kind == "seq2seq" and max_new_tokens >= window:
        logger.debug("candidates capped at %d tokens, the decoder's window", window - 1)
        max_new_tokens = window - 1
    return encoded, max_new_tokens


def invalid_penman(beams: Sequence[Sequence[str]]) -> int:
    """How many candidates are not one well-formed AMR graph (the reader every AMR metric uses)."""
    from .amr.graph import parse_amr
    from .similarity import InvalidOutput

    invalid = 0
    for candidates in beams:
        for candidate in candidates:
            try:
                parse_amr(candidate)
            except InvalidOutput:
                invalid += 1
    return invalid


# --- inputs ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BeamInputs:
    """The inputs of a run: ids and texts, in order, and where they came from (for messages)."""

    ids: list[str]
    texts: list[str]
    source: str


def read_inputs(source: str, *, input_field: str | None = None, id_field: str | None = None,
                split: str = "test") -> BeamInputs:
    """Inputs from a text file (one a line; ids 0, 1, ...), a JSONL file or a Hub dataset / local dataset
    folder (``split``). JSONL and datasets take the text from ``input_field`` (default: the first of
    :data:`INPUT_FIELDS` present) and the id from ``id_field`` (default ``id`` when present, else the
    position).

    Raises:
        DataError: a missing file, a line that is not JSON, a missing field, an empty line or input,
            repeated ids, a dataset that cannot be loaded.
    """
    path = Path(source).expanduser()
    if path.is_file():
        if path.suffix.lower() in {".jsonl", ".json"}:
            from .data import read_jsonl

            rows = [(number, None, row) for number, row in read_jsonl(path)]
            return _from_rows(rows, str(path), input_field, id_field)
        return _from_text_file(path)
    if path.is_dir():
        return _from_dataset(str(path), split, input_field, id_field)
    if path.suffix.lower() in _TEXT_SUFFIXES or source.startswith((".", "/", "~")) or source.count("/") > 1:
        raise DataError("no such file", source=source)
    return _from_dataset(source, split, input_field, id_field)


def _from_text_file(path: Path) -> BeamInputs:
    texts = path.read_text(encoding="utf-8").split("\n")
    if texts and texts[-1] == "":
        texts.pop()
    for number, text in enumerate(texts, start=1):
        if not text.strip():
            raise DataError("empty line (one input per line; ids are line positions, so lines cannot be "
                            "skipped)", source=str(path), line=number)
    if not texts:
        raise DataError("no inputs (the file is empty)", source=str(path))
    return BeamInputs([str(i) for i in range(len(texts))], [text.strip() for text in texts], str(path))


def _from_dataset(name: str, split: str, input_field: str | None, id_field: str | None) -> BeamInputs:
    import datasets

    try:
        dataset = datasets.load_dataset(name, split=split)
    except Exception as exc:  # datasets raises many types (FileNotFoundError, ConnectionError, ValueError, ...)
        detail = " ".join(str(exc).split())[:300]
        raise DataError(f"cannot load split {split!r} of dataset {name!r}: {type(exc).__name__}: {detail}",
                        source=name) from exc
    rows = [(None, f"#{n}", row) for n, row in enumerate(dataset)]
    return _from_rows(rows, f"{name} ({split})", input_field, id_field)


def _from_rows(rows: list[tuple[int | None, str | None, dict]], source: str, input_field: str | None,
               id_field: str | None) -> BeamInputs:
    """Ids and texts of ``(line number or None, example label or None, row)`` records."""
    if not rows:
        raise DataError("no inputs (it is empty)", source=source)
    first = rows[0][2]
    field = input_field or next((name for name in INPUT_FIELDS if name in first), None)
    if field is None:
        raise DataError(f"no input field: give --input-field (fields: {', '.join(map(str, first))})", source=source,
                        line=rows[0][0], example=rows[0][1])
    id_name = id_field or ("id" if "id" in first else None)
    ids, texts, seen = [], [], set()
    for position, (line, example, row) in enumerate(rows):
        if row.get(field) is None or not isinstance(row[field], str):
            raise DataError(f"missing text field (fields: {', '.join(map(str, row))})" if field not in row else
                            "the input must be a string", source=source, line=line, example=example, field=field)
        if id_name is None:
            name = str(position)
        elif row.get(id_name) is None:
            raise DataError("missing id", source=source, line=line, example=example, field=id_name)
        else:
            name = str(row[id_name])
        if name in seen:
            raise DataError("id appears more than once; ids must be unique", source=source, line=line,
                            example=name, field=id_name)
        seen.add(name)
        ids.append(name)
        texts.append(row[field])
    return BeamInputs(ids, texts, source)


# --- models ---------------------------------------------------------------------------------------------------


def check_model(name: str) -> str:
    """``"seq2seq"`` or ``"causal"`` from the model's config alone (no weights loaded).

    Raises:
        ConfigError: no such folder or Hub model, or a model that is neither (e.g. a BERT encoder).
    """
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
    )

    from .lm.model_files import check_model_files, first_line

    check_model_files(name)
    try:
        config = AutoConfig.from_pretrained(name)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load model {name!r}: {first_line(exc)}") from exc
    seq2seq = MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES.get(config.model_type)
    causal = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(config.model_type)
    architectures = getattr(config, "architectures", None) or []
    if getattr(config, "is_encoder_decoder", False) and seq2seq:
        return "seq2seq"
    if causal and (not architectures or any(a.endswith(("LMHeadModel", "ForCausalLM")) or a == causal
                                            for a in architectures)):
        return "causal"
    what = f"{config.model_type}, {', '.join(architectures)}" if architectures else config.model_type
    raise ConfigError(f"model {name!r} ({what}) is neither a seq2seq model nor a causal LM, so it cannot "
                      "generate candidates; use e.g. a BART/T5 parser or a decoder-only LM")


def load_generator(name: str, kind: str, device=None):
    """Load a seq2seq model or causal LM and its tokenizer onto ``device`` (bf16 on a GPU that has it)."""
    import torch

    from .lm.model_files import first_line, load_tokenizer
    from .lm.scoring import bf16_on, load_causal_lm, quiet_transformers_bars, resolve_device

    device = resolve_device(device)
    if kind == "causal":
        model, tokenizer = load_causal_lm(name, device=device)
    else:
        from transformers import AutoModelForSeq2SeqLM

        tokenizer = load_tokenizer(name)
        try:
            with quiet_transformers_bars():
                model = AutoModelForSeq2SeqLM.from_pretrained(name)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot load {name!r} as a seq2seq model: {first_line(exc)}") from exc
        model.to(device)
        model.eval()
    if bf16_on(device):
        model.to(torch.bfloat16)
    return model, tokenizer


def beams_from_model(name: str, texts: Sequence[str], *, k: int = 10, prompt_template: str | None = None,
                     max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, progress: bool = False) -> list[list[str]]:
    """:func:`generate_beams` for a model given by Hub id or folder: checked, loaded, then run (the Space's call).

    Raises:
        ConfigError: as :func:`check_model`, :func:`load_generator` and :func:`generate_beams`.
    """
    check_template(prompt_template)
    model, tokenizer = load_generator(name, check_model(name))
    return generate_beams(model, tokenizer, texts, k=k, prompt_template=prompt_template,
                          max_new_tokens=max_new_tokens, progress=progress)


# --- cached, sharded runs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BeamSettings:
    """Everything besides the inputs and the model that determines the candidates."""

    k: int = 10
    prompt_template: str | None = None
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    shard_size: int = DEFAULT_SHARD_SIZE


def check_settings(settings: BeamSettings) -> None:
    """ConfigError for k, max_new_tokens or shard_size below 1, or a bad template."""
    for name in ("k", "max_new_tokens", "shard_size"):
        value = getattr(settings, name)
        if value < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    check_template(settings.prompt_template)


def _run_key(inputs: BeamInputs, model: str, settings: BeamSettings) -> str:
    from .lm.shards import folder_fingerprint

    digest = hashlib.sha256()
    for row in zip(inputs.ids, inputs.texts, strict=True):
        digest.update(json.dumps(row).encode())
    digest.update(json.dumps({"model": model, "files": folder_fingerprint(model), "version": CACHE_VERSION,
                              **settings.__dict__}, sort_keys=True).encode())
    return digest.hexdigest()[:20]


def _shard_path(folder: Path, number: int) -> Path:
    return folder / f"beams-{number:05d}.jsonl"


def generate_cached(model: str, inputs: BeamInputs, settings: BeamSettings, *, cache_dir: str | Path,
                    kind: str | None = None, token_budget: int | None = None, device=None,
                    progress: bool = True) -> list[list[str]]:
    """The candidates of every input (in input order), generating only the shards not cached yet.

    Under a launcher every process generates its share of the missing shards onto ``cache_dir``
    (which they must all reach), then every process reads all of them back.
    """
    import numpy as np

    from .io import atomic_write_text
    from .lm.distributed import barrier, is_main, main_first, process_device, rank, world_size
    from .lm.shards import missing_shards, split_into_shards, this_process_share

    check_settings(settings)
    kind = kind or check_model(model)
    folder = Path(cache_dir) / _run_key(inputs, model, settings)
    folder.mkdir(parents=True, exist_ok=True)
    if is_main():
        logger.info("beam cache: %s (%d process%s)", folder, world_size(), "" if world_size() == 1 else "es")
        atomic_write_text(folder / "run.json", json.dumps({"model": model, "source": inputs.source,
                                                           "n_inputs": len(inputs.ids), **settings.__dict__}))
    shards = split_into_shards(np.arange(len(inputs.ids)), settings.shard_size)
    missing = missing_shards(shards, lambda number, _: _shard_path(folder, number).exists())
    if missing:
        mine = this_process_share(missing)
        if mine:
            with main_first():  # a Hub model is downloaded once, by rank 0
                loaded, tokenizer = load_generator(model, kind, device or process_device())
        for number, shard in mine:
            beams = generate_beams(loaded, tokenizer, [inputs.texts[i] for i in shard], k=settings.k,
                                   prompt_template=settings.prompt_template,
                                   max_new_tokens=settings.max_new_tokens, token_budget=token_budget,
                                   progress=progress and is_main(), ids=[inputs.ids[i] for i in shard])
            lines = [json.dumps({"position": int(i), "id": inputs.ids[i], "candidates": candidates})
                     for i, candidates in zip(shard, beams, strict=True)]
            atomic_write_text(_shard_path(folder, number), "".join(line + "\n" for line in lines))
            where = f" (process {rank()} of {world_size()})" if world_size() > 1 else ""
            logger.info("wrote beam shard %d of %d%s", number + 1, len(shards), where)
        barrier()
    else:
        logger.info("all %d beam shards cached", len(shards))
    return _collect(folder, inputs, len(shards))


def _collect(folder: Path, inputs: BeamInputs, n_shards: int) -> list[list[str]]:
    """Every shard's candidates in input order, checked against the inputs."""
    from .errors import SplitInvariantError

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


def write_beams(path: str | Path, ids: Sequence[str], beams: Sequence[Sequence[str]]) -> None:
    """Write the beams file ``lsplits ue`` reads: one ``{"id", "candidates"}`` line per input, atomically."""
    from .io import atomic_write_text

    atomic_write_text(path, "".join(json.dumps({"id": example, "candidates": list(candidates)}) + "\n"
                                    for example, candidates in zip(ids, beams, strict=True)))


def check_output(out: Path, inputs_source: str) -> None:
    """ConfigError unless ``out`` can take the beams: a ``.jsonl`` path that is not a folder, not the
    input, and not a file that lsplits did not write (an existing beams file is replaced)."""
    if out.is_dir():
        raise ConfigError(f"--out {out} is a folder; give a file name such as {out / 'beams.jsonl'}")
    if out.suffix.lower() != ".jsonl":
        raise ConfigError(f"--out {out}: the beams file must end in .jsonl (how lsplits ue recognises one)")
    if Path(inputs_source).expanduser().resolve() == out.expanduser().resolve():
        raise ConfigError(f"--out {out} is the input file; write the beams elsewhere")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"--out {out}: {parent} is a file, not a folder")
            break
    if out.is_file() and out.stat().st_size > 0 and not _is_beams_file(out):
        raise ConfigError(f"--out {out} exists and is not a beams file written by lsplits; "
                          "choose another path or remove it yourself")


def _is_beams_file(path: Path) -> bool:
    with path.open(encoding="utf-8", errors="replace") as handle:
        first = handle.readline()
    try:
        row = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(row, dict) and set(row) == {"id", "candidates"}


# --- command line ---------------------------------------------------------------------------------------------


def _check_lengths(model: str, kind: str, inputs: BeamInputs, settings: BeamSettings) -> None:
    """Every input fits the model's window (tokenizer and config only, before any model is loaded)."""
    from transformers import AutoConfig

    from .lm.model_files import load_tokenizer

    tokenizer = load_tokenizer(model)
    template = settings.prompt_template
    prompts = inputs.texts if template is None else [template.format(text=text) for text in inputs.texts]
    try:
        encode_inputs(tokenizer, AutoConfig.from_pretrained(model), kind, prompts, settings.max_new_tokens,
                      ids=inputs.ids)
    except DataError as exc:
        raise DataError(str(exc), source=inputs.source) from exc


def run_beams(args: Namespace) -> int:
    """``lsplits beams``: check everything cheap first, then generate (resuming from the cache) and write."""
    from .lm.distributed import is_main

    if args.format not in FORMATS:
        raise ConfigError(f"--format {args.format!r} is not one of {', '.join(FORMATS)}")
    if args.token_budget is not None and args.token_budget < 1:
        raise ConfigError(f"--token-budget must be at least 1, got {args.token_budget}")
    settings = BeamSettings(k=args.k, prompt_template=args.prompt_template, max_new_tokens=args.max_new_tokens,
                            shard_size=args.shard_size)
    check_settings(settings)
    check_output(args.out, args.inputs)
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
