"""Beam search on a model a user already holds: the ``k`` best outputs per input, longest inputs batched first
under a token budget (beam search keeps ``k * (input + max_new_tokens)`` tokens), bf16 on a GPU that has it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from lsplits.data.tasks import check_template_fields
from lsplits.errors import ConfigError, DataError, InvalidInput, InvalidOption
from lsplits.generation.decoding import Decoding, diverse_beam_search, input_seed, token_texts
from lsplits.generation.forced import teacher_forced
from lsplits.generation.scores import Scored, generated_tokens
from lsplits.lm.dtype import DEFAULT_DTYPE
from lsplits.params import check

logger = logging.getLogger(__name__)

CPU_TOKEN_BUDGET = 16384
"""Beam-search tokens (rows x k x (input + new tokens)) per batch on a CPU."""


GPU_TOKEN_BUDGET = 1 << 19
"""The same on a GPU; raise it on one with memory to spare."""


DEFAULT_MAX_NEW_TOKENS = 512

DEFAULT_K = 10
"""Candidates per input (the beam width) unless told otherwise (``lsplits beams --k``,
:class:`~lsplits.generation.cache.BeamSettings`, :func:`generate_beams`)."""


FORMATS = ("text", "penman")
MAX_LISTED = 20
"""Inputs named in the error listing those that do not fit the model's window (the count says the rest)."""


def check_template(template: str | None) -> None:
    """Raise InvalidOption unless ``template`` is None or a format string whose only field is a plain ``{text}``
    (no format spec or conversion: :func:`lsplits.data.tasks.check_template_fields`, checked before formatting)."""
    if template is None:
        return
    fields = check_template_fields(template)
    others = [name for name in fields if name != "text"]
    if others:
        raise InvalidOption(name="prompt_template", problem=f"may hold only {{text}}, not {{{others[0]}}}: write "
                            "literal braces as {{ and }}", value=template)
    if not fields:
        raise InvalidOption(name="prompt_template", problem="has no {text} placeholder for the input", value=template)


def _check_count(value: object, argument: str) -> int:
    """``value`` as a whole number >= 1 (the rule of :data:`lsplits.params.PARAMS`); InvalidOption naming
    ``argument`` otherwise (a string, a float, 0)."""
    return check(argument, value)


def check_texts(texts: object, argument: str = "texts") -> list[str]:
    """``texts`` as a list of non-empty strings; InvalidInput naming ``argument`` for a single string (which
    would be searched one character at a time), an empty list, a non-string or an empty string."""
    if isinstance(texts, (str, bytes)):
        raise InvalidInput(f"{argument} must be a list of strings, got one string ({texts[:40]!r}); "
                           f"pass [text] for a single input")
    if not isinstance(texts, Iterable):
        raise InvalidInput(f"{argument} must be a list of strings, got {type(texts).__name__}")
    texts = list(texts)
    if not texts:
        raise InvalidInput(f"{argument} is empty: give at least one input")
    for position, text in enumerate(texts):
        if not isinstance(text, str):
            raise InvalidInput(f"{argument}[{position}] is {text!r} ({type(text).__name__}), not a string")
        if not text.strip():
            raise InvalidInput(f"{argument}[{position}] is an empty string: beam search needs an input")
    return texts


def _model_kind(model) -> str:
    """``"seq2seq"`` or ``"causal"``; ConfigError for a model that cannot generate."""
    if getattr(model.config, "is_encoder_decoder", False):
        return "seq2seq"
    if not hasattr(model, "generate") or not getattr(model, "can_generate", lambda: True)():
        raise ConfigError(f"{type(model).__name__} cannot generate text: use a seq2seq model or a causal LM")
    return "causal"


