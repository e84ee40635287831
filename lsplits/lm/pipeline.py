"""Score every example of a dataset in the prompted or the k-fold fine-tuned setting.

Flow for ``setting="ft"``: assign each example to one of ``folds`` folds (seeded permutation); for
each fold, train a model on the other folds (fine-tune a pretrained LM, or train the scratch LM from
random weights), then score the fold's examples with it. ``setting="pt"`` scores everything with a
frozen pretrained LM. Each fold writes a manifest of the ids it trained on and the ids it scored,
and the code refuses to go on if they overlap.

Caching and resume: everything lives under ``cache_dir/<content hash>/``, the hash covering the
records, LM, setting, folds, seed, compute dtype, shard size and training/scratch configs (and, for a local model
folder, the names, sizes and modification times of its files). Scores are written as parquet
shards of ``shard_size`` examples with atomic writes, and a fold's finished checkpoint is kept, so
a killed run started again reuses every finished shard and checkpoint and computes only the rest.
A cached shard that cannot be read or holds other examples, and a checkpoint whose weights are cut
short, are computed again, with a warning that names the file.

Before anything is trained or scored, a pretrained model's files are checked (:func:`check_lm`); after
scoring, scores that are all equal although the queries differ are refused (:func:`check_scores_differ`).

Several processes (``accelerate launch`` / ``torchrun``; see :mod:`lsplits.lm.distributed`): all of
them train each fold's model together (data parallel, same training as one process, see
:mod:`lsplits.lm.finetune`), then the fold's missing shards are dealt round-robin between them and
each process writes its own; after a barrier every process reads all shards back in record order.
The cache folder is how results travel, so it must be one folder all processes can reach (on
several machines: a shared file system). Rank 0 alone writes the shared files (run.json,
manifests, tokenizer, checkpoints).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lsplits.data.tasks import DEFAULT_SETTING
from lsplits.errors import ConfigError, DataError, InvalidOption, SplitInvariantError
from lsplits.io.atomic import atomic_write_parquet, atomic_write_text
from lsplits.io.storage import check_writable
from lsplits.lm.defaults import DEFAULT_FOLDS
from lsplits.lm.distributed import barrier, is_main, launched, main_first, process_device, rank, world_size
from lsplits.lm.dtype import DEFAULT_DTYPE
from lsplits.lm.encode import check_queries, pair_lengths
from lsplits.lm.finetune import BEST_FOLDER, SUMMARY_FILE, Stopped, finetune
from lsplits.lm.model_files import (
    check_model_files,
    check_vocabulary,
    first_line,
    load_tokenizer,
    weight_files,
    weights_problem,
)
from lsplits.lm.plan import SCRATCH, RunPlan
from lsplits.lm.scoring import load_causal_lm, resolve_device, score_pairs
from lsplits.lm.scratch import ScratchConfig, scratch_model, scratch_tokenizer, window_for
from lsplits.lm.shards import folder_fingerprint, missing_shards, split_into_shards, this_process_share
from lsplits.lm.training import TrainConfig
from lsplits.params import check
from lsplits.runtime.progress import progress_bar
from lsplits.runtime.stages import stage
from lsplits.runtime.tempfolders import temporary_folder

logger = logging.getLogger(__name__)

DEFAULT_SHARD_SIZE = 4096
CACHE_VERSION = 1
"""Bump when a change would make previously cached scores wrong."""

_SHARD_COLUMNS = ["position", "id", "ll_score", "ll_tokens", "fold"]
STOPPED_ATTR = "fold_training"
"""The key of :func:`compute_scores`' ``DataFrame.attrs`` that lists each fold's :class:`~lsplits.lm.finetune.Stopped`
(as a dict, with its ``fold``): what a build records per fold in ``lsplits.json`` and its card."""


def compute_scores(records: Sequence[Mapping[str, Any]], *, lm: str | Path | None = None,
                   setting: str = DEFAULT_SETTING, folds: int = DEFAULT_FOLDS, seed: int = 0,
                   cache_dir: str | Path | None = None,
                   train_config: TrainConfig | None = None, progress: bool = True,
                   scratch_config: ScratchConfig | None = None, max_steps: int | None = None,
                   plan: RunPlan | None = None, shard_size: int = DEFAULT_SHARD_SIZE,
                   token_budget: int | None = None, device: str | None = None,
                   compile: bool = False, dtype: str = DEFAULT_DTYPE) -> pd.DataFrame:
    """Log-likelihood score of every record's query given its prompt.

    Args:
        records: dicts with ``id``, ``prompt`` and ``query`` (texts without BOS/EOS); ids unique.
        lm: ``"scratch"`` (small GPT-2 and BPE tokenizer trained on these records), a Hub id or a
            local model folder.
        setting: ``"ft"`` (k-fold training, the default) or ``"pt"`` (frozen pretrained LM).
        folds: number of folds for ``"ft"`` (at least 2).
        seed: seeds the fold assignment and the scratch model's initial weights.
        cache_dir: where shards and checkpoints are kept for reuse (default: a temporary folder).
        train_config: default ``TrainConfig.scratch()`` for ``"scratch"``, else ``TrainConfig()``.
        progress: show progress bars (:mod:`lsplits.runtime.progress`).
        scratch_config: sizes of the scratch tokenizer and model (default ``ScratchConfig()``).
        max_steps: training steps instead of the training config's.
        plan: the settled run (:class:`~lsplits.lm.plan.RunPlan`) instead of ``lm`` ... ``max_steps``.
        shard_size: examples per cached parquet shard.
        token_budget: padded tokens per scoring batch (does not change the scores; default: the device's).
        device: where scoring runs (default: CUDA when available; this process's GPU under a launcher).
        compile: run the scoring models through ``torch.compile`` (worth it on long GPU runs).
        dtype: ``auto``, ``fp32`` or ``bf16`` (:mod:`lsplits.lm.dtype`), when no ``plan`` is given; the
            plan's, settled once for this device, trains and scores every fold and keys the cache.

    Returns:
        DataFrame with columns ``id``, ``ll_score`` (float64), ``ll_tokens`` (int64), ``fold`` (the
        fold that scored the example; -1 in the ``"pt"`` setting), in the order of ``records``; in the
        ``"ft"`` setting its ``attrs[STOPPED_ATTR]`` lists where each fold's training stopped and why
        (:meth:`_Job.fold_stops`).

    Raises:
        DataError: a record lacks a field, ids repeat, no records, a query exceeds the model window.
        ConfigError: bad setting or fold count, ``"pt"`` with the scratch LM, a model that cannot be
            loaded or is not causal, several processes without a ``cache_dir``.
        SplitInvariantError: a model would score an example it trained on.
    """
    ids, prompts, queries = record_columns(records)
    plan = plan_of(plan, lm=lm, setting=setting, folds=folds, seed=seed, train_config=train_config,
                   scratch_config=scratch_config, max_steps=max_steps, dtype=dtype)
    lm = plan.lm
    _check_run(plan, records, n_records=len(ids), shard_size=shard_size, token_budget=token_budget,
               cache_dir=cache_dir)
    world = world_size()
    device = device or process_device()
    precision = plan.resolved_dtype(resolve_device(device))

    with temporary_folder(prefix="lsplits-scores-") as tmp:
        key = _cache_key(ids, prompts, queries, plan, shard_size=shard_size, precision=precision)
        run_dir = Path(cache_dir if cache_dir is not None else tmp) / key
        run_dir.mkdir(parents=True, exist_ok=True)
        job = _Job(run_dir, ids, prompts, queries, plan=plan, shard_size=shard_size,
                   token_budget=token_budget, device=device, progress=progress and is_main(), compile=compile,
                   precision=precision)
        if is_main():
            logger.info("score cache: %s (%d process%s, %s)", run_dir, world, "" if world == 1 else "es", precision)
            run_info = {**plan.to_dict(), "dtype_used": precision, "n_records": len(ids), "world_size": world}
            atomic_write_text(run_dir / "run.json", json.dumps(run_info, indent=1))
        if plan.setting == "pt":
            job.score_fold("pretrained", -1, np.arange(len(ids)), [], lambda: lm)
        else:
            job.run_folds(assign_folds(len(ids), plan.folds, plan.seed))
        frame = job.collect()
        if plan.setting != "pt":
            frame.attrs[STOPPED_ATTR] = job.fold_stops(plan.folds)
        barrier()  # nobody leaves (and may delete a temporary cache) while another process still reads it
    check_scores_differ(frame, queries, lm)
    return frame


def _check_run(plan: RunPlan, records: Sequence[Mapping[str, Any]], *, n_records: int, shard_size: int,
               token_budget: int | None, cache_dir: str | Path | None) -> None:
    """Everything :func:`compute_scores` can refuse before it trains or scores anything."""
    if plan.setting == "ft" and plan.folds > n_records:
        raise InvalidOption(name="folds", problem=f"must be at most the number of examples ({n_records})",
                            value=plan.folds)
    check("shard_size", shard_size)
    if launched() and cache_dir is None:
        raise ConfigError("running on several processes needs a cache folder ({opt:cache_dir}) that all of them "
                          "can read and write: the processes exchange their score shards through it")
    check("token_budget", token_budget)
    check_lm(plan.lm, records)
    if cache_dir is not None:  # a read-only cache is said now, not as a traceback when the first file is written
        check_writable(cache_dir, "the score cache ({opt:cache_dir})")


def check_lm(lm: str | Path, records: Sequence[Mapping[str, Any]]) -> None:
    """The cheap checks of a pretrained ``lm`` before any training or scoring: its files (see
    :mod:`lsplits.lm.model_files`) and that every record's query gives at least one token with its
    tokenizer. Nothing for the scratch LM, whose tokenizer is trained on the records' own text."""
    if str(lm) == SCRATCH:
        return
    ids, _, queries = record_columns(records)
    check_model_files(str(lm))
    tokenizer = load_tokenizer(str(lm))
    check_vocabulary(lm, tokenizer)
    check_queries(tokenizer, queries, ids)


def check_scores_differ(frame: pd.DataFrame, queries: Sequence[str], lm: str) -> None:
    """Refuse scores that are all equal although the queries differ: a split of them would be all ties."""
    scores = frame["ll_score"].to_numpy()
    if len(scores) < 2 or np.ptp(scores) > 0:
        return
    if len(set(queries)) == 1:
        logger.warning("every query is the same text, so every score is equal (%.4g)", scores[0])
        return
    raise ConfigError(f"model {lm!r} gives all {len(scores)} examples the same score ({scores[0]:.4g}) although "
                      "their queries differ: its tokenizer or weights are broken, and a split would be all ties")


def plan_of(plan: RunPlan | None, **arguments: Any) -> RunPlan:
    """``plan`` when given, else the plan :meth:`RunPlan.make` settles from ``arguments`` (``lm`` required)."""
    if plan is not None:
        return plan
    if arguments.get("lm") is None:
        raise ConfigError("give the LM to score with (lm='scratch', a Hub id or a model folder) or a RunPlan")
    return RunPlan.make(**arguments)


def assign_folds(n: int, folds: int, seed: int) -> np.ndarray:
    """Fold number of each of ``n`` examples: a seeded permutation dealt round-robin (sizes differ by <= 1)."""
    fold_of = np.empty(n, dtype=np.int64)
    fold_of[np.random.default_rng(seed).permutation(n)] = np.arange(n) % folds
    return fold_of


class _Job:
    """One cached scoring run: trains and scores fold by fold, skipping what the cache holds."""

    def __init__(self, run_dir: Path, ids: list[str], prompts: list[str], queries: list[str], *, plan: RunPlan,
                 shard_size: int, token_budget: int | None, device, progress: bool, compile: bool,
                 precision: str) -> None:
        self.run_dir, self.ids, self.prompts, self.queries = run_dir, ids, prompts, queries
        self.precision = precision
        self.plan, self.lm, self.shard_size = plan, plan.lm, shard_size
        self.token_budget, self.device, self.progress, self.compile = token_budget, device, progress, compile
        self._window: int | None = None  # the scratch window and tokenizer, made by the first fold that needs them
        self._tokenizer = None
        self._announced = False  # whether a fold trained by this job has projected the run's training time

    def fold_stops(self, folds: int) -> list[dict[str, Any]]:
        """Where each fold's training stopped and why (:class:`~lsplits.lm.finetune.Stopped` with its ``fold``),
        as its checkpoint's ``training.json`` records it (trained now or by an earlier run whose scores are
        reused); a fold without that record (its checkpoint deleted) is left out."""
        stops = [(fold, Stopped.of_run(self.run_dir / f"fold-{fold}" / "train")) for fold in range(folds)]
        return [{"fold": fold, **stopped.to_dict()} for fold, stopped in stops if stopped is not None]

    def run_folds(self, fold_of: np.ndarray) -> None:
        folds = int(fold_of.max()) + 1
        for fold in progress_bar(range(folds), desc="folds", unit="fold", disable=not self.progress):
            train_index = np.flatnonzero(fold_of != fold)
            scored_index = np.flatnonzero(fold_of == fold)

            def trained_model(fold=fold, train_index=train_index) -> Path:
                return self._train(fold, train_index)

            self.score_fold(f"fold-{fold}", fold, scored_index, train_index, trained_model)

    def score_fold(self, name: str, fold: int, scored_index: np.ndarray, train_index: Sequence[int],
                   prepare_model: Callable[[], str | Path]) -> None:
        """Write the fold's manifest, then every missing score shard, this process's share of them.

        ``prepare_model`` (called by every process, and only when a shard is missing, since it may
        train) returns where the model to load is.
        """
        fold_dir = self.run_dir / name
        train_ids = [self.ids[i] for i in train_index]
        scored_ids = [self.ids[i] for i in scored_index]
        overlap = set(train_ids) & set(scored_ids)
        if overlap:
            raise SplitInvariantError(f"{name}: {len(overlap)} examples would be scored by a model trained "
                                      f"on them, e.g. {sorted(overlap)[:3]}")
        if is_main():
            manifest = {"fold": fold, "lm": self.lm, "train_ids": train_ids, "scored_ids": scored_ids}
            atomic_write_text(fold_dir / "manifest.json", json.dumps(manifest))
        shards = split_into_shards(scored_index, self.shard_size)
        missing = missing_shards(shards, lambda number, shard: self._cached_shard_ok(fold_dir, number, shard))
        if not missing:
            logger.info("%s: all %d score shards cached", name, len(shards))
            return
        location = prepare_model()
        mine = this_process_share(missing)
        with stage("scoring"):
            with main_first():  # a Hub model is downloaded once, by rank 0
                model, tokenizer = load_causal_lm(location, device=self.device) if mine else (None, None)
            for n, shard in mine:
                self._score_shard(model, tokenizer, fold_dir, n, len(shards), shard, fold)
            barrier()

    def _cached_shard_ok(self, fold_dir: Path, number: int, shard: np.ndarray) -> bool:
        """Whether shard ``number`` is cached, readable and holds exactly the scores of ``shard``.

        A damaged shard (a disk error, a copy cut short, a hand edit) is scored again, with a warning
        naming it, rather than failing the run or being trusted.
        """
        path = _shard_path(fold_dir, number)
        if not path.exists():
            return False
        import pyarrow as pa

        try:
            table = pd.read_parquet(path)
        except (OSError, ValueError, pa.ArrowException) as exc:  # a damaged file: "score it again"
            ok, problem = False, f"it cannot be read ({first_line(exc)})"
        else:
            scores = pd.to_numeric(table.get("ll_score", pd.Series(dtype=float)), errors="coerce")
            ok = (list(table.columns) == _SHARD_COLUMNS and np.array_equal(table["position"].to_numpy(), shard)
                  and table["id"].astype(str).tolist() == [self.ids[i] for i in shard]
                  and bool(np.isfinite(scores.to_numpy(dtype=np.float64)).all()))
            problem = "it holds other examples or non-finite scores"
        if not ok and is_main():
            logger.warning("cached score shard %s is damaged (%s); scoring it again", path, problem)
        return ok

    def _score_shard(self, model, tokenizer, fold_dir: Path, number: int, n_shards: int, shard: np.ndarray,
                     fold: int) -> None:
        """Score one shard of examples and write it as parquet, atomically."""
        ll_score, ll_tokens = score_pairs(
            model, tokenizer, [self.prompts[i] for i in shard], [self.queries[i] for i in shard],
            ids=[self.ids[i] for i in shard], token_budget=self.token_budget, progress=self.progress,
            desc=f"{fold_dir.name}: scoring shard {number + 1}/{n_shards}", compile=self.compile,
            dtype=self.precision)
        table = pd.DataFrame({"position": shard, "id": [self.ids[i] for i in shard], "ll_score": ll_score,
                              "ll_tokens": ll_tokens, "fold": np.full(len(shard), fold, dtype=np.int64)})
        atomic_write_parquet(_shard_path(fold_dir, number), table)
        where = f" (process {rank()} of {world_size()})" if world_size() > 1 else ""
        logger.info("%s: wrote score shard %d of %d%s", fold_dir.name, number + 1, n_shards, where)

    def _train(self, fold: int, train_index: np.ndarray) -> Path:
        """The folder of the fold's trained checkpoint, trained now (by all processes together) if absent."""
        fold_dir = self.run_dir / f"fold-{fold}"
        train_dir = fold_dir / "train"
        if not self._checkpoint_ok(train_dir):
            self._train_fold(fold, train_index, train_dir)
        return train_dir / BEST_FOLDER

    def _train_fold(self, fold: int, train_index: np.ndarray, train_dir: Path) -> None:
        """Make the fold's initial model and train it into ``train_dir`` (the build's "folds" stage)."""
        fold_dir = train_dir.parent
        with stage("folds"):
            if self.plan.scratch:
                model, tokenizer = self._scratch_model(fold_dir / "init", seed=self.plan.fold_seed(fold))
            else:
                with main_first():  # one download, which the other processes then find in the Hub cache
                    model, tokenizer = load_causal_lm(self.lm, device="cpu")
            config = self.plan.train_config
            # the first fold this job trains projects the training of every fold from it on
            planned = None if self._announced else (self.plan.folds - fold) * config.max_steps
            self._announced = True
            finetune(model, tokenizer, [self.prompts[i] for i in train_index],
                     [self.queries[i] for i in train_index], config, train_dir,
                     ids=[self.ids[i] for i in train_index], progress=self.progress,
                     desc=f"fold-{fold}: training", dtype=self.precision, planned_steps=planned)
        return train_dir / BEST_FOLDER

    @staticmethod
    def _checkpoint_ok(train_dir: Path) -> bool:
        """Whether a fold's training finished and its saved weights are whole (else it trains again)."""
        if not (train_dir / SUMMARY_FILE).exists():
            return False
        best = train_dir / BEST_FOLDER
        files = weight_files(best) if best.is_dir() else []
        problem = None if files else f"{best}: no weights file"
        for path in files:
            problem = problem or (f"{path}: {why}" if (why := weights_problem(path)) else None)
        if problem and is_main():
            logger.warning("cached checkpoint is damaged (%s); training the fold again", problem)
        return problem is None

    def _scratch_model(self, folder: Path, *, seed: int):
        """A freshly initialised scratch model for a fold: written once by rank 0, read by the others."""
        with main_first():
            tokenizer = self._scratch_tokenizer()
        with main_first():
            if (folder / "config.json").is_file() and all(weights_problem(p) is None for p in weight_files(folder)):
                # written by rank 0 (or by a killed run: same seed, same weights)
                return load_causal_lm(folder, device="cpu")
            return scratch_model(tokenizer, self.prompts, self.queries, folder, self.plan.scratch_config, seed=seed,
                                 window=self._scratch_window(tokenizer))

    def _scratch_window(self, tokenizer) -> int:
        """The scratch window (:func:`~lsplits.lm.scratch.window_for` the records), measured once for all folds."""
        if self._window is None:
            self._window = window_for(pair_lengths(tokenizer, self.prompts, self.queries),
                                      self.plan.scratch_config.max_positions)
        return self._window

    def _scratch_tokenizer(self):
        """The scratch tokenizer trained on the records' texts (cached), checked to give every query a token."""
        if self._tokenizer is not None:
            return self._tokenizer
        folder = self.run_dir / "tokenizer"
        with stage("tokenizer"):
            if folder.exists():
                tokenizer = load_tokenizer(folder)
            else:
                tokenizer = scratch_tokenizer(self.prompts, self.queries, folder, self.plan.scratch_config)
            check_queries(tokenizer, self.queries, self.ids)
        self._tokenizer = tokenizer
        return tokenizer

    def collect(self) -> pd.DataFrame:
        """All shards, in the order of the records; checks that every record was scored once."""
        with stage("scoring"):
            return self._collect()

    def _collect(self) -> pd.DataFrame:
        frames = [pd.read_parquet(path) for path in sorted(self.run_dir.glob("*/scores-*.parquet"))]
        table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=_SHARD_COLUMNS)
        positions = table["position"].to_numpy()
        if len(table) != len(self.ids) or not np.array_equal(np.sort(positions), np.arange(len(self.ids))):
            raise SplitInvariantError(f"{self.run_dir}: {len(table)} cached scores for {len(self.ids)} "
                                      "records; the cache is inconsistent, delete it and rerun")
        table = table.sort_values("position", kind="stable").reset_index(drop=True)
        return table[["id", "ll_score", "ll_tokens", "fold"]].astype(
            {"id": str, "ll_score": np.float64, "ll_tokens": np.int64, "fold": np.int64})


def _shard_path(fold_dir: Path, number: int) -> Path:
    return fold_dir / f"scores-{number:05d}.parquet"


def record_columns(records: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str], list[str]]:
    """Ids, prompts and queries of ``records``, checked: every field present, ids unique, not empty."""
    if len(records) == 0:
        raise DataError("no records to score (the dataset is empty)")
    ids, prompts, queries = [], [], []
    for n, record in enumerate(records):
        for name in ("id", "prompt", "query"):
            if name not in record or record[name] is None:
                raise DataError("missing field", example=str(record.get("id", f"#{n}")), field=name)
        ids.append(str(record["id"]))
        prompts.append(str(record["prompt"]))
        queries.append(str(record["query"]))
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        repeated = next(i for i in ids if i in seen or seen.add(i))
        raise DataError("id appears more than once; ids must be unique", example=repeated, field="id")
    return ids, prompts, queries


def _cache_key(ids: list[str], prompts: list[str], queries: list[str], plan: RunPlan, *, shard_size: int,
               precision: str) -> str:
    """Content hash of everything that determines the scores (see the module docstring), the dtype they are
    computed in included."""
    digest = hashlib.sha256()
    for row in zip(ids, prompts, queries, strict=True):
        digest.update(json.dumps(row).encode())
    settings = {**plan.to_dict(), "dtype": precision, "shard_size": shard_size, "version": CACHE_VERSION}
    settings["lm_files"] = _folder_fingerprint(settings["lm"])
    digest.update(json.dumps(settings, sort_keys=True).encode())
    return digest.hexdigest()[:20]


def _folder_fingerprint(lm: str) -> list | None:
    """(name, size, mtime) of a local model folder's files, so retraining it invalidates the cache."""
    return None if lm == SCRATCH else folder_fingerprint(lm)
