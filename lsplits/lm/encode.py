"""Turn (prompt, query) text pairs into token ids for scoring and training.

Every pair becomes ``[BOS] + tok(prompt) + tok(query) + [EOS]``. Only the query tokens and EOS are
scored (or trained on); BOS and the prompt are context. Prompt and query are tokenised separately,
so the boundary between them is exact whatever the tokenizer merges.

When a pair does not fit the model window, prompt tokens are dropped *from the start of the
prompt* (BOS stays first), so the text right before the query (an instruction such as "Ask a
question about the passage:") is kept and the start of a long passage is lost. The query is never
truncated: a query that does not fit with BOS and EOS alone raises :class:`DataError`.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lsplits.errors import ConfigError, DataError, InvalidInput

logger = logging.getLogger(__name__)

# Configs set window sizes under different names; tokenizers use a huge sentinel when unknown.
_WINDOW_ATTRIBUTES = ("max_position_embeddings", "n_positions", "n_ctx", "seq_length")
_NO_LIMIT = 10**8
_CHUNK = 8192  # texts tokenised at once


@dataclass(frozen=True, eq=False, slots=True)
class EncodedPair:
    """Token ids of one example (compared by identity).

    Attributes:
        input_ids: ``[BOS] + prompt tokens (maybe truncated) + query tokens + [EOS]``, int32 (a
            compact array: fine-tuning keeps every training pair in memory).
        prompt_len: number of context tokens, BOS included; the first scored token is
            ``input_ids[prompt_len]`` and it is predicted from position ``prompt_len - 1``.
        truncated: prompt tokens dropped to fit the window (0 when the pair fits).
    """

    input_ids: np.ndarray
    prompt_len: int
    truncated: int = 0

    @property
    def n_scored(self) -> int:
        """Number of scored tokens: the query tokens plus EOS."""
        return len(self.input_ids) - self.prompt_len


def special_ids(tokenizer) -> tuple[int, int]:
    """Return (BOS id, EOS id) of ``tokenizer``; BOS falls back to EOS when the tokenizer has none.

    Raises:
        ConfigError: the tokenizer has no EOS token, so the end of a query cannot be scored.
    """
    eos = tokenizer.eos_token_id
    if eos is None:
        raise ConfigError(f"tokenizer {getattr(tokenizer, 'name_or_path', '')!r} has no EOS token; "
                          "a causal LM tokenizer with an end-of-text token is needed")
    bos = tokenizer.bos_token_id
    return (eos if bos is None else bos), eos


def model_window(model, tokenizer=None) -> int:
    """The longest sequence ``model`` accepts: its configured positions, capped by the tokenizer's.

    Raises:
        ConfigError: neither the model config nor the tokenizer states a window.
    """
    limits = []
    for name in _WINDOW_ATTRIBUTES:
        value = getattr(model.config, name, None)
        if isinstance(value, int) and value > 0:
            limits.append(value)
            break
    tokenizer_limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(tokenizer_limit, int) and 0 < tokenizer_limit < _NO_LIMIT:
        limits.append(tokenizer_limit)
    if not limits:
        raise ConfigError(f"cannot tell the context window of model {model.config.name_or_path!r}; "
                          "set max_position_embeddings in its config")
    return min(limits)


def encode_pairs(tokenizer, prompts: Sequence[str], queries: Sequence[str], *, max_length: int,
                 ids: Sequence[str] | None = None) -> list[EncodedPair]:
    """Tokenise each (prompt, query) pair as ``[BOS] + prompt + query + [EOS]``, fitting ``max_length``.

    Args:
        tokenizer: a Hugging Face tokenizer (fast ones are much quicker on large batches).
        prompts, queries: texts without BOS/EOS, same length.
        max_length: the model window in tokens.
        ids: example ids used in error messages (default: the positions as strings).

    Returns:
        One :class:`EncodedPair` per pair, in input order.

    Raises:
        DataError: a query gives no tokens, or (with BOS and EOS) is longer than ``max_length``;
            names the example.
        InvalidInput: ``prompts`` and ``queries`` (and ``ids``) differ in length (also a ValueError).
    """
    if len(prompts) != len(queries) or (ids is not None and len(ids) != len(prompts)):
        raise InvalidInput(f"prompts, queries and ids must have the same length, got {len(prompts)} prompts, "
                           f"{len(queries)} queries and {'no' if ids is None else len(ids)} ids")
    bos, eos = special_ids(tokenizer)
    pairs = []
    n_truncated = 0
    for start in range(0, len(prompts), _CHUNK):  # the tokenizer's own output is large: a chunk at a time
        prompt_ids = _tokenize(tokenizer, prompts[start:start + _CHUNK])
        query_ids = _tokenize(tokenizer, queries[start:start + _CHUNK])
        for i, (prompt, query) in enumerate(zip(prompt_ids, query_ids, strict=True), start=start):
            if not query:
                raise _empty_query(queries[i], str(ids[i]) if ids is not None else str(i))
            room = max_length - 2 - len(query)
            if room < 0:
                example = str(ids[i]) if ids is not None else str(i)
                raise DataError(f"the query is {len(query)} tokens; with BOS and EOS it exceeds the model "
                                f"window of {max_length} tokens (queries are never truncated)",
                                example=example, field="query")
            dropped = max(0, len(prompt) - room)
            n_truncated += dropped > 0
            kept = prompt[dropped:]
            pairs.append(EncodedPair(np.array([bos, *kept, *query, eos], dtype=np.int32), 1 + len(kept), dropped))
    if n_truncated:
        logger.warning("%d of %d prompts were longer than the %d-token window and lost tokens from "
                       "their start", n_truncated, len(pairs), max_length)
    return pairs


def check_queries(tokenizer, queries: Sequence[str], ids: Sequence[str]) -> None:
    """Raise DataError naming the first example whose query gives 0 tokens (before any scoring).

    Such a query would be scored by its EOS alone; a tokenizer that drops a whole query is broken or
    does not fit the data.
    """
    empty = np.flatnonzero(text_lengths(tokenizer, queries) == 0)
    if empty.size:
        raise _empty_query(queries[empty[0]], str(ids[empty[0]]), f"{empty.size} of {len(queries)} queries")


def _empty_query(query: str, example: str, how_many: str = "") -> DataError:
    shown = query if len(query) <= 40 else query[:37] + "..."
    # a query that vanishes is often made of invisible characters (combining marks, format or control
    # characters, odd spaces): show those as escapes
    invisible = any(unicodedata.category(c)[0] in "MCZ" and c != " " for c in shown)
    also = f" ({how_many} do)" if how_many else ""
    return DataError(f"the query {ascii(shown) if invisible else repr(shown)} gives 0 tokens with this "
                     f"tokenizer{also}: nothing but EOS would be scored", example=example, field="query")


def pair_lengths(tokenizer, prompts: Sequence[str], queries: Sequence[str]) -> list[int]:
    """Untruncated length of each ``[BOS] + prompt + query + [EOS]`` (to size a window)."""
    prompt_lengths, query_lengths = text_lengths(tokenizer, prompts), text_lengths(tokenizer, queries)
    return (prompt_lengths + query_lengths + 2).tolist()


def text_lengths(tokenizer, texts: Sequence[str]) -> np.ndarray:
    """Number of tokens of each text (no special tokens), tokenised a chunk of texts at a time.

    Each distinct text is tokenised once (SNLI repeats every premise in three prompts).
    """
    distinct = list(dict.fromkeys(texts))
    lengths = np.zeros(len(distinct), dtype=np.int64)
    backend = _plain_backend(tokenizer)
    for start in range(0, len(distinct), _CHUNK):
        chunk = distinct[start:start + _CHUNK]
        if backend is not None:  # the same ids, without building a Python list per text
            lengths[start:start + len(chunk)] = [len(encoding) for encoding in
                                                 backend.encode_batch(chunk, add_special_tokens=False)]
        else:
            lengths[start:start + len(chunk)] = [len(ids) for ids in _tokenize(tokenizer, chunk)]
    if len(distinct) == len(texts):
        return lengths
    position = {text: n for n, text in enumerate(distinct)}
    return lengths[np.fromiter((position[text] for text in texts), dtype=np.int64, count=len(texts))]


def _plain_backend(tokenizer):
    """The Rust tokenizer behind a fast tokenizer when calling it directly gives the ids that calling
    ``tokenizer`` does (no truncation or padding set on it), else None."""
    backend = getattr(tokenizer, "backend_tokenizer", None) if getattr(tokenizer, "is_fast", False) else None
    if backend is None or backend.truncation is not None or backend.padding is not None:
        return None
    return backend


def _tokenize(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """Token ids of each text, without special tokens and without length warnings."""
    if not texts:
        return []
    return tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"]
