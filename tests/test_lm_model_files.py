"""A broken model is refused before anything is trained or scored: no tokenizer files (transformers would
build an empty tokenizer), weights cut short, a missing folder, an uncached Hub id offline, queries of
0 tokens; scores that are all equal are an error; damaged cached shards and checkpoints are redone."""

from __future__ import annotations

import logging
import re
import shutil

import huggingface_hub.constants
import numpy as np
import pandas as pd
import pytest
import torch
from lm_fixtures import (
    TINY_TRAIN,
    copy_with_accent_stripping_tokenizer,
    copy_with_truncated_weights,
    copy_without_tokenizer,
    pipeline_run_kwargs,
    tiny_model_folder,
    tiny_records,
)

from lsplits.errors import ConfigError, DataError
from lsplits.lm import TrainConfig, compute_scores, encode_pairs, load_causal_lm
from lsplits.lm.model_files import load_tokenizer, model_folder, weights_problem


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tiny_model_folder(tmp_path_factory.mktemp("tiny-lm"))


def test_folder_without_tokenizer_files_is_refused_before_scoring(model_dir, tmp_path):
    from transformers import AutoTokenizer

    broken = copy_without_tokenizer(model_dir, tmp_path / "no-tokenizer")
    # the trap: for such a folder transformers quietly builds a tokenizer that gives no tokens at all
    assert AutoTokenizer.from_pretrained(str(broken))(" a dog sees the ball.", add_special_tokens=False)[
        "input_ids"] == []
    message = rf"^model folder {re.escape(str(broken))} has no tokenizer files \(none of tokenizer\.json, "
    with pytest.raises(ConfigError, match=message):
        load_causal_lm(broken)
    cache = tmp_path / "cache"
    with pytest.raises(ConfigError, match=message):
        compute_scores(tiny_records(6), lm=str(broken), setting="pt", cache_dir=cache, progress=False)
    assert not cache.exists()  # refused before the cache (or anything else) was touched


def test_truncated_weights_are_named_before_loading(model_dir, tmp_path):
    assert weights_problem(model_dir / "model.safetensors") is None
    half = copy_with_truncated_weights(model_dir, tmp_path / "half")
    full_size = (model_dir / "model.safetensors").stat().st_size
    expected = rf"^{re.escape(str(half / 'model.safetensors'))}: the weights file is truncated " \
               rf"\({full_size // 2:,} of {full_size:,} bytes\); download or save the model again$"
    with pytest.raises(ConfigError, match=expected):
        load_causal_lm(half)
    stub = copy_with_truncated_weights(model_dir, tmp_path / "stub", keep=0.0001)
    with pytest.raises(ConfigError, match="shorter than its own header"):
        load_causal_lm(stub)


def test_truncated_pytorch_bin_weights_are_named(model_dir, tmp_path):
    from safetensors.torch import load_file

    folder = tmp_path / "bin"
    shutil.copytree(model_dir, folder)
    weights = folder / "pytorch_model.bin"
    torch.save(load_file(folder / "model.safetensors"), weights)  # the older format, a zip archive
    (folder / "model.safetensors").unlink()
    assert weights.is_file() and weights_problem(weights) is None
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size - 200])
    with pytest.raises(ConfigError, match=rf"{re.escape(str(weights))}: the weights file is truncated or damaged"):
        load_causal_lm(folder)


def test_missing_folder_and_uncached_hub_model_say_which(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"^no such folder \./models/x: give a local model folder or a Hub model id$"):
        load_causal_lm("./models/x")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ConfigError, match=r"^Hub model 'gpt2-medium' is not in the local Hugging Face cache and "
                                          r"downloads are off \(HF_HUB_OFFLINE is set\)"):
        load_causal_lm("gpt2-medium")
    with pytest.raises(ConfigError, match=r"^no folder models/x here, and Hub model 'models/x' is not in the local"):
        load_causal_lm("models/x")


def test_a_cached_hub_model_is_found_offline_and_its_files_checked(model_dir, tmp_path, monkeypatch):
    snapshot = tmp_path / "hub" / "models--org--tiny" / "snapshots" / "abc123"
    copy_with_truncated_weights(model_dir, snapshot)
    (tmp_path / "hub" / "models--org--tiny" / "refs").mkdir()
    (tmp_path / "hub" / "models--org--tiny" / "refs" / "main").write_text("abc123")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    assert model_folder("org/tiny") == snapshot
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(snapshot / 'model.safetensors'))}: .*truncated"):
        load_causal_lm("org/tiny")


def test_query_of_zero_tokens_is_named_before_any_training(model_dir, tmp_path):
    stripping = copy_with_accent_stripping_tokenizer(model_dir, tmp_path / "strip")
    records = tiny_records(6)
    records[3]["query"] = "\u0301"  # a lone combining accent: the tokenizer strips it away
    cache = tmp_path / "cache"
    with pytest.raises(DataError, match=r"^example 'r003', field 'query': the query '\\u0301' gives 0 tokens with "
                                        r"this tokenizer \(1 of 6 queries do\)"):
        compute_scores(records, lm=str(stripping), setting="ft", folds=2, cache_dir=cache,
                       train_config=TrainConfig(**TINY_TRAIN), progress=False)
    assert not cache.exists()  # nothing trained, nothing scored
    tokenizer = load_tokenizer(stripping)
    with pytest.raises(DataError, match=r"^example 'b', field 'query': the query ' \\u0301 ' gives 0 tokens"):
        encode_pairs(tokenizer, ["", "x"], [" a dog", " \u0301 "], max_length=64, ids=["a", "b"])


