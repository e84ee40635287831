"""The one validation vocabulary (lsplits.params): each option's rule, one error class (a ValueError), one
message style, and the caller's words (Python name or CLI flag)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from lsplits.errors import ConfigError, InvalidOption, LsplitsError
from lsplits.params import PARAMS, Interval, check, check_choice


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("folds", 2, 2), ("seed", np.int64(7), 7), ("eval_size", 0.25, 0.25), ("eval_size", 40, 40),
    ("max_steps", None, None), ("configs", ["a", "b"], ("a", "b")), ("ecc_threshold", 2, 2.0),
    ("max_rejection", 1.0, 1.0), ("n_bootstrap", 0, 0),
])
def test_accepted_values_come_back_normalised(name, value, expected):
    got = check(name, value)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(("name", "value", "words"), [
    ("folds", 1, "folds must be a whole number >= 2, got 1"),
    ("seed", -1, "seed must be a whole number >= 0 (a random seed), got -1"),
    ("seed", True, "got True"), ("seed", 1.5, "got 1.5"), ("seed", "3", "got '3'"),
    ("eval_size", 0, "eval_size must be a count (a whole number >= 1) or a fraction in (0, 1), got 0"),
    ("eval_size", 1.0, "got 1.0"), ("eval_size", math.nan, "got nan"),
    ("lr", math.inf, "lr must be a number > 0, got inf"),
    ("ecc_threshold", 0, "ecc_threshold must be a number in (0, 2]"),
    ("data_files", "a.jsonl", "data_files must be a non-empty list of names, got 'a.jsonl'"),
    ("configs", [], "got []"),
])
def test_refused_values_raise_one_class_in_one_style(name, value, words):
    with pytest.raises(InvalidOption) as caught:
        check(name, value)
    assert words in str(caught.value)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, ConfigError)
    assert isinstance(caught.value, LsplitsError)
    assert caught.value.name == name


def test_the_error_is_renamed_into_the_callers_words_and_survives_pickling():
    with pytest.raises(InvalidOption) as caught:
        check("n_bootstrap", -2)
    flag = caught.value.renamed("--bootstrap")
    assert str(flag) == "--bootstrap must be a whole number >= 0 (bootstrap resamples; 0 = no interval), got -2"
    assert str(flag.within("--from-record a.json")).startswith("--from-record a.json: --bootstrap must")
    assert str(pickle.loads(pickle.dumps(flag))) == str(flag)


def test_interval_bounds_are_open_or_closed_as_described():
    share = Interval(whole=False, low=0, high=1, closed="neither")
    assert [share.accepts(v) for v in (0, 0.5, 1)] == [False, True, False]
    assert share.describe() == "a number in (0, 1)"
    assert Interval(whole=False, low=0, high=2, closed="right").describe() == "a number in (0, 2]"


def test_choices():
    assert check_choice("method", "a", ("a", "b")) == "a"
    with pytest.raises(InvalidOption, match=r"^method must be one of a, b, got 'c'$"):
        check_choice("method", "c", ("a", "b"))


def test_every_param_rule_describes_itself():
    for name, param in PARAMS.items():
        assert param.describe(), name


# --- acceptance: every surface refuses seed=-1 with the same class, a ValueError, in its caller's words ---

SEED_WORDS = "must be a whole number >= 0 (a random seed), got -1"


@pytest.mark.parametrize("make", ["BuildSettings", "ScoreSettings", "DifficultySettings", "StudyConfig",
                                  "DemoSettings", "likelihood_splits", "score"])
def test_python_callers_read_seed_in_python_words(make):
    import datasets

    from lsplits.api import likelihood_splits, score
    from lsplits.building.demo import DemoSettings
    from lsplits.building.settings import BuildSettings, ScoreSettings
    from lsplits.difficulty.settings import DifficultySettings
    from lsplits.uncertainty.study_config import StudyConfig

    data = datasets.Dataset.from_dict({"text": ["a b", "c d", "e f", "g h"]})
    calls = {"BuildSettings": lambda: BuildSettings(seed=-1), "ScoreSettings": lambda: ScoreSettings(seed=-1),
             "DifficultySettings": lambda: DifficultySettings(seed=-1), "StudyConfig": lambda: StudyConfig(seed=-1),
             "DemoSettings": lambda: DemoSettings(seed=-1),
             "likelihood_splits": lambda: likelihood_splits(data, query_field="text", lm="scratch", seed=-1),
             "score": lambda: score(data, query_field="text", lm="scratch", setting="ft", seed=-1)}
    with pytest.raises(InvalidOption) as caught:
        calls[make]()
    assert type(caught.value) is InvalidOption and isinstance(caught.value, ValueError)
    assert str(caught.value) == f"seed {SEED_WORDS}"


def _cli_argv(command: str, folder) -> list[str]:
    (folder / "data.jsonl").write_text('{"text": "a b"}\n{"text": "c d"}\n')
    (folder / "beams.jsonl").write_text('{"id": "a", "candidates": ["(a / b)"]}\n')
    (folder / "gold.amr").write_text("# ::id a\n(a / b)\n")
    data = ["--data-files", str(folder / "data.jsonl"), "--query-field", "text"]
    return {"build": ["build", *data, "--out", str(folder / "out")],
            "score": ["score", *data, "--out", str(folder / "s.parquet")],
            "demo": ["demo", "--out", str(folder / "out")],
            "ue": ["ue", str(folder / "beams.jsonl"), "--gold", str(folder / "gold.amr"), "--out", str(folder / "out"),
                   "--no-cache"],
            "difficulty": ["difficulty", str(folder / "nothing"), "--out", str(folder / "out")]}[command]


@pytest.mark.parametrize("command", ["build", "score", "demo", "ue", "difficulty"])
def test_the_command_line_reads_seed_as_its_flag(command, tmp_path, capsys):
    from lsplits.cli.parser import main

    assert main([*_cli_argv(command, tmp_path), "--seed", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"lsplits {command}: error: --seed {SEED_WORDS}"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("argv", "python", "flag"), [
    (["--folds", "1"], "folds must be a whole number >= 2, got 1", "--folds must be a whole number >= 2, got 1"),
    (["--eval-size", "0"], "eval_size must be a count", "--eval-size must be a count"),
])
def test_one_rule_two_spellings(argv, python, flag, tmp_path, capsys):
    from lsplits.api import likelihood_splits
    from lsplits.cli.parser import main

    keyword = argv[0][2:].replace("-", "_")
    with pytest.raises(InvalidOption, match="^" + python.replace("(", r"\(").replace(")", r"\)")):
        likelihood_splits([{"text": "a"}, {"text": "b"}], query_field="text", lm="scratch",
                          **{keyword: int(argv[1])})
    assert main([*_cli_argv("build", tmp_path), *argv]) == 2
    assert capsys.readouterr().err.strip().startswith(f"lsplits build: error: {flag}")


def test_the_scratch_lm_prompted_is_one_rule_in_each_callers_words(tmp_path, capsys):
    from lsplits.building.settings import ScoreSettings
    from lsplits.cli.parser import main
    from lsplits.lm.plan import RunPlan

    for call in (lambda: ScoreSettings(setting="pt"), lambda: RunPlan.make("scratch", "pt")):
        with pytest.raises(InvalidOption) as caught:
            call()
        assert str(caught.value).startswith("setting 'pt' needs a pretrained LM for prompting")
        assert "give a pretrained lm (gpt2, a Hub id or a local model folder), or setting 'ft'" in str(caught.value)
    assert main([*_cli_argv("score", tmp_path), "--setting", "pt"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lsplits score: error: --setting 'pt' needs a pretrained LM for prompting")
    assert "give a pretrained --lm (gpt2, a Hub id or a local model folder), or --setting 'ft'" in err


def test_the_space_names_the_option_by_its_field_label(monkeypatch):
    from pathlib import Path

    import gradio as gr

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "spaces" / "lsplits-demo"))
    import ui_common

    @ui_common.user_errors
    def certify(target_risk):
        return check("target_risk", target_risk)

    assert certify(0.2) == 0.2
    with pytest.raises(gr.Error) as caught:
        certify(1.5)
    assert caught.value.message.startswith("Target risk must be a number in (0, 1)")
    assert caught.value.message.endswith("got 1.5")


def test_the_beam_uncertainty_module_settings_reach_the_estimators():
    from lsplits.uncertainty.beam import beam_uncertainty_outputs

    beams = [["a b c", "a b d", "x y z"], ["a b", "a b", "a c"]]
    new = beam_uncertainty_outputs(beams, "rouge1", estimators=["numsemsets", "kle"], sets_threshold=0.6, kle_t=0.5)
    assert new != beam_uncertainty_outputs(beams, "rouge1", estimators=["numsemsets", "kle"], sets_threshold=0.99,
                                           kle_t=5.0)  # the names reach the estimators


