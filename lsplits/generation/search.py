"""Beam search on a model a user already holds: the ``k`` best outputs per input, longest inputs batched first
under a token budget (beam search keeps ``k * (input + max_new_tokens)`` tokens), bf16 on a GPU that has it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from lsplits.data.tasks import check_template_fields
from lsplits.errors import ConfigError, DataError, InvalidInput, InvalidOption
from lsplits.lm.dtype import DEFAULT_DTYPE
from lsplits.params import check

logger = logging.getLogger(__name__)

CPU_TOKEN_BUDGET = 16384
"""Beam-search tokens (rows x k x (input + new tokens)) per batch on a CPU."""


GPU_TOKEN_BUDGET = 1 << 19
"""The same on a GPU; raise it on one with memory to spare."""


DEFAULT_MAX_NEW_TOKENS = 512


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


def generate_beams(model, tokenizer, texts: Sequence[str], *, k: int = 10, prompt_template: str | None = None,
                   max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, token_budget: int | None = None,
                   progress: bool = True, ids: Sequence[str] | None = None, dtype: str = DEFAULT_DTYPE,
                   **generate_kwargs: Any) -> list[list[str]]:
    """The ``k`` best outputs of beam search for each text, best first, in the order of ``texts``.

    Args:
        model: a Hugging Face seq2seq model or causal LM, on the device to run on.
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
        dtype: ``auto``, ``fp32`` or ``bf16``: bf16 runs the search under bf16 autocast
            (:mod:`lsplits.lm.dtype`; ``auto`` decides by device and model size).
        generate_kwargs: passed on to ``model.generate`` (e.g. ``length_penalty``).

    Raises:
        InvalidOption: ``k`` or ``max_new_tokens`` not a whole number >= 1.
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
    kind = _model_kind(model)
    texts = check_texts(texts)
    prompts = texts if prompt_template is None else [prompt_template.format(text=text) for text in texts]
    device = next(model.parameters()).device
    precision = model_dtype(dtype, model, device)
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
    bar = progress_bar(total=len(texts), desc=f"beam search (k={k})", unit="ex", disable=not progress, leave=False)
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
            with torch.inference_mode(), autocast(precision, device):
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

    from lsplits.lm.encode import model_window

    encoded = tokenizer(list(prompts), add_special_tokens=True)["input_ids"]
    try:
        window = model_window(SimpleNamespace(config=config), tokenizer)
    except ConfigError:  # no stated window (e.g. relative positions): nothing to check
        return encoded, max_new_tokens
    room = window if kind == "seq2seq" else window - max_new_tokens
    too_long = [(ids[position] if ids is not None else f"#{position}", len(tokens))
                for position, tokens in enumerate(encoded) if len(tokens) > room]
    if too_long:
        detail = "" if kind == "seq2seq" else f" less --max-new-tokens {max_new_tokens}"
        shown = ", ".join(f"{name!s} ({length} tokens)" for name, length in too_long[:MAX_LISTED])
        more = f" and {len(too_long) - MAX_LISTED} more" if len(too_long) > MAX_LISTED else ""
        raise DataError(f"{len(too_long)} of {len(encoded)} inputs do not fit the model's window of {window}{detail} "
                        f"({room} tokens): {shown}{more}; shorten or leave them out")
    if kind == "seq2seq" and max_new_tokens >= window:
        logger.debug("candidates capped at %d tokens, the decoder's window", window - 1)
        max_new_tokens = window - 1
    return encoded, max_new_tokens


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