def generate_beams(model, tokenizer, texts: Sequence[str], *, k: int = DEFAULT_K, prompt_template: str | None = None,
                   max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, token_budget: int | None = None,
                   progress: bool = True, ids: Sequence[str] | None = None, dtype: str = DEFAULT_DTYPE,
                   decoding: Decoding | str = "beam", return_scores: bool = False,
                   **generate_kwargs: Any) -> list[list[str]] | list[Scored]:
    """The ``k`` candidates of each text, best first (samples in the order drawn), in the order of ``texts``.

    Args:
        model: a Hugging Face seq2seq model or causal LM, on the device to run on.
        tokenizer: its tokenizer.
        texts: the inputs.
        k: candidates per input (the beam width of beam search).
        prompt_template: ``"...{text}..."``, applied to each input (required in practice for a causal
            LM, whose continuation of the filled template is returned; optional for seq2seq).
        max_new_tokens: longest candidate, in tokens.
        token_budget: beam-search tokens per batch (default: :data:`CPU_TOKEN_BUDGET` or
            :data:`GPU_TOKEN_BUDGET`).
        progress: show a progress bar.
        ids: example ids, for error messages.
        dtype: ``auto``, ``fp32`` or ``bf16``: bf16 runs the search under bf16 autocast
            (:mod:`lsplits.lm.dtype`; ``auto`` decides by device and model size).
        decoding: ``"beam"``, ``"diverse-beam"``, ``"sample"`` or a :class:`~lsplits.generation.decoding.Decoding`
            with its options (``do_sample=True`` among ``generate_kwargs`` means ``"sample"``).
        return_scores: return :class:`~lsplits.generation.scores.Scored` per input: the candidates with their
            log-probabilities, token counts and mean token entropies (one teacher-forced pass each).
        generate_kwargs: passed on to ``model.generate`` (e.g. ``length_penalty``).

    Raises:
        InvalidOption: ``k`` or ``max_new_tokens`` not a whole number >= 1, a bad decoding option.
        InvalidInput: ``texts`` a single string, empty, or holding a non-string or an empty string.
        ConfigError: a bad template, a model that cannot generate.
        DataError: an input longer than the model's window.
    """
    import torch

    from lsplits.lm.dtype import autocast, model_dtype
    from lsplits.lm.scoring import token_budget_batches
    from lsplits.runtime.progress import progress_bar

    _check_count(k, "k")
    _check_count(max_new_tokens, "max_new_tokens")
    check_template(prompt_template)
    decoding, generate_kwargs = as_decoding(decoding, generate_kwargs)
    kind = _model_kind(model)
    texts = check_texts(texts)
    prompts = texts if prompt_template is None else [prompt_template.format(text=text) for text in texts]
    device = next(model.parameters()).device
    precision = model_dtype(dtype, model, device)
    budget = token_budget or (GPU_TOKEN_BUDGET if device.type == "cuda" else CPU_TOKEN_BUDGET)
    encoded, max_new_tokens = encode_inputs(tokenizer, model.config, kind, prompts, max_new_tokens, ids=ids)
    pad_id = _pad_id(tokenizer)
    eos_id = _eos_id(model, tokenizer)
    start_id = getattr(model.config, "decoder_start_token_id", None) if kind == "seq2seq" else None
    settings = dict(**decoding.generate_settings(k), max_new_tokens=max_new_tokens, pad_token_id=pad_id,
                    **generate_kwargs)
    tokens: list[list[list[int]]] = [[] for _ in texts]
    was_training = model.training
    model.eval()
    bar = progress_bar(total=len(texts), desc=f"{decoding.strategy} (k={k})", unit="ex", disable=not progress, leave=False)
    # sampling and diverse beam search take one input at a time: its candidates then depend on it alone
    batches = (token_budget_batches([k * (len(row) + max_new_tokens) for row in encoded], budget)
               if decoding.strategy == "beam" else [[i] for i in range(len(texts))])
    try:
        for batch in batches:
            with torch.inference_mode(), autocast(precision, device):
                found = _search_batch(model, kind, decoding, [encoded[i] for i in batch], prompts[batch[0]], k=k,
                                      settings=settings, pad_id=pad_id, eos_id=eos_id, start_id=start_id,
                                      device=device)
            for index, rows in zip(batch, found, strict=True):
                tokens[index] = [generated_tokens(row, eos_id, pad_id) for row in rows]
                if return_scores:
                    with autocast(precision, device):  # the search's precision
                        scored = teacher_forced(model, kind, encoded[index], tokens[index], start_id=start_id,
                                                device=device)
                    tokens[index] = (tokens[index], scored)  # type: ignore[assignment]
            bar.update(len(batch))
    finally:
        bar.close()
        model.train(was_training)
    return [_decoded(tokenizer, entry, return_scores) for entry in tokens]


