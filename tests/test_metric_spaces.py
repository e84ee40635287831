"""``lsplits push-metrics``: one Space per evaluate module, exact files, tested at the HfApi boundary."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsplits.cli.parser import parse_args
from lsplits.cli.publish import push_metrics as run_push_metrics
from lsplits.errors import ConfigError
from lsplits.hub.metric_spaces import push_metrics

ROOT = Path(__file__).resolve().parents[1]


def test_every_module_becomes_a_gradio_space(hub_api):
    urls = push_metrics("my-org", metrics_dir=ROOT / "metrics", token="hf_test")
    assert urls == {name: f"https://hub.invalid/spaces/my-org/{name}/commit/1"
                    for name in ("prr", "beam_uncertainty", "amr_similarity", "ue_metrics")}
    creates = [c for c in hub_api.calls if c[0] == "create_repo"]
    commits = [c for c in hub_api.calls if c[0] == "create_commit"]
    assert [c[1] for c in creates] == ["my-org/prr", "my-org/beam_uncertainty", "my-org/amr_similarity",
                                       "my-org/ue_metrics"]
    for _, _, kwargs, token in creates:
        assert kwargs == {"repo_type": "space", "private": False, "exist_ok": True, "space_sdk": "gradio"}
        assert token == "hf_test"
    for _, repo_id, sent, kwargs in commits:
        name = repo_id.split("/")[1]
        assert sorted(sent) == sorted([f"{name}.py", "README.md", "app.py", "requirements.txt"])
        assert sent["README.md"] == (ROOT / "metrics" / name / "README.md").read_bytes()
        assert kwargs["repo_type"] == "space"


def test_lsplits_requirement_is_rewritten_in_the_upload_only(hub_api, tmp_path):
    original = (ROOT / "metrics" / "prr" / "requirements.txt").read_bytes()
    push_metrics("org", metrics_dir=ROOT / "metrics", modules=("prr",),
                 lsplits_requirement="lsplits @ git+https://github.com/org/lsplits")
    sent = hub_api.calls[1][2]["requirements.txt"].decode().splitlines()
    assert "lsplits @ git+https://github.com/org/lsplits" in sent and "lsplits" not in sent
    assert "evaluate>=0.4.2" in sent
    assert (ROOT / "metrics" / "prr" / "requirements.txt").read_bytes() == original


def test_incomplete_module_stops_before_any_upload(hub_api, tmp_path):
    for name in ("prr", "beam_uncertainty"):
        (tmp_path / name).mkdir()
        for file in (f"{name}.py", "README.md", "requirements.txt", "app.py"):
            (tmp_path / name / file).write_text("lsplits\n")
    (tmp_path / "beam_uncertainty" / "app.py").unlink()
    with pytest.raises(ConfigError, match="missing app.py"):
        push_metrics("org", metrics_dir=tmp_path, modules=("prr", "beam_uncertainty"))
    assert hub_api.calls == []
    with pytest.raises(ConfigError, match="not 'org/name'|alone"):
        push_metrics("org/prr", metrics_dir=tmp_path)


def test_cli_entry_point(hub_api, capsys, monkeypatch, online):
    monkeypatch.chdir(ROOT)
    hub_api.valid_tokens = {"hf_good"}
    assert run_push_metrics(parse_args(["push-metrics", "team", "--only", "amr_similarity", "--private",
                                        "--token", "hf_good"])) == 0
    assert hub_api.calls[0] == ("whoami", "hf_good")  # the access check comes before any upload
    assert hub_api.calls[1][1] == "team/amr_similarity" and hub_api.calls[1][2]["private"] is True
    assert 'evaluate.load("team/amr_similarity")' in capsys.readouterr().out
    with pytest.raises(ConfigError, match="unknown metric module"):
        run_push_metrics(parse_args(["push-metrics", "team", "--only", "bleu"]))


def test_what_reaches_the_hub_loads_as_an_evaluate_module(hub_api, tmp_path):
    """A Space holds exactly the uploaded files; evaluate.load("ORG/NAME") imports NAME.py from them."""
    import evaluate

    push_metrics("org", metrics_dir=ROOT / "metrics")
    for _, repo_id, sent, _ in (c for c in hub_api.calls if c[0] == "create_commit"):
        space = tmp_path / repo_id.split("/")[1]
        space.mkdir()
        for path, content in sent.items():
            (space / path).write_bytes(content)
    prr = evaluate.load(str(tmp_path / "prr"))
    assert prr.compute(uncertainties=[0.2, 0.1], qualities=[0.3, 0.9], n_bootstrap=0)["prr"] == pytest.approx(1.0)
    similarity = evaluate.load(str(tmp_path / "amr_similarity"), "smatchpp")
    assert similarity.compute(predictions=["(a / b)"], references=["(a / b)"])["smatchpp"] == 1.0
