"""Shared by the Space tests: a small built dataset whose answers are known, and the app on localhost."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import yaml

from lsplits.building.export import WrittenFolder, data_files_yaml, write_hub_folder
from lsplits.building.record import BuildRecord, TaskRecord
from lsplits.building.settings import BuildSettings

SPACE_DIR = Path(__file__).resolve().parents[1] / "spaces" / "lsplits-demo"
N_EXAMPLES = 40
RARE = ("kumquat", "quokka", "axolotl", "pangolin")  # each well under 1 per million words in wordfreq
_SUBJECTS = ("the dog", "a child", "my friend", "the old man", "a tall woman")
_ACTIONS = ("runs", "sleeps in the park", "eats an apple", "reads a long book today", "walks home")


def fixture_rows() -> list[dict]:
    """40 sentences; example i has ``ll_score = -10 - i``, so the highest ids are the least likely.

    Rare words: all eight least likely (ex-32 .. ex-39) and two others (ex-0, ex-1) have one.
    """
    rows = []
    for i in range(N_EXAMPLES):
        text = f"{_SUBJECTS[i % 5]} {_ACTIONS[(i // 5) % 5]}"
        if i >= 32 or i < 2:
            text += f" with a {RARE[i % 4]}"
        rows.append({"id": f"ex-{i}", "text": text, "ll_score": -10.0 - i, "ll_tokens": 5,
                     "length": len(text.split())})
    return rows


def build_fixture_dataset(folder: Path) -> Path:
    """A folder in the layout ``lsplits build`` writes, with two configs whose splits are known by hand.

    ``ll_split``: eval = ex-32 .. ex-39 (validation ex-32..35, test ex-36..39), train the other 32.
    ``random``: eval = every fifth example (ex-0, ex-5, ..., ex-35), validation the first four of them.
    """
    frame = pd.DataFrame(fixture_rows())
    ll_eval = frame.index >= 32
    random_eval = frame.index % 5 == 0
    configs = {
        "ll_split": {"train": frame[~ll_eval], "validation": frame[ll_eval].iloc[:4], "test": frame[ll_eval].iloc[4:]},
        "random": {"train": frame[~random_eval], "validation": frame[random_eval].iloc[:4],
                   "test": frame[random_eval].iloc[4:]},
    }
    record = BuildRecord(settings=BuildSettings(lm="scratch", folds=3), task=TaskRecord(query_field="text"))

    def card(written: WrittenFolder) -> str:
        return "---\n" + yaml.safe_dump({"configs": data_files_yaml(written.data_files, "ll_split")}) + "---\n# fixture\n"

    return write_hub_folder(folder, configs, card, record=record)


def load_app_module():
    """Import ``spaces/lsplits-demo/app.py`` under a unique name (it adds its own folder to sys.path)."""
    name = "lsplits_space_app"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SPACE_DIR / "app.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def space_settings(root: Path, dataset: Path):
    """Settings for a test run: the fixture dataset, a tiny scratch LM, caches under ``root``."""
    load_app_module()
    from ui_common import SpaceSettings

    return SpaceSettings(demo_data=dataset, scratch_lm=root / "scratch-lm", example_dir=SPACE_DIR / "examples",
                         work_dir=root / "work", scratch_steps=8, build_missing_demo=False)


@contextlib.contextmanager
def running_app(settings) -> Iterator[str]:
    """The app served on localhost in a background thread; yields its URL."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    app = load_app_module()
    demo = app.build_demo(settings)
    demo.queue(default_concurrency_limit=2)
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", quiet=True, css=app.CSS)
    try:
        yield url
    finally:
        demo.close()
