"""Tiny texts, records and a naive scorer shared by the LM tests (not a test module itself).

Also run as a script by the resume test: ``python lm_fixtures.py CACHE_DIR`` computes the pipeline
scores of :func:`tiny_records` and, after writing its first score shard, sleeps until killed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

SUBJECTS = ["the cat", "a dog", "my friend", "the old man", "a small bird", "the teacher"]
VERBS = ["sees", "likes", "chases", "finds", "paints", "follows"]
OBJECTS = ["the ball", "a red car", "the garden", "an apple", "the river", "a green box"]


def tiny_sentences(n: int = 36) -> list[str]:
    """``n`` short distinct sentences from a small grammar (deterministic)."""
    return [f"{SUBJECTS[i % 6]} {VERBS[(i // 6) % 6]} {OBJECTS[(i * 5) % 6]} today."
            for i in range(n)]


def tiny_records(n: int = 30) -> list[dict[str, str]]:
    """Records with short prompts (some empty) and short queries, as the pipeline takes them."""
    sentences = tiny_sentences(n)
    records = []
    for i, sentence in enumerate(sentences):
        prompt = "" if i % 5 == 0 else f"Premise: {sentences[(i + 7) % n]} Say more:"
        records.append({"id": f"r{i:03d}", "prompt": prompt, "query": " " + sentence})
    return records


TINY_SCRATCH = dict(vocab_size=300, min_frequency=1, n_layer=1, n_head=2, n_embd=32)
TINY_TRAIN = dict(batch_size=8, max_steps=4, eval_every=2, warmup_steps=0)


def tiny_model_folder(folder: Path) -> Path:
    """A tiny GPT-2 and its BPE tokenizer saved under ``folder`` in Hub layout; returns the model folder."""
    from lsplits.lm.scratch import ScratchConfig, build_scratch_lm

    build_scratch_lm(tiny_sentences(), folder, ScratchConfig(**TINY_SCRATCH), n_positions=64)
    return folder / "model"


def copy_without_tokenizer(model: Path, dest: Path) -> Path:
    """A copy of a model folder with its tokenizer files removed (config and weights kept)."""
    shutil.copytree(model, dest)
    for path in dest.glob("tokenizer*"):
        path.unlink()
    return dest


def copy_with_truncated_weights(model: Path, dest: Path, keep: float = 0.5) -> Path:
    """A copy of a model folder whose ``model.safetensors`` is cut to ``keep`` of its size."""
    shutil.copytree(model, dest)
    weights = dest / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:int(weights.stat().st_size * keep)])
    return dest


def copy_with_accent_stripping_tokenizer(model: Path, dest: Path) -> Path:
    """A copy whose tokenizer strips accents and outer spaces first (as uncased BERT-style ones do), so
    a query made of a lone combining accent (``"\u0301"``) gives 0 tokens."""
    from tokenizers import normalizers
    from transformers import AutoTokenizer

    shutil.copytree(model, dest)
    tokenizer = AutoTokenizer.from_pretrained(str(dest))
    tokenizer.backend_tokenizer.normalizer = normalizers.Sequence(
        [normalizers.NFD(), normalizers.StripAccents(), normalizers.Strip()])
    tokenizer.save_pretrained(dest)
    return dest


def kill_when_written(command: list[str], written: Callable[[], bool], *, timeout: float = 180,
                      env: dict[str, str] | None = None) -> None:
    """Start ``command`` in its own session, wait until ``written()`` holds, then kill its whole process group.

    Fails the test if the child exits first or ``written()`` never holds within ``timeout`` seconds.
    """
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                             env=env)
    try:
        deadline = time.monotonic() + timeout
        while not written():
            assert child.poll() is None, child.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the child never wrote a shard"
            time.sleep(0.05)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def pipeline_run_kwargs() -> dict:
    """``compute_scores`` settings of the pipeline tests: scratch LM, 2 folds, shards of 4 examples."""
    from lsplits.lm import ScratchConfig, TrainConfig

    return dict(lm="scratch", folds=2, seed=0, train_config=TrainConfig.scratch(**TINY_TRAIN),
                scratch_config=ScratchConfig(**TINY_SCRATCH), shard_size=4, progress=False)


def naive_sequence_logprobs(model, ids: list[int]) -> torch.Tensor:
    """log p(ids[t] | ids[:t]) for t = 1..len-1: one unpadded forward pass and a full log_softmax."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0].double()
    logprobs = torch.log_softmax(logits, dim=-1)
    return logprobs[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]


def naive_score(model, tokenizer, prompt: str, query: str) -> tuple[float, int]:
    """Sum of log-probs of the query tokens and EOS after ``[BOS] + prompt``, and their count."""
    bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    query_ids = tokenizer(query, add_special_tokens=False)["input_ids"]
    ids = [bos, *prompt_ids, *query_ids, eos]
    per_token = naive_sequence_logprobs(model, ids)
    return float(per_token[len(prompt_ids):].sum()), len(query_ids) + 1


def _run(cache_dir: str, mode: str, out: str | None = None) -> None:
    """Compute pipeline scores in a fresh process (resume test).

    ``hang``: sleep for good after the first shard is written (the test kills the process);
    ``finish``: run to the end and write the scores to ``out``. Both kinds of run happen in clean
    processes so that no library loaded by other tests (which may change floating-point state)
    makes the interrupted and the uninterrupted run differ.
    """
    import lsplits.lm.pipeline as pipeline

    if mode == "hang":
        write = pipeline.atomic_write_parquet

        def write_then_hang(path, table):
            write(path, table)
            time.sleep(600)

        pipeline.atomic_write_parquet = write_then_hang
    scores = pipeline.compute_scores(tiny_records(), cache_dir=cache_dir, **pipeline_run_kwargs())
    if out is not None:
        scores.to_parquet(out)


if __name__ == "__main__":
    _run(*sys.argv[1:])
