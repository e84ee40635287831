"""Reliability round 5, the hosted Space: no local paths, no format specs in templates, Smatch++ within the budget.

The Space's handler functions are called in-process (as :mod:`test_space_limits` does over HTTP): a hosted Space
(``SPACE_ID`` set) answers alike for paths that exist and that do not, and never reads a Hub id from a local
folder; a prompt template with a format spec is refused in one line before any work (the library does it, so the
CLI says it too); a request of Smatch++ work on graphs with reentrancies ends within its time budget while a small
request is answered meanwhile; and every message uses the form's words, not the CLI's.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from space_helpers import SPACE_DIR, build_fixture_dataset, load_app_module, space_settings

from lsplits.errors import ConfigError, InvalidOption, Stopped

BUDGET_SECONDS = 4.0


def reentrant_amr(nodes: int, seed: int, reentrancies: int = 20) -> str:
    """A random AMR graph of ``nodes`` nodes over two concepts, with ``reentrancies`` extra edges into earlier
    nodes: what makes Smatch++ need its integer program (a pair of these runs into any time limit)."""
    rng = random.Random(seed)
    children: dict[int, list[int]] = {i: [] for i in range(nodes)}
    for i in range(1, nodes):
        children[rng.randrange(max(0, i - 3), i)].append(i)
    extra: dict[int, list[int]] = {i: [] for i in range(nodes)}
    for _ in range(reentrancies):
        a, b = rng.randrange(nodes), rng.randrange(nodes)
        if a != b:
            extra[a].append(b)

    def render(i: int) -> str:
        inner = "".join(f" :ARG{j % 3} {render(c)}" for j, c in enumerate(children[i]))
        inner += "".join(f" :ARG{j % 3} v{c}" for j, c in enumerate(extra[i]))
        return f"(v{i} / c{rng.randrange(2)}{inner})"

    return render(0)


@pytest.fixture
def hosted(tmp_path, monkeypatch):
    """Settings of a hosted Space (``SPACE_ID`` set, downloads off), working directory ``tmp_path``."""
    monkeypatch.setenv("SPACE_ID", "org/lsplits-demo")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "space").mkdir()
    settings = space_settings(tmp_path / "space", build_fixture_dataset(tmp_path / "space" / "demo"))
    assert settings.open_local is False
    return settings


def answers(call, texts: list[str]) -> list[str]:
    """The one-line error of ``call(text)`` for each text, the text itself replaced by TEXT."""
    said = []
    for text in texts:
        with pytest.raises(ConfigError) as caught:
            call(text)
        message = str(caught.value)
        assert "\n" not in message and "Traceback" not in message
        said.append(message.replace(repr(text), "TEXT").replace(text, "TEXT"))
    return said


# --- 6: a hosted Space opens only its demo and Hub ids --------------------------------------------------------


def test_a_hosted_space_opens_no_local_folder_and_answers_alike_whether_a_path_exists(hosted, tmp_path):
    import splits_tab

    (tmp_path / "out").mkdir()
    build_fixture_dataset(tmp_path / "out" / "base")  # a built folder whose relative path looks like a Hub id
    (tmp_path / "fx").mkdir()
    (tmp_path / "fx" / "snli300.jsonl").write_text('{"text": "a"}\n', encoding="utf-8")

    def opened(text: str):
        return splits_tab.built_dataset(text, hosted)

    # each existing path answers exactly as a missing one of the same shape
    for present, missing in (("out/base", "out/nothere"), ("fx/snli300.jsonl", "fx/nothere.jsonl"),
                             ("../..", "../../nothere"), ("./out", "./nothere"), ("/etc", "/nonexistent")):
        first, second = answers(opened, [present, missing])
        assert first == second, (present, first, second)
    refused, = answers(opened, ["./out"])
    assert refused == ("TEXT: this Space opens its demo dataset (space/demo) or a Hub dataset repo id (org/name), "
                       "not folders of its machine")
    hub, = answers(opened, ["out/base"])
    assert hub.startswith("cannot download the Hub dataset TEXT:")  # asked of the Hub (offline), not the disk
    assert opened("space/demo").configs == ["ll_split", "random"]  # the demo, as the form shows it
    assert splits_tab.open_dataset(str(hosted.demo_data), hosted).configs == ["ll_split", "random"]


def test_a_hosted_space_loads_no_local_model_for_score_your_own_or_beams(hosted, tmp_path):
    import splits_tab
    import uncertainty_tab

    for folder in (tmp_path / "gpt2_withtok", tmp_path / "org" / "model"):  # a model folder, and one named like an id
        folder.mkdir(parents=True)
        (folder / "config.json").write_text('{"model_type": "gpt2"}', encoding="utf-8")
    models = splits_tab.LanguageModels(hosted)
    lm_texts = [str(tmp_path / "gpt2_withtok"), "/etc", "/nonexistent", "../gpt2_withtok"]
    said = answers(models.get, lm_texts)
    assert len(set(said)) == 1, said
    assert said[0] == ("LM: this Space takes 'scratch' or a Hub causal LM id (such as gpt2), not folders of its "
                       "machine, got TEXT")
    first, second = answers(models.get, ["org/model", "org/nothere"])  # Hub ids: asked of the Hub, never the disk
    assert first == second and first.startswith("cannot download the Hub model TEXT:")

    def generate(model: str):
        return uncertainty_tab.generate_system(model, "A sentence.", 2, None, "", hosted)

    said = answers(generate, ["/etc", "/nonexistent", str(tmp_path / "gpt2_withtok")])
    assert len(set(said)) == 1 and said[0].startswith("Model: this Space takes a Hub model id"), said
    first, second = answers(generate, ["org/model", "org/nothere"])
    assert first == second, (first, second)


# --- 7: no format spec in a prompt template ---------------------------------------------------------------------


@pytest.mark.parametrize("template", ["{text:>9000000}", "Title: {title!r} {text}", "{text.upper}", "{text[0]}"])
def test_a_template_with_a_format_spec_is_refused_by_the_library_before_any_example(template):
    from lsplits.data.tasks import generic_task
    from lsplits.generation.search import check_template

    with pytest.raises(InvalidOption, match=r"^prompt_template has (a format spec|a conversion|an attribute or "
                                            r"index) in \{"):
        generic_task("text", template)
    with pytest.raises(InvalidOption, match="^prompt_template has"):
        check_template(template)


def test_the_cli_refuses_a_format_spec_in_one_line_naming_the_option(tmp_path, capsys):
    from lsplits.cli.parser import main

    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"text": f"line {i}"}) + "\n" for i in range(6)), encoding="utf-8")
    started = time.monotonic()
    code = main(["build", "--data-files", str(data), "--query-field", "text", "--prompt-template", "{text:>9000000}",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and time.monotonic() - started < 5
    assert err == ["lsplits build: error: --prompt-template has a format spec in {text:>9000000}: write plain {field} "
                   "placeholders (and literal braces as {{ and }}), got '{text:>9000000}'"]
    assert not (tmp_path / "out").exists()


def test_the_space_refuses_a_format_spec_in_the_forms_words_before_loading_the_lm(tmp_path):
    settings = space_settings(tmp_path, build_fixture_dataset(tmp_path / "demo"))
    import gradio as gr
    import splits_tab
    from ui_common import user_errors

    models = splits_tab.LanguageModels(settings)
    lines = "\n".join(f"sentence number {i}" for i in range(settings.limits.score_examples))  # the most it takes
    started = time.monotonic()
    with pytest.raises(gr.Error) as caught:
        user_errors(splits_tab.score_own)(lines, None, "text", "{text:>20000}", "scratch", 0.2, False, models)
    assert time.monotonic() - started < 2 and models._loaded == {}  # refused before the LM loads
    assert str(caught.value.message) == ("Prompt template has a format spec in {text:>20000}: write plain {field} "
                                         "placeholders (and literal braces as {{ and }}), got '{text:>20000}'")


# --- 8: Smatch++ within the time budget ---------------------------------------------------------------------------


def test_graphs_with_reentrancies_are_rated_by_what_smatchpp_costs(tmp_path):
    settings = space_settings(tmp_path, build_fixture_dataset(tmp_path / "demo"))
    from limits import work_units

    limits = settings.limits
    k, size = limits.candidates, limits.graph_nodes
    reentrant = [[reentrant_amr(size, j) for j in range(k)]]  # 1 example, ~8 KB: ran 277 s
    assert work_units(reentrant, [reentrant_amr(size, 99)]) > limits.large_work  # one such request at a time
    example = [json.loads(line) for line in (SPACE_DIR / "examples" / "amr_beams.jsonl").read_text().splitlines()]
    gold = (SPACE_DIR / "examples" / "amr_gold.amr").read_text().split("\n\n")
    assert work_units([row["candidates"] for row in example], gold) < limits.large_work  # the example stays small


def test_smatchpp_with_little_budget_left_keeps_the_hill_climbing_alignment_and_says_so():
    from lsplits.runtime.cancel import stop_when
    from lsplits.similarity.amr import smatchpp_metric

    first, second = (smatchpp_metric.prepare(reentrant_amr(30, seed)) for seed in (1, 1001))
    started = time.monotonic()
    with stop_when(lambda: None, end=started + smatchpp_metric.MIN_ILP_SECONDS / 2) as notes:
        budgeted = smatchpp_metric.f1(first, second)
    assert time.monotonic() - started < smatchpp_metric.MIN_ILP_SECONDS
    assert notes == {smatchpp_metric.HILL_CLIMBING_NOTE: 1}
    # the same alignment as an ILP given no time at all: the assignment search and its swaps
    solver = smatchpp_metric.SOLVER
    saved = solver.ilp_max_seconds
    solver.ilp_max_seconds = 0
    try:
        assert budgeted == pytest.approx(smatchpp_metric.f1(first, second))
    finally:
        solver.ilp_max_seconds = saved
    assert 0 < budgeted < 1


@pytest.mark.parametrize("deadline", [True, False])  # the ILP's time limit is the budget; any stop ends the wait
def test_an_ilp_stops_with_the_budget_and_a_stop_takes_effect_mid_solve(deadline):
    from lsplits.runtime.cancel import stop_when
    from lsplits.uncertainty.quality import score_predictions

    predictions = [reentrant_amr(30, seed) for seed in range(3)]
    references = [reentrant_amr(30, 100 + seed) for seed in range(3)]
    started = time.monotonic()
    end = started + 2.0
    with pytest.raises(Stopped, match="^stopped: over budget$"), \
            stop_when(lambda: "over budget" if time.monotonic() > end else None, **({"end": end} if deadline else {})):
        score_predictions("smatchpp", predictions, references)
    assert time.monotonic() - started < 6.0  # the first pair's ILP alone ran 240 s (slack: shared CPUs)


def _maximal_graph_request(limits) -> tuple[str, str]:
    """100 examples at the candidate and node limits, every graph with 20 reentrancies (~700 KB)."""
    n, k, size = 100, limits.candidates, limits.graph_nodes
    beams = "\n".join(json.dumps({"id": f"e{i}", "candidates": [reentrant_amr(size, 1000 * i + j) for j in range(k)]})
                      for i in range(n))
    gold = "\n".join(json.dumps({"id": f"e{i}", "amr": reentrant_amr(size, -i - 1)}) for i in range(n))
    return beams, gold


@pytest.mark.parametrize("similarity", ["rougel", "smatchpp"])  # Smatch++ in-process (quality), or also in workers
def test_a_maximal_graph_request_ends_within_its_budget_and_a_small_one_is_answered_meanwhile(tmp_path, similarity):
    settings = space_settings(tmp_path, build_fixture_dataset(tmp_path / "demo"))
    settings = replace(settings, limits=replace(settings.limits, seconds=BUDGET_SECONDS))
    import uncertainty_tab
    from limits import request_budget

    beams, gold = _maximal_graph_request(settings.limits)
    assert len(beams.encode()) < settings.limits.upload_bytes
    outcome: list[BaseException | None] = []

    def large() -> None:
        try:
            with request_budget(settings.limits):
                uncertainty_tab.run_uncertainty(beams, gold, None, None, similarity, "smatchpp", ["degmat"], settings)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome.append(exc)

    started = time.monotonic()
    thread = threading.Thread(target=large, daemon=True)
    thread.start()
    time.sleep(1.0)
    small_beams, small_gold = uncertainty_tab.example_texts(settings, "synthetic")
    asked = time.monotonic()
    with request_budget(replace(settings.limits, seconds=60)):  # its own budget: the answer time is what counts
        _, summary, *_ = uncertainty_tab.run_uncertainty(small_beams, small_gold, None, None, "smatchpp", "smatchpp",
                                                         ["degmat"], settings)
    answered = time.monotonic() - asked
    assert "12 examples, beam size 5" in summary
    assert answered < 5, f"the small request took {answered:.1f} s while the maximal one ran"
    thread.join(BUDGET_SECONDS + 6)
    took = time.monotonic() - started
    assert not thread.is_alive(), f"the maximal request still ran {took:.0f} s after it started"
    assert isinstance(outcome[0], Stopped), outcome
    assert f"ran past the Space's time budget of {BUDGET_SECONDS:g} s" in str(outcome[0])
    assert took < BUDGET_SECONDS + 5  # slack for shared CPUs; it ran for minutes


# --- the Space's own words -------------------------------------------------------------------------------------


def _space_error(call, *args) -> str:
    import gradio as gr
    from ui_common import user_errors

    with pytest.raises(gr.Error) as caught:
        user_errors(call)(*args)
    message = str(caught.value.message)
    assert "\n" not in message and "Unexpected error" not in message
    return message


def test_the_space_names_its_own_fields_not_cli_options(tmp_path):
    settings = space_settings(tmp_path, build_fixture_dataset(tmp_path / "demo"))
    import uncertainty_tab

    files, _, gold = uncertainty_tab.systems_example(settings)
    message = _space_error(uncertainty_tab.run_systems_comparison, files, "../../x, b, c", gold, None, "rougel",
                           ["rougel"], settings)
    assert message.startswith("System names: the name '../../x' must be a folder name"), message
    message = _space_error(uncertainty_tab.run_systems_comparison, files, "a, B, b", gold, None, "rougel",
                           ["rougel"], settings)
    assert message == "System names: 'b': the name is given twice (ignoring case); each system needs its own name"
    ids = range(settings.limits.examples + 1)
    many = "\n".join(json.dumps({"id": f"e{i}", "candidates": ["(a / b)"]}) for i in ids)
    many_gold = "\n".join(json.dumps({"id": f"e{i}", "amr": "(a / b)"}) for i in ids)
    message = _space_error(uncertainty_tab.run_uncertainty, many, many_gold, None, None, "rougel", "rougel",
                           ["degmat"], settings)
    assert message.startswith(f"{settings.limits.examples + 1} examples; this Space takes at most")
    assert "--" not in message and "`lsplits" not in message


@pytest.mark.parametrize("where", ["beams", "gold", "own file"])
def test_a_deep_json_upload_gets_one_clear_line(tmp_path, where):
    settings = space_settings(tmp_path, build_fixture_dataset(tmp_path / "demo"))
    import splits_tab
    import uncertainty_tab

    deep = "[" * 100_000 + "]" * 100_000
    upload = tmp_path / "deep.jsonl"
    if where == "own file":
        upload.write_text(json.dumps({"text": "fine"}) + "\n" + '{"text": ' + deep + "}\n", encoding="utf-8")
        message = _space_error(splits_tab.score_own, "", str(upload), "text", "", "scratch", 0.2, False,
                               splits_tab.LanguageModels(settings))
    elif where == "beams":
        upload.write_text(json.dumps({"id": "e0", "candidates": ["(a / b)"]}) + "\n"
                          + '{"id": "e1", "candidates": ' + deep + "}\n", encoding="utf-8")
        message = _space_error(uncertainty_tab.run_uncertainty, "", '{"id": "e0", "amr": "(a / b)"}', [str(upload)],
                               None, "rougel", "rougel", ["degmat"], settings)
    else:
        upload.write_text('{"id": "e0", "amr": ' + deep + "}\n", encoding="utf-8")
        message = _space_error(uncertainty_tab.run_uncertainty, '{"id": "e0", "candidates": ["(a / b)"]}', "", None,
                               str(upload), "rougel", "rougel", ["degmat"], settings)
    assert message.startswith("deep.jsonl, line 2" if where != "gold" else "deep.jsonl, line 1"), message
    assert "nested" in message and "deep" in message


def test_hosted_labels_offer_no_local_folders(hosted):
    app = load_app_module()
    demo = app.build_demo(hosted)
    labels = {getattr(block, "elem_id", None): getattr(block, "label", None) for block in demo.blocks.values()}
    assert "folder" not in labels["beam-model"] and "Hub" in labels["beam-model"]
    assert labels["dataset-source"] == "Built dataset: the demo's folder or a Hub dataset repo id (org/name)"


def _helper_thread_cpu_seconds(pid: int) -> float:
    """The most CPU time (s) any thread but a process's main one has used, in ``pid`` and its children (Linux
    /proc): the solver's helper thread computing, where a fixed wait might signal before the solver starts."""
    from test_signals import _worker_pids

    tick = os.sysconf("SC_CLK_TCK")
    most = 0.0
    for owner in (pid, *_worker_pids(pid)):
        try:
            for task in Path(f"/proc/{owner}/task").iterdir():
                if int(task.name) != owner:
                    fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                    most = max(most, (int(fields[11]) + int(fields[12])) / tick)  # utime, stime
        except OSError:  # the process or thread ended while we looked
            continue
    return most


