"""Tiny task models, tiny built datasets and a kill helper for the ``lsplits difficulty`` tests (not a test module).

The models are random-weight BERT / T5 configs a few thousand parameters big, with tokenizers trained
offline on the fixture text (``tokenizers``), saved with ``save_pretrained`` so they load through the
same ``from_pretrained(folder)`` path as a Hub model. The datasets are built by the real
``lsplits build`` (scratch LM, 2 steps), so the tests read exactly what users get.

Run as a script by the resume tests: ``python difficulty_fixtures.py MODE ARGV...`` runs
``lsplits ARGV`` in this fresh process and, in mode ``after-config``, sleeps for good once the first
config's ``result.json`` is written (``after-checkpoint``: once the first training checkpoint is),
so the test can kill it at a known point.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

SUBJECTS = ["a man", "a woman", "two dogs", "the child", "a cyclist", "an old lady"]
VERBS = ["runs", "sleeps", "eats", "sings", "reads", "waits"]
PLACES = ["in a park", "at home", "on a bus", "near the river", "in the rain"]
NLI = ["entailment", "neutral", "contradiction"]


def snli_rows(n: int = 60) -> list[dict]:
    """``n`` SNLI-format pairs (official field names) from a small grammar, labels cycling."""
    rows = []
    for i in range(n):
        premise = f"{SUBJECTS[i % 6]} {VERBS[(i // 6) % 6]} {PLACES[i % 5]}."
        hypothesis = f"{SUBJECTS[(i + 1) % 6]} {VERBS[(i * 7) % 6]}" + (" quickly" if i % 4 == 0 else "") + "."
        rows.append({"sentence1": premise, "sentence2": hypothesis, "gold_label": NLI[i % 3], "pairID": str(i)})
    return rows


TABLES = ["singer", "concert", "stadium"]
COLUMNS = ["name", "age", "country"]


def spider_rows(n: int = 48) -> list[dict]:
    """``n`` Spider-format examples over three tables, four query shapes (easy to extra hard)."""
    rows = []
    for i in range(n):
        table, column, other = TABLES[i % 3], COLUMNS[i % 3], COLUMNS[(i + 1) % 3]
        shape = i % 4
        if shape == 0:
            question, query = f"How many {table}s are there?", f"SELECT count(*) FROM {table}"
        elif shape == 1:
            question, query = f"What is the {column} of every {table}?", f"SELECT {column} FROM {table}"
        elif shape == 2:
            question = f"Which {table} has the largest {column}?"
            query = f"SELECT {other} FROM {table} ORDER BY {column} DESC LIMIT 1"
        else:
            question = f"List the {column} of {table}s with {other} above the average."
            query = f"SELECT {column} FROM {table} WHERE {other} > (SELECT avg({other}) FROM {table})"
        rows.append({"db_id": "music", "question": question, "query": query})
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def build_dataset(root: Path, builder: str, rows: list[dict], configs: tuple[str, ...] = ("random", "ll_split"),
                  eval_size: int = 16, lm: str = "scratch") -> Path:
    """Run the real ``lsplits build BUILDER`` on ``rows`` (``lm``, 2 steps); returns the built folder."""
    from lsplits.cli.parser import main

    data = write_jsonl(root / f"{builder}.jsonl", rows)
    out = root / f"{builder}-built"
    code = main(["build", builder, "--data-files", str(data), "--lm", lm, "--max-steps", "2",
                 "--configs", *configs, "--eval-size", str(eval_size), "--out", str(out),
                 "--cache-dir", str(root / "cache"), "--no-progress"])
    assert code == 0
    return out


def tiny_classifier(folder: Path, texts: list[str], dropout: float = 0.1) -> Path:
    """A 1-layer BERT (hidden 32) with a WordPiece tokenizer trained on ``texts``, saved to ``folder``.

    With ``dropout=0`` several processes train the same model as one (no per-process dropout masks).
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    wordpiece = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wordpiece.normalizer = normalizers.BertNormalizer(lowercase=True)
    wordpiece.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wordpiece.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=300, special_tokens=specials,
                                                                   show_progress=False))
    cls, sep = wordpiece.token_to_id("[CLS]"), wordpiece.token_to_id("[SEP]")
    wordpiece.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    wordpiece.decoder = decoders.WordPiece()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=wordpiece, unk_token="[UNK]", pad_token="[PAD]",
                                        cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]", model_max_length=128)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, pad_token_id=tokenizer.pad_token_id,
                        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_seq2seq(folder: Path, texts: list[str]) -> Path:
    """A 1-layer T5 (d_model 32) with a word-level tokenizer trained on ``texts``, saved to ``folder``."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    words = Tokenizer(models.WordLevel(unk_token="<unk>"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    words.train_from_iterator(texts, trainers.WordLevelTrainer(special_tokens=["<pad>", "</s>", "<unk>"],
                                                               show_progress=False))
    words.post_processor = processors.TemplateProcessing(single="$A </s>",
                                                         special_tokens=[("</s>", words.token_to_id("</s>"))])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=words, pad_token="<pad>", eos_token="</s>",
                                        unk_token="<unk>", model_max_length=128)
    config = T5Config(vocab_size=len(tokenizer), d_model=32, d_kv=16, d_ff=64, num_layers=1, num_heads=2,
                      decoder_start_token_id=tokenizer.pad_token_id, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=tokenizer.eos_token_id)
    T5ForConditionalGeneration(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _hang_after_first(mode: str) -> None:
    """Make the first finished config (or the first checkpoint) the last thing this process does."""
    from lsplits.difficulty import train

    if mode == "after-config":
        write = train.atomic_write_text

        def write_then_hang(path, text):
            write(path, text)
            if Path(path).name == train.RESULT_FILE:
                time.sleep(600)

        train.atomic_write_text = write_then_hang
    elif mode == "after-checkpoint":
        original = train._Trainer._write_checkpoint

        def checkpoint_then_hang(self, improved):
            original(self, improved)
            time.sleep(600)

        train._Trainer._write_checkpoint = checkpoint_then_hang


if __name__ == "__main__":
    from lsplits.cli.parser import main

    _hang_after_first(sys.argv[1])
    sys.exit(main(sys.argv[2:]))
