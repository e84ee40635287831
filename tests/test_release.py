"""The release: ``python -m build`` makes an sdist and a wheel that pass ``twine check``, the wheel's only
top-level package is ``lsplits`` (builders inside, as ``lsplits.builders``), and the wheel installed in a
fresh venv runs ``lsplits --version`` and ``lsplits demo`` outside the checkout.

Builds are cached under ``.cache/dist/`` by the content of the files that go into them; the fresh venv
(tests/venvs.py, outside the checkout) by the wheel's dependencies (the wheel itself is reinstalled every run).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from venvs import CACHE as VENV_CACHE
from venvs import cached_venv, clean_env

import lsplits

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def _sources_key() -> str:
    """Hash of every file the sdist is built from (the package, the builders, the project files)."""
    digest = hashlib.sha256()
    files = [ROOT / "pyproject.toml", ROOT / "README.md", ROOT / "MANIFEST.in"]
    files += sorted(p for folder in ("lsplits", "builders", "metrics", "spaces", "docs") for p in (ROOT / folder).rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts)
    for path in files:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@pytest.fixture(scope="module")
def dist() -> Path:
    """The folder holding the sdist and the wheel built from this checkout (built once per source state: under
    pytest-xdist the first worker builds while the others wait on the lock, then take its build)."""
    folder = ROOT / ".cache" / "dist" / _sources_key()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".complete").exists():
            shutil.rmtree(folder, ignore_errors=True)  # a killed build's leftovers
            subprocess.run([sys.executable, "-m", "build", "--outdir", str(folder), str(ROOT)], check=True,
                           capture_output=True, timeout=900)
            (folder / ".complete").touch()
    return folder


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("*.whl")
    return wheel


def _metadata(wheel: Path):
    """The wheel's METADATA (its body is the long description, the PyPI page)."""
    with zipfile.ZipFile(wheel) as archive:
        return Parser().parsestr(archive.read(f"lsplits-{lsplits.__version__}.dist-info/METADATA").decode())


@pytest.mark.process
def test_sdist_and_wheel_pass_twine_check(dist):
    files = sorted(str(p) for p in dist.iterdir() if p.suffix in (".whl", ".gz"))
    assert [Path(f).name for f in files] == [f"lsplits-{lsplits.__version__}-py3-none-any.whl",
                                             f"lsplits-{lsplits.__version__}.tar.gz"]
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *files], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.count("PASSED") == 2, done.stdout + done.stderr


@pytest.mark.process
def test_the_package_page_tells_cpu_users_how_to_get_the_cpu_torch_and_how_to_release(dist):
    """pip alone takes PyPI's CUDA torch (3 GB of nvidia-* on a CPU machine): the long description names PyTorch's
    CPU wheel index before the install, and the release line the build package it runs (issue 38 items 3, 8)."""
    page = _metadata(_wheel(dist)).get_payload()
    cpu = page.index("pip install torch --index-url https://download.pytorch.org/whl/cpu")
    assert cpu < page.index("pip install dist/lsplits-*.whl")
    assert "`pip install build` then `python -m build`" in page


@pytest.mark.process
def test_the_sdist_ships_every_image_the_readme_shows(dist):
    """The README (the PyPI page) links its figures by relative docs/ paths: the sdist carries them."""
    import re
    import tarfile

    (sdist,) = dist.glob("*.tar.gz")
    names = {name.split("/", 1)[1] for name in tarfile.open(sdist).getnames() if "/" in name}
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(images) == 5 and all(image.startswith("docs/") for image in images)
    assert set(images) <= names and "docs/architecture.md" in names


