"""Log-likelihood of query tokens given their prompt under a causal LM.

``ll_score`` of an example is the sum, over its query tokens and EOS, of the natural-log probability
the LM gives each token given everything before it; ``ll_tokens`` counts those tokens. BOS, prompt
and padding are never scored.

How it stays fast and bounded in memory at any dataset size:
- examples are sorted by length and grouped into batches of at most ``token_budget`` padded tokens;
- batches are right-padded: a causal LM's real tokens never see later positions, so padding cannot
  change them; positions are passed explicitly and no padding mask is needed, so attention runs
  with the plain causal mask (SDPA's fused kernels on GPU; padded positions are never read);
- the vocabulary projection is applied only to the positions that predict a scored token, a chunk
  of rows at a time, and each log-prob is ``logit[target] - logsumexp(logits)`` in fp32, so no
  [batch, time, vocab] log-softmax exists (models whose head is not a plain projection of the last
  hidden state, e.g. with logit soft-capping, are detected and use their full forward instead);
- the weights stay fp32; ``dtype`` (:mod:`lsplits.lm.dtype`: ``auto`` is bf16 autocast on a CUDA GPU
  with bf16 and on an AMX / AVX-512-BF16 CPU for models large enough to gain) sets the compute dtype of
  the transformer, while log-softmax and the sums stay fp32; models load with SDPA attention; ``compile=True`` runs the transformer body through ``torch.compile`` (dynamic shapes).

:class:`QueryLogProbs` is the module both scoring and fine-tuning run, so training optimises the
same quantity that is scored.
"""

from __future__ import annotations

import contextlib
import logging
import pickle
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from lsplits.errors import ConfigError
from lsplits.lm.dtype import DEFAULT_DTYPE, autocast, model_dtype
from lsplits.lm.encode import EncodedPair, encode_pairs, model_window
from lsplits.lm.model_files import check_model_files, check_vocabulary, first_line, load_tokenizer
from lsplits.runtime.cancel import check_stop
from lsplits.runtime.progress import progress_bar

logger = logging.getLogger(__name__)

CPU_TOKEN_BUDGET = 4096
"""Padded tokens per scoring batch on a CPU: larger batches fall out of the caches and run slower."""
GPU_TOKEN_BUDGET = 16384
"""Padded tokens per scoring batch on a GPU; raise it on one with memory to spare."""

_LOGIT_CHUNK_ELEMENTS = 1 << 24  # fp32 logits held at once: 64 MiB
_BATCHES_IN_FLIGHT = 8  # batches queued on a GPU before their sums are fetched (the CPU pads the next meanwhile)
_HEAD_PATH_OK: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _NoPaddingMaskAdvice(logging.Filter):
    """Drops transformers' advice to pass an attention mask: right padding needs none (see forward)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "recommend passing in an `attention_mask`" not in record.getMessage()


logging.getLogger("transformers.modeling_utils").addFilter(_NoPaddingMaskAdvice())


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``device`` as a torch.device; None means CUDA when available, else CPU."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def default_token_budget(device: torch.device) -> int:
    """The token budget of scoring batches on ``device`` when none is given."""
    return GPU_TOKEN_BUDGET if device.type == "cuda" else CPU_TOKEN_BUDGET


@contextlib.contextmanager
def quiet_transformers_bars() -> Iterator[None]:
    """Hide transformers' per-file load/save progress bars (noise beside ours), then restore the setting."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


