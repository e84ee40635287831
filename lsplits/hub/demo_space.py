"""The Gradio demo Space: its offline assets and ``lsplits push-space REPO_ID`` to deploy it.

The Space (``spaces/lsplits-demo/``) runs on two assets besides its code:

- the demo dataset (:data:`DEMO_DATA_PATH`), a folder built by ``lsplits demo``, which the
  "Likelihood Splits" tab opens on page load;
- a scratch LM (:data:`SCRATCH_LM_PATH`) for "Score your own" without network: the small GPT-2 of
  :mod:`lsplits.lm.scratch`, trained once on the demo dataset's query sentences as unprompted text
  (one model on all the data; the lines it scores are new, so no folds are needed). It trains in
  one to three minutes on two CPU cores and weighs about 2 MB.

Deployment. ``push-space`` checks the Hub access first (:func:`lsplits.hub.push.check_hub_access`), then
stages a folder (the Space's files, the ``lsplits`` package source copied in next to ``app.py``,
both assets prebuilt) and uploads it in one commit with :func:`lsplits.hub.push.push_folder`. Vendoring the package means the Space runs exactly the code that
was pushed, needs no published release of ``lsplits``, and its ``requirements.txt`` lists only
third-party packages; ``app.py`` imports ``lsplits`` from its own folder. Shipping the assets makes
the Space start in seconds instead of retraining the demo on every cold start; without them the app
builds them itself at start-up.

Nothing here imports gradio, torch or transformers at module level: the CLI imports this module to
build its parser.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from lsplits.errors import ConfigError
from lsplits.hub import SHIPPED, pin_sdk_version
from lsplits.io import atomic_path

logger = logging.getLogger(__name__)

DEMO_DATA_PATH = "data/demo-likelihood"
"""Where the demo dataset lives inside the Space folder."""
SCRATCH_LM_PATH = "models/scratch-lm"
"""Where the scratch LM for "Score your own" lives inside the Space folder."""
DEFAULT_SCRATCH_STEPS = 300
"""Training steps of the Space's scratch LM (batch 32: a few passes over the demo's 3,000 sentences)."""
SCRATCH_WINDOW = 256
"""Context window of the Space's scratch LM in tokens (pasted lines longer than this are refused)."""
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".gradio", "flagged", ".pytest_cache")
_PACKAGE_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", SHIPPED.name)  # the Space is not in its own package


def default_space_dir() -> Path:
    """The demo Space shipped with lsplits: the checkout's ``spaces/lsplits-demo``, which the wheel carries
    inside the package (:data:`lsplits.hub.SHIPPED`), so ``push-space`` works from a plain ``pip install``."""
    return SHIPPED / "spaces" / "lsplits-demo"


def scratch_lm_texts(dataset_dir: str | Path) -> list[str]:
    """The distinct query sentences of a built dataset (every example once), to train the scratch LM on."""
    from lsplits.building.dataset import open_dataset

    dataset = open_dataset(dataset_dir)
    frames, meta = dataset.frames(), dataset.meta
    if not frames:
        raise ConfigError(f"{dataset_dir}: the dataset has no configs to read sentences from")
    query_field = meta["query_field"]
    splits = next(iter(frames.values()))
    texts = [str(text) for frame in splits.values() for text in frame[query_field].tolist()]
    return list(dict.fromkeys(text for text in texts if text.strip()))


