"""The Space finds the demo a checkout already built and the lsplits cache, and keeps third-party INFO quiet."""

from __future__ import annotations

import logging

import pytest
from space_helpers import build_fixture_dataset, load_app_module


@pytest.fixture(scope="module")
def app():
    return load_app_module()


def test_checkout_demo_is_out_demo_likelihood_once_make_demo_built_it(app, tmp_path):
    from ui_common import checkout_demo

    assert checkout_demo(tmp_path) is None  # not a checkout
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert checkout_demo(tmp_path) is None  # a checkout, no demo built
    (tmp_path / "out").mkdir()
    built = build_fixture_dataset(tmp_path / "out" / "demo-likelihood")
    assert checkout_demo(tmp_path) == built
    (built / "lsplits.json").unlink()  # a folder lsplits did not finish is not reused
    assert checkout_demo(tmp_path) is None


def test_settings_follow_lsplits_cache(app, tmp_path, monkeypatch):
    from ui_common import SpaceSettings, checkout_demo

    monkeypatch.delenv("LSPLITS_SPACE_HOME", raising=False)
    monkeypatch.setenv("LSPLITS_CACHE", str(tmp_path / "cache"))
    settings = SpaceSettings.from_environment()
    assert settings.work_dir == tmp_path / "cache" / "space" / "work"
    assert settings.scratch_lm == tmp_path / "cache" / "space" / "models" / "scratch-lm"
    assert settings.demo_data == (checkout_demo() or tmp_path / "cache" / "space" / "data" / "demo-likelihood")


def test_main_serves_an_existing_demo_without_building_and_silences_penman(app, tmp_path, monkeypatch):
    import splits_tab

    built = build_fixture_dataset(tmp_path / "demo")
    served = []

    class Blocks:
        def queue(self, **kwargs):
            return self

        def launch(self, **kwargs):
            served.append(kwargs)

    def no_build(*args, **kwargs):
        raise AssertionError("the demo was rebuilt although it exists")

    monkeypatch.setattr(splits_tab, "dataset_folder", no_build)
    monkeypatch.setattr(app, "build_demo", lambda settings: served.append(settings.demo_data) or Blocks())
    app.main(["--demo-data", str(built), "--port", "7999"])
    # Gradio refuses an upload above the Space's limit before it reaches a handler
    # and the CSS that keeps table headers on one line (Gradio 6 takes CSS at launch only)
    assert served == [built, {"server_name": None, "server_port": 7999, "max_file_size": 1_000_000, "css": app.CSS}]
    assert not logging.getLogger("penman.layout").isEnabledFor(logging.INFO)
