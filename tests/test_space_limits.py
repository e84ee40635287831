"""The Space's limits and time budget, on the app served on localhost (gradio_client over real HTTP).

Every limit is refused in one line naming it and the value sent, before any similarity is computed; a large
request runs alone, stops at its time budget or when its client leaves (its worker processes end), and a small
request is answered within 5 s while it runs.
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import replace

import psutil
import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError
from space_helpers import build_fixture_dataset, running_app, space_settings

pytestmark = pytest.mark.slow

BUDGET_SECONDS = 14.0


def amr(nodes: int, seed: int) -> str:
    """A random tree-shaped AMR graph of ``nodes`` nodes (concepts from a small set, so pairs partly match)."""
    rng = random.Random(seed)
    children: dict[int, list[int]] = {i: [] for i in range(nodes)}
    for i in range(1, nodes):
        children[rng.randrange(max(0, i - 3), i)].append(i)

    def render(i: int) -> str:
        inner = "".join(f" :ARG{j} {render(c)}" for j, c in enumerate(children[i]))
        return f"(v{i} / c{rng.randrange(8)}{inner})"

    return render(0)


def maximal_request(limits) -> tuple[str, str]:
    """Beams and gold at the limits: the most candidates, each graph as large as allowed, and 100 examples (hours
    of Smatch++ work; all the examples allowed would not fit in one upload at this graph size)."""
    n, k, size = 100, limits.candidates, limits.graph_nodes
    beams = "\n".join(json.dumps({"id": f"e{i}", "candidates": [amr(size, 1000 * i + j) for j in range(k)]})
                      for i in range(n))
    gold = "\n".join(json.dumps({"id": f"e{i}", "amr": amr(size, -i - 1)}) for i in range(n))
    return beams, gold


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("space-limits")
    settings = space_settings(root, build_fixture_dataset(root / "dataset"))
    settings = replace(settings, limits=replace(settings.limits, seconds=BUDGET_SECONDS))
    with running_app(settings) as url:
        yield url, settings


@pytest.fixture
def client(served):
    return Client(served[0], verbose=False, download_files=False)


def _similarity_workers() -> list[psutil.Process]:
    """This process's children that are still running (the similarity workers it forked)."""
    return [p for p in psutil.Process(os.getpid()).children(recursive=True) if p.is_running()
            and p.status() != psutil.STATUS_ZOMBIE]


def _wait_for_workers(present: bool, seconds: float) -> list[psutil.Process]:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        found = _similarity_workers()
        if bool(found) == present:
            return found
        time.sleep(0.2)
    return _similarity_workers()


def test_each_limit_is_refused_in_one_line_naming_it_and_the_value(client, served, tmp_path):
    limits = served[1].limits
    gold = "\n".join(json.dumps({"id": f"e{i}", "amr": "(a / b)"}) for i in range(limits.examples + 1))

    def refused(beams: str, gold_text: str = gold, uploads=None) -> str:
        with pytest.raises(AppError) as caught:
            client.predict(beams, gold_text, uploads, None, "smatchpp", "smatchpp", ["degmat"],
                           api_name="/run_uncertainty")
        message = str(caught.value)
        assert "\n" not in message.strip() and "Traceback" not in message
        return message

    many = "\n".join(json.dumps({"id": f"e{i}", "candidates": ["(a / b)"]}) for i in range(limits.examples + 1))
    assert f"{limits.examples + 1} examples; this Space takes at most {limits.examples}" in refused(many)
    wide = json.dumps({"id": "e0", "candidates": ["(a / b)"] * (limits.candidates + 1)})
    assert (f"{limits.candidates + 1} candidates for example 'e0'; this Space takes at most {limits.candidates}"
            in refused(wide))
    big = json.dumps({"id": "e0", "candidates": ["(a / b)", amr(limits.graph_nodes + 1, 0)]})
    assert (f"{limits.graph_nodes + 1} AMR nodes in candidate 2 of example 'e0'; this Space takes at most "
            f"{limits.graph_nodes}" in refused(big))
    big_gold = json.dumps({"id": "e0", "amr": amr(limits.graph_nodes + 5, 0)})
    assert (f"{limits.graph_nodes + 5} AMR nodes in the gold graph of example 'e0'"
            in refused(json.dumps({"id": "e0", "candidates": ["(a / b)"]}), big_gold))
    huge = tmp_path / "huge.jsonl"
    huge.write_text(json.dumps({"id": "e0", "candidates": ["x" * (limits.upload_bytes + 1)]}), encoding="utf-8")
    message = refused("", gold, [handle_file(str(huge))])
    assert f"beam file huge.jsonl is {huge.stat().st_size:,} bytes; this Space takes files of at most " \
           f"{limits.upload_bytes:,} bytes" in message
    assert f"bytes; this Space takes at most {limits.upload_bytes:,}" in refused("x" * (limits.upload_bytes + 1))
    with pytest.raises(AppError, match=f"Value {limits.candidates + 5} is greater than maximum value "
                                       f"{limits.candidates}"):  # the k slider's range is the candidates limit
        client.predict(str(tmp_path), "a sentence", limits.candidates + 5, None, "", api_name="/generate_beams")
    with pytest.raises(AppError, match=f"{limits.score_examples + 1:,} examples to score; this Space takes at most"):
        client.predict("\n".join(f"line {i}" for i in range(limits.score_examples + 1)), None, "text", "",
                       "scratch", 0.2, False, api_name="/score_own")