def test_scratch_run_refuses_an_empty_query_before_training(tmp_path):
    records = tiny_records(8)
    records[6]["query"] = ""
    with pytest.raises(DataError, match=r"^example 'r006', field 'query': the query '' gives 0 tokens"):
        compute_scores(records, cache_dir=tmp_path, **pipeline_run_kwargs())
    assert list(tmp_path.glob("*/tokenizer")) and not list(tmp_path.glob("*/fold-*/train"))


def _flat_model(model_dir, folder):
    """A copy of the tiny model with every weight 0: it gives every token the same probability."""
    from transformers import AutoModelForCausalLM

    shutil.copytree(model_dir, folder)
    model = AutoModelForCausalLM.from_pretrained(str(folder))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
    model.save_pretrained(folder)
    return folder


def test_all_equal_scores_are_an_error_unless_the_queries_are_equal(model_dir, tmp_path, caplog):
    flat = _flat_model(model_dir, tmp_path / "flat")
    records = [{"id": f"q{i}", "prompt": "", "query": letter} for i, letter in enumerate("xyzw")]
    tokenizer = load_tokenizer(flat)
    assert {len(tokenizer(r["query"], add_special_tokens=False)["input_ids"]) for r in records} == {1}
    with pytest.raises(ConfigError, match=r"gives all 4 examples the same score \(-11\.\d+\) although their queries "
                                          r"differ: its tokenizer or weights are broken"):
        compute_scores(records, lm=str(flat), setting="pt", cache_dir=tmp_path / "cache", progress=False)
    same = [{**r, "query": "x"} for r in records]
    with caplog.at_level(logging.WARNING, logger="lsplits.lm.pipeline"):
        scores = compute_scores(same, lm=str(flat), setting="pt", cache_dir=tmp_path / "cache", progress=False)
    assert np.ptp(scores["ll_score"]) == 0 and "every query is the same text" in caplog.text


def _shards(cache):
    return sorted(cache.glob("*/fold-*/scores-*.parquet"))


def test_damaged_cached_shards_are_scored_again_with_a_warning(tmp_path, caplog):
    kwargs = pipeline_run_kwargs()
    first = compute_scores(tiny_records(), cache_dir=tmp_path, **kwargs)
    shards = _shards(tmp_path)
    assert len(shards) == 8
    cut, swapped = shards[1], shards[5]
    cut.write_bytes(cut.read_bytes()[:100])  # a copy cut short
    swapped.write_bytes(shards[6].read_bytes())  # another shard's scores under this name
    untouched = {p: p.stat().st_mtime_ns for p in shards if p not in (cut, swapped)}

    with caplog.at_level(logging.WARNING, logger="lsplits.lm.pipeline"):
        again = compute_scores(tiny_records(), cache_dir=tmp_path, **kwargs)

    assert f"cached score shard {cut} is damaged (it cannot be read" in caplog.text
    assert f"cached score shard {swapped} is damaged (it holds other examples" in caplog.text
    assert {p: p.stat().st_mtime_ns for p in untouched} == untouched
    pd.testing.assert_frame_equal(again, first, check_exact=False, atol=1e-6, rtol=0)


def test_damaged_fold_checkpoint_is_trained_again(tmp_path, caplog):
    kwargs = pipeline_run_kwargs()
    first = compute_scores(tiny_records(), cache_dir=tmp_path, **kwargs)
    (run_dir,) = tmp_path.iterdir()
    weights = run_dir / "fold-0" / "train" / "best" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    for shard in (run_dir / "fold-0").glob("scores-*.parquet"):
        shard.unlink()  # so that fold 0 needs its model again

    with caplog.at_level(logging.WARNING, logger="lsplits.lm.pipeline"):
        again = compute_scores(tiny_records(), cache_dir=tmp_path, **kwargs)

    assert f"cached checkpoint is damaged ({weights}: the weights file is truncated" in caplog.text
    assert weights_problem(weights) is None
    pd.testing.assert_frame_equal(again, first, check_exact=False, atol=1e-5, rtol=0)


def test_a_tokenizer_larger_than_the_embedding_is_refused_before_any_work(model_dir, tmp_path):
    from transformers import AutoTokenizer

    from lsplits.difficulty.tasks import CLASSIFICATION, TaskKind, check_model

    grown = tmp_path / "grown"
    shutil.copytree(model_dir, grown)
    tokenizer = AutoTokenizer.from_pretrained(str(grown))
    rows = len(tokenizer)
    tokenizer.add_tokens(["<kumquat>", "<quokka>"])  # ids rows and rows + 1: past the embedding's last row
    tokenizer.save_pretrained(grown)
    records = tiny_records(6)
    records[2]["query"] = "a dog sees the <quokka>"
    expected = (rf"the tokenizer of '{re.escape(str(grown))}' has {rows + 2:,} tokens but the model's embedding has "
                rf"{rows:,} rows \(vocab_size\), so token ids {rows:,} and up cannot be looked up")
    cache = tmp_path / "cache"
    with pytest.raises(ConfigError, match="^" + expected):
        compute_scores(records, lm=str(grown), setting="pt", cache_dir=cache, progress=False)
    assert not cache.exists()  # refused before anything was cached
    with pytest.raises(ConfigError, match="^" + expected):
        load_causal_lm(grown)
    with pytest.raises(ConfigError, match=rf"^models {re.escape(str(grown))}: " + expected):
        check_model(str(grown), TaskKind(CLASSIFICATION, ("text",), "label", "text"))
