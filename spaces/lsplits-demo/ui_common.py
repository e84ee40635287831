"""What both tabs of the Space share: readable errors instead of tracebacks, and the app's settings."""

from __future__ import annotations

import functools
import logging
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import gradio as gr
from limits import SpaceLimits

from lsplits.building.demo import DEFAULT_SCRATCH_STEPS, SCRATCH_STEPS
from lsplits.building.demo import DEMO_OUT as CHECKOUT_DEMO
from lsplits.errors import ConfigError, InvalidOption, LsplitsError
from lsplits.hub.demo_space import DEMO_DATA_PATH, SCRATCH_LM_PATH
from lsplits.io.records import DATASET_MARKER
from lsplits.io.storage import cache_folder
from lsplits.lm.model_files import offline
from lsplits.params import PATH, Checked, Flag, Kind, Param
from lsplits.runtime.failures import hub_snapshot, is_hub_id

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
F = TypeVar("F", bound=Callable)
PARSER_FOLDER = HERE / "parser"
"""Where the Space finds its shipped AMR parser (an lsplits parser folder, :mod:`lsplits.amr_parser.model`)."""


@dataclass(frozen=True)
class SpaceSettings(Checked):
    """Where the app finds its assets and keeps its caches (checked when built, :class:`lsplits.params.Checked`).

    Attributes:
        demo_data: the built dataset the "Likelihood Splits" tab opens on page load.
        scratch_lm: the scratch LM folder for "Score your own" (trained from ``demo_data`` on first use
            when absent).
        example_dir: holds ``amr_beams.jsonl`` and ``amr_gold.amr``, the built-in uncertainty example.
        work_dir: caches (similarity matrices) and the files of pasted input.
        scratch_steps: training steps when the scratch LM has to be trained here.
        build_missing_demo: run ``lsplits demo`` when ``demo_data`` does not exist (minutes);
            when false, opening it is an error that says how to build it.
        limits: what one request may ask for and its time budget (:class:`limits.SpaceLimits`).
        parser: the shipped AMR parser's folder ("Parse a sentence"; :data:`PARSER_FOLDER` unless a test says
            otherwise); when it is missing, the section says so and takes a Hub parser only.
        open_local: whether the fields that name a dataset or a model read folders of this machine (run locally:
            yes; on a hosted Space, where ``SPACE_ID`` is set: no, only ``demo_data``, the scratch LM and Hub
            ids, a Hub id is never read from a local folder, and a path gets one answer whether it exists or not).
    """

    demo_data: Path
    scratch_lm: Path
    example_dir: Path
    work_dir: Path
    scratch_steps: int = DEFAULT_SCRATCH_STEPS
    build_missing_demo: bool = True
    limits: SpaceLimits = SpaceLimits()
    parser: Path = field(default_factory=lambda: PARSER_FOLDER)
    open_local: bool = field(default_factory=lambda: "SPACE_ID" not in os.environ)

    RULES = {"demo_data": Param(PATH), "scratch_lm": Param(PATH), "example_dir": Param(PATH),
             "work_dir": Param(PATH), "scratch_steps": SCRATCH_STEPS, "build_missing_demo": Param(Flag()),
             "limits": Param(Kind((SpaceLimits,), "a SpaceLimits")), "parser": Param(PATH), "open_local": Param(Flag())}

    @classmethod
    def from_environment(cls) -> SpaceSettings:
        """Shipped assets next to app.py (a deployed Space); else the demo that ``make demo`` built in this
        checkout (``out/demo-likelihood``); else ``LSPLITS_SPACE_HOME`` or the lsplits cache's ``space/``
        (``$LSPLITS_CACHE/space``, :func:`lsplits.io.storage.cache_folder`)."""
        home = Path(os.environ.get("LSPLITS_SPACE_HOME") or cache_folder("space"))

        def asset(relative: str, built: Path | None = None) -> Path:
            shipped = HERE / relative
            return shipped if shipped.exists() else built or home / relative

        return cls(demo_data=asset(DEMO_DATA_PATH, checkout_demo()), scratch_lm=asset(SCRATCH_LM_PATH),
                   example_dir=HERE / "examples", work_dir=home / "work")


def checkout_demo(root: Path = HERE.parents[1]) -> Path | None:
    """``out/demo-likelihood`` of the checkout holding this app, when ``make demo`` built it there (it has
    its ``lsplits.json``); None otherwise (a deployed Space, no demo built yet)."""
    folder = root / CHECKOUT_DEMO
    return folder if (root / "pyproject.toml").is_file() and (folder / DATASET_MARKER).is_file() else None


