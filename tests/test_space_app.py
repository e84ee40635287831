"""The Space app served on localhost and driven through gradio_client over real HTTP.

The dataset is a small fixture whose splits, scores and rare words are known by hand
(:mod:`space_helpers`); the uncertainty checks use the Space's own example files and hand-computed
inputs. Nothing here reads ../shared or needs the network.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError
from space_helpers import SPACE_DIR, build_fixture_dataset, load_app_module, running_app, space_settings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("space")
    settings = space_settings(root, build_fixture_dataset(root / "dataset"))
    with running_app(settings) as url:
        yield url, settings


@pytest.fixture
def client(served):
    return Client(served[0], verbose=False, download_files=False)


def rows(table: dict) -> list[dict]:
    """A gr.Dataframe payload as a list of {header: value}."""
    return [dict(zip(table["headers"], row, strict=True)) for row in table["data"]]


# --- Likelihood Splits tab -----------------------------------------------------------------------


def test_open_dataset_shows_configs_statistics_plots_and_extremes(client, served):
    dropdown, overview = client.predict(str(served[1].demo_data), api_name="/open_dataset")
    assert [choice[0] for choice in dropdown["choices"]] == ["ll_split", "random"]
    assert dropdown["value"] == "ll_split"
    assert "40 examples" in overview and "2 configs" in overview

    stats, sentence, scatter, lengths, rare, least, most = client.predict("ll_split", 3, api_name="/select_config")
    assert stats["headers"] == ["statistic", "train", "validation", "test", "eval"]  # one column per split
    by_statistic = {row.pop("statistic"): row for row in rows(stats)}
    by_split = {split: {name: row[split] for name, row in by_statistic.items()} for split in stats["headers"][1:]}
    assert {name: row["size"] for name, row in by_split.items()} == {
        "train": "32", "validation": "4", "test": "4", "eval": "8"}
    # ll_score = -10 - i: eval holds i = 32..39 (mean -45.5), train i = 0..31 (mean -25.5)
    assert by_split["eval"]["mean ll_score"] == "-45.50"
    assert by_split["train"]["mean ll_score"] == "-25.50"
    # rare words: 2 of 32 train examples, 8 of 8 eval examples -> 16x
    assert by_split["train"]["rare-word examples"] == "6.2%"
    assert by_split["eval"]["rare-word examples"] == "100.0%"
    assert "16.00x by example" in sentence
    for figure in (scatter, lengths, rare):
        assert figure["type"] == "matplotlib" and figure["plot"].startswith("data:image/")
    assert [(r["id"], r["split"], r["ll_score"]) for r in rows(least)] == [
        ("ex-39", "test", -49.0), ("ex-38", "test", -48.0), ("ex-37", "test", -47.0)]
    assert [(r["id"], r["split"]) for r in rows(most)] == [("ex-0", "train"), ("ex-1", "train"), ("ex-2", "train")]


def test_open_dataset_shows_the_difficulty_section_of_its_card(client, served, tmp_path):
    from lsplits.building.additions import replace_section

    folder = tmp_path / "with-difficulty"
    shutil.copytree(served[1].demo_data, folder)
    readme = folder / "README.md"
    section = "## Difficulty\n\n| config | accuracy |\n|---|---:|\n| `ll_split` | 61.0 |\n\n![bars](plots/difficulty.png)"
    readme.write_text(replace_section(readme.read_text(encoding="utf-8"), section), encoding="utf-8")
    _, overview = client.predict(str(folder), api_name="/open_dataset")
    assert "40 examples" in overview and "## Difficulty" in overview and "| `ll_split` | 61.0 |" in overview
    assert "![bars]" not in overview  # a repo-relative figure cannot be shown from the Space
    _, plain = client.predict(str(served[1].demo_data), api_name="/open_dataset")
    assert "Difficulty" not in plain

def test_other_config_and_browsing(client, served):
    client.predict(str(served[1].demo_data), api_name="/open_dataset")
    stats, *_, least, _ = client.predict("random", 2, api_name="/select_config")
    by_statistic = {row.pop("statistic"): row for row in rows(stats)}  # one row per statistic, a column per split
    assert by_statistic["size"]["eval"] == "8"
    # in the random config ex-39 (the least likely) is in train, ex-35 in test
    assert [(r["id"], r["split"]) for r in rows(least)] == [("ex-39", "train"), ("ex-38", "train")]
    least, most = client.predict("random", 5, api_name="/browse")
    assert len(least["data"]) == 5 and len(most["data"]) == 5


def test_opening_bad_sources_gives_readable_messages(client, tmp_path, monkeypatch):
    with pytest.raises(AppError, match="no such folder, and not a Hub dataset repo id"):
        client.predict(str(tmp_path / "missing"), api_name="/open_dataset")
    (tmp_path / "not-built").mkdir()
    with pytest.raises(AppError, match="no lsplits.json"):
        client.predict(str(tmp_path / "not-built"), api_name="/open_dataset")
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(AppError, match="cannot download the Hub dataset 'someone/nothing-here'"):
        client.predict("someone/nothing-here", api_name="/open_dataset")
    with pytest.raises(AppError, match="open a dataset first"):
        Client(client.src, verbose=False, download_files=False).predict("ll_split", 3, api_name="/select_config")


def naive_log_likelihood(model_dir, lines: list[str]) -> list[float]:
    """Sum of log-probabilities of each line's tokens and EOS after BOS, one unpadded forward per line."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    scores = []
    for line in lines:
        ids = [tokenizer.bos_token_id, *tokenizer(line, add_special_tokens=False)["input_ids"], tokenizer.eos_token_id]
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0].double()
        log_probs = torch.log_softmax(logits, dim=-1)
        scores.append(float(sum(log_probs[t - 1, ids[t]] for t in range(1, len(ids)))))
    return scores