def _search_batch(model, kind: str, decoding: Decoding, batch: list[Any], first_prompt: str, *, k: int,
                  settings: dict[str, Any], pad_id: int, eos_id: int | None, start_id: int | None,
                  device: Any) -> list[Any]:
    """The generated token rows of each input of one batch: diverse beam search (one input), else
    ``model.generate`` (sampling seeded by the batch's first prompt: one input per batch)."""
    if decoding.strategy == "diverse-beam":
        return [diverse_beam_search(model, kind, batch[0], k=k, groups=decoding.groups(k),
                                    penalty=decoding.to_dict()["diversity_penalty"],
                                    max_new_tokens=settings["max_new_tokens"], eos_id=eos_id, start_id=start_id,
                                    device=device)]
    sampled = decoding.strategy == "sample"
    return _generate(model, kind, batch, settings, pad_id, device,
                     seed=input_seed(decoding.to_dict()["seed"], first_prompt) if sampled else None)


def as_decoding(decoding: Decoding | str, generate_kwargs: dict[str, Any]) -> tuple[Decoding, dict[str, Any]]:
    """The :class:`Decoding` meant by ``decoding`` and the keywords left for ``model.generate``: ``do_sample=True``
    there means sampling, with its ``temperature``, ``top_p`` and ``top_k``."""
    kwargs = dict(generate_kwargs)
    if isinstance(decoding, Decoding):
        return decoding, kwargs
    if kwargs.pop("do_sample", False) and decoding == "beam":
        decoding = "sample"
    options = {name: kwargs.pop(name) for name in ("temperature", "top_p", "top_k", "num_beam_groups",
                                                   "diversity_penalty", "seed") if name in kwargs}
    return Decoding.named(decoding, **options), kwargs


def _pad_id(tokenizer) -> int:
    """The token that pads a batch: the tokenizer's padding token, else its end-of-sequence token."""
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    if pad_id is None:
        raise ConfigError("the tokenizer has neither a padding nor an end-of-sequence token to pad batches with")
    return pad_id


def _eos_id(model, tokenizer) -> int | None:
    """The token that ends a candidate: the generation config's, else the tokenizer's."""
    config = getattr(model, "generation_config", None)
    eos = getattr(config, "eos_token_id", None) if config is not None else None
    if isinstance(eos, (list, tuple)):
        eos = eos[0] if eos else None
    return eos if eos is not None else tokenizer.eos_token_id


def _generate(model, kind: str, rows: list[list[int]], settings: dict[str, Any], pad_id: int, device,
              *, seed: int | None) -> list[list[list[int]]]:
    """``model.generate`` on a batch of inputs: the generated token ids of each input's ``k`` candidates (under
    ``seed``, drawn with the global generator forked so the caller's random state is left as it was)."""
    import torch

    width = max(len(row) for row in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(rows), width), dtype=torch.long)
    for r, row in enumerate(rows):  # causal LMs continue from the last token: pad on the left
        start = width - len(row) if kind == "causal" else 0
        input_ids[r, start:start + len(row)] = torch.tensor(row, dtype=torch.long)
        attention[r, start:start + len(row)] = 1
    devices = [device] if getattr(device, "type", "cpu") == "cuda" else []
    with torch.random.fork_rng(devices=devices, enabled=seed is not None):
        if seed is not None:
            torch.manual_seed(seed)
        output = model.generate(input_ids=input_ids.to(device), attention_mask=attention.to(device), **settings)
    output = output[:, width:] if kind == "causal" else output[:, 1:]  # the prompt / the decoder's start token
    k = settings["num_return_sequences"]
    return [output[r * k:(r + 1) * k].tolist() for r in range(len(rows))]