@dataclass
class PaddedBatch:
    """A right-padded batch of ``rows x width`` tokens.

    ``scored[b, t]`` marks position t whose output predicts scored token t+1; ``scored_index`` lists
    the same positions as flat indices ``b * width + t`` (computed on the CPU, so that the GPU never
    waits to learn how many there are).
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    position_ids: torch.Tensor
    scored: torch.Tensor
    scored_index: torch.Tensor

    @property
    def rows(self) -> torch.Tensor:
        """For every scored token, the batch row it belongs to."""
        return torch.div(self.scored_index, self.input_ids.shape[1], rounding_mode="floor")

    def to(self, device: torch.device) -> PaddedBatch:
        return PaddedBatch(*(t.to(device, non_blocking=True) for t in (
            self.input_ids, self.attention_mask, self.position_ids, self.scored, self.scored_index)))


def pad_pairs(pairs: Sequence[EncodedPair]) -> PaddedBatch:
    """Right-pad encoded pairs into one batch (pad id 0: it is masked and never scored)."""
    lengths = np.fromiter((len(p.input_ids) for p in pairs), dtype=np.int64, count=len(pairs))
    first_scored = np.fromiter((p.prompt_len - 1 for p in pairs), dtype=np.int64, count=len(pairs))
    width = int(lengths.max())
    positions = np.arange(width)
    real = positions < lengths[:, None]
    input_ids = np.zeros((len(pairs), width), dtype=np.int64)
    input_ids[real] = np.concatenate([p.input_ids for p in pairs])  # row-major, like the mask
    predicts_scored = (positions >= first_scored[:, None]) & (positions < lengths[:, None] - 1)
    return PaddedBatch(torch.from_numpy(input_ids), torch.from_numpy(real.astype(np.int64)),
                       torch.arange(width).expand(len(pairs), width),
                       torch.from_numpy(predicts_scored[:, :-1].copy()),
                       torch.from_numpy(np.flatnonzero(predicts_scored)))


def token_budget_batches(lengths: Sequence[int], token_budget: int) -> list[np.ndarray]:
    """Group example indices, longest first, into batches of at most ``token_budget`` padded tokens.

    An example longer than the budget gets a batch of its own. Longest first makes an out-of-memory
    error happen on the first batch, not after hours.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        width = int(lengths[order[start]])
        size = max(1, token_budget // max(width, 1))
        batches.append(order[start:start + size])
        start += size
    return batches


class QueryLogProbs(torch.nn.Module):
    """Wraps a causal LM; ``forward(batch)`` returns the fp32 log-prob of every scored token.

    Prepare this wrapper (not the bare LM) with accelerate when training, so distributed wrappers
    see the forward that is actually run. ``lm`` is the Hugging Face model (save it, not this).
    """

    def __init__(self, lm: torch.nn.Module) -> None:
        super().__init__()
        self.lm = lm

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None, position_ids: torch.Tensor,
                scored: torch.Tensor) -> torch.Tensor:
        """Log-probs of the scored tokens, flattened in (row, position) order.

        Args:
            input_ids, position_ids: ``[rows, width]``.
            attention_mask: may be None for right-padded batches (what scoring and training pass):
                the causal mask alone keeps every real token from seeing the padding after it.
            scored: the positions whose output predicts a scored token, either as a boolean
                ``[rows, width - 1]`` mask or as flat indices ``row * width + position``
                (:attr:`PaddedBatch.scored_index`; no device synchronisation on GPU).
        """
        width = input_ids.shape[1]
        if scored.dtype == torch.bool:
            row, position = torch.nonzero(scored, as_tuple=True)
            scored = row * width + position
        targets = input_ids.reshape(-1).index_select(0, scored + 1)
        inputs = dict(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                      use_cache=False)
        if _head_path_ok(self.lm):
            hidden = self.lm.base_model(**inputs).last_hidden_state
            rows = hidden.reshape(-1, hidden.shape[-1]).index_select(0, scored)
            return _chunked_logprobs(rows, targets, self.lm.get_output_embeddings())
        logits = self.lm(**inputs).logits
        return _chunked_logprobs(logits.reshape(-1, logits.shape[-1]).index_select(0, scored), targets, None)


