"""Library messages name options by their Python names (``{opt:NAME}`` in the message); only the CLI spells them as
flags (``in_cli_words``) and the Space as its field labels. Offline and in-process."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from lsplits.cli.parser import in_cli_words
from lsplits.errors import ConfigError, DataError, InvalidOption, WorkerLost
from lsplits.generation.inputs import read_inputs
from lsplits.runtime.pysource import parse_file

ROOT = Path(__file__).resolve().parents[1]
FLAG = re.compile(r"(?<![\w`-])--[a-z][a-z-]+")


def test_a_data_error_names_the_python_field_and_the_cli_its_flag(tmp_path):
    beams_input = tmp_path / "in.jsonl"
    beams_input.write_text(json.dumps({"id": "a", "snippet": "hello"}) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        read_inputs(str(beams_input))
    assert str(caught.value) == f"{beams_input}, line 1: no input field: give input_field (fields: id, snippet)"
    cli = in_cli_words(caught.value, "beams")
    assert str(cli) == f"{beams_input}, line 1: no input field: give --input-field (fields: id, snippet)"
    assert isinstance(cli, DataError) and cli.source == str(beams_input) and cli.line == 1


def test_every_option_a_message_names_is_spelled_and_other_commands_keep_python_names():
    exc = ConfigError("nothing can be certified; raise {opt:calibration_fraction}, give {opt:calibration}, "
                      "or loosen {opt:target_risk}")
    assert str(exc) == "nothing can be certified; raise calibration_fraction, give calibration, or loosen target_risk"
    assert str(in_cli_words(exc, "ue")) == ("nothing can be certified; raise --calibration-fraction, give "
                                            "--calibration, or loosen --target-risk")
    assert str(in_cli_words(WorkerLost("rerun with fewer {opt:workers}"), "ue")) == "rerun with fewer --workers"
    assert str(in_cli_words(WorkerLost("rerun with fewer {opt:workers}"), "build")) == "rerun with fewer workers"


def test_an_invalid_option_from_a_file_keeps_the_files_key_and_spells_the_source():
    exc = InvalidOption(name="folds", problem="must be a whole number >= 2", value=1).within("{opt:from_record} a.json")
    assert str(exc) == "from_record a.json: folds must be a whole number >= 2, got 1"
    assert str(in_cli_words(exc, "build")) == "--from-record a.json: folds must be a whole number >= 2, got 1"


def test_the_space_spells_options_by_their_labels(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "spaces" / "lsplits-demo"))
    import gradio as gr
    from ui_common import FIELD_LABELS, user_errors

    @user_errors
    def handler():
        raise ConfigError("give {opt:target_risk} and {opt:unlabelled_field}")

    with pytest.raises(gr.Error) as caught:
        handler()
    assert caught.value.message == f"give {FIELD_LABELS['target_risk']} and unlabelled_field"


def _flagged_messages(path: Path) -> list[str]:
    """The string constants of ``path``'s raise statements and logger calls that name a command-line flag."""
    found = []
    for node in ast.walk(parse_file(path)):
        logged = isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("debug", "info", "warning", "error")
        if isinstance(node, ast.Raise) or logged:
            found += [f"{path.relative_to(ROOT)}:{sub.lineno}: {sub.value[:80]}" for sub in ast.walk(node)
                      if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and FLAG.search(sub.value)]
    return found


def test_no_library_message_names_a_flag():
    paths = [p for p in sorted((ROOT / "lsplits").rglob("*.py")) if "cli" not in p.relative_to(ROOT / "lsplits").parts]
    flagged = [line for path in paths for line in _flagged_messages(path)]
    assert not flagged, flagged
