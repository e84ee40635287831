"""Pushing a folder: one commit with exactly the folder's files, tested at the HfApi HTTP boundary; every
push command checks the Hub access before any work."""

from __future__ import annotations

import pytest

from lsplits.errors import ConfigError
from lsplits.hub.push import check_hub_access, push_folder
from lsplits.io.records import DATASET_MARKER, mark_folder


def written_by_lsplits(folder):
    """``folder`` with its files listed in an lsplits marker, as a build leaves it (a push sends only those)."""
    mark_folder(folder, DATASET_MARKER)
    return folder


def test_push_sends_every_listed_file_in_one_commit(tmp_path, hub_api):
    (tmp_path / "ll_split").mkdir()
    (tmp_path / "ll_split" / "train.parquet").write_bytes(b"PAR1")
    (tmp_path / "README.md").write_text("card")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"junk")
    written_by_lsplits(tmp_path)
    url = push_folder(tmp_path, "org/toy", private=True)
    assert url == "https://hub.invalid/org/toy/commit/1"
    assert hub_api.calls[0] == ("create_repo", "org/toy",
                            {"repo_type": "dataset", "private": True, "exist_ok": True, "space_sdk": None}, None)
    kind, repo, sent, kwargs = hub_api.calls[1]
    assert (kind, repo, kwargs["repo_type"]) == ("create_commit", "org/toy", "dataset")
    assert sent == {"README.md": b"card", "ll_split/train.parquet": b"PAR1",
                    DATASET_MARKER: (tmp_path / DATASET_MARKER).read_bytes()}
    assert len(hub_api.calls) == 2


def test_push_space_passes_sdk(tmp_path, hub_api):
    (tmp_path / "app.py").write_text("print(1)")
    push_folder(written_by_lsplits(tmp_path), "org/space", repo_type="space", space_sdk="gradio")
    assert hub_api.calls[0][2]["space_sdk"] == "gradio"


def test_push_rejects_bad_input(tmp_path, hub_api):
    with pytest.raises(ConfigError, match="org/name"):
        push_folder(tmp_path, "noslash")
    with pytest.raises(ConfigError, match="empty"):
        push_folder(tmp_path, "org/x")
    assert hub_api.calls == []


def test_access_check_refuses_offline_missing_and_refused_tokens(hub_api, monkeypatch, online):
    import huggingface_hub

    with pytest.raises(ConfigError, match=r"^push_to_hub org/x: no Hugging Face token; run `hf auth login`"):
        check_hub_access("org/x", option="push_to_hub")
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: "hf_stale")
    with pytest.raises(ConfigError, match="did not accept the token or cannot be reached: 401 Client Error"):
        check_hub_access("org/x")
    hub_api.valid_tokens = {"hf_good"}
    assert check_hub_access("org/x", token="hf_good") == "recorded-user"
    assert hub_api.calls == [("whoami", "hf_stale"), ("whoami", "hf_good")]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ConfigError, match="HF_HUB_OFFLINE is set"):
        check_hub_access("org/x", token="hf_good")
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")  # huggingface_hub reads it too: the message names what is set
    with pytest.raises(ConfigError, match="cannot push, TRANSFORMERS_OFFLINE is set"):
        check_hub_access("org/x", token="hf_good")
    with pytest.raises(ConfigError, match="'org/name'"):
        check_hub_access("org/x/y", token="hf_good")
    assert len(hub_api.calls) == 2  # neither refusal reached the Hub


def test_push_and_build_check_access_before_any_work(tmp_path, hub_api, online, capsys):
    from lsplits.cli.parser import main

    folder = tmp_path / "built"
    folder.mkdir()
    (folder / "README.md").write_text("card")
    assert main(["push", str(folder), "org/x"]) == 2
    assert capsys.readouterr().err.strip() == ("lsplits push: error: org/x: no Hugging Face token; run "
                                               "`hf auth login` or set HF_TOKEN")
    data = tmp_path / "d.jsonl"
    data.write_text("".join(f'{{"text": "line number {i}"}}\n' for i in range(20)))
    cache = tmp_path / "cache"
    code = main(["build", "--data-files", str(data), "--query-field", "text", "--lm", "scratch", "--out",
                 str(tmp_path / "out"), "--cache-dir", str(cache), "--max-steps", "2", "--no-progress",
                 "--push-to-hub", "org/x"])
    assert code == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert err == ["lsplits build: error: --push-to-hub org/x: no Hugging Face token; run `hf auth login` or "
                   "set HF_TOKEN"]
    assert not cache.exists() and not (tmp_path / "out").exists()  # nothing was scored or written
    assert hub_api.calls == []


