"""Clean virtual environments for tests, cached by what they hold under :data:`CACHE`.

The cache lies outside the checkout (``~/.cache/lsplits-test-venvs``, or ``$LSPLITS_TEST_VENVS``), so a fresh
clone (CI) reuses the venvs an earlier run on the machine built. uv (a dev dependency) installs them: on a new
machine the wheel's venv, torch and all, takes 7 s with uv against 49 s with pip, which is used where uv is
missing or fails. Nothing is compiled at install: Python compiles, once, the modules a test imports. A venv is
complete only once its ``.complete`` file exists, so a killed install is redone, not reused.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("LSPLITS_TEST_VENVS") or Path.home() / ".cache" / "lsplits-test-venvs")
"""Where the test venvs live: outside the checkout, so that they outlive a clone."""


def clean_env() -> dict[str, str]:
    """The environment for a venv's processes: no PYTHONPATH, nothing of this checkout on the path, offline Hub."""
    # the venvs install without compiling: with PYTHONDONTWRITEBYTECODE kept, every process in them would compile
    # torch and transformers from source again instead of once
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE")}
    env["HF_HUB_OFFLINE"] = "1"
    return env


def cached_venv(name: str, packages: list[str], key_extra: str = "") -> Path:
    """The python of a venv named ``name`` with only ``packages`` (pip requirement strings or wheel paths) and pip
    installed."""
    key = hashlib.sha256("\n".join([sys.version, key_extra, *sorted(packages)]).encode()).hexdigest()[:12]
    folder = CACHE / f"{name}-{key}"
    python = folder / "bin" / "python"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / ".complete").exists():
            return python
        if not _uv_install(folder, packages):
            shutil.rmtree(folder, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, env=clean_env())
            subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                            "--no-compile", *packages], check=True, env=clean_env(), cwd=folder)
        (folder / ".complete").write_text("\n".join(packages) + "\n", encoding="utf-8")
    return python


def _uv_install(folder: Path, packages: list[str]) -> bool:
    """Make the venv ``folder`` (with pip in it, for the tests' own installs) and install ``packages`` with uv,
    from the index uv uses and pip's find-links (where the CPU build of torch lies); False where uv is not
    installed or fails (the caller then uses pip)."""
    try:
        from uv import find_uv_bin
    except ImportError:
        return False
    uv = find_uv_bin()
    shutil.rmtree(folder, ignore_errors=True)
    links = [arg for link in _pip_find_links() for arg in ("--find-links", link)]
    made = subprocess.run([uv, "venv", "--quiet", "--seed", "--python", sys.executable, str(folder)],
                          env=clean_env(), capture_output=True, text=True)
    done = made.returncode == 0 and subprocess.run(
        [uv, "pip", "install", "--quiet", "--python", str(folder / "bin" / "python"), *links, *packages],
        env=clean_env(), capture_output=True, text=True, cwd=folder).returncode == 0
    if not done:
        shutil.rmtree(folder, ignore_errors=True)
    return done


def _pip_find_links() -> list[str]:
    """The folders and pages of wheels pip is told to look in (``PIP_FIND_LINKS``, ``pip config``): uv reads
    neither, and a machine may keep its torch build there."""
    links = os.environ.get("PIP_FIND_LINKS", "").split()
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(".find-links"):
            links += value.strip("'\"").split()
    return list(dict.fromkeys(links))


def site_packages_mib(python: Path) -> float:
    """Size on disk of the venv's site-packages, in MiB (what its packages take once installed)."""
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True, env=clean_env()).stdout.strip()
    return sum(f.stat().st_size for f in Path(out).rglob("*") if f.is_file()) / 2**20
