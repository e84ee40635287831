"""Shared fixtures: ``hub_api`` replaces huggingface_hub.HfApi at the network boundary."""

from __future__ import annotations

from pathlib import Path

import pytest


class RecordingApi:
    """Stands in for huggingface_hub.HfApi and records what would go over HTTP.

    ``calls`` holds ``("create_repo", repo_id, kwargs, token)``, ``("whoami", token)`` and
    ``("create_commit", repo_id, {path_in_repo: bytes}, kwargs)`` in call order. ``valid_tokens``
    lists the tokens ``whoami`` accepts (any other gets the Hub's 401 message).
    """

    calls: list = []

    def __init__(self, token=None):
        self.token = token

    valid_tokens: set = set()

    def whoami(self, **kwargs):
        RecordingApi.calls.append(("whoami", self.token))
        if self.token not in RecordingApi.valid_tokens:
            raise RuntimeError("401 Client Error: Unauthorized for url: https://huggingface.co/api/whoami-v2")
        return {"name": "recorded-user"}

    def create_repo(self, repo_id, **kwargs):
        RecordingApi.calls.append(("create_repo", repo_id, kwargs, self.token))

    def create_commit(self, repo_id, operations, **kwargs):
        sent = {op.path_in_repo: Path(op.path_or_fileobj).read_bytes() for op in operations}
        RecordingApi.calls.append(("create_commit", repo_id, sent, kwargs))
        prefix = "spaces/" if kwargs.get("repo_type") == "space" else ""

        class Info:
            commit_url = f"https://hub.invalid/{prefix}{repo_id}/commit/1"
        return Info()


@pytest.fixture
def hub_api(monkeypatch):
    """The recording HfApi class, installed in huggingface_hub for the test."""
    import huggingface_hub

    RecordingApi.calls = []
    RecordingApi.valid_tokens = set()
    monkeypatch.setattr(huggingface_hub, "HfApi", RecordingApi)
    return RecordingApi
