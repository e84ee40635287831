"""Pushing a folder: one commit with exactly the folder's files, tested at the HfApi HTTP boundary."""

from __future__ import annotations

import pytest

from lsplits.errors import ConfigError
from lsplits.hub import push_folder


def test_push_sends_every_file_in_one_commit(tmp_path, hub_api):
    (tmp_path / "ll_split").mkdir()
    (tmp_path / "ll_split" / "train.parquet").write_bytes(b"PAR1")
    (tmp_path / "README.md").write_text("card")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"junk")
    url = push_folder(tmp_path, "org/toy", private=True)
    assert url == "https://hub.invalid/org/toy/commit/1"
    assert hub_api.calls[0] == ("create_repo", "org/toy",
                            {"repo_type": "dataset", "private": True, "exist_ok": True, "space_sdk": None}, None)
    kind, repo, sent, kwargs = hub_api.calls[1]
    assert (kind, repo, kwargs["repo_type"]) == ("create_commit", "org/toy", "dataset")
    assert sent == {"README.md": b"card", "ll_split/train.parquet": b"PAR1"}
    assert len(hub_api.calls) == 2


def test_push_space_passes_sdk(tmp_path, hub_api):
    (tmp_path / "app.py").write_text("print(1)")
    push_folder(tmp_path, "org/space", repo_type="space", space_sdk="gradio")
    assert hub_api.calls[0][2]["space_sdk"] == "gradio"


def test_push_rejects_bad_input(tmp_path, hub_api):
    with pytest.raises(ConfigError, match="org/name"):
        push_folder(tmp_path, "noslash")
    with pytest.raises(ConfigError, match="empty"):
        push_folder(tmp_path, "org/x")
    assert hub_api.calls == []
