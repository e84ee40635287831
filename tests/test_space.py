"""``lsplits push-space``: the staged folder (Space files, vendored package, assets) and the upload.

The upload goes to a fake Hub on localhost, so the real huggingface_hub client sends real HTTP
requests; the test checks exactly which files and bytes arrive.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import tomllib
import yaml
from space_helpers import SPACE_DIR, build_fixture_dataset, fixture_rows

import lsplits
from lsplits.building import demo
from lsplits.building.export import card_data_files
from lsplits.cli import publish
from lsplits.cli.parser import parse_args
from lsplits.errors import ConfigError
from lsplits.hub import demo_space as space

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def local_files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def demo_build(folder: Path) -> Path:
    """The fixture dataset with the scratch LM that ``lsplits demo`` writes beside it and lists among its files
    (4 training steps; a push ships only listed files)."""
    dataset = build_fixture_dataset(folder)
    demo.write_scratch_lm(dataset, folder.parent / f"{folder.name}-cache", max_steps=4, seed=0, progress=False)
    return dataset


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return demo_build(tmp_path_factory.mktemp("demo") / "dataset")


@pytest.fixture(scope="module")
def staged(built, tmp_path_factory) -> Path:
    return space.stage_space(tmp_path_factory.mktemp("stage") / "space", demo_data=built)


def test_stage_has_space_files_vendored_package_and_assets(staged):
    files = local_files(staged)
    for name in ("app.py", "splits_tab.py", "uncertainty_tab.py", "ui_common.py", "requirements.txt", "README.md",
                 "examples/amr_beams.jsonl", "examples/amr_gold.amr", "examples/amr_system_strong.jsonl",
                 "examples/amr_system_middle.jsonl", "examples/amr_system_weak.jsonl"):
        assert files[name] == (SPACE_DIR / name).read_bytes()
    package = Path(lsplits.__file__).parent
    for module in ("__init__.py", "hub/demo_space.py", "uncertainty/report.py", "uncertainty/systems.py", "lm/scoring.py"):
        assert files[f"lsplits/{module}"] == (package / module).read_bytes()
    assert not [name for name in files if "__pycache__" in name or name.endswith(".pyc")]
    assert list(json.loads(files["data/demo-likelihood/lsplits.json"])["splits"]) == ["ll_split", "random"]
    listed = card_data_files(files["data/demo-likelihood/README.md"].decode())
    assert set(listed) == {"ll_split", "random"}
    assert all(f"data/demo-likelihood/{path}" in files for splits in listed.values() for paths in splits.values()
               for path in paths)
    assert json.loads(files["models/scratch-lm/config.json"])["model_type"] == "gpt2"
    assert "models/scratch-lm/tokenizer.json" in files


def test_staging_ships_the_demo_builds_scratch_lm_and_trains_nothing(built, tmp_path, monkeypatch):
    import lsplits.lm.finetune

    def no_training(*args, **kwargs):
        raise AssertionError("staging the Space trained a model")

    monkeypatch.setattr(lsplits.lm.finetune, "finetune", no_training)
    monkeypatch.setattr(demo, "run_demo", no_training)
    files = local_files(space.stage_space(tmp_path / "space", demo_data=built))
    model = local_files(built / demo.SCRATCH_LM_FOLDER)
    assert {f"models/scratch-lm/{name}": data for name, data in model.items()} == {
        name: data for name, data in files.items() if name.startswith("models/")}
    assert not [name for name in files if name.startswith(f"data/demo-likelihood/{demo.SCRATCH_LM_FOLDER}/")]


def test_push_space_without_a_demo_build_says_to_run_lsplits_demo(built, tmp_path, monkeypatch, capsys):
    from lsplits.cli.parser import main

    monkeypatch.chdir(tmp_path)  # no out/demo-likelihood here
    monkeypatch.setattr(demo, "run_demo", lambda *a, **k: pytest.fail("push-space ran the demo build"))
    assert main(["push-space", "org/demo", "--stage", str(tmp_path / "space")]) == 2
    assert capsys.readouterr().err.strip() == ("lsplits push-space: error: out/demo-likelihood: no demo build to ship; "
                                               "run `lsplits demo` first (or push the Space with --no-assets: it then "
                                               "builds them when it starts)")
    no_model = tmp_path / "no-model"
    build_fixture_dataset(no_model)
    assert main(["push-space", "org/demo", "--demo-data", str(no_model), "--stage", str(tmp_path / "space")]) == 2
    assert capsys.readouterr().err.strip() == (f"lsplits push-space: error: {no_model}/scratch-lm: the demo build has "
                                               f"no scratch LM; run `lsplits demo --out {no_model}` again, which "
                                               "writes it")
    assert not (tmp_path / "space").exists()


def test_the_demo_builds_scratch_lm_is_listed_and_trained_once_per_cache(tmp_path, monkeypatch):
    first, second = build_fixture_dataset(tmp_path / "first"), build_fixture_dataset(tmp_path / "second")
    model = demo.write_scratch_lm(first, tmp_path / "cache", max_steps=2, seed=0, progress=False)
    listed = json.loads((first / "lsplits.json").read_text(encoding="utf-8"))["lsplits_files"]
    assert {"scratch-lm/config.json", "scratch-lm/tokenizer.json"} <= set(listed)
    import lsplits.lm.finetune

    monkeypatch.setattr(lsplits.lm.finetune, "finetune", lambda *a, **k: pytest.fail("trained the scratch LM again"))
    again = demo.write_scratch_lm(second, tmp_path / "cache", max_steps=2, seed=0, progress=False)
    assert local_files(again) == local_files(model)  # the same sentences and recipe: the cached model


def test_scratch_lm_trains_on_the_distinct_query_sentences(tmp_path):
    texts = demo.scratch_lm_texts(build_fixture_dataset(tmp_path / "dataset"))
    expected = list(dict.fromkeys(row["text"] for row in fixture_rows()))  # fixture repeats some sentences
    assert sorted(texts) == sorted(expected) and len(texts) == len(set(texts))


@pytest.mark.process
def test_staged_app_imports_the_vendored_package(staged):
    code = "import app, lsplits, splits_tab; print(lsplits.__file__); print(splits_tab.__file__)"
    result = subprocess.run([sys.executable, "-c", code], cwd=staged, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    package_file, tab_file = result.stdout.split()[-2:]
    assert Path(package_file) == staged / "lsplits" / "__init__.py"
    assert Path(tab_file) == staged / "splits_tab.py"


def test_stage_refuses_bad_arguments(tmp_path):
    with pytest.raises(ConfigError, match="already exists"):
        space.stage_space(tmp_path, assets=False)
    with pytest.raises(ConfigError, match="no app.py"):
        space.stage_space(tmp_path / "out", space_dir=tmp_path, assets=False)
    with pytest.raises(ConfigError, match="lsplits demo --out"):
        space.stage_space(tmp_path / "out2", demo_data=tmp_path / "missing")
    assert not (tmp_path / "out2").exists()  # refused before anything is written
    bare = space.stage_space(tmp_path / "bare", assets=False)
    assert (bare / "app.py").is_file() and not (bare / "data").exists() and not (bare / "models").exists()


class FakeHub(BaseHTTPRequestHandler):
    """Answers the Hub API calls of create_repo and create_commit (small files: regular uploads)."""

    requests: list[tuple[str, str, str | None, bytes]] = []
    endpoint = ""

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        FakeHub.requests.append((self.command, self.path, self.headers.get("Authorization"), body))
        if self.path == "/api/repos/create":
            answer = {"url": f"{self.endpoint}/spaces/org/demo", "name": "org/demo"}
        elif self.path == "/api/validate-yaml":
            answer = {"errors": [], "warnings": []}
        elif re.fullmatch(r"/api/spaces/org/demo/preupload/main", self.path):
            answer = {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                for f in json.loads(body)["files"]]}
        elif self.path == "/api/spaces/org/demo/commit/main":
            answer = {"commitUrl": f"{self.endpoint}/spaces/org/demo/commit/{'a' * 40}", "commitOid": "a" * 40,
                      "pullRequestUrl": None}
        else:
            self.send_response(404)
            self.end_headers()
            return
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST


@pytest.fixture
def fake_hub(monkeypatch):
    import huggingface_hub.constants

    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    FakeHub.requests = []
    FakeHub.endpoint = f"http://127.0.0.1:{server.server_port}"
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", FakeHub.endpoint)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    yield FakeHub
    server.shutdown()


def test_push_space_uploads_the_staged_folder_in_one_commit(tmp_path, fake_hub):
    expected = local_files(space.stage_space(tmp_path / "preview", assets=False))
    url = space.push_space("org/demo", assets=False, private=True, token="hf_test_token")
    assert url == f"{fake_hub.endpoint}/spaces/org/demo/commit/{'a' * 40}"
    api = [(path, auth, body) for _, path, auth, body in fake_hub.requests if path.startswith("/api/")
           and "harness" not in path]  # the client may also ask for optional extras; they get 404
    paths = [path for path, _, _ in api]
    assert paths[0] == "/api/repos/create" and paths[-1] == "/api/spaces/org/demo/commit/main"
    assert paths.count("/api/spaces/org/demo/commit/main") == 1
    assert all(auth == "Bearer hf_test_token" for _, auth, _ in api)
    create = json.loads(api[0][2])
    assert (create["type"], create["sdk"], create["organization"], create["name"], create["visibility"]) == \
        ("space", "gradio", "org", "demo", "private")
    sent = {}
    for line in api[-1][2].decode().splitlines():
        item = json.loads(line)
        if item["key"] == "file":
            sent[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
    assert sent == expected
    assert "lsplits/hub/demo_space.py" in sent and "app.py" in sent


def test_cli_stage_only_sends_nothing(tmp_path, fake_hub, capsys):
    args = parse_args(["push-space", "org/demo", "--no-assets", "--stage", str(tmp_path / "preview")])
    assert publish.push_space(args) == 0
    assert (tmp_path / "preview" / "app.py").is_file() and (tmp_path / "preview" / "lsplits" / "hub" / "demo_space.py").is_file()
    assert f"staged the Space in {tmp_path / 'preview'}" in capsys.readouterr().out
    assert not [path for _, path, _, _ in fake_hub.requests if path.startswith("/api/") and "harness" not in path]
    with pytest.raises(ConfigError, match="org/name"):
        space.push_space("no-slash", assets=False)


def test_space_metadata_and_requirements():
    header = (SPACE_DIR / "README.md").read_text(encoding="utf-8").split("---")[1]
    card = yaml.safe_load(header)
    import gradio

    assert card["sdk"] == "gradio" and card["app_file"] == "app.py"
    assert card["sdk_version"] == gradio.__version__
    assert card["title"] and len(card["short_description"]) <= 60
    requirements = {re.split(r"[<>=!~ ]", line.strip())[0].lower().replace("_", "-")
                    for line in (SPACE_DIR / "requirements.txt").read_text().splitlines()
                    if line.strip() and not line.startswith(("#", "-"))}
    runtime = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    needed = {re.split(r"[<>=!~ \[]", dep)[0].lower().replace("_", "-") for dep in runtime}
    assert needed <= requirements, f"missing from requirements.txt: {needed - requirements}"
    assert "lsplits" not in requirements and "gradio" not in requirements
