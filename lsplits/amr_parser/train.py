"""Training the shipped AMR parser (``benchmarks/train_amr_parser.py`` runs it on The Little Prince and measures it).

The encoder is frozen, so its states are computed once and only the decoder trains (minutes on 2 CPU cores).
Seeded: the same data, seed and settings give the same weights on the same machine.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lsplits.amr_parser.linearize import linearize
from lsplits.amr_parser.model import SPECIAL_TOKENS, DecoderShape, ParserTokenizer, build_parser
from lsplits.data.files import read_jsonl
from lsplits.errors import DataError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ParserTraining:
    """How the decoder is trained (each value recorded in the parser's manifest)."""

    epochs: int = 24
    batch_size: int = 32
    learning_rate: float = 1e-3
    warmup_share: float = 0.05
    label_smoothing: float = 0.1
    train_share: float = 1.0
    seed: int = 0


def read_amr_jsonl(path: Path) -> list[dict]:
    """The rows of a JSON-lines AMR file (``id``, ``snt``, ``amr``); DataError naming the line otherwise
    (:func:`lsplits.data.files.read_jsonl` reads the file)."""
    rows = []
    for number, row in read_jsonl(path):
        missing = [field for field in ("snt", "amr") if not isinstance(row.get(field), str)]
        if missing:
            raise DataError("missing or not a string", source=str(path), line=number, field=missing[0])
        rows.append(row)
    return rows


def target_vocab(targets: Sequence[str]) -> list[str]:
    """The special tokens, then every target token by falling frequency (ties alphabetical)."""
    counts = Counter(token for text in targets for token in text.split())
    return [*SPECIAL_TOKENS, *sorted(counts, key=lambda token: (-counts[token], token))]


def _encode_sources(model, tokenizer: ParserTokenizer, sentences: Sequence[str], batch_size: int = 64):
    """The frozen encoder's states of each sentence (a tensor of its own length), computed once."""
    import torch

    states = []
    model.encoder.eval()
    with torch.inference_mode():
        for start in range(0, len(sentences), batch_size):
            batch = tokenizer(list(sentences[start:start + batch_size]), padding=True, truncation=True,
                              max_length=256, return_tensors="pt")
            hidden = model.encoder(**batch).last_hidden_state
            for row, mask in zip(hidden, batch["attention_mask"], strict=True):
                states.append(row[: int(mask.sum())].clone())
    return states


def train_parser(rows: Sequence[dict], settings: ParserTraining | None = None, shape: DecoderShape | None = None):
    """The parser trained on ``rows`` (``snt``/``amr``), and its tokenizer."""
    settings, shape = settings or ParserTraining(), shape or DecoderShape()
    import torch

    from lsplits.runtime.progress import progress_bar

    random.seed(settings.seed)
    torch.manual_seed(settings.seed)
    rows = list(rows)
    if settings.train_share < 1.0:
        rows = random.Random(settings.seed).sample(rows, max(1, round(len(rows) * settings.train_share)))
    targets = [linearize(row["amr"]) for row in rows]
    model, tokenizer = build_parser(target_vocab(targets), shape)
    states = _encode_sources(model, tokenizer, [row["snt"] for row in rows])
    labels = [tokenizer.encode_target(text)[: shape.max_length] for text in targets]
    decoder = model.decoder
    optimizer = torch.optim.AdamW(decoder.parameters(), lr=settings.learning_rate, weight_decay=0.01)
    steps = settings.epochs * len(_length_batches(labels, settings.batch_size, random.Random(0)))
    warmup = max(1, int(steps * settings.warmup_share))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (steps - step) / max(1, steps - warmup))))
    loss_function = torch.nn.CrossEntropyLoss(ignore_index=-100, label_smoothing=settings.label_smoothing)
    order = random.Random(settings.seed)
    decoder.train()
    bar = progress_bar(total=steps, desc="training the parser", unit="step")
    for epoch in range(settings.epochs):
        total, count = 0.0, 0
        for batch in _length_batches(labels, settings.batch_size, order):
            encoder_states, encoder_mask, inputs, decoder_mask, gold = _batch(states, labels, batch)
            logits = decoder(input_ids=inputs, attention_mask=decoder_mask, encoder_hidden_states=encoder_states,
                             encoder_attention_mask=encoder_mask).logits
            loss = loss_function(logits.reshape(-1, logits.shape[-1]), gold.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(decoder.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            total, count = total + loss.item(), count + 1
            bar.update(1)
        logger.info("epoch %d: training loss %.3f", epoch + 1, total / count)
    bar.close()
    decoder.eval()
    return model, tokenizer


def _length_batches(labels: Sequence[Sequence[int]], size: int, order: random.Random) -> list[list[int]]:
    """Shuffled batches of similar target length (little padding): shuffle, sort within windows of 8 batches,
    cut, shuffle the batches."""
    indices = list(range(len(labels)))
    order.shuffle(indices)
    window = size * 8
    batches = []
    for start in range(0, len(indices), window):
        chunk = sorted(indices[start:start + window], key=lambda i: len(labels[i]))
        batches += [chunk[i:i + size] for i in range(0, len(chunk), size)]
    order.shuffle(batches)
    return batches


def _batch(states, labels, batch: Sequence[int]):
    """Padded encoder states and masks, decoder inputs (``[BOS]`` + target) and gold ids (-100 at padding)."""
    import torch

    width = max(len(states[i]) for i in batch)
    length = max(len(labels[i]) for i in batch)
    hidden = states[batch[0]].shape[-1]
    encoder_states = torch.zeros(len(batch), width, hidden)
    encoder_mask = torch.zeros(len(batch), width, dtype=torch.long)
    inputs = torch.zeros(len(batch), length, dtype=torch.long)
    decoder_mask = torch.zeros(len(batch), length, dtype=torch.long)
    gold = torch.full((len(batch), length), -100, dtype=torch.long)
    for r, i in enumerate(batch):
        encoder_states[r, : len(states[i])] = states[i]
        encoder_mask[r, : len(states[i])] = 1
        target = labels[i]
        inputs[r, : len(target)] = torch.tensor([2, *target[:-1]])
        decoder_mask[r, : len(target)] = 1
        gold[r, : len(target)] = torch.tensor(target)
    return encoder_states, encoder_mask, inputs, decoder_mask, gold
