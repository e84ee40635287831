"""Issue 36 items 1, 2 and 6 through ``lsplits beams``: every candidate's scores in the beams file, the decoding
strategies with their options, seeded sampling that reproduces across runs and processes, the cache and resume
with scores, ``--postprocess``, the typed settings record, and one line for each bad option.

The parser is the tiny BART of beams_fixtures.py; each strategy runs once through the real CLI (module fixture)
and the other tests reuse its cache or compare with its file.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
import torch
from beams_fixtures import PAIRS, UNSEEN
from test_lm_distributed import _finish, _launch_two

from lsplits.cli.parser import main as cli_main

SCORE_FIELDS = ("logprobs", "n_tokens", "token_entropies")
"""The per-candidate lists of a beams file, as agreed with its readers (lsplits.generation.scores.SCORE_FIELDS)."""
pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py, with parser_folder
SENTENCES = [s for s, _ in PAIRS] + UNSEEN
K = 4
STRATEGIES = {"beam": [], "diverse-beam": ["--num-beam-groups", "2", "--diversity-penalty", "2.0"],
              "sample": ["--temperature", "1.2", "--top-p", "0.95", "--seed", "7"]}
RECORDED = {"beam": {"strategy": "beam"},
            "diverse-beam": {"strategy": "diverse-beam", "num_beam_groups": 2, "diversity_penalty": 2.0},
            "sample": {"strategy": "sample", "temperature": 1.2, "top_p": 0.95, "top_k": None, "seed": 7}}


@pytest.fixture(scope="module")
def sentences(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("inputs") / "sentences.txt"
    path.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    return path


def _argv(model: Path, inputs: Path, out: Path, cache: Path, *extra: str, shard_size: int = 4) -> list[str]:
    return ["beams", str(model), str(inputs), "--k", str(K), "--out", str(out), "--cache-dir", str(cache),
            "--max-new-tokens", "30", "--shard-size", str(shard_size), "--no-progress", *extra]


@pytest.fixture(scope="module")
def runs(parser_folder, sentences, tmp_path_factory) -> dict[str, Path]:
    """strategy -> the folder of one ``lsplits beams`` run (``beams.jsonl``, its record, ``cache/``)."""
    found = {}
    for strategy, options in STRATEGIES.items():
        folder = tmp_path_factory.mktemp(strategy)
        assert cli_main(_argv(parser_folder, sentences, folder / "beams.jsonl", folder / "cache",
                              "--decoding", strategy, *options)) == 0
        found[strategy] = folder
    return found


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _alone(model, tokenizer, text: str, candidate: str) -> tuple[list[int], float, float]:
    """(tokens, sum of log-probabilities, mean next-token entropy) of ``candidate`` re-tokenized, from one
    unbatched forward pass with ``labels`` (BART shifts them into the decoder's input itself)."""
    labels = tokenizer([candidate]).input_ids[0]
    with torch.no_grad():
        logits = model(input_ids=tokenizer([text], return_tensors="pt").input_ids,
                       labels=torch.tensor([labels])).logits[0].double()
    logp = torch.log_softmax(logits, dim=-1)
    picked = logp[torch.arange(len(labels)), torch.tensor(labels)]
    entropy = -(logp.exp() * logp).nansum(dim=-1)
    return labels, float(picked.sum()), float(entropy.mean())


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_the_beams_file_holds_each_candidates_scores_aligned_with_it(runs, parser_folder, strategy):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from lsplits.generation.cache import BeamsRecord
    from lsplits.generation.scores import SCORE_FIELDS as WRITTEN

    assert WRITTEN == SCORE_FIELDS

    rows = _rows(runs[strategy] / "beams.jsonl")
    assert [row["id"] for row in rows] == [str(i) for i in range(len(SENTENCES))]
    assert all(set(row) == {"id", "candidates", *SCORE_FIELDS} for row in rows)
    assert all(len(row[name]) == len(row["candidates"]) == K for row in rows for name in SCORE_FIELDS)
    assert all(isinstance(n, int) and n >= 1 for row in rows for n in row["n_tokens"])
    model, tokenizer = AutoModelForSeq2SeqLM.from_pretrained(parser_folder).eval(), \
        AutoTokenizer.from_pretrained(parser_folder)
    compared = 0
    for text, row in zip(SENTENCES, rows):
        for candidate, logprob, n_tokens, entropy in zip(row["candidates"], *(row[f] for f in SCORE_FIELDS)):
            tokens, expected, expected_entropy = _alone(model, tokenizer, text, candidate)
            if len(tokens) != n_tokens or tokens[-1] != tokenizer.eos_token_id:
                continue  # cut at --max-new-tokens (no EOS), or a token the text does not give back
            assert logprob == pytest.approx(expected, abs=1e-4), (row["id"], candidate)
            assert entropy == pytest.approx(expected_entropy, abs=1e-4), (row["id"], candidate)
            compared += 1
    assert compared >= len(rows) * K // 2, compared
    record = BeamsRecord.from_file(runs[strategy] / "beams.settings.json")
    assert record.settings.to_dict()["decoding"] == RECORDED[strategy]
    assert record.to_json() == (runs[strategy] / "beams.settings.json").read_text(encoding="utf-8")
    assert record.duplicates == sum(len(row["candidates"]) - len(set(row["candidates"])) for row in rows)


def test_a_seeded_sample_run_reproduces_exactly_and_another_seed_draws_others(runs, parser_folder, sentences,
                                                                               tmp_path, caplog):
    caplog.set_level(logging.INFO)
    first = runs["sample"] / "beams.jsonl"
    again = tmp_path / "again.jsonl"
    assert cli_main(_argv(parser_folder, sentences, again, tmp_path / "cache", "--decoding", "sample",
                          *STRATEGIES["sample"])) == 0
    assert again.read_text(encoding="utf-8") == first.read_text(encoding="utf-8")
    rows = _rows(again)
    duplicates = sum(len(row["candidates"]) - len(set(row["candidates"])) for row in rows)
    assert f"{duplicates} of {K * len(SENTENCES)} candidates repeat an earlier candidate of their input" \
        in caplog.text
    other = tmp_path / "other.jsonl"
    options = [*STRATEGIES["sample"][:-1], "8"]
    assert cli_main(_argv(parser_folder, sentences, other, tmp_path / "cache", "--decoding", "sample",
                          *options)) == 0
    assert [row["candidates"] for row in _rows(other)] != [row["candidates"] for row in rows]
    assert len(list((tmp_path / "cache").iterdir())) == 2  # the seed keys the cache


@pytest.mark.process
def test_two_processes_give_the_one_process_candidates_and_scores(runs, parser_folder, sentences, tmp_path):
    two = tmp_path / "two.jsonl"
    argv = _argv(parser_folder, sentences, two, tmp_path / "cache", "--decoding", "sample", *STRATEGIES["sample"],
                 shard_size=3)
    stderr = _finish(_launch_two(["-m", "lsplits", *argv]), timeout=300)
    assert re.search(r"beam cache: .* \(2 processes, fp32, sample", stderr), stderr[-2000:]
    assert "(process 0 of 2)" in stderr and "(process 1 of 2)" in stderr  # both generated shards (of 3 inputs)
    one = _rows(runs["sample"] / "beams.jsonl")  # one process, shards of 4 inputs
    assert [row["candidates"] for row in _rows(two)] == [row["candidates"] for row in one]
    for row_two, row_one in zip(_rows(two), one):
        assert row_two["n_tokens"] == row_one["n_tokens"]
        assert row_two["logprobs"] == pytest.approx(row_one["logprobs"], abs=1e-5)
        assert row_two["token_entropies"] == pytest.approx(row_one["token_entropies"], abs=1e-5)


@pytest.mark.parametrize("strategy", ["beam", "sample"])
def test_a_resumed_run_gives_the_same_file(runs, parser_folder, sentences, tmp_path, strategy):
    """A run killed after some shards: those are read back with their scores, the rest generated again."""
    (run_dir,) = (runs[strategy] / "cache").iterdir()
    shards = sorted(run_dir.glob("beams-*.jsonl"))
    assert len(shards) == 3
    kept = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in shards[::2]}
    shards[1].unlink()  # as if the run had died before writing it
    resumed = tmp_path / "resumed.jsonl"
    assert cli_main(_argv(parser_folder, sentences, resumed, runs[strategy] / "cache", "--decoding", strategy,
                          *STRATEGIES[strategy])) == 0
    assert shards[1].exists() and {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in kept} == kept
    assert resumed.read_text(encoding="utf-8") == (runs[strategy] / "beams.jsonl").read_text(encoding="utf-8")


