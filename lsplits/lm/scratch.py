"""A small GPT-2-architecture LM and byte-level BPE tokenizer built offline from the data itself.

Used by ``--lm scratch`` (the demo and the tests, where nothing can be downloaded): the tokenizer
is trained on the dataset's text with the ``tokenizers`` library, the model starts from random
weights and is trained in the k-fold setting like any pretrained LM. Both are written with
``save_pretrained`` and read back with ``from_pretrained(folder)``, so the same loading path runs
as for a Hub model.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from lsplits.errors import InvalidOption
from lsplits.io.atomic import atomic_path
from lsplits.lm.encode import pair_lengths
from lsplits.lm.model_files import load_tokenizer
from lsplits.lm.scoring import load_causal_lm, quiet_transformers_bars
from lsplits.params import WHOLE_FROM_0, WHOLE_FROM_1, Checked, Interval, Param

logger = logging.getLogger(__name__)

END_OF_TEXT = "<|endoftext|>"
"""BOS, EOS, padding and unknown token of the scratch tokenizer, as in GPT-2."""


@dataclass(frozen=True)
class ScratchConfig(Checked):
    """Size of the scratch tokenizer and model, checked when built (:class:`lsplits.params.Checked`).

    The defaults are sized for the demo (a few thousand short sentences, 3 folds in about two
    minutes on 2 CPU cores) while still learning the data's regularities.

    Attributes:
        vocab_size: BPE vocabulary size, special token included (smaller if the text is small).
        min_frequency: pairs seen fewer times are not merged.
        n_layer, n_head, n_embd: transformer depth, heads and width.
        max_positions: upper bound of the window; the window is the longest encoded example
            rounded up to a multiple of 64, capped here (longer prompts are truncated).
        dropout: GPT-2's residual, embedding and attention dropout (0.1 as in GPT-2). With 0,
            training on several processes gives the same model as on one (see ``finetune``).
        tokenizer_sample: the BPE is trained on at most this many of the texts (prompts and queries,
            a seeded sample; all of them when there are fewer): plenty for its vocabulary, and it keeps
            training the tokenizer (and the dry run, which trains the same one) short on large datasets.
    """

    vocab_size: int = 2048
    min_frequency: int = 2
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 128
    max_positions: int = 1024
    dropout: float = 0.1
    tokenizer_sample: int = 100_000

    RULES = {"vocab_size": Param(Interval(whole=True, low=2), why="tokens, the special one included"),
             "min_frequency": Param(WHOLE_FROM_0), "n_layer": Param(WHOLE_FROM_1), "n_head": Param(WHOLE_FROM_1),
             "n_embd": Param(WHOLE_FROM_1), "max_positions": Param(WHOLE_FROM_1),
             "tokenizer_sample": Param(WHOLE_FROM_1),
             "dropout": Param(Interval(whole=False, low=0, high=1, closed="left"))}

    def check_together(self) -> None:
        """The width splits evenly into heads."""
        if self.n_embd % self.n_head:
            raise InvalidOption(name="n_embd", problem=f"must be a multiple of n_head ({self.n_head})",
                                value=self.n_embd)


def train_tokenizer(texts: Iterable[str], folder: str | Path, *, vocab_size: int = 2048,
                    min_frequency: int = 2, model_max_length: int | None = None):
    """Train a byte-level BPE tokenizer on ``texts``, save it to ``folder`` and load it back.

    Returns:
        The tokenizer as loaded by ``AutoTokenizer.from_pretrained(folder)`` (checked by
        :func:`~lsplits.lm.model_files.load_tokenizer`), with ``<|endoftext|>``
        as its BOS, EOS, padding and unknown token.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  special_tokens=[END_OF_TEXT], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(texts, trainer)
    extra = {} if model_max_length is None else {"model_max_length": model_max_length}
    wrapped = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token=END_OF_TEXT, eos_token=END_OF_TEXT,
                                      pad_token=END_OF_TEXT, unk_token=END_OF_TEXT, **extra)
    with atomic_path(folder) as staged:
        wrapped.save_pretrained(staged)
    logger.info("trained a %d-token BPE tokenizer into %s", bpe.get_vocab_size(), folder)
    return load_tokenizer(folder)


