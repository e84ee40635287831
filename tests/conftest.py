"""Shared fixtures: ``hub_api`` replaces huggingface_hub.HfApi at the network boundary; ``online`` switches
Hub access on for one test.

The session also checks that it leaves nothing running: every process the suite starts inherits a
marker variable, and at the end any process still carrying it fails the run (and is killed).

Under pytest-xdist (``make test`` runs a worker more than there are cores) each worker gets its own LSPLITS_CACHE, and only the
controller checks for processes left running (the workers carry the marker too). Every test that starts a
process, a browser or a virtual environment is marked ``process`` where it is written (``@pytest.mark.process``,
or its module's ``pytestmark``), and no other test is (``tests/test_no_shims.py`` checks both), so ``make check``
(``-m "not process and not slow and not browser"``) runs every in-process unit test.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
import uuid
from pathlib import Path

import pytest

SESSION_MARKER = "LSPLITS_TEST_SESSION"


_OWN_CACHE: list[str] = []
_OWN_CACHE_VARIABLE = "LSPLITS_TEST_OWN_CACHE"  # the LSPLITS_CACHE this suite made (a worker makes its own)

def pytest_configure(config) -> None:
    os.environ.setdefault(SESSION_MARKER, uuid.uuid4().hex)
    _share_cores()
    cache = os.environ.get("LSPLITS_CACHE")
    inherited = os.environ.get("PYTEST_XDIST_WORKER") and cache and os.environ.get(_OWN_CACHE_VARIABLE) == cache
    if not cache or inherited:  # defaults (demo, Space, CLI) never touch the user's cache, nor another worker's
        _OWN_CACHE.append(tempfile.mkdtemp(prefix="lsplits-test-cache-"))
        os.environ["LSPLITS_CACHE"] = os.environ[_OWN_CACHE_VARIABLE] = _OWN_CACHE[0]


def _share_cores() -> None:
    """Under pytest-xdist, torch in each worker and in the processes it starts gets its share of the cores
    (OMP_NUM_THREADS, unless set): ``make test`` runs a worker more than there are cores, and every tiny model's
    default of one thread per core made the workers' threads fight over them (measured: 474 s against 502 s)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers:
        os.environ.setdefault("OMP_NUM_THREADS", str(max(1, len(os.sched_getaffinity(0)) // workers)))


def pytest_collection_modifyitems(config, items) -> None:
    """Under pytest-xdist, the tests that take minutes first (:func:`_longest_first`)."""
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    items[:] = _longest_first(items, workers)


LONGEST = ("tests/test_release.py::test_the_installed_wheel_runs_the_demo_outside_the_checkout",
           "tests/test_metric_spaces_clean_venv.py::test_staged_spaces_compute_the_library_results_without_lsplits")
"""The tests that take minutes (a clean venv each): under pytest-xdist each starts first on a worker of its own."""


def _longest_first(items: list, workers: int) -> list:
    """``items`` with the :data:`LONGEST` ones moved to the starts of the chunks of pytest-xdist's first
    distribution to ``workers`` workers (``--dist worksteal``: contiguous, the first ``n // workers`` to
    the first worker, and so on), so that they start at once and side by side, not one after the other."""
    longest = [item for item in items if item.nodeid in LONGEST]
    if not longest:
        return items
    rest = [item for item in items if item.nodeid not in LONGEST]
    ordered: list = []
    left = len(items)
    for worker in range(workers):
        share = left // (workers - worker)
        head = [longest.pop(0)] if longest and share else []
        taken = rest[:max(0, share - len(head))]
        del rest[:len(taken)]
        ordered += head + taken
        left -= share
    return ordered + longest + rest


def _marked_processes() -> list[tuple[int, str]]:
    """(pid, command line) of every other live process started by this test session (Linux /proc)."""
    marker = f"{SESSION_MARKER}={os.environ[SESSION_MARKER]}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append((int(entry.name), (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


@pytest.hookimpl(trylast=True)  # after pytest-xdist has shut its workers down
def pytest_sessionfinish(session, exitstatus) -> None:
    """Fail the run if a process the suite started outlives it (after a short grace period)."""
    for folder in _OWN_CACHE:
        shutil.rmtree(folder, ignore_errors=True)
    if not Path("/proc/self/environ").exists() or os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a worker: the other workers carry the marker too, and the controller checks once they ended
    deadline = time.monotonic() + 10
    while (left := _marked_processes()) and time.monotonic() < deadline:
        time.sleep(0.5)
    if left:
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        lines = "\n".join(f"  {pid}: {cmd[:200]}" for pid, cmd in left)
        session.config.get_terminal_writer().line(f"\nprocesses left running by the test suite (killed):\n{lines}",
                                                  red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _hub_http_error(status: int, message: str) -> Exception:
    """The Hub's HfHubHTTPError with ``status``, built on a real (offline) httpx2 response, as whoami raises it."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    url = "https://huggingface.co/api/whoami-v2"
    return HfHubHTTPError(message, response=httpx2.Response(status, request=httpx2.Request("GET", url)))


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
            raise _hub_http_error(401, "401 Client Error: Unauthorized for url: https://huggingface.co/api/whoami-v2")
        return {"name": "recorded-user"}

    def create_repo(self, repo_id, **kwargs):
        RecordingApi.calls.append(("create_repo", repo_id, kwargs, self.token))

    def create_commit(self, repo_id, operations, **kwargs):
        sent = {op.path_in_repo: op.path_or_fileobj if isinstance(op.path_or_fileobj, bytes)
                else Path(op.path_or_fileobj).read_bytes() for op in operations}
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


@pytest.fixture
def online(monkeypatch):
    """Hub access switched on for the test (the suite runs with HF_HUB_OFFLINE=1); no network is used."""
    import huggingface_hub

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub, "is_offline_mode", lambda: False)
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    return monkeypatch


@pytest.fixture(scope="module")
def one_thread():
    """Torch on one thread for a module of tiny models (they run fastest so, and the machine's cores are shared);
    a module asks for it with ``pytestmark = pytest.mark.usefixtures("one_thread")``."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def parser_folder(tmp_path_factory) -> Path:
    """The tiny seq2seq AMR parser of beams_fixtures.py, trained once per session; tests only read it."""
    from beams_fixtures import build_tiny_parser

    return build_tiny_parser(tmp_path_factory.mktemp("tiny-parser"))