def ensure_scratch_lm(texts: Sequence[str], target: str | Path, *, max_steps: int = DEFAULT_SCRATCH_STEPS,
                      seed: int = 0, progress: bool = True) -> Path:
    """The folder of a scratch LM trained on ``texts``; trained now unless ``target`` already holds one.

    The model sees each text as a query with an empty prompt, so it scores single lines. Training
    happens in a temporary folder and only the best checkpoint (model and tokenizer, loadable with
    :func:`lsplits.lm.scoring.load_causal_lm`) is moved to ``target``, atomically.

    Raises:
        ConfigError: fewer than 2 texts.
    """
    target = Path(target)
    if (target / "config.json").is_file():
        return target
    if len(texts) < 2:
        raise ConfigError(f"the scratch LM needs at least 2 sentences to train on, got {len(texts)}")
    from lsplits.lm.finetune import BEST_FOLDER, finetune
    from lsplits.lm.plan import SCRATCH, RunPlan
    from lsplits.lm.scratch import build_scratch_lm

    logger.info("training the scratch LM on %d sentences (%d steps) into %s", len(texts), max_steps, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="scratch-lm-", dir=target.parent) as work:
        plan = RunPlan.make(SCRATCH, seed=seed, max_steps=max_steps)  # the scratch LM's sizes and training
        model, tokenizer = build_scratch_lm(list(texts), Path(work) / "init", plan.scratch_config,
                                            n_positions=SCRATCH_WINDOW, seed=seed)
        config = dataclasses.replace(plan.train_config, eval_every=max(1, min(64, max_steps // 4)))
        trained = Path(work) / "train"
        finetune(model, tokenizer, [""] * len(texts), list(texts), config, trained, progress=progress)
        with atomic_path(target) as staged:
            shutil.copytree(trained / BEST_FOLDER, staged)
    return target


def stage_space(out: str | Path, *, space_dir: str | Path | None = None, demo_data: str | Path | None = None,
                build_demo: bool = True, scratch_steps: int = DEFAULT_SCRATCH_STEPS,
                progress: bool = True) -> Path:
    """Write the folder that ``push-space`` uploads: Space files, vendored ``lsplits``, assets.

    Args:
        out: the folder to create (must not exist yet).
        space_dir: the Space's source folder (default: :func:`default_space_dir`).
        demo_data: a built demo dataset to ship; when None or missing and ``build_demo`` is true,
            ``lsplits demo`` is run into the staged folder (a few minutes).
        build_demo: ship no assets when false and ``demo_data`` is None (the Space then builds them
            when it starts).
        scratch_steps: training steps of the shipped scratch LM.
        progress: show progress bars while building assets.

    Raises:
        ConfigError: ``out`` exists, the Space folder has no app.py, or the demo data is not a built folder.
    """
    out = Path(out)
    space_dir = Path(space_dir) if space_dir is not None else default_space_dir()
    if out.exists():
        raise ConfigError(f"{out}: already exists; stage into a new folder")
    if not (space_dir / "app.py").is_file():
        raise ConfigError(f"{space_dir}: not a Space folder (no app.py)")
    shutil.copytree(space_dir, out, ignore=_IGNORED)
    pin_sdk_version(out / "README.md")
    for generated in (DEMO_DATA_PATH, SCRATCH_LM_PATH):  # local leftovers are replaced by fresh copies
        shutil.rmtree(out / generated, ignore_errors=True)
    shutil.copytree(Path(__file__).resolve().parents[1], out / "lsplits", ignore=_PACKAGE_IGNORED)
    if demo_data is not None and not Path(demo_data).is_dir():
        raise ConfigError(f"{demo_data}: no such folder; build it with `lsplits demo --out {demo_data}`")
    if demo_data is None and not build_demo:
        logger.info("staged %s without assets; the Space builds them when it starts", out)
        return out
    dataset = out / DEMO_DATA_PATH
    if demo_data is not None:
        shutil.copytree(demo_data, dataset, ignore=_IGNORED)
    else:
        from lsplits.building.demo import run_demo

        logger.info("no demo dataset given: running `lsplits demo` into %s", dataset)
        with tempfile.TemporaryDirectory() as cache:
            run_demo(dataset, cache_dir=cache, progress=progress)
    ensure_scratch_lm(scratch_lm_texts(dataset), out / SCRATCH_LM_PATH, max_steps=scratch_steps, progress=progress)
    logger.info("staged the Space in %s", out)
    return out


def push_space(repo_id: str, *, space_dir: str | Path | None = None, demo_data: str | Path | None = None,
               build_demo: bool = True, scratch_steps: int = DEFAULT_SCRATCH_STEPS, private: bool = False,
               token: str | None = None, progress: bool = True) -> str:
    """Stage the Space (see :func:`stage_space`) and upload it in one commit; returns the commit URL."""
    from lsplits.hub.push import check_repo_id, push_folder

    check_repo_id(repo_id)
    with tempfile.TemporaryDirectory(prefix="lsplits-space-") as tmp:
        staged = stage_space(Path(tmp) / "space", space_dir=space_dir, demo_data=demo_data, build_demo=build_demo,
                             scratch_steps=scratch_steps, progress=progress)
        return push_folder(staged, repo_id, repo_type="space", space_sdk="gradio", private=private, token=token,
                           commit_message="Deploy the lsplits demo Space")