def window_for(lengths: Iterable[int], max_positions: int) -> int:
    """The scratch window: the longest encoded length rounded up to a multiple of 64, at most ``max_positions``."""
    longest = int(max(lengths, default=1))
    return min(max_positions, -(-longest // 64) * 64)


def init_scratch_model(tokenizer, folder: str | Path, config: ScratchConfig = ScratchConfig(), *,
                       n_positions: int, seed: int = 0):
    """Create a randomly initialised GPT-2 model for ``tokenizer``, save both to ``folder``, load back.

    The initial weights depend only on ``seed`` and the sizes, not on the global RNG state.

    Returns:
        ``(model, tokenizer)`` loaded with :func:`~lsplits.lm.scoring.load_causal_lm` on the CPU.
    """
    from transformers import GPT2Config, GPT2LMHeadModel

    model_config = GPT2Config(vocab_size=len(tokenizer), n_positions=n_positions, n_embd=config.n_embd,
                              n_layer=config.n_layer, n_head=config.n_head, resid_pdrop=config.dropout,
                              embd_pdrop=config.dropout, attn_pdrop=config.dropout,
                              bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                              pad_token_id=tokenizer.pad_token_id)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = GPT2LMHeadModel(model_config)
    with atomic_path(folder) as staged, quiet_transformers_bars():
        model.save_pretrained(staged)
        tokenizer.save_pretrained(staged)
    return load_causal_lm(folder, device="cpu")


def scratch_tokenizer(prompts: Sequence[str], queries: Sequence[str], folder: str | Path,
                      config: ScratchConfig = ScratchConfig(), *, model_max_length: int | None = None):
    """The scratch tokenizer of a run: BPE of ``config``'s size trained on the non-empty prompts and queries,
    at most ``config.tokenizer_sample`` of them (a sample seeded by its size, so the dry run trains the same)."""
    texts = [text for text in [*prompts, *queries] if text]
    if len(texts) > config.tokenizer_sample:
        chosen = random.Random(config.tokenizer_sample).sample(range(len(texts)), config.tokenizer_sample)
        texts = [texts[i] for i in sorted(chosen)]
    return train_tokenizer(texts, folder, vocab_size=config.vocab_size, min_frequency=config.min_frequency,
                           model_max_length=model_max_length)


def scratch_model(tokenizer, prompts: Sequence[str], queries: Sequence[str], folder: str | Path,
                  config: ScratchConfig = ScratchConfig(), *, seed: int, window: int | None = None):
    """A fresh scratch model for ``tokenizer``, its window fitted to the longest (prompt, query) pair.

    The one way the scratch model of a run is made: the k-fold run, its ``--dry-run`` estimate and the
    Space all call it, so the estimate measures the model the run trains. ``window`` fixes the window
    instead (the Space scores pasted lines of unknown length).

    Returns:
        ``(model, tokenizer)`` as :func:`init_scratch_model` returns them.
    """
    if window is None:
        window = window_for(pair_lengths(tokenizer, prompts, queries), config.max_positions)
    return init_scratch_model(tokenizer, folder, config, n_positions=window, seed=seed)


def build_scratch_lm(texts: list[str], folder: str | Path, config: ScratchConfig = ScratchConfig(), *,
                     n_positions: int = 128, seed: int = 0):
    """Tokenizer trained on ``texts`` plus a fresh model of window ``n_positions``, both saved under ``folder``.

    Returns:
        ``(model, tokenizer)``.
    """
    folder = Path(folder)
    tokenizer = scratch_tokenizer([], texts, folder / "tokenizer", config, model_max_length=n_positions)
    return scratch_model(tokenizer, [], texts, folder / "model", config, seed=seed, window=n_positions)