@pytest.mark.process
def test_the_wheel_holds_lsplits_alone_with_the_builders_inside(dist):
    names = zipfile.ZipFile(_wheel(dist)).namelist()
    assert {name.split("/")[0] for name in names} == {"lsplits", f"lsplits-{lsplits.__version__}.dist-info"}
    for builder in ("__init__", "common", "snli", "boolq", "spider"):
        assert f"lsplits/builders/{builder}.py" in names
    assert "lsplits/building/demo.py" in names and "lsplits/data/synthetic.py" in names
    top_level = zipfile.ZipFile(_wheel(dist)).read(f"lsplits-{lsplits.__version__}.dist-info/top_level.txt")
    assert top_level.decode().split() == ["lsplits"]
    # metrics/ and spaces/ come inside, every tracked file of them and nothing else (push-metrics, push-space)
    tracked = subprocess.run(["git", "ls-files", "metrics", "spaces"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    assert len(tracked) > 20
    assert sorted(name for name in names if "/_shipped/" in name) == sorted(f"lsplits/_shipped/{t}" for t in tracked)


@pytest.mark.timeout(1800)  # the first run installs the venv (torch and all) before the demo
@pytest.mark.process
def test_the_installed_wheel_runs_the_demo_outside_the_checkout(dist, tmp_path):
    wheel = _wheel(dist)
    metadata = _metadata(wheel)
    dependencies = [line for line in metadata.get_all("Requires-Dist") if "extra ==" not in line]
    import torch  # the same torch build as here (the CPU wheel on a machine without CUDA), not PyPI's default

    python = cached_venv("wheel", [f"torch=={torch.__version__}", *dependencies])
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", str(wheel)],
                   check=True, env=clean_env(), cwd=tmp_path)
    lsplits_script = python.parent / "lsplits"
    version = subprocess.run([str(lsplits_script), "--version"], capture_output=True, text=True, env=clean_env(),
                             cwd=tmp_path)
    assert version.stdout.strip() == f"lsplits {lsplits.__version__}", version.stderr
    where = subprocess.run([str(python), "-c", "import lsplits, lsplits.builders; print(lsplits.__file__)"],
                           capture_output=True, text=True, env=clean_env(), cwd=tmp_path)
    assert where.returncode == 0 and Path(where.stdout.strip()).is_relative_to(VENV_CACHE), where.stderr
    assert not Path(where.stdout.strip()).is_relative_to(ROOT / "lsplits")
    env = clean_env() | {"LSPLITS_CACHE": str(tmp_path / "cache")}
    demo = subprocess.run([str(lsplits_script), "demo", "--out", str(tmp_path / "demo"), "--n", "400", "--max-steps", "8",
                           "--scratch-steps", "4", "--no-progress"],  # a smoke run: the packaging is tested, not the LM
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert demo.returncode == 0, demo.stderr[-3000:]
    settings = json.loads((tmp_path / "demo" / "lsplits.json").read_text(encoding="utf-8"))
    assert "ll_split" in json.dumps(settings) and settings["settings"]["max_steps"] == 8, settings
    assert (tmp_path / "demo" / "README.md").read_text(encoding="utf-8").startswith("---")
    builders = subprocess.run([str(lsplits_script), "build", "--help"], capture_output=True, text=True, env=env,
                              cwd=tmp_path)
    assert "boolq, snli, spider" in " ".join(builders.stdout.split())  # the builders came with the wheel
    # publishing needs no checkout: the metric modules and the demo Space came with the wheel too
    staged = subprocess.run([str(lsplits_script), "push-metrics", "--stage", str(tmp_path / "metric-spaces")],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert staged.returncode == 0, staged.stderr[-3000:]
    for name in ("prr", "ue_metrics", "beam_uncertainty", "amr_similarity"):
        assert (tmp_path / "metric-spaces" / name / f"{name}.py").is_file(), staged.stdout
    space = subprocess.run([str(lsplits_script), "push-space", "me/lsplits-demo", "--no-assets", "--stage",
                            str(tmp_path / "space")], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert space.returncode == 0, space.stderr[-3000:]
    assert (tmp_path / "space" / "app.py").is_file() and (tmp_path / "space" / "lsplits" / "api.py").is_file()
    assert not (tmp_path / "space" / "lsplits" / "_shipped").exists()  # the Space does not carry itself twice