def test_a_small_request_is_served_within_5_s_while_a_maximal_one_runs_until_its_budget(client, served):
    limits = served[1].limits
    beams, gold = maximal_request(limits)
    started = time.monotonic()
    large = client.submit(beams, gold, None, None, "smatchpp", "rougel", ["degmat"], api_name="/run_uncertainty")
    workers = _wait_for_workers(True, 20)
    assert workers, "the maximal request never reached its similarity workers"
    assert max(p.cpu_percent(interval=1.0) for p in workers) > 5  # they compute (on shared cores: not always 100%)

    other = Client(served[0], verbose=False, download_files=False)
    with pytest.raises(AppError, match="the Space is busy with another large request"):
        other.predict(beams, gold, None, None, "smatchpp", "rougel", ["degmat"], api_name="/run_uncertainty")

    small_beams, small_gold, *_ = other.predict(api_name="/load_synthetic_example")
    asked = time.monotonic()
    summary, prr, *_ = other.predict(small_beams, small_gold, None, None, "smatchpp", "smatchpp", ["degmat"],
                                     api_name="/run_uncertainty")
    answered = time.monotonic() - asked
    assert "12 examples, beam size 5" in summary
    print(f"small request answered in {answered:.2f} s while the maximal one ran, {time.monotonic() - started:.1f} s "
          f"into its budget of {BUDGET_SECONDS:g} s")
    assert answered < 5, f"the small request took {answered:.1f} s while the maximal one ran"

    with pytest.raises(AppError, match=rf"ran past the Space's time budget of {BUDGET_SECONDS:g} s"):
        large.result(timeout=BUDGET_SECONDS + 60)
    assert time.monotonic() - started < BUDGET_SECONDS + 15
    assert _wait_for_workers(False, 5) == []  # its workers were ended, not left computing


def test_a_request_whose_client_leaves_stops_and_ends_its_workers(served):
    limits = served[1].limits
    beams, gold = maximal_request(limits)
    client = Client(served[0], verbose=False, download_files=False)
    job = client.submit(beams, gold, None, None, "smatchpp", "rougel", ["degmat"], api_name="/run_uncertainty")
    assert _wait_for_workers(True, 20), "the request never reached its similarity workers"
    left = time.monotonic()
    job.cancel()
    assert _wait_for_workers(False, 10) == []
    assert time.monotonic() - left < BUDGET_SECONDS / 2  # well before the budget would have stopped it
    time.sleep(0.5)
    other = Client(served[0], verbose=False, download_files=False)  # the large slot is free again
    small_beams, small_gold, *_ = other.predict(api_name="/load_synthetic_example")
    assert "12 examples" in other.predict(small_beams, small_gold, None, None, "smatchpp", "smatchpp",
                                          ["degmat"], api_name="/run_uncertainty")[0]


def test_generated_beam_folders_of_earlier_requests_are_removed(tmp_path, monkeypatch):
    import tempfile

    from space_helpers import load_app_module

    load_app_module()
    import uncertainty_tab

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    old = tmp_path / "lsplits-generated-old"
    old.mkdir()
    (old / "model.jsonl").write_text("{}")
    long_ago = time.time() - uncertainty_tab.GENERATED_SECONDS - 60
    os.utime(old, (long_ago, long_ago))
    recent = tmp_path / "lsplits-generated-recent"  # another request's, still being served
    recent.mkdir()
    made = uncertainty_tab.generated_folder()
    assert made.parent == tmp_path and made.name.startswith("lsplits-generated-")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([made.name, "lsplits-generated-recent"])


def test_a_hosted_space_answers_alike_for_server_paths_that_exist_and_that_do_not(tmp_path, monkeypatch):
    from lsplits.errors import ConfigError

    monkeypatch.setenv("SPACE_ID", "org/lsplits-demo")  # what a hosted Space sets
    settings = space_settings(tmp_path, build_fixture_dataset(tmp_path / "demo"))
    import splits_tab

    assert settings.open_local is False
    (tmp_path / "not-built").mkdir()
    messages = []
    for path in (tmp_path / "missing", tmp_path / "not-built", tmp_path / "demo" / "lsplits.json", "/etc"):
        with pytest.raises(ConfigError) as caught:
            splits_tab.built_dataset(str(path), settings)
        messages.append(str(caught.value).replace(str(path), "PATH"))
    assert len(set(messages)) == 1 and messages[0].endswith("or a Hub dataset repo id (org/name), not folders of its "
                                                           "machine")
    assert splits_tab.built_dataset(str(settings.demo_data), settings).configs == ["ll_split", "random"]
