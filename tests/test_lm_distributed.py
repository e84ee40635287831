"""Scoring and k-fold training on several processes: two gloo processes under ``accelerate launch``
equal one process, a killed two-process run leaves no worker running and resumes without losing a
finished shard, and the batch slicing gives every process its share of the one-process gradient."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from lm_fixtures import TINY_SCRATCH, tiny_records, tiny_sentences
from lm_launch_helper import launch_run_kwargs

from lsplits.cli.parser import main as cli_main
from lsplits.errors import ConfigError
from lsplits.lm import compute_scores
from lsplits.lm.encode import encode_pairs
from lsplits.lm.finetune import _process_slice
from lsplits.lm.scoring import QueryLogProbs, pad_pairs
from lsplits.lm.scratch import ScratchConfig, build_scratch_lm

HELPER = Path(__file__).with_name("lm_launch_helper.py")


def _launch_two(args: list[str], env: dict[str, str] | None = None, **popen) -> subprocess.Popen:
    """``accelerate launch --multi_gpu --num_processes 2 ARGS``: two gloo processes on this CPU.

    (``--cpu`` would start a single process.) One thread per process, as torchrun sets it anyway.
    """
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "PASSIVE", **(env or {})}
    command = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
               "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
               "--main_process_port", str(29500 + os.getpid() % 1000), *args]
    return subprocess.Popen(command, env=env, cwd=Path(__file__).parent, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, **popen)


def _finish(process: subprocess.Popen, timeout: float = 120) -> str:
    _, stderr = process.communicate(timeout=timeout)
    assert process.returncode == 0, stderr[-3000:]
    return stderr


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tiny-lm")
    build_scratch_lm(tiny_sentences(), folder, ScratchConfig(**TINY_SCRATCH), n_positions=64)
    return folder / "model"


@pytest.mark.process
def test_two_process_cli_score_equals_one_process(tiny_folder, tmp_path, monkeypatch):
    sentences = tiny_sentences()
    # 8,200 examples make 3 shards of the CLI's 4,096, so both processes write some.
    with (tmp_path / "pairs.jsonl").open("w") as out:
        for i in range(8200):
            out.write(json.dumps({"premise": sentences[i % 36], "hypothesis": " " + sentences[(i * 7) % 36]
                                  + " " * (i % 3)}) + "\n")
    common = ["score", "--data-files", str(tmp_path / "pairs.jsonl"), "--query-field", "hypothesis",
              "--prompt-template", "Premise: {premise} Say:", "--lm", str(tiny_folder), "--setting", "pt",
              "--no-progress"]
    launch = _launch_two(["-m", "lsplits", *common, "--cache-dir", str(tmp_path / "two"),
                          "--out", str(tmp_path / "two.parquet")])
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    torch_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert cli_main([*common, "--cache-dir", str(tmp_path / "one"), "--out", str(tmp_path / "one.parquet")]) == 0
    finally:
        torch.set_num_threads(torch_threads)
    stderr = _finish(launch)

    one, two = pd.read_parquet(tmp_path / "one.parquet"), pd.read_parquet(tmp_path / "two.parquet")
    assert len(one) == 8200
    assert two["id"].tolist() == one["id"].tolist()
    np.testing.assert_allclose(two["ll_score"], one["ll_score"], atol=1e-5, rtol=0)
    assert two["ll_tokens"].tolist() == one["ll_tokens"].tolist() and (two["fold"] == -1).all()
    (run_json,) = (tmp_path / "two").glob("*/run.json")
    assert json.loads(run_json.read_text())["world_size"] == 2
    assert "wrote score shard 1 of 3 (process 0 of 2)" in stderr
    assert "wrote score shard 2 of 3 (process 1 of 2)" in stderr
    assert "wrote score shard 3 of 3 (process 0 of 2)" in stderr


def _shards(cache: Path) -> dict[Path, tuple[int, int]]:
    return {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in sorted(cache.glob("*/fold-*/scores-*.parquet"))}


def _children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``, read from /proc."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            children.append(int(stat.parent.name))
    return children


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (dead, waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.process
def test_killed_two_process_kfold_run_leaves_no_worker_and_resumes_equal_to_one_process(tmp_path):
    cache = tmp_path / "two"
    killed = _launch_two([str(HELPER), str(cache), str(tmp_path / "killed.parquet"), "--hang"],
                         start_new_session=True)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while not _shards(cache):
            assert killed.poll() is None, killed.stderr.read()[-3000:]
            assert time.monotonic() < deadline, "the launch never wrote a shard"
            time.sleep(0.05)
        time.sleep(1.0)  # let the other process write its first shard too (or not: either is fine)
        workers = _children(killed.pid)
    finally:
        os.killpg(killed.pid, signal.SIGKILL)  # the launcher's group: torchrun starts workers in sessions of their own
        killed.wait()
        deadline = time.monotonic() + 10
        while any(map(_running, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [pid for pid in workers if _running(pid)]
        for pid in left:  # never leave them running, even when the check below fails
            os.kill(pid, signal.SIGKILL)
    assert len(workers) == 2, workers
    assert not left, f"workers {left} were still running 10 s after their launcher was killed"
    finished = _shards(cache)
    assert 1 <= len(finished) <= 2 and all(p.parent.name == "fold-0" for p in finished)
    (run_dir,) = cache.iterdir()
    assert (run_dir / "fold-0" / "train" / "training.json").exists()
    assert not (run_dir / "fold-1" / "train").exists()

    expected = compute_scores(tiny_records(), cache_dir=tmp_path / "one", **launch_run_kwargs())
    _finish(_launch_two([str(HELPER), str(cache), str(tmp_path / "resumed.parquet")]))

    after = _shards(cache)
    assert len(after) == 8  # 2 folds x 15 examples in shards of 4
    assert {p: after[p] for p in finished} == finished  # no finished shard was redone
    resumed = pd.read_parquet(tmp_path / "resumed.parquet")
    assert resumed["id"].tolist() == expected["id"].tolist()
    assert resumed["fold"].tolist() == expected["fold"].tolist()
    assert resumed["ll_tokens"].tolist() == expected["ll_tokens"].tolist()
    np.testing.assert_allclose(resumed["ll_score"], expected["ll_score"], atol=1e-5, rtol=0)
    assert json.loads((run_dir / "run.json").read_text())["world_size"] == 2
    all_ids = {r["id"] for r in tiny_records()}
    for fold in (0, 1):
        manifest = json.loads((run_dir / f"fold-{fold}" / "manifest.json").read_text())
        trained, scored = set(manifest["train_ids"]), set(manifest["scored_ids"])
        assert not trained & scored and trained | scored == all_ids
        assert set(resumed.loc[resumed["fold"] == fold, "id"]) == scored


def test_process_slices_add_up_to_the_one_process_gradient(tmp_path):
    model, tokenizer = build_scratch_lm(tiny_sentences(), tmp_path / "lm", ScratchConfig(**TINY_SCRATCH, dropout=0.0),
                                        n_positions=64)
    records = tiny_records(5)
    batch = encode_pairs(tokenizer, [r["prompt"] for r in records], [r["query"] for r in records], max_length=64)
    wrapper = QueryLogProbs(model)

    def gradient(pairs, weight=None) -> torch.Tensor:
        model.zero_grad()
        padded = pad_pairs(pairs)
        logprobs = wrapper(padded.input_ids, padded.attention_mask, padded.position_ids, padded.scored)
        (-logprobs.mean() if weight is None else -logprobs.sum() * weight).backward()
        return torch.cat([p.grad.flatten() for p in model.parameters()])

    whole = gradient(batch)
    world = 3
    slices = [_process_slice(batch, rank, world) for rank in range(world)]
    assert sorted(id(p) for pairs, _ in slices for p in pairs) == sorted(id(p) for p in batch)
    averaged = sum(gradient(pairs, weight) for pairs, weight in slices) / world  # what DDP computes
    torch.testing.assert_close(averaged, whole, atol=1e-7, rtol=1e-5)

    # a batch smaller than the world: the idle process runs one example at weight 0
    pairs, weight = _process_slice(batch[:2], 2, world)
    assert pairs == batch[:1] and weight == 0.0
    assert _process_slice(batch[:2], 1, world) == ([batch[1]], world / sum(p.n_scored for p in batch[:2]))


def test_several_processes_without_a_cache_folder_is_a_config_error(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ConfigError, match=r"needs a cache folder \(cache_dir\)"):
        compute_scores(tiny_records(4), lm="scratch", folds=2, progress=False)


@pytest.mark.process
def test_sigterm_to_a_two_process_launch_is_one_line_and_leaves_no_worker_or_temporary_folder(tiny_folder,
                                                                                              tmp_path):
    """A scheduler's ``kill LAUNCHER``: torchrun passes SIGTERM on to both processes, each unwinds (temporary
    folders removed) and exits 143, and the user reads the lsplits line once (rank 0's), with no lsplits traceback."""
    sentences = tiny_sentences()
    with (tmp_path / "pairs.jsonl").open("w") as out:
        for i in range(40000):
            out.write(json.dumps({"premise": sentences[i % 36], "hypothesis": " " + sentences[(i * 7) % 36]
                                  + " x" * (i % 5)}) + "\n")
    cache, tmp = tmp_path / "cache", tmp_path / "tmp"
    tmp.mkdir()
    launch = _launch_two(["-m", "lsplits", "score", "--data-files", str(tmp_path / "pairs.jsonl"), "--query-field",
                          "hypothesis", "--prompt-template", "Premise: {premise} Say:", "--lm", str(tiny_folder),
                          "--setting", "pt", "--no-progress", "--cache-dir", str(cache),
                          "--out", str(tmp_path / "scores.parquet")],
                         env={"TMPDIR": str(tmp), "HF_HUB_OFFLINE": "1"}, start_new_session=True)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while not list(cache.glob("*/*/scores-*.parquet")):
            assert launch.poll() is None, launch.stderr.read()[-3000:]
            assert time.monotonic() < deadline, "the launch never wrote a shard"
            time.sleep(0.05)
        workers = _children(launch.pid)
        launch.send_signal(signal.SIGTERM)
        _, stderr = launch.communicate(timeout=120)
    finally:
        if launch.poll() is None:
            os.killpg(launch.pid, signal.SIGKILL)
            launch.wait()
        deadline = time.monotonic() + 10
        while any(map(_running, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [pid for pid in workers if _running(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    assert len(workers) == 2 and not left, (workers, left)
    said = [line for line in stderr.splitlines() if line.startswith("lsplits score:")]
    assert said == [f"lsplits score: terminated (SIGTERM); finished score shards and fold checkpoints are cached in "
                    f"{cache}, and a rerun resumes from them"], stderr[-3000:]
    lsplits_frames = [line for line in stderr.splitlines() if line.strip().startswith("File ") and "/lsplits/" in line]
    assert not lsplits_frames, stderr[-3000:]  # the launcher's own SignalException traceback is torch's
    assert not [p.name for p in tmp.iterdir() if p.name.startswith("lsplits")]
    assert not (tmp_path / "scores.parquet").exists()
