"""Which kind of generator a model is (seq2seq or causal LM, from its config alone) and loading it."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from lsplits.errors import ConfigError
from lsplits.generation.search import DEFAULT_K, DEFAULT_MAX_NEW_TOKENS, check_template, generate_beams
from lsplits.lm.dtype import DEFAULT_DTYPE

logger = logging.getLogger(__name__)

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

    from lsplits.amr_parser.model import is_parser_folder
    from lsplits.lm.model_files import check_model_files, first_line

    if is_parser_folder(name):  # lsplits' own AMR parser: an encoder-decoder assembled at load
        return "seq2seq"
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


def load_generator(name: str, kind: str, device=None, *, dtype: str = DEFAULT_DTYPE):
    """Load a seq2seq model or causal LM and its tokenizer onto ``device``.

    Where ``dtype`` (:mod:`lsplits.lm.dtype`) resolves to bf16 on a GPU the weights are cast to bf16
    (generation keeps no master weights); on a CPU they stay fp32 and :func:`generate_beams` autocasts.
    """
    import torch

    from lsplits.amr_parser.model import is_parser_folder, load_parser
    from lsplits.lm.dtype import BF16, model_dtype
    from lsplits.lm.model_files import first_line, load_tokenizer
    from lsplits.lm.scoring import load_causal_lm, quiet_transformers_bars, resolve_device

    device = resolve_device(device)
    if is_parser_folder(name):
        model, tokenizer = load_parser(name, device)
    elif kind == "causal":
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
    if device.type == "cuda" and model_dtype(dtype, model, device) == BF16:
        model.to(torch.bfloat16)
    return model, tokenizer


def beams_from_model(name: str, texts: Sequence[str], *, k: int = DEFAULT_K, prompt_template: str | None = None,
                     max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, progress: bool = False,
                     dtype: str = DEFAULT_DTYPE) -> list[list[str]]:
    """:func:`generate_beams` for a model given by Hub id or folder: checked, loaded, then run (the Space's call).
    An lsplits AMR parser folder's output goes through its postprocess (PENMAN; "" where none can be read), as
    ``lsplits beams`` does.

    Raises:
        ConfigError: as :func:`check_model`, :func:`load_generator` and :func:`generate_beams`.
    """
    from lsplits.generation.postprocess import load_postprocess, postprocess_spec

    check_template(prompt_template)
    spec = postprocess_spec(name)
    postprocess = load_postprocess(spec) if spec else None
    model, tokenizer = load_generator(name, check_model(name), dtype=dtype)
    beams = generate_beams(model, tokenizer, texts, k=k, prompt_template=prompt_template,
                           max_new_tokens=max_new_tokens, progress=progress, dtype=dtype)
    if postprocess is None:
        return beams
    return [[postprocess(text) or "" for text in candidates] for candidates in beams]
