"""The Gradio demo Space: its offline assets and ``lsplits push-space REPO_ID`` to deploy it.

The Space (``spaces/lsplits-demo/``) runs on two assets besides its code:

- the demo dataset (:data:`DEMO_DATA_PATH`), a folder built by ``lsplits demo``, which the
  "Likelihood Splits" tab opens on page load;
- a scratch LM (:data:`SCRATCH_LM_PATH`) for "Score your own" without network: the one ``lsplits demo``
  wrote into its build (:data:`lsplits.building.demo.SCRATCH_LM_FOLDER`, see :mod:`lsplits.building.demo`).

Deployment ships artefacts and trains nothing. ``push-space`` checks that the demo build and its scratch LM
are there (:func:`demo_assets`: else one line saying to run ``lsplits demo``) and the Hub access
(:func:`lsplits.hub.push.check_hub_access`), then stages a folder (the Space's files, the ``lsplits`` package
source copied in next to ``app.py``, both assets copied) and uploads it in one commit with
:func:`lsplits.hub.push.push_folder`. Vendoring the package means the Space runs exactly the code that
was pushed, needs no published release of ``lsplits``, and its ``requirements.txt`` lists only
third-party packages; ``app.py`` imports ``lsplits`` from its own folder. Shipping the assets makes
the Space start in seconds instead of rebuilding the demo on every cold start; without them
(``--no-assets``) the app builds them itself at start-up.

Nothing here imports gradio, torch or transformers at module level: the CLI imports this module to
build its parser.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from lsplits.errors import ConfigError
from lsplits.hub import SHIPPED, pin_sdk_version
from lsplits.hub.push import pushed_files, shown_names
from lsplits.io.records import mark_folder
from lsplits.runtime.tempfolders import temporary_folder

logger = logging.getLogger(__name__)

DEMO_DATA_PATH = "data/demo-likelihood"
"""Where the demo dataset lives inside the Space folder."""
SCRATCH_LM_PATH = "models/scratch-lm"
"""Where the scratch LM for "Score your own" lives inside the Space folder."""
_IGNORED_NAMES = ("__pycache__", "*.pyc", ".gradio", "flagged", ".pytest_cache")
_PACKAGE_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", SHIPPED.name)  # the Space is not in its own package


def default_space_dir() -> Path:
    """The demo Space shipped with lsplits: the checkout's ``spaces/lsplits-demo``, which the wheel carries
    inside the package (:data:`lsplits.hub.SHIPPED`), so ``push-space`` works from a plain ``pip install``."""
    return SHIPPED / "spaces" / "lsplits-demo"


def demo_assets(demo_data: str | Path | None = None) -> tuple[Path, Path]:
    """The demo build to ship and its scratch LM: ``demo_data``, else ``out/demo-likelihood`` (where ``lsplits demo``
    writes); ConfigError in one line saying to run ``lsplits demo`` when either is missing. Publishing trains
    nothing: the assets are what the demo build wrote."""
    from lsplits.building.demo import DEMO_OUT, SCRATCH_LM_FOLDER
    from lsplits.io.records import DATASET_MARKER

    folder = Path(demo_data) if demo_data is not None else DEMO_OUT
    option = f" --out {folder}" if demo_data is not None else ""
    if not (folder / DATASET_MARKER).is_file():
        raise ConfigError(f"{folder}: no demo build to ship; run `lsplits demo{option}` first "
                          "(or push the Space with {opt:no_assets}: it then builds them when it starts)")
    model = folder / SCRATCH_LM_FOLDER
    if not (model / "config.json").is_file():
        raise ConfigError(f"{model}: the demo build has no scratch LM; run `lsplits demo{option}` again, "
                          "which writes it")
    return folder, model


def stage_space(out: str | Path, *, space_dir: str | Path | None = None, demo_data: str | Path | None = None,
                assets: bool = True) -> Path:
    """Write the folder that ``push-space`` uploads: Space files, vendored ``lsplits``, assets. Copies only.

    Args:
        out: the folder to create (must not exist yet).
        space_dir: the Space's source folder (default: :func:`default_space_dir`).
        demo_data: the demo build to ship with its scratch LM (:func:`demo_assets`; default
            ``out/demo-likelihood``). Build it with ``lsplits demo``.
        assets: ship no demo build when false (the Space then builds it when it starts).

    Raises:
        ConfigError: ``out`` exists, the Space folder has no app.py, or no demo build (or its scratch LM) is there.
    """
    out = Path(out)
    space_dir = Path(space_dir) if space_dir is not None else default_space_dir()
    if out.exists():
        raise ConfigError(f"{out}: already exists; stage into a new folder")
    if not (space_dir / "app.py").is_file():
        raise ConfigError(f"{space_dir}: not a Space folder (no app.py)")
    found = demo_assets(demo_data) if assets else None
    shipped = _asset_files(*found) if found else None  # checked before anything is written
    left_out = _copy_source(space_dir, out, _IGNORED_NAMES)
    pin_sdk_version(out / "README.md")
    for generated in (DEMO_DATA_PATH, SCRATCH_LM_PATH):  # local leftovers are replaced by fresh copies
        shutil.rmtree(out / generated, ignore_errors=True)
    # lsplits' own code, as the wheel ships it (a checkout's lsplits/builders is a committed link to builders/)
    shutil.copytree(Path(__file__).resolve().parents[1], out / "lsplits", ignore=_PACKAGE_IGNORED)
    if left_out:
        logger.warning("%s: left out %d symbolic links or hidden files of the Space's source (%s)", space_dir,
                       len(left_out), shown_names(left_out))
    for name, path in shipped or ():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out / name)
    mark_folder(out)  # the files staged, all lsplits' own: what push_folder sends
    if found is None:
        logger.info("staged %s without assets; the Space builds them when it starts", out)
    else:
        logger.info("staged the Space in %s (demo build %s, its scratch LM)", out, found[0])
    return out


def _asset_files(dataset: Path, model: Path) -> list[tuple[str, Path]]:
    """(path in the Space, local file) of the demo build and its scratch LM: only the files the build lists as
    lsplits' own (:func:`lsplits.hub.push.pushed_files`: never a ``.env``, a file lsplits did not write or a
    symbolic link, which it leaves out with a warning); ConfigError when the scratch LM is not among them."""
    model_prefix = f"{model.relative_to(dataset).as_posix()}/"
    files = []
    for name, path in pushed_files(dataset):
        if name.startswith(model_prefix):
            files.append((f"{SCRATCH_LM_PATH}/{name.removeprefix(model_prefix)}", path))
        else:
            files.append((f"{DEMO_DATA_PATH}/{name}", path))
    if f"{SCRATCH_LM_PATH}/config.json" not in {name for name, _ in files}:
        raise ConfigError(f"{model}: the demo build does not list its scratch LM as written by lsplits; run "
                          "`lsplits demo` again, which writes and lists it")
    return files


def _copy_source(source: Path, target: Path, ignored: tuple[str, ...]) -> list[str]:
    """Copy the folder ``source`` to ``target`` without the ``ignored`` patterns, symbolic links and hidden files
    (a ``.env``); returns the links and hidden files left out (paths relative to ``source``)."""
    patterns = shutil.ignore_patterns(*ignored)
    left_out: list[str] = []

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = {name for name in names if name.startswith(".") or os.path.islink(os.path.join(folder, name))}
        skipped -= set(patterns(folder, names))  # caches (``.gradio``) are left out without a word
        left_out.extend(Path(folder, name).relative_to(source).as_posix() for name in sorted(skipped))
        return skipped | set(patterns(folder, names))

    shutil.copytree(source, target, ignore=ignore)
    return left_out


def push_space(repo_id: str, *, space_dir: str | Path | None = None, demo_data: str | Path | None = None,
               assets: bool = True, private: bool = False, token: str | None = None) -> str:
    """Stage the Space (see :func:`stage_space`) and upload it in one commit; returns the commit URL."""
    from lsplits.hub.push import check_repo_id, push_folder

    check_repo_id(repo_id)
    with temporary_folder(prefix="lsplits-space-") as tmp:
        staged = stage_space(Path(tmp) / "space", space_dir=space_dir, demo_data=demo_data, assets=assets)
        return push_folder(staged, repo_id, repo_type="space", space_sdk="gradio", private=private, token=token,
                           commit_message="Deploy the lsplits demo Space")