def test_sigterm_ends_the_cli_while_smatchpp_solves_an_alignment(tmp_path):
    """`lsplits ue` on a pair of graphs whose alignment needs the integer program (240 s per pair): SIGTERM ends it
    in seconds with its one line (it took effect about a minute later, when the solver returned)."""
    from test_signals import _env, _last_line, signal_when

    beams, gold = tmp_path / "beams.jsonl", tmp_path / "gold.jsonl"
    beams.write_text(json.dumps({"id": "e0", "candidates": [reentrant_amr(30, 1), reentrant_amr(30, 1001)]}) + "\n",
                     encoding="utf-8")
    gold.write_text(json.dumps({"id": "e0", "amr": reentrant_amr(30, 7)}) + "\n", encoding="utf-8")
    argv = ["ue", str(beams), "--gold", str(gold), "--out", str(tmp_path / "out"), "--similarities", "smatchpp",
            "--qualities", "rougel", "--no-cache", "--no-progress"]
    started: list[float] = []

    def solving(pid: int) -> bool:  # the ILP runs in a helper thread: ready once a thread besides a main one computes
        started.append(time.monotonic())
        return _helper_thread_cpu_seconds(pid) > 2.0

    code, stderr = signal_when(argv, solving, _env(tmp_path / "tmp"))
    took = time.monotonic() - started[-1]
    assert code == 143, stderr[-2000:]
    assert _last_line(stderr).startswith("lsplits ue: terminated (SIGTERM)"), stderr[-1000:]
    assert took < 10, f"SIGTERM took effect {took:.0f} s after it was sent"


@pytest.mark.process
def test_the_apps_help_answers_before_gradio_and_torch_are_imported():
    """``app.py --help`` took 27 s: it imported Gradio, torch and every tab before argparse saw the flag."""
    import subprocess
    import sys

    probe = ("import runpy, sys\nsys.argv = ['app.py', '--help']\ntry:\n    runpy.run_path(sys.argv_path, "
             "run_name='__main__')\nexcept SystemExit as done:\n    print('exit', done.code)\n"
             "print('loaded', sorted(m for m in ('gradio', 'torch', 'lsplits') if m in sys.modules))\n")
    probe = probe.replace("sys.argv_path", repr(str(SPACE_DIR / "app.py")))
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "usage: app.py" in result.stdout and "--demo-data" in result.stdout
    assert "exit 0" in result.stdout and "loaded []" in result.stdout