def _decoded(tokenizer, entry, scored: bool) -> list[str] | Scored:
    """The candidates' text (special tokens dropped, spaces trimmed), with their scores when ``scored``."""
    tokens, scores = entry if scored else (entry, None)
    texts = [text.strip() for text in token_texts(tokenizer, tokens)]
    if scores is None:
        return texts
    logprobs, n_tokens, entropies = scores
    return Scored(texts, logprobs=logprobs, n_tokens=n_tokens, token_entropies=entropies, token_ids=tokens)


def encode_inputs(tokenizer, config, kind: str, prompts: Sequence[str], max_new_tokens: int, *,
                  ids: Sequence[str] | None = None) -> tuple[list[list[int]], int]:
    """Token ids of each prompt, checked against the model's window, and the candidate length to use
    (``max_new_tokens``, capped by a seq2seq decoder's window).

    Raises:
        DataError: a prompt longer than the encoder's window (seq2seq) or than the window less
            ``max_new_tokens`` (causal), naming the example.
    """
    from types import SimpleNamespace

    from lsplits.lm.encode import model_window

    encoded = tokenizer(list(prompts), add_special_tokens=True)["input_ids"]
    decoder = _decoder_window(config) if kind == "seq2seq" else None
    if decoder is not None and max_new_tokens >= decoder:  # its start token takes one position
        logger.debug("candidates capped at %d tokens, the decoder's window", decoder - 1)
        max_new_tokens = decoder - 1
    try:
        window = model_window(SimpleNamespace(config=config), tokenizer)
    except ConfigError:  # no stated window (e.g. relative positions): nothing to check
        return encoded, max_new_tokens
    room = window if kind == "seq2seq" else window - max_new_tokens
    too_long = [(ids[position] if ids is not None else f"#{position}", len(tokens))
                for position, tokens in enumerate(encoded) if len(tokens) > room]
    if too_long:
        detail = "" if kind == "seq2seq" else f" less {{opt:max_new_tokens}} {max_new_tokens}"
        shown = ", ".join(f"{name!s} ({length} tokens)" for name, length in too_long[:MAX_LISTED])
        more = f" and {len(too_long) - MAX_LISTED} more" if len(too_long) > MAX_LISTED else ""
        raise DataError(f"{len(too_long)} of {len(encoded)} inputs do not fit the model's window of {window}{detail} "
                        f"({room} tokens): {shown}{more}; shorten or leave them out")
    if kind == "seq2seq" and max_new_tokens >= window:
        logger.debug("candidates capped at %d tokens, the decoder's window", window - 1)
        max_new_tokens = window - 1
    return encoded, max_new_tokens


def _decoder_window(config) -> int | None:
    """The positions of a seq2seq model's own decoder config (an ``EncoderDecoderModel``'s ``config.decoder``, whose
    window the model's config and tokenizer do not state); None where there is none."""
    value = getattr(getattr(config, "decoder", None), "max_position_embeddings", None)
    return value if isinstance(value, int) and value > 0 else None


def invalid_penman(beams: Sequence[Sequence[str]]) -> int:
    """How many candidates are not one well-formed AMR graph (the reader every AMR metric uses)."""
    from lsplits.errors import InvalidOutput
    from lsplits.similarity.amr.graph import parse_amr

    invalid = 0
    for candidates in beams:
        for candidate in candidates:
            try:
                parse_amr(candidate)
            except InvalidOutput:
                invalid += 1
    return invalid
