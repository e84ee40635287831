"""Pushing a folder: one commit with exactly the folder's files, tested at the HfApi HTTP boundary."""

from __future__ import annotations

import pytest

from lsplits.errors import ConfigError
from lsplits.hub import push_folder


class RecordingApi:
    """Stands in for huggingface_hub.HfApi at the network boundary and records what would be sent."""

    calls: list = []

    def __init__(self, token=None):
        self.token = token

    def create_repo(self, repo_id, **kwargs):
        RecordingApi.calls.append(("create_repo", repo_id, kwargs))

    def create_commit(self, repo_id, operations, **kwargs):
        sent = {op.path_in_repo: open(op.path_or_fileobj, "rb").read() for op in operations}
        RecordingApi.calls.append(("create_commit", repo_id, sent, kwargs))

        class Info:
            commit_url = f"https://hub.invalid/{repo_id}/commit/1"
        return Info()


@pytest.fixture
def api(monkeypatch):
    import huggingface_hub

    RecordingApi.calls = []
    monkeypatch.setattr(huggingface_hub, "HfApi", RecordingApi)
    return RecordingApi


def test_push_sends_every_file_in_one_commit(tmp_path, api):
    (tmp_path / "ll_split").mkdir()
    (tmp_path / "ll_split" / "train.parquet").write_bytes(b"PAR1")
    (tmp_path / "README.md").write_text("card")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"junk")
    url = push_folder(tmp_path, "org/toy", private=True)
    assert url == "https://hub.invalid/org/toy/commit/1"
    assert api.calls[0] == ("create_repo", "org/toy",
                            {"repo_type": "dataset", "private": True, "exist_ok": True, "space_sdk": None})
    kind, repo, sent, kwargs = api.calls[1]
    assert (kind, repo, kwargs["repo_type"]) == ("create_commit", "org/toy", "dataset")
    assert sent == {"README.md": b"card", "ll_split/train.parquet": b"PAR1"}
    assert len(api.calls) == 2


def test_push_space_passes_sdk(tmp_path, api):
    (tmp_path / "app.py").write_text("print(1)")
    push_folder(tmp_path, "org/space", repo_type="space", space_sdk="gradio")
    assert api.calls[0][2]["space_sdk"] == "gradio"


def test_push_rejects_bad_input(tmp_path, api):
    with pytest.raises(ConfigError, match="org/name"):
        push_folder(tmp_path, "noslash")
    with pytest.raises(ConfigError, match="empty"):
        push_folder(tmp_path, "org/x")
    assert api.calls == []
