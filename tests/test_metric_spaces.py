"""``lsplits push-metrics``: one Space per evaluate module, exact files, tested at the HfApi boundary."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lsplits.cli.parser import parse_args
from lsplits.cli.publish import push_metrics as run_push_metrics
from lsplits.errors import ConfigError
from lsplits.hub.metric_spaces import METRIC_MODULES, push_metrics, stage_metrics
from lsplits.runtime.pysource import parse_file

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
        assert {f"{name}.py", "README.md", "app.py", "requirements.txt"} <= set(sent)
        assert all(path.startswith("lsplits_") for path in set(sent) - {f"{name}.py", "README.md", "app.py",
                                                                        "requirements.txt"})
        assert b"lsplits" not in sent["requirements.txt"]
        assert sent["README.md"] == (ROOT / "metrics" / name / "README.md").read_bytes()
        assert kwargs["repo_type"] == "space"


def test_staged_spaces_import_only_local_files_and_pypi_packages(tmp_path):
    staged = stage_metrics(tmp_path / "spaces", metrics_dir=ROOT / "metrics")
    for name in METRIC_MODULES:
        folder = staged / name
        files = sorted(folder.glob("*.py"))
        for file in files:  # no absolute lsplits import is left anywhere, in functions included
            for node in ast.walk(parse_file(file)):
                if isinstance(node, ast.ImportFrom) and not node.level:
                    assert (node.module or "").split(".")[0] != "lsplits", (file.name, node.module)
                if isinstance(node, ast.Import):
                    assert all(a.name.split(".")[0] != "lsplits" for a in node.names), file.name
        script = (folder / f"{name}.py").read_text(encoding="utf-8")
        for file in files:  # evaluate copies only what the module itself imports relatively
            if file.name not in (f"{name}.py", "app.py"):
                assert f"from .{file.stem} import" in script, (name, file.name)
        packages = {line.split(">")[0].split("=")[0].split("<")[0]
                    for line in (folder / "requirements.txt").read_text(encoding="utf-8").split()}
        assert "evaluate" in packages and not packages & {"lsplits", "torch", "transformers", "accelerate"}
        assert ({"penman", "smatchpp"} <= packages) == (name in ("beam_uncertainty", "amr_similarity"))
        assert (folder / "README.md").read_bytes() == (ROOT / "metrics" / name / "README.md").read_bytes()
    prr_packages = {p.split(">")[0] for p in (staged / "prr" / "requirements.txt").read_text().split()}
    # PRR needs numpy beyond what evaluate installs anyway (datasets, huggingface-hub, pyyaml: imported by errors.py)
    assert {"evaluate", "numpy"} <= prr_packages <= {"evaluate", "numpy", "datasets", "huggingface-hub", "pyyaml"}
    # the library is untouched and the repository keeps no second copy
    assert not list((ROOT / "metrics").glob("*/lsplits_*.py"))
    with pytest.raises(ConfigError, match=f"^stage {ROOT / 'metrics'}: "):  # the output guard: not over files lsplits did not write
        stage_metrics(ROOT / "metrics", metrics_dir=ROOT / "metrics")


def test_stage_from_the_cli_needs_no_org(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert run_push_metrics(parse_args(["push-metrics", "--stage", str(tmp_path / "s"), "--only", "prr"])) == 0
    assert sorted(p.name for p in (tmp_path / "s").iterdir() if not p.name.startswith(".")) == ["prr"]
    assert "evaluate.load" in capsys.readouterr().out
    with pytest.raises(ConfigError, match="ORG.*--stage"):
        run_push_metrics(parse_args(["push-metrics"]))


def test_incomplete_module_stops_before_any_upload(hub_api, tmp_path):
    for name in ("prr", "beam_uncertainty"):
        (tmp_path / name).mkdir()
        for file in (f"{name}.py", "README.md", "app.py"):
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


@pytest.mark.process
def test_a_staged_module_missing_a_package_says_so_in_one_line_naming_its_requirements(tmp_path):
    """Issue 38 item 8: evaluate.load of amr_similarity without penman was a bare ModuleNotFoundError raised
    deep inside a flattened file; it is one ImportError naming the package (as requirements.txt pins it) and
    the Space's requirements.txt, raised before any flattened file is imported."""
    staged = stage_metrics(tmp_path / "spaces", metrics_dir=ROOT / "metrics", modules=("amr_similarity",))
    pin = next(line for line in (staged / "amr_similarity" / "requirements.txt").read_text().split()
               if line.startswith("penman"))
    blocked = ("import sys; sys.modules['penman'] = None  # as if not installed\n"
               "import evaluate; evaluate.load(sys.argv[1], 'smatchpp')")
    env = {**os.environ, "HF_MODULES_CACHE": str(tmp_path / "modules"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", blocked, str(staged / "amr_similarity")], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        f"ImportError: the evaluate module 'amr_similarity' needs {pin}, not installed: install its Space's "
        "requirements.txt (pip install -r requirements.txt, the file beside amr_similarity.py)")
    assert "ModuleNotFoundError" not in done.stderr and "lsplits_similarity_amr_graph" not in done.stderr


def test_every_space_readme_pins_the_one_gradio_sdk_version(tmp_path):
    """The metric Spaces and the demo Space name one Gradio ``sdk_version`` (lsplits.hub.GRADIO_SDK_VERSION), one
    that pyproject's gradio requirement accepts; staging writes it into a README that pins another."""
    import tomllib
    import yaml
    from packaging.requirements import Requirement

    from lsplits.hub import GRADIO_SDK_VERSION

    readmes = sorted([*(ROOT / "metrics").glob("*/README.md"), *(ROOT / "spaces").glob("*/README.md")])
    assert len(readmes) == len(METRIC_MODULES) + 1
    for readme in readmes:
        header = yaml.safe_load(readme.read_text(encoding="utf-8").split("---")[1])
        assert (header["sdk"], str(header["sdk_version"])) == ("gradio", GRADIO_SDK_VERSION), readme
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    gradio = [Requirement(dep) for deps in extras.values() for dep in deps if Requirement(dep).name == "gradio"]
    assert gradio and all(req.specifier.contains(GRADIO_SDK_VERSION) for req in gradio)
    old = tmp_path / "metrics"
    shutil.copytree(ROOT / "metrics" / "prr", old / "prr")
    card = (old / "prr" / "README.md").read_text(encoding="utf-8")
    (old / "prr" / "README.md").write_text(card.replace(f"sdk_version: {GRADIO_SDK_VERSION}", "sdk_version: 4.44.1"),
                                           encoding="utf-8")
    staged = stage_metrics(tmp_path / "staged", metrics_dir=old, modules=("prr",))
    assert (staged / "prr" / "README.md").read_text(encoding="utf-8") == card