def test_score_own_lines_sends_the_least_likely_to_eval(client, served):
    lines = ["the dog runs", "a child sleeps in the park", "my friend eats an apple", "quixotic zebras vex",
             "the old man walks home", "a tall woman reads a long book today", "xylophones juggle kumquats",
             "the dog walks home", "a child runs", "my friend sleeps in the park"]
    summary, table, plot = client.predict("\n".join(lines) + "\n\n", None, "text", "", "scratch", 0.2, False,
                                          api_name="/score_own")
    scored = rows(table)
    assert "Scored 10 examples" in summary and "2 eval examples" in summary
    assert plot["type"] == "matplotlib"
    expected = dict(zip(lines, naive_log_likelihood(served[1].scratch_lm, lines), strict=True))
    for row in scored:
        assert row["ll_score"] == pytest.approx(expected[row["text"]], abs=0.006)
    assert [row["ll_score"] for row in scored] == sorted(row["ll_score"] for row in scored)
    lowest_two = sorted(expected, key=expected.get)[:2]
    assert {row["text"] for row in scored if row["split"] == "eval"} == set(lowest_two)
    assert [row["id"] for row in scored if row["text"] == lines[3]] == ["line-3"]


def test_score_own_file_upload_and_bad_uploads(client, tmp_path):
    good = tmp_path / "sentences.csv"
    good.write_text("sentence,source\nthe dog runs,a\na child walks home,b\nmy friend reads,c\nbirds sing,d\n",
                    encoding="utf-8")
    summary, table, _ = client.predict("", handle_file(str(good)), "sentence", "", "scratch", 0.5, True,
                                       api_name="/score_own")
    assert "Scored 4 examples" in summary
    assert sorted(row["sentence"] for row in rows(table)) == ["a child walks home", "birds sing", "my friend reads",
                                                               "the dog runs"]
    assert sum(row["split"] == "eval" for row in rows(table)) == 2  # halved into validation and test

    # the build's eval-size rule: 1 eval example of 4 would leave the test split empty
    with pytest.raises(AppError, match=r"Eval share 0.34 gives 1 eval example of 4, which leaves the test split "
                                       r"empty \(validation and test get half each\); the minimum is 2"):
        client.predict("", handle_file(str(good)), "sentence", "", "scratch", 0.34, True, api_name="/score_own")

    with pytest.raises(AppError) as missing_field:
        client.predict("", handle_file(str(good)), "text", "", "scratch", 0.2, False, api_name="/score_own")
    message = str(missing_field.value)
    assert "sentences.csv" in message and "'text'" in message and str(tmp_path) not in message

    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"text": "fine"}\n{"text": "unterminated\n', encoding="utf-8")
    with pytest.raises(AppError, match=r"broken\.jsonl, line 2: invalid JSON"):
        client.predict("", handle_file(str(broken)), "text", "", "scratch", 0.2, False, api_name="/score_own")
    with pytest.raises(AppError, match="paste some lines"):
        client.predict("  \n ", None, "text", "", "scratch", 0.2, False, api_name="/score_own")
    with pytest.raises(AppError, match=r"Eval share 0.2: the dataset has 1 example\(s\); train, validation and test need at least 3"):
        client.predict("only one line", None, "text", "", "scratch", 0.2, False, api_name="/score_own")


# --- Uncertainty & PRR tab -----------------------------------------------------------------------


def test_the_example_is_the_shipped_parsers_real_beams_with_every_family(client, served):
    import uncertainty_tab

    beams, gold, beam_files, gold_file = client.predict(api_name="/load_example")
    assert beams == (SPACE_DIR / "examples" / "lpp_parser_beams.jsonl").read_text(encoding="utf-8")
    assert gold == (SPACE_DIR / "examples" / "lpp_test.jsonl").read_text(encoding="utf-8")
    rows_in = [json.loads(line) for line in beams.splitlines()]
    assert len(rows_in) == 143 and all(len(row["logprobs"]) == 5 for row in rows_in)
    # the beams carry scores, so the Space offers the gray-box and hybrid estimators beside the black-box ones
    offered = [value for _, value in uncertainty_tab.offered_estimators(beams, None, served[1])]
    assert {"degmat", "perplexity", "msp", "cocoa_msp"} <= set(offered)
    summary, prr, *_ = client.predict(beams, gold, None, None, "smatchpp", "smatchpp", ["degmat"],
                                      api_name="/run_uncertainty")
    (row,) = rows(prr)
    assert "143 examples, beam size 5" in summary and row["UE method"] == "DegMat-Smatch++"
    assert row["CI low"] <= row["PRR"] <= row["CI high"]


def test_the_synthetic_example_loads_and_runs_to_a_prr_table(client):
    beams, gold, beam_files, gold_file = client.predict(api_name="/load_synthetic_example")
    assert beams == (SPACE_DIR / "examples" / "amr_beams.jsonl").read_text(encoding="utf-8")
    assert gold == (SPACE_DIR / "examples" / "amr_gold.amr").read_text(encoding="utf-8")
    assert beam_files is None and gold_file is None

    summary, prr, per_example, curves, heatmap_choice, heatmap = client.predict(
        beams, gold, None, None, "smatchpp", "smatchpp", ["lexsim", "eigv", "ecc", "degmat"],
        api_name="/run_uncertainty")
    table = rows(prr)
    assert [row["UE method"] for row in table] == ["LexSim", "EigV-Smatch++", "Ecc-Smatch++", "DegMat-Smatch++"]
    for row in table:
        assert row["CI low"] <= row["PRR"] <= row["CI high"]
    # the candidates' edits grow with the top-1's edits, so disagreement ranks quality well
    assert {row["UE method"]: row["PRR"] for row in table}["DegMat-Smatch++"] > 0.5
    assert "12 examples, beam size 5" in summary
    assert "Invalid candidates for Smatch++: 1 of 60" in summary
    ids = [json.loads(line)["id"] for line in beams.splitlines()]
    values = rows(per_example)
    assert [row["id"] for row in values] == ids
    assert [row["invalid (Smatch++)"] for row in values] == [0] * 11 + [1]
    assert curves["type"] == "matplotlib" and heatmap["type"] == "matplotlib"
    assert heatmap_choice["value"] == ids[0]

    other = client.predict(ids[-1], api_name="/heatmap")
    assert other["type"] == "matplotlib" and other["plot"] != heatmap["plot"]
    with pytest.raises(AppError, match="no example 'nope'"):
        client.predict("nope", api_name="/heatmap")


def test_hand_computed_uncertainties_and_prr(client):
    """ROUGE-L on plain strings: values worked out by hand.

    e1: candidates "a b", "a b"; gold "a b": quality 1; A = all ones: DegMat 0, EigV 1 (eigenvalues of L: 0, 1).
    e2: "a c", "a b"; gold "a b": quality 0.5 (LCS 1 of 2 tokens); A off-diagonal 0.5: DegMat 1 - 3/4 = 0.25,
        L = I - A/1.5 has eigenvalues 0 and 2/3: EigV 1 + 1/3.
    e3: "x y", "a b"; gold "a b": quality 0; A = I: DegMat 0.5, L = 0: EigV 2.
    Uncertainty rises exactly as quality falls: PRR = 1 for both.
    """
    beams = "\n".join(json.dumps({"id": f"e{i}", "candidates": c}) for i, c in
                      enumerate([["a b", "a b"], ["a c", "a b"], ["x y", "a b"]], start=1))
    gold = "\n".join(json.dumps({"id": f"e{i}", "amr": "a b"}) for i in (1, 2, 3))
    summary, prr, per_example, *_ = client.predict(beams, gold, None, None, "rougel", "rougel", ["degmat", "eigv"],
                                                   api_name="/run_uncertainty")
    assert [(row["UE method"], row["PRR"]) for row in rows(prr)] == [("DegMat-ROUGE-L", 1.0), ("EigV-ROUGE-L", 1.0)]
    values = rows(per_example)
    assert [row["quality (ROUGE-L)"] for row in values] == [1.0, 0.5, 0.0]
    assert [row["u: DegMat-ROUGE-L"] for row in values] == [0.0, 0.25, 0.5]
    assert [row["u: EigV-ROUGE-L"] for row in values] == [1.0, 1.333, 2.0]


def test_target_risk_control_shows_the_threshold_and_share_kept(client):
    """200 string examples: 150 with identical candidates and the right output (DegMat 0, quality 1), 50 with
    disagreeing candidates and a wrong one (DegMat 0.5, quality 0). The losses are 0/1, so the exact binomial
    test: at target 0.27 keeping all has risk 0.25, too close to certify from 200 examples (P(Bin(200, 0.27) <= 50)
    = 0.29 > delta), so the threshold is 0: 75% kept."""
    beams = "\n".join(json.dumps({"id": f"e{i}", "candidates": ["a b", "a b"] if i < 150 else ["x y", "a b"]})
                      for i in range(200))
    gold = "\n".join(json.dumps({"id": f"e{i}", "amr": "a b"}) for i in range(200))
    client.predict(beams, gold, None, None, "rougel", "rougel", ["degmat"], api_name="/run_uncertainty")
    summary, table, curves, p_values = client.predict(0.27, 0.1, "fixed-sequence", api_name="/certify_threshold")
    [row] = rows(table)
    assert (row["UE method"], row["threshold"], row["share kept"], row["risk of kept"]) == ("DegMat-ROUGE-L", 0.0,
                                                                                           0.75, 0.0)
    assert 0.0 < row["risk bound"] <= 0.27
    assert "at most 0.27" in summary and "these 200 examples" in summary and "exact binomial" in summary
    assert curves["type"] == "matplotlib" and p_values["type"] == "matplotlib"
    loose = rows(client.predict(0.3, 0.1, "fixed-sequence", api_name="/certify_threshold")[1])
    assert loose[0]["share kept"] == 1.0  # P(Bin(200, 0.3) <= 50) = 0.07: risk 0.25 is certified under 0.3
    holm = rows(client.predict(0.27, 0.1, "holm", api_name="/certify_threshold")[1])
    assert holm[0]["share kept"] == 0.75


def test_target_risk_on_too_few_examples_says_nothing_is_certified(client):
    beams = "\n".join(json.dumps({"id": f"e{i}", "candidates": ["a b", "a b"]}) for i in range(3))
    gold = "\n".join(json.dumps({"id": f"e{i}", "amr": "a b"}) for i in range(3))
    client.predict(beams, gold, None, None, "rougel", "rougel", ["degmat"], api_name="/run_uncertainty")
    summary, table, _, _ = client.predict(0.1, 0.1, "fixed-sequence", api_name="/certify_threshold")
    assert "No threshold is certified" in summary and "3 examples are too few" in summary
    assert rows(table)[0]["share kept"] == 0.0 and rows(table)[0]["threshold"] is None
    with pytest.raises(AppError, match="give a target risk and a delta"):
        client.predict(None, 0.1, "fixed-sequence", api_name="/certify_threshold")
    with pytest.raises(AppError, match="greater than maximum value 0.999"):  # the box's own range check
        client.predict(1.5, 0.1, "fixed-sequence", api_name="/certify_threshold")


def test_uncertainty_bad_input_gives_readable_messages(client, tmp_path):
    gold = json.dumps({"id": "e1", "amr": "a b"})
    with pytest.raises(AppError, match=r"pasted-beams\.jsonl, line 2: invalid JSON"):
        client.predict('{"id": "e1", "candidates": ["a b"]}\n{oops', gold, None, None, "rougel", "rougel",
                       ["degmat"], api_name="/run_uncertainty")
    with pytest.raises(AppError, match="no example is in both the beams and the gold"):
        client.predict(json.dumps({"id": "other", "candidates": ["a"]}), gold, None, None, "rougel", "rougel",
                       ["degmat"], api_name="/run_uncertainty")
    with pytest.raises(AppError, match="choose at least one uncertainty estimator"):
        client.predict(json.dumps({"id": "e1", "candidates": ["a"]}), gold, None, None, "rougel", "rougel", [],
                       api_name="/run_uncertainty")
    with pytest.raises(AppError, match="paste beam candidates"):
        client.predict("", gold, None, None, "rougel", "rougel", ["degmat"], api_name="/run_uncertainty")
    bad_gold = tmp_path / "gold.amr"
    bad_gold.write_text("# ::id e1\n(a / b :ARG0 (\n", encoding="utf-8")
    with pytest.raises(AppError, match=r"reference\(s\) cannot be read by 'smatchpp'.*e1"):
        client.predict(json.dumps({"id": "e1", "candidates": ["(a / b)", "(a / c)"]}), "", None,  # k = 1 is refused
                       handle_file(str(bad_gold)),
                       "smatchpp", "smatchpp", ["degmat"], api_name="/run_uncertainty")


def test_uploaded_penman_beams_one_file_per_rank(client, tmp_path):
    ranks = []
    for rank, graphs in enumerate([["(d / dog)", "(c / cat)"], ["(d / dog)", "(m / mouse)"]], start=1):
        path = tmp_path / f"rank{rank}.amr"
        path.write_text("".join(f"# ::id s{i}\n{g}\n\n" for i, g in enumerate(graphs)), encoding="utf-8")
        ranks.append(handle_file(str(path)))
    gold = tmp_path / "gold.amr"
    gold.write_text("# ::id s0\n(d / dog)\n\n# ::id s1\n(c / cat)\n", encoding="utf-8")
    summary, prr, per_example, *_ = client.predict("", "", ranks, handle_file(str(gold)), "smatch", "smatch",
                                                   ["degmat"], api_name="/run_uncertainty")
    assert "2 examples, beam size 2" in summary
    assert "PRR is undefined" in summary and rows(prr)[0]["PRR"] is None  # NaN (equal qualities) as an empty cell
    values = rows(per_example)
    assert [row["quality (Smatch)"] for row in values] == [1.0, 1.0]
    # s0: identical candidates -> 0; s1: (c / cat) vs (m / mouse) share only the TOP triple
    assert values[0]["u: DegMat-Smatch"] == 0.0 and values[1]["u: DegMat-Smatch"] > 0.0


# --- Uncertainty & PRR tab: several systems ------------------------------------------------------

EXAMPLE_SYSTEMS = {name: SPACE_DIR / "examples" / f"amr_system_{name}.jsonl" for name in ("strong", "middle", "weak")}


def example_gold() -> dict[str, str]:
    from lsplits.uncertainty.inputs import read_penman_file

    return {block.id: block.text for block in read_penman_file(SPACE_DIR / "examples" / "amr_gold.amr")}


def corpus_of_top1(metric: str, beams: Path, gold: dict[str, str]) -> float:
    """Corpus score of a beam file's top-1 candidates, straight from the metric."""
    from lsplits.similarity import registry

    similarity = registry.get(metric)
    rows = [json.loads(line) for line in beams.read_text(encoding="utf-8").splitlines()]
    predictions = [similarity.prepare(row["candidates"][0]) for row in rows]
    references = [similarity.prepare(gold[row["id"]]) for row in rows]
    return float(similarity.corpus_score(predictions, references))


def mean_prr(beams: Path, gold: Path, quality: str, cache: Path) -> float:
    """Figure 1's value from the single-system study: mean PRR over estimators and beam sizes."""
    from lsplits.uncertainty.study import run_study
    from lsplits.uncertainty.study_config import StudyConfig

    study = run_study([beams], gold, StudyConfig(similarities=("smatchpp",), qualities=(quality,), n_bootstrap=0,
                                                 workers=1, cache_dir=cache, progress=False))
    return float(np.mean([row.result.prr for row in study.prr]))


def test_three_systems_compared(client, tmp_path):
    files, names, gold_text, gold_file = client.predict(api_name="/load_systems_example")
    assert [Path(f["path"]).name for f in files] == [p.name for p in EXAMPLE_SYSTEMS.values()]
    assert names == "strong, middle, weak" and gold_file is None
    assert gold_text == (SPACE_DIR / "examples" / "amr_gold.amr").read_text(encoding="utf-8")

    summary, table1, figure1, figure2, pairwise = client.predict(
        [handle_file(str(p)) for p in EXAMPLE_SYSTEMS.values()], names, gold_text, None, "smatchpp",
        ["smatchpp", "sembleu"], api_name="/compare_systems")
    assert "3 systems on the same 12 examples; beam sizes 3, 5" in summary
    gold = example_gold()
    table = rows(table1)
    assert [row["System"] for row in table] == ["strong", "middle", "weak"]
    for row, path in zip(table, EXAMPLE_SYSTEMS.values(), strict=True):
        assert row["Smatch"] == pytest.approx(corpus_of_top1("smatch", path, gold), abs=6e-5)
        assert row["Smatch++"] == pytest.approx(corpus_of_top1("smatchpp", path, gold), abs=6e-5)
        assert row["examples"] == 12
    assert table[0]["Smatch++"] > table[1]["Smatch++"] > table[2]["Smatch++"]  # 0, 1, 2 extra top-1 edits
    assert figure1["type"] == "matplotlib" and figure2["type"] == "matplotlib"
    differences = rows(pairwise)
    assert [(r["Quality"], r["A"], r["B"]) for r in differences] == [
        (q, a, b) for q in ("Smatch++", "SemBLEU") for a, b in (("strong", "middle"), ("strong", "weak"),
                                                               ("middle", "weak"))]
    gold_path = SPACE_DIR / "examples" / "amr_gold.amr"
    expected = {(name, q): mean_prr(path, gold_path, q, tmp_path / "cache") for name, path in EXAMPLE_SYSTEMS.items()
                for q in ("smatchpp", "sembleu")}
    labels = {"Smatch++": "smatchpp", "SemBLEU": "sembleu"}
    for row in differences:
        quality = labels[row["Quality"]]
        assert row["mean PRR A"] == pytest.approx(expected[row["A"], quality], abs=6e-4)
        assert row["mean PRR B"] == pytest.approx(expected[row["B"], quality], abs=6e-4)
        assert row["A - B"] == pytest.approx(expected[row["A"], quality] - expected[row["B"], quality], abs=1.1e-3)
        assert row["CI low"] <= row["CI high"]


def test_systems_bad_input_gives_readable_messages(client, tmp_path):
    files = [handle_file(str(p)) for p in EXAMPLE_SYSTEMS.values()]
    gold = (SPACE_DIR / "examples" / "amr_gold.amr").read_text(encoding="utf-8")
    with pytest.raises(AppError, match=r"2 system name\(s\) for 3 beam file\(s\)"):
        client.predict(files, "a, b", gold, None, "smatchpp", ["smatchpp"], api_name="/compare_systems")
    with pytest.raises(AppError, match="upload one beam file per system"):
        client.predict(None, "", gold, None, "smatchpp", ["smatchpp"], api_name="/compare_systems")
    with pytest.raises(AppError, match="the name is given twice"):
        client.predict(files, "a, b, A", gold, None, "smatchpp", ["smatchpp"], api_name="/compare_systems")
    lines = EXAMPLE_SYSTEMS["weak"].read_text(encoding="utf-8").splitlines()
    fewer = tmp_path / "fewer.jsonl"
    fewer.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    missing = json.loads(lines[-1])["id"]
    with pytest.raises(AppError) as error:
        client.predict([files[0], handle_file(str(fewer))], "", gold, None, "smatchpp", ["smatchpp"],
                       api_name="/compare_systems")
    message = str(error.value)
    assert f"system fewer lacks 1 example(s) that system strong has ({missing})" in message
    assert "fewer.jsonl" in message and str(tmp_path) not in message and "/tmp/" not in message


GENERATED: list = []


def stand_in_generator(model, sentences, k):
    """Stands in for `lsplits beams`' function (not in this branch): k edited copies of each sentence's gold graph."""
    from lsplits.similarity.amr.edits import degrade

    GENERATED.append((model, list(sentences), k))
    graphs = list(example_gold().values())
    rng = random.Random(0)
    return [[degrade(graphs[i], rank, rng) for rank in range(k)] for i in range(len(sentences))]


def test_generated_beams_join_the_comparison(client, tmp_path, monkeypatch):
    load_app_module()
    import uncertainty_tab

    model = tmp_path / "my-parser"
    model.mkdir()
    sentences = "First sentence .\nSecond sentence .\nThird one ."
    monkeypatch.setattr(uncertainty_tab, "BEAM_GENERATOR", (("lsplits.no_such_module", "generate_beams"),))
    with pytest.raises(AppError, match="needs lsplits' beam generator .*upload beam files instead"):
        client.predict(str(model), sentences, 3, None, "", api_name="/generate_beams")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(AppError, match="HF_HUB_OFFLINE is set, so 'someone/amr-parser' cannot be downloaded"):
        client.predict("someone/amr-parser", sentences, 3, None, "", api_name="/generate_beams")

    GENERATED.clear()
    monkeypatch.setattr(uncertainty_tab, "BEAM_GENERATOR", ((__name__, "stand_in_generator"),))
    files, names = client.predict(str(model), sentences, 3, None, "", api_name="/generate_beams")
    assert GENERATED == [(str(model), ["First sentence .", "Second sentence .", "Third one ."], 3)]
    assert names == "my-parser" and len(files) == 1
    written = [json.loads(line) for line in Path(files[0]["path"]).read_text(encoding="utf-8").splitlines()]
    assert [row["id"] for row in written] == ["s1", "s2", "s3"] and all(len(r["candidates"]) == 3 for r in written)
    graphs = list(example_gold().values())[:3]
    gold = "".join(f"# ::id s{i}\n{g}\n\n" for i, g in enumerate(graphs, start=1))
    summary, table1, *_, pairwise = client.predict([handle_file(files[0]["path"])], names, gold, None, "smatchpp",
                                                   ["smatchpp"], api_name="/compare_systems")
    assert "1 systems on the same 3 examples; beam sizes 3" in summary
    assert "4 PRR value(s) are undefined" in summary  # every top-1 is perfect: nothing to reject
    assert [row["System"] for row in rows(table1)] == ["my-parser"]
    assert rows(table1)[0]["Smatch++"] == 1.0  # rank 0 is the gold graph itself
    assert rows(pairwise) == []


def test_more_estimators_and_metrics_in_the_table(client):
    """The hand-computed example above with NumSemSets and the extra metrics.

    DegMat 0, 0.25, 0.5 against qualities 1, 0.5, 0: Kendall 1; bad below 0.6 are e2 and e3, both more
    uncertain than e1: ROC-AUC 1; AURC (risk 1 - q) = mean of 0, 0.25, 0.5 = 0.25. NumSemSets at 0.85: 1, 2, 2.
    """
    beams = "\n".join(json.dumps({"id": f"e{i}", "candidates": c}) for i, c in
                      enumerate([["a b", "a b"], ["a c", "a b"], ["x y", "a b"]], start=1))
    gold = "\n".join(json.dumps({"id": f"e{i}", "amr": "a b"}) for i in (1, 2, 3))
    _, prr, per_example, *_ = client.predict(beams, gold, None, None, "rougel", "rougel", ["degmat", "numsemsets"],
                                             ["prr", "kendall", "roc_auc", "aurc"], 0.6, api_name="/run_uncertainty")
    table = {row["UE method"]: row for row in rows(prr)}
    assert table["DegMat-ROUGE-L"]["Kendall"] == 1.0 and table["DegMat-ROUGE-L"]["ROC-AUC"] == 1.0
    assert table["DegMat-ROUGE-L"]["AURC"] == 0.25
    assert [row["u: NumSemSets-ROUGE-L"] for row in rows(per_example)] == [1.0, 2.0, 2.0]
    for empty in (None, "", "  "):  # the empty "Bad below" box: no threshold
        with pytest.raises(AppError, match="Metrics: roc_auc needs Bad below: the quality under which"):
            client.predict(beams, gold, None, None, "rougel", "rougel", ["degmat"], ["roc_auc"], empty,
                           api_name="/run_uncertainty")
    for wrong in (1.5, "0", "half"):  # 0 is a value typed (the box starts empty), and no quality is below it
        with pytest.raises(AppError, match=r"^Bad below must be a number in \(0, 1\]"):
            client.predict(beams, gold, None, None, "rougel", "rougel", ["degmat"], ["roc_auc"], wrong,
                           api_name="/run_uncertainty")