def _chunked_logprobs(rows: torch.Tensor, targets: torch.Tensor, head: torch.nn.Module | None) -> torch.Tensor:
    """``logit[target] - logsumexp(logits)`` per row, projecting ``rows`` through ``head`` a chunk at a time."""
    vocab = rows.shape[-1] if head is None else head.weight.shape[0]
    chunk = max(1, _LOGIT_CHUNK_ELEMENTS // vocab)
    out = []
    for start in range(0, rows.shape[0], chunk):
        logits = rows[start:start + chunk]
        logits = (logits if head is None else head(logits)).float()
        picked = logits.gather(1, targets[start:start + chunk, None]).squeeze(1)
        out.append(picked - torch.logsumexp(logits, dim=-1))
    return torch.cat(out) if out else rows.new_zeros(0, dtype=torch.float32)


def _head_path_ok(lm: torch.nn.Module) -> bool:
    """Whether ``get_output_embeddings()(base_model(...))`` reproduces ``lm``'s own logits.

    Checked once per model on a short input; models that scale or soft-cap their logits fail the
    check and are scored through their full forward.
    """
    if lm in _HEAD_PATH_OK:
        return _HEAD_PATH_OK[lm]
    head = lm.get_output_embeddings() if hasattr(lm, "get_output_embeddings") else None
    ok = head is not None and getattr(lm, "base_model", lm) is not lm
    if ok:
        device = next(lm.parameters()).device
        ids = torch.randint(0, lm.config.vocab_size, (1, 12), generator=torch.Generator().manual_seed(0))
        ids = ids.to(device)
        was_training = lm.training
        lm.eval()
        with torch.no_grad():
            full = lm(input_ids=ids, use_cache=False).logits.float()
            ours = head(lm.base_model(input_ids=ids, use_cache=False).last_hidden_state).float()
        lm.train(was_training)
        tolerance = 1e-3 if device.type == "cpu" else 5e-2
        ok = full.shape == ours.shape and bool(torch.allclose(full, ours, atol=tolerance, rtol=1e-3))
        if not ok:
            logger.info("%s: logits are not a plain projection of the hidden state; scoring uses the "
                        "full forward", type(lm).__name__)
    _HEAD_PATH_OK[lm] = ok
    return ok


def compile_model(model: torch.nn.Module) -> None:
    """Compile, in place, what scoring runs: the transformer body (or the whole LM when its logits are
    not a plain projection, see :func:`_head_path_ok`). Every batch has another shape, hence dynamic.

    The first batches pay the compilation (tens of seconds); it pays off on long GPU runs.
    """
    target = model.base_model if _head_path_ok(model) else model
    if getattr(target, "_compiled_call_impl", None) is None:
        target.compile(dynamic=True)


def score_encoded(model: torch.nn.Module, pairs: Sequence[EncodedPair], *,
                  token_budget: int | None = None, progress: bool = True,
                  desc: str = "scoring", compile: bool = False,
                  dtype: str = DEFAULT_DTYPE) -> tuple[np.ndarray, np.ndarray]:
    """Score already encoded pairs on ``model``'s device; see :func:`score_pairs` for the result."""
    scores = np.zeros(len(pairs), dtype=np.float64)
    counts = np.array([p.n_scored for p in pairs], dtype=np.int64)
    if not pairs:
        return scores, counts
    device = next(model.parameters()).device
    if compile:
        compile_model(model)
    token_budget = token_budget or default_token_budget(device)
    dtype = model_dtype(dtype, model, device)
    wrapper = QueryLogProbs(model)
    was_training = model.training
    model.eval()
    bar = progress_bar(total=len(pairs), desc=desc, unit="ex", disable=not progress, leave=False)
    pending: list[tuple[np.ndarray, torch.Tensor]] = []  # sums left on the device, fetched in groups

    def fetch() -> None:
        for index, sums in pending:
            scores[index] = sums.cpu().numpy()
            bar.update(len(index))
        pending.clear()

    try:
        for batch_index in token_budget_batches([len(p.input_ids) for p in pairs], token_budget):
            check_stop()  # a caller's time budget (the Space's requests: lsplits.runtime.cancel), between batches
            batch = pad_pairs([pairs[i] for i in batch_index]).to(device)
            with torch.inference_mode(), autocast(dtype, device):
                logprobs = wrapper(batch.input_ids, None, batch.position_ids, batch.scored_index)
                sums = torch.zeros(len(batch_index), dtype=torch.float64, device=device)
                sums.index_add_(0, batch.rows, logprobs.double())
            pending.append((batch_index, sums))
            if len(pending) >= _BATCHES_IN_FLIGHT:
                fetch()
        fetch()
    finally:
        bar.close()
        model.train(was_training)
    return scores, counts


def score_pairs(model: torch.nn.Module, tokenizer, prompts: Sequence[str], queries: Sequence[str], *,
                ids: Sequence[str] | None = None, token_budget: int | None = None,
                device: str | torch.device | None = None, progress: bool = True,
                max_length: int | None = None, desc: str = "scoring",
                compile: bool = False, dtype: str = DEFAULT_DTYPE) -> tuple[np.ndarray, np.ndarray]:
    """Log-likelihood of each query (plus EOS) given BOS + its prompt.

    Args:
        model: a Hugging Face causal LM; moved to ``device`` when one is given.
        tokenizer: its tokenizer (BOS/EOS from it, see :func:`~lsplits.lm.encode.special_ids`).
        prompts, queries: texts without BOS/EOS, same length.
        ids: example ids for error messages.
        token_budget: most padded tokens in one forward pass (default: :func:`default_token_budget`).
        device: where to run; default: where the model already is.
        progress: show a progress bar (labelled ``desc``; :mod:`lsplits.runtime.progress`).
        max_length: window in tokens; default: the model's (long prompts are truncated from the start).
        compile: run the model through ``torch.compile`` (see :func:`compile_model`).
        dtype: ``auto``, ``fp32`` or ``bf16`` (see :mod:`lsplits.lm.dtype`); the sums are fp32 either way.

    Returns:
        ``(ll_score, ll_tokens)``: float64 sums of natural-log probs and int64 token counts, in
        input order.

    Raises:
        DataError: a query does not fit the window even without its prompt.
    """
    if device is not None:
        model.to(resolve_device(device))
    window = max_length or model_window(model, tokenizer)
    pairs = encode_pairs(tokenizer, prompts, queries, max_length=window, ids=ids)
    return score_encoded(model, pairs, token_budget=token_budget, progress=progress, desc=desc, compile=compile,
                         dtype=dtype)


def load_causal_lm(name_or_path: str | Path, device: str | torch.device | None = None):
    """Load a causal LM and its tokenizer from a Hub id or a local folder, in fp32, in eval mode.

    Attention runs through PyTorch's SDPA where the architecture supports it (fused kernels on GPU),
    and GPT-2's tanh GELU through PyTorch's fused one.

    Returns:
        ``(model, tokenizer)``.

    Raises:
        ConfigError: the folder or Hub repo does not exist or cannot be reached, its weights are cut
            short, it has no usable tokenizer (see :mod:`lsplits.lm.model_files`), or the model is
            not a causal (left-to-right) LM, e.g. a BERT encoder or an encoder-decoder.
    """
    from safetensors import SafetensorError
    from transformers import AutoConfig, AutoModelForCausalLM

    name = str(name_or_path)
    check_model_files(name)
    try:
        config = AutoConfig.from_pretrained(name)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load model {name!r}: {first_line(exc)}") from exc
    if getattr(config, "is_encoder_decoder", False):
        raise ConfigError(f"model {name!r} ({config.model_type}) is an encoder-decoder, not a causal LM; "
                          "use a decoder-only model such as gpt2")
    if getattr(config, "activation_function", None) == "gelu_new":
        # GPT-2's tanh GELU written as five tensor operations; PyTorch's fused kernel computes the same
        # function (to ~1e-7) several times faster.
        config.activation_function = "gelu_pytorch_tanh"
    tokenizer = load_tokenizer(name)
    try:
        with quiet_transformers_bars():
            try:
                model = AutoModelForCausalLM.from_pretrained(name, config=config, attn_implementation="sdpa")
            except (ValueError, ImportError):  # an architecture without SDPA support: its default attention
                model = AutoModelForCausalLM.from_pretrained(name, config=config)
    except (OSError, ValueError, RuntimeError, EOFError, pickle.UnpicklingError, SafetensorError) as exc:
        raise ConfigError(f"cannot load {name!r} as a causal LM: {first_line(exc)}") from exc
    check_vocabulary(name, tokenizer, model.get_input_embeddings().num_embeddings)
    model.to(device=resolve_device(device), dtype=torch.float32)
    model.eval()
    _check_causal(model, name)
    return model, tokenizer


def _check_causal(model: torch.nn.Module, name: str) -> None:
    """Raise ConfigError unless changing the last token leaves earlier predictions unchanged."""
    device = next(model.parameters()).device
    ids = torch.randint(0, model.config.vocab_size, (1, 8), generator=torch.Generator().manual_seed(0))
    changed = ids.clone()
    changed[0, -1] = (ids[0, -1] + 1) % model.config.vocab_size
    with torch.no_grad():
        before = model(input_ids=ids.to(device)).logits[:, :-1].float()
        after = model(input_ids=changed.to(device)).logits[:, :-1].float()
    if not torch.allclose(before, after, atol=1e-4, rtol=1e-4):
        raise ConfigError(f"model {name!r} ({model.config.model_type}) is not a causal LM: its predictions "
                          "depend on later tokens (e.g. a BERT encoder); use a decoder-only model such as gpt2")
