"""The builder registry: the builders package registers each of its modules, another package can add one,
and ``lsplits build NAME`` (its help, its dataset, its input paths) follows what is registered."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lsplits.builders import registry
from lsplits.building.settings import BuildSettings
from lsplits.cli import commands
from lsplits.cli.parser import main, parse_args, settings_of
from lsplits.errors import ConfigError

BUILDERS_DIR = Path(__file__).resolve().parents[1] / "builders"

TINY_BUILDER = '''
from lsplits.building.pipeline import DatasetSpec
from lsplits.building.card import CardInfo
from lsplits.data.loading import prepare_examples
from lsplits.data.tasks import generic_task

SPEC = DatasetSpec(task=generic_task("text", ""), card=CardInfo(pretty_name="tiny"))


def load(data_files=None):
    rows = [{"text": f"line {i}"} for i in range(4)]
    return prepare_examples([("tiny", rows, "tiny builder")], SPEC.task)
'''


def test_every_module_of_the_builders_package_is_registered_without_being_imported():
    modules = sorted(path.stem for path in BUILDERS_DIR.glob("*.py") if path.stem not in ("__init__", "common", "registry"))
    assert modules == ["boolq", "snli", "spider"]
    assert list(registry.builder_names()) == modules
    from lsplits.builders import snli

    assert registry.load_builder("snli") is snli and snli.SPEC.task.name == "snli"


def test_a_builder_registered_elsewhere_is_built_by_name(tmp_path, monkeypatch, capsys):
    (tmp_path / "tiny_builder.py").write_text(TINY_BUILDER, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_BUILDERS", dict(registry._BUILDERS))  # unregistered again after the test
    assert not registry.is_builder("tiny")
    registry.register_builder("tiny", "tiny_builder")
    assert "tiny" in registry.builder_names() and "tiny_builder" not in sys.modules  # imported when used
    with pytest.raises(SystemExit):
        main(["build", "--help"])
    assert "a registered builder (boolq, snli, spider, tiny)" in " ".join(capsys.readouterr().out.split())
    (tmp_path / "tiny").mkdir()  # a folder of that name: the registered builder wins, it is no input path
    monkeypatch.chdir(tmp_path)
    args = parse_args(["build", "tiny", "--out", str(tmp_path / "out")])
    spec, loaded = commands.resolve_dataset(settings_of(args, BuildSettings))
    assert spec.card.pretty_name == "tiny" and [ex["text"] for ex in loaded.examples] == [f"line {i}" for i in range(4)]
    assert commands.input_paths(args) == []
    registry.register_builder("tiny", "tiny_builder")  # the same registration again is harmless
    with pytest.raises(ConfigError, match="registered twice"):
        registry.register_builder("tiny", "another_module")


def test_an_unknown_builder_is_a_config_error_naming_the_registered_ones():
    with pytest.raises(ConfigError, match=r"unknown builder 'mnli'; registered: boolq, snli, spider"):
        registry.load_builder("mnli")
