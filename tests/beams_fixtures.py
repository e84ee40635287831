"""A tiny seq2seq AMR "parser" trained here from scratch, for the beam-generation tests (not a test module).

:func:`build_tiny_parser` trains a one-layer BART with a word-level tokenizer (built offline with
``tokenizers``) on a few sentence -> PENMAN pairs for a few seconds, and saves both with
``save_pretrained``, so ``lsplits beams FOLDER ...`` loads it like a Hub model. Its beams hold the
memorised graph first and then worse, sometimes malformed, variants: what a real parser's beams look like.

Run as a script by the resume test: ``python beams_fixtures.py hang ARGV...`` runs ``lsplits ARGV``
in this process and sleeps for good once it has written its first beam shard, so it can be killed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

PAIRS = [
    ("the boy wants to go", "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"),
    ("the dog runs", "(r / run-01 :ARG0 (d / dog))"),
    ("the cat sleeps quietly", "(s / sleep-01 :ARG0 (c / cat) :manner (q / quiet))"),
    ("the girl eats an apple", "(e / eat-01 :ARG0 (g / girl) :ARG1 (a / apple))"),
    ("the boy runs", "(r / run-01 :ARG0 (b / boy))"),
    ("the girl sleeps", "(s / sleep-01 :ARG0 (g / girl))"),
    ("the dog eats an apple", "(e / eat-01 :ARG0 (d / dog) :ARG1 (a / apple))"),
    ("the cat wants to run", "(w / want-01 :ARG0 (c / cat) :ARG1 (r / run-01 :ARG0 c))"),
]
UNSEEN = ["the dog wants to go", "the cat runs", "the boy eats an apple", "the girl runs quietly"]


def build_tiny_parser(folder: Path, *, steps: int = 120, seed: int = 0) -> Path:
    """Train the tiny BART on :data:`PAIRS` and save model and tokenizer into ``folder``; returns it."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import BartConfig, BartForConditionalGeneration, PreTrainedTokenizerFast

    words = Tokenizer(models.WordLevel(unk_token="<unk>"))
    words.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                   pre_tokenizers.Split("(", "isolated"),
                                                   pre_tokenizers.Split(")", "isolated")])
    words.decoder = decoders.WordPiece(prefix="##")  # joins the words with spaces
    words.train_from_iterator([text for pair in PAIRS for text in pair] + UNSEEN,
                              trainers.WordLevelTrainer(special_tokens=["<s>", "<pad>", "</s>", "<unk>"]))
    words.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 2)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=words, bos_token="<s>", pad_token="<pad>",
                                        eos_token="</s>", unk_token="<unk>")
    config = BartConfig(vocab_size=len(tokenizer), d_model=32, encoder_layers=1, decoder_layers=1,
                        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                        decoder_ffn_dim=64, max_position_embeddings=64, pad_token_id=1, bos_token_id=0,
                        eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2, dropout=0.0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a model this small trains fastest on one thread
    try:
        torch.manual_seed(seed)
        model = BartForConditionalGeneration(config)
        optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
        inputs = tokenizer([s for s, _ in PAIRS], padding=True, return_tensors="pt")
        labels = tokenizer([g for _, g in PAIRS], padding=True, return_tensors="pt").input_ids
        labels[labels == tokenizer.pad_token_id] = -100
        for _ in range(steps):
            loss = model(**inputs, labels=labels).loss
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    finally:
        torch.set_num_threads(threads)
    model.eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _hang_after_first_shard(argv: list[str]) -> None:
    import lsplits.io.atomic as atomic_io
    from lsplits.cli.parser import main

    write = atomic_io.atomic_write_text

    def write_then_hang(path, text):
        write(path, text)
        if Path(path).name.startswith("beams-"):
            time.sleep(600)

    atomic_io.atomic_write_text = write_then_hang
    sys.exit(main(argv))


if __name__ == "__main__":
    if sys.argv[1] == "hang":
        _hang_after_first_shard(sys.argv[2:])