HUB_MODEL_FILES = ("*.json", "*.txt", "*.model", "*.safetensors")
"""What a hosted Space downloads of a Hub model: config, tokenizer and safetensors weights (no pickles)."""


def hosted_hub_id(text: str, field: str, offer: str) -> str:
    """``text`` when it is a Hub repo id (:func:`lsplits.runtime.failures.is_hub_id`, decided from the string
    alone); else one refusal naming the form's ``field`` and what it takes (``offer``), the same whether or not
    a path of that name exists on this machine: a hosted Space does not tell what its disk holds."""
    if not is_hub_id(text):
        raise ConfigError(f"{field}: this Space takes {offer}, not folders of its machine, got {text!r}")
    return text


def hub_model_folder(text: str, field: str, offer: str) -> Path:
    """The Hub model ``text`` (checked by :func:`hosted_hub_id`) downloaded into the Hugging Face cache: its
    snapshot folder, never a folder of this machine that has the same name."""
    return hub_snapshot(hosted_hub_id(text, field, offer), repo_type="model", allow_patterns=HUB_MODEL_FILES,
                        what="model")


def model_source(text: str, settings: SpaceSettings, field: str, offer: str) -> str:
    """What to load for the model a form's ``field`` names: on a hosted Space the Hub model's snapshot
    (:func:`hub_model_folder`, never a folder of its machine); locally the text itself (a folder or a Hub id),
    refused in one line when it is no folder and downloads are switched off (``HF_HUB_OFFLINE``)."""
    if not settings.open_local:
        return str(hub_model_folder(text, field, offer))
    if offline() and not Path(text).expanduser().is_dir():
        raise ConfigError(f"{field}: HF_HUB_OFFLINE is set, so {text!r} cannot be downloaded: give a local model "
                          "folder or run the app online")
    return text


def optional_number(text: str | None) -> float | str | None:
    """A number typed into an optional text box: None when it is empty, else the number, or the text itself when
    it is none, for the option's own check to refuse in its words. (A ``gr.Number`` cannot start empty: it shows
    0, which reads as a chosen value.)"""
    if text is None or not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        return text


def readable(exc: BaseException) -> str:
    """The message of ``exc`` with temporary folders (of uploads and pasted text) cut from file paths.

    ``/tmp/gradio/3f2a/beams.jsonl, line 4: ...`` becomes ``beams.jsonl, line 4: ...``.
    """
    message = str(exc) or type(exc).__name__
    for root in {tempfile.gettempdir(), os.environ.get("GRADIO_TEMP_DIR", "")} - {""}:
        message = re.sub(re.escape(root.rstrip(os.sep)) + r"/(?:[^/\s,:;'\"]+/)*", "", message)
    return message


FIELD_LABELS = {"eval_size": "Eval share", "lm": "LM", "prompt_template": "Prompt template",
                "query_field": "Text field", "target_risk": "Target risk", "delta": "delta",
                "bad_below": "Bad below", "estimators": "Estimators", "metrics": "Metrics",
                "multiple_testing": "Testing procedure", "setting": "setting"}
"""The Space's words for the options a bad value names (:class:`~lsplits.errors.InvalidOption`: the library
says ``target_risk``, the CLI ``--target-risk``, the Space its field's label)."""


def user_errors(fn: F) -> F:
    """Turn failures inside a handler into a ``gr.Error`` popup with a one-line message, never a traceback.

    Problems with the user's input or settings (:class:`~lsplits.errors.LsplitsError`, ``ValueError``,
    ``OSError``) show their own message; anything else is logged with its traceback and shown as
    "unexpected error" plus its message.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except InvalidOption as exc:
            raise gr.Error(readable(exc.renamed(FIELD_LABELS[exc.name], FIELD_LABELS) if exc.name in FIELD_LABELS
                                    else exc), print_exception=False) from exc
        except (LsplitsError, ValueError, OSError) as exc:  # options a message names: the fields' labels
            said = exc.spelled(FIELD_LABELS) if isinstance(exc, LsplitsError) else exc
            raise gr.Error(readable(said), print_exception=False) from exc
        except RecursionError as exc:  # input nested deeper than a reader goes (JSON, PENMAN), where none said so
            logger.exception("input nested too deeply in %s", fn.__name__)
            raise gr.Error("the input is nested too deeply for this Space to read (brackets or parentheses "
                           "thousands of levels deep): flatten it", print_exception=False) from exc
        except Exception as exc:
            logger.exception("unexpected error in %s", fn.__name__)
            raise gr.Error(f"Unexpected error ({type(exc).__name__}): {readable(exc)}",
                           print_exception=False) from exc

    return wrapper  # type: ignore[return-value]