POSTPROCESS = '''
import penman


def to_penman(raw):
    """Re-encode a graph on one line; None where it is not one, or a node has no concept."""
    try:
        graph = penman.decode(raw)
    except penman.DecodeError:
        return None
    if any(concept is None for _, _, concept in graph.instances()):
        return None
    return penman.encode(graph, indent=None)


def fails(raw):
    raise ValueError("cannot read " + raw.split()[0])
'''


def test_postprocess_runs_on_every_candidate_and_is_recorded(runs, parser_folder, sentences, tmp_path,
                                                             monkeypatch, caplog):
    import penman

    from lsplits.generation.cache import BeamsRecord

    caplog.set_level(logging.INFO)
    (tmp_path / "linearised.py").write_text(POSTPROCESS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "beams.jsonl"
    assert cli_main(_argv(parser_folder, sentences, out, runs["sample"] / "cache", "--postprocess",
                          "linearised:to_penman", "--decoding", "sample", *STRATEGIES["sample"])) == 0
    assert "all 3 beam shards cached" in caplog.text  # the cache holds the raw candidates: nothing generated

    def independent(raw: str) -> str:
        try:
            graph = penman.decode(raw)
        except penman.DecodeError:
            return ""
        return "" if any(c is None for _, _, c in graph.instances()) else penman.encode(graph, indent=None)

    raw, written = _rows(runs["sample"] / "beams.jsonl"), _rows(out)
    assert [[independent(c) for c in row["candidates"]] for row in raw] == [row["candidates"] for row in written]
    assert any(c == "" for row in written for c in row["candidates"])  # invalid outputs: empty, kept in place
    assert any(c != "" for row in written for c in row["candidates"])
    assert written != raw  # the valid ones re-encoded: "( r / run-01 )" -> "(r / run-01)"
    assert [[row[f] for f in SCORE_FIELDS] for row in raw] == [[row[f] for f in SCORE_FIELDS] for row in written]
    record = BeamsRecord.from_file(tmp_path / "beams.settings.json")
    assert record.settings.postprocess == "linearised:to_penman"
    assert json.loads((tmp_path / "beams.settings.json").read_text())["settings"]["postprocess"] == \
        "linearised:to_penman"


def test_a_postprocess_that_raises_is_one_line_naming_the_candidate(runs, parser_folder, sentences, tmp_path,
                                                                    capsys):
    script = tmp_path / "linearised.py"
    script.write_text(POSTPROCESS, encoding="utf-8")
    out = tmp_path / "beams.jsonl"
    capsys.readouterr()
    assert cli_main(_argv(parser_folder, sentences, out, runs["beam"] / "cache", "--postprocess",
                          f"{script}:fails")) == 2
    first = _rows(runs["beam"] / "beams.jsonl")[0]["candidates"][0]
    shown = first if len(first) <= 60 else first[:60] + "..."
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (f"lsplits beams: error: --postprocess {script}:fails raised ValueError: cannot read "
                       f"{first.split()[0]} on candidate 1 of example '0' ({shown!r})")
    assert not any("Traceback" in line for line in err)
    assert not out.exists()


@pytest.mark.parametrize("extra, expected", [
    (["--decoding", "nucleus"], "--decoding must be one of beam, diverse-beam, sample, got 'nucleus'"),
    (["--temperature", "0.7"], "--temperature applies to decoding 'sample', not 'beam', got 0.7"),
    (["--seed", "3"], "--seed applies to decoding 'sample', not 'beam', got 3"),
    (["--decoding", "diverse-beam", "--top-k", "5"], "--top-k applies to decoding 'sample', not 'diverse-beam'"),
    (["--decoding", "sample", "--num-beam-groups", "2"],
     "--num-beam-groups applies to decoding 'diverse-beam', not 'sample'"),
    (["--decoding", "diverse-beam", "--num-beam-groups", "3"], "--num-beam-groups must divide k (4)"),
    (["--decoding", "diverse-beam", "--diversity-penalty", "-1"], "--diversity-penalty must be"),
    (["--decoding", "sample", "--top-p", "1.5"], "--top-p must be"),
    (["--decoding", "sample", "--temperature", "0"], "--temperature must be"),
    (["--postprocess", "to_penman"], "--postprocess must be MODULE:FUNCTION"),
    (["--postprocess", "no_such_module_36:f"], "--postprocess names module 'no_such_module_36', which cannot be "
                                               "imported"),
    (["--postprocess", "json:to_penman"], "--postprocess names 'to_penman', which json does not define"),
    (["--postprocess", "json:__doc__"], "--postprocess names '__doc__', which is a str, not a function"),
    (["--postprocess", "missing.py:f"], "--postprocess names the file missing.py, which does not exist"),
])
def test_bad_decoding_and_postprocess_options_are_one_line_before_the_model_loads(tmp_path, sentences, capsys,
                                                                                   extra, expected):
    model = tmp_path / "no-model-here"  # never read: the options are refused first
    capsys.readouterr()
    assert cli_main(_argv(model, sentences, tmp_path / "beams.jsonl", tmp_path / "cache", *extra)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"lsplits beams: error: {expected}"), err
    assert not (tmp_path / "cache").exists() and not (tmp_path / "beams.jsonl").exists()


def test_the_amrlib_postprocess_names_its_extra_when_amrlib_is_missing(tmp_path, sentences, capsys):
    pytest.importorskip("penman")
    try:
        import amrlib  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("amrlib is installed")
    capsys.readouterr()
    assert cli_main(_argv(tmp_path / "no-model-here", sentences, tmp_path / "beams.jsonl", tmp_path / "cache",
                          "--postprocess", "amrlib")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["lsplits beams: error: --postprocess amrlib needs the 'amrlib' package, which is not installed: "
                   "pip install 'lsplits[amrlib]'"]