def test_push_with_a_valid_token_uploads(tmp_path, hub_api, online, capsys):
    import huggingface_hub

    from lsplits.cli.parser import main

    online.setattr(huggingface_hub, "get_token", lambda: "hf_good")
    hub_api.valid_tokens = {"hf_good"}
    (tmp_path / "README.md").write_text("card")
    assert main(["push", str(written_by_lsplits(tmp_path)), "org/x"]) == 0
    assert [call[0] for call in hub_api.calls] == ["whoami", "create_repo", "create_commit"]
    assert "pushed to https://hub.invalid/org/x/commit/1" in capsys.readouterr().out


def test_push_uploads_the_card_naming_the_repo_and_leaves_the_folder_alone(tmp_path, hub_api, online):
    """The card's "How to load" names the pushed repo on the Hub; the local card keeps its placeholder."""
    import huggingface_hub

    from lsplits.cli.parser import main

    online.setattr(huggingface_hub, "get_token", lambda: "hf_good")
    hub_api.valid_tokens = {"hf_good"}
    local = ('# x\n\nds = load_dataset("your-org/x")\n\n## How to load\n\n```python\n'
             'ds = load_dataset("your-org/x", "ll_split")\n```\n')
    (tmp_path / "README.md").write_text(local)
    assert main(["push", str(written_by_lsplits(tmp_path)), "org/snli-likelihood"]) == 0
    sent = hub_api.calls[-1][2]["README.md"].decode()
    assert 'ds = load_dataset("org/snli-likelihood", "ll_split")' in sent
    assert sent.count("your-org/x") == 1  # only the How-to-load call is rewritten
    assert (tmp_path / "README.md").read_text() == local


def _tripwire(what):
    def fail(*args, **kwargs):
        raise AssertionError(f"{what} ran before the Hub access was checked")
    return fail


@pytest.mark.parametrize("argv", [["push-metrics", "team"], ["push-space", "team/demo"],
                                  ["push-space", "team/demo", "--no-assets"]])
def test_push_metrics_and_push_space_check_access_before_any_work(argv, hub_api, online, capsys, monkeypatch):
    """The three push commands share the upload path: a missing token is one line, before staging anything."""
    from lsplits.cli.parser import main
    from lsplits.hub import demo_space as space
    from lsplits.hub import metric_spaces

    monkeypatch.setattr(space, "stage_space", _tripwire("staging the Space"))
    monkeypatch.setattr(metric_spaces, "push_folder", _tripwire("uploading a metric module"))
    assert main(argv) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    repo = "team/prr" if argv[0] == "push-metrics" else "team/demo"
    assert err == [f"lsplits {argv[0]}: error: {repo}: no Hugging Face token; run `hf auth login` or set HF_TOKEN"]
    assert hub_api.calls == []


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.process
def test_a_push_with_no_network_is_one_line_not_an_httpx2_traceback(tmp_path):
    """HF_HUB_OFFLINE unset and the Hub unreachable (a closed port on this machine): huggingface_hub 2.x raises
    httpx2 errors, which the access check and the upload itself both turn into one line."""
    import os
    import subprocess
    import sys

    folder = tmp_path / "built"
    folder.mkdir()
    (folder / "README.md").write_text("card")
    written_by_lsplits(folder)
    # huggingface_hub is offline under either variable (CI sets both)
    env = {key: value for key, value in os.environ.items() if key not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_ENDPOINT=f"http://127.0.0.1:{_closed_port()}", HF_TOKEN="hf_unchecked")
    done = subprocess.run([sys.executable, "-m", "lsplits", "push", str(folder), "org/x"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == ("lsplits push: error: org/x: the Hub did not accept the token or cannot be "
                                   "reached: [Errno 111] Connection refused")
    upload = (f"from lsplits.hub.push import push_folder\ntry:\n    push_folder({str(folder)!r}, 'org/x')\n"
              "except Exception as exc:\n    print(type(exc).__name__, exc)\n")
    done = subprocess.run([sys.executable, "-c", upload], env=env, capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == (f"ConfigError org/x: uploading {folder} failed, nothing was committed: "
                                   "[Errno 111] Connection refused")
