"""The k-fold scoring pipeline: folds never score their own training data, results come back in
record order from the right fold's model, bad input is refused, and a killed run resumes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from lm_fixtures import kill_when_written, naive_score, pipeline_run_kwargs, tiny_records

from lsplits.errors import ConfigError, DataError
from lsplits.lm import compute_scores, load_causal_lm
from lsplits.lm.pipeline import assign_folds

RUN = pipeline_run_kwargs()


@pytest.fixture(scope="module")
def full_run(tmp_path_factory) -> tuple[pd.DataFrame, Path]:
    """An uninterrupted run: the scores and its cache folder."""
    cache = tmp_path_factory.mktemp("full-run")
    scores = compute_scores(tiny_records(), cache_dir=cache, **RUN)
    (run_dir,) = cache.iterdir()
    return scores, run_dir


def _manifests(run_dir: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(run_dir.glob("fold-*/manifest.json"))]


def test_scores_come_back_in_record_order_with_one_fold_each(full_run):
    scores, _ = full_run
    records = tiny_records()
    assert list(scores.columns) == ["id", "ll_score", "ll_tokens", "fold"]
    assert scores["id"].tolist() == [r["id"] for r in records]
    assert scores["ll_score"].dtype == np.float64 and (scores["ll_score"] < 0).all()
    assert sorted(scores["fold"].value_counts().tolist()) == [15, 15]


def test_no_example_is_scored_by_a_model_trained_on_it(full_run):
    scores, run_dir = full_run
    all_ids = {r["id"] for r in tiny_records()}
    manifests = _manifests(run_dir)
    assert [m["fold"] for m in manifests] == [0, 1]
    scored_sets = [set(m["scored_ids"]) for m in manifests]
    for manifest, scored in zip(manifests, scored_sets, strict=True):
        trained = set(manifest["train_ids"])
        assert not trained & scored
        assert trained | scored == all_ids
        assert set(scores.loc[scores["fold"] == manifest["fold"], "id"]) == scored
        summary = json.loads((run_dir / f"fold-{manifest['fold']}" / "train" / "training.json").read_text())
        assert set(summary["val_ids"]) <= trained and summary["n_train"] + len(summary["val_ids"]) == len(trained)
    assert sum(len(s) for s in scored_sets) == len(all_ids) and set().union(*scored_sets) == all_ids


def test_each_example_is_scored_by_its_own_folds_checkpoint(full_run):
    scores, run_dir = full_run
    records = {r["id"]: r for r in tiny_records()}
    for fold in range(2):
        model, tokenizer = load_causal_lm(run_dir / f"fold-{fold}" / "train" / "best", device="cpu")
        row = scores[scores["fold"] == fold].iloc[0]
        expected, n_tokens = naive_score(model, tokenizer, records[row["id"]]["prompt"],
                                         records[row["id"]]["query"])
        assert row["ll_score"] == pytest.approx(expected, abs=1e-4)
        assert row["ll_tokens"] == n_tokens


def test_folds_are_a_seeded_balanced_assignment():
    folds = assign_folds(10, 3, seed=4)
    assert sorted(np.bincount(folds).tolist()) == [3, 3, 4]
    assert np.array_equal(folds, assign_folds(10, 3, seed=4))
    assert not np.array_equal(folds, assign_folds(10, 3, seed=5))


def test_prompted_setting_scores_with_the_frozen_model(full_run, tmp_path):
    _, run_dir = full_run
    folder = run_dir / "fold-0" / "train" / "best"
    records = tiny_records(6)
    scores = compute_scores(records, lm=str(folder), setting="pt", cache_dir=tmp_path, progress=False)
    model, tokenizer = load_causal_lm(folder, device="cpu")
    expected = [naive_score(model, tokenizer, r["prompt"], r["query"])[0] for r in records]
    np.testing.assert_allclose(scores["ll_score"], expected, atol=1e-4, rtol=0)
    assert (scores["fold"] == -1).all()
    (manifest,) = [json.loads(p.read_text()) for p in tmp_path.glob("*/pretrained/manifest.json")]
    assert manifest["train_ids"] == [] and manifest["scored_ids"] == [r["id"] for r in records]


@pytest.mark.parametrize("kwargs, error, pattern", [
    (dict(lm="scratch", setting="pt"), ConfigError, "needs a pretrained LM"),
    (dict(lm="scratch", setting="zero-shot"), ConfigError, "setting must be 'ft'"),
    (dict(lm="scratch", folds=1), ConfigError, "folds must be between 2"),
    (dict(lm="/no/such/model", setting="pt"), ConfigError, "no such folder /no/such/model"),
])
def test_bad_settings_are_config_errors(kwargs, error, pattern, tmp_path):
    with pytest.raises(error, match=pattern):
        compute_scores(tiny_records(6), cache_dir=tmp_path, progress=False, **kwargs)


def test_bad_records_are_data_errors(tmp_path):
    with pytest.raises(DataError, match="no records"):
        compute_scores([], lm="scratch", cache_dir=tmp_path)
    records = tiny_records(6)
    del records[2]["query"]
    with pytest.raises(DataError, match=r"example 'r002', field 'query': missing field"):
        compute_scores(records, lm="scratch", cache_dir=tmp_path)
    records = tiny_records(6)
    records[4]["id"] = records[1]["id"]
    with pytest.raises(DataError, match=r"example 'r001'.*more than once"):
        compute_scores(records, lm="scratch", cache_dir=tmp_path)


def _finish_in_subprocess(cache_dir: Path, out: Path) -> pd.DataFrame:
    helper = Path(__file__).with_name("lm_fixtures.py")
    subprocess.run([sys.executable, str(helper), str(cache_dir), "finish", str(out)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return pd.read_parquet(out)


@pytest.mark.process
def test_killed_run_resumes_without_recomputing_finished_shards(tmp_path):
    helper = Path(__file__).with_name("lm_fixtures.py")
    cache = tmp_path / "cache"
    kill_when_written([sys.executable, str(helper), str(cache), "hang"],
                      lambda: bool(list(cache.glob("*/fold-0/scores-00000.parquet"))), timeout=120)
    (run_dir,) = cache.iterdir()
    first_shard = run_dir / "fold-0" / "scores-00000.parquet"
    checkpoint_summary = run_dir / "fold-0" / "train" / "training.json"
    assert sorted(p.name for p in run_dir.glob("*/scores-*.parquet")) == [first_shard.name]
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (first_shard, checkpoint_summary)}

    resumed = _finish_in_subprocess(cache, tmp_path / "resumed.parquet")

    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in before} == before
    assert len(list(run_dir.glob("*/scores-*.parquet"))) == 8
    uninterrupted = _finish_in_subprocess(tmp_path / "fresh-cache", tmp_path / "uninterrupted.parquet")
    pd.testing.assert_frame_equal(resumed, uninterrupted, check_exact=True)


def test_cache_is_keyed_by_the_inputs(full_run, tmp_path):
    _, run_dir = full_run
    folder = str(run_dir / "fold-0" / "train" / "best")
    records = tiny_records(4)
    compute_scores(records, lm=folder, setting="pt", cache_dir=tmp_path, progress=False)
    (first,) = tmp_path.iterdir()
    shard = first / "pretrained" / "scores-00000.parquet"
    stamp = shard.stat().st_mtime_ns
    compute_scores(records, lm=folder, setting="pt", cache_dir=tmp_path, progress=False)
    assert shard.stat().st_mtime_ns == stamp and len(list(tmp_path.iterdir())) == 1  # reused
    changed = [dict(r) for r in records]
    changed[3]["query"] += " again"
    rescored = compute_scores(changed, lm=folder, setting="pt", cache_dir=tmp_path, progress=False)
    assert len(list(tmp_path.iterdir())) == 2  # a new entry, not the stale scores
    compute_scores(records, lm=folder, setting="pt", cache_dir=tmp_path, progress=False, shard_size=2)
    assert len(list(tmp_path.iterdir())) == 3
    model, tokenizer = load_causal_lm(folder, device="cpu")
    assert rescored["ll_score"].iloc[3] == pytest.approx(
        naive_score(model, tokenizer, changed[3]["prompt"], changed[3]["query"])[0], abs=1e-4)
