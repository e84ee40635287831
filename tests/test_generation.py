"""Beam candidates from a Hugging Face model (lsplits.generation and ``lsplits beams``), offline.

The seq2seq model is a tiny BART trained here from scratch on sentence -> PENMAN pairs
(beams_fixtures.py); the causal LM is the project's scratch GPT-2. Checked: k candidates per input
in input order whatever the batching, only the continuation of a causal LM's prompt, beams that flow
through ``lsplits ue`` end to end with the invalid candidates counted the same on both sides, inputs
from text, JSONL and a dataset folder, and a killed run that resumes from its finished shards.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import re
import sys
from pathlib import Path

import penman
import pytest
from beams_fixtures import PAIRS, UNSEEN
from lm_fixtures import TINY_SCRATCH, kill_when_written, tiny_sentences

from lsplits.cli.parser import main as cli_main
from lsplits.errors import ConfigError, DataError, InvalidInput, InvalidOption
from lsplits.generation.inputs import read_inputs
from lsplits.generation.models import check_model
from lsplits.generation.search import generate_beams

HELPER = Path(__file__).with_name("beams_fixtures.py")
pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py, with parser_folder
SENTENCES = [s for s, _ in PAIRS] + UNSEEN


@pytest.fixture(scope="module")
def parser(parser_folder):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    return AutoModelForSeq2SeqLM.from_pretrained(parser_folder), AutoTokenizer.from_pretrained(parser_folder)


def _valid(text: str) -> bool:
    """Independent validity check: penman reads exactly one graph with a concept on every node."""
    try:
        graph = penman.decode(text)
    except penman.DecodeError:
        return False
    return all(concept is not None for _, _, concept in graph.instances())


def test_k_candidates_per_input_in_input_order_whatever_the_batching(parser):
    model, tokenizer = parser
    together = generate_beams(model, tokenizer, SENTENCES, k=4, max_new_tokens=30, progress=False)
    one_by_one = generate_beams(model, tokenizer, SENTENCES, k=4, max_new_tokens=30, progress=False,
                                token_budget=1)  # a batch per input
    assert together == one_by_one
    assert [len(c) for c in together] == [4] * len(SENTENCES)
    # the trained pairs come back as their top-1 (the model memorised them), so the order is the input's
    top1 = [candidates[0].replace(" ", "") for candidates in together[:len(PAIRS)]]
    assert sum(t == g.replace(" ", "") for t, (_, g) in zip(top1, PAIRS)) >= len(PAIRS) - 1
    # beam search returns the best first: the top-1 equals HF's single-best beam search output
    single = model.generate(**tokenizer(SENTENCES[:1], return_tensors="pt"), num_beams=4, max_new_tokens=30)
    assert together[0][0] == tokenizer.decode(single[0], skip_special_tokens=True).strip()


def test_beams_from_a_model_name_equal_those_of_the_loaded_model(parser, parser_folder):
    from lsplits.generation.models import beams_from_model

    model, tokenizer = parser
    expected = generate_beams(model, tokenizer, SENTENCES[:3], k=3, max_new_tokens=30, progress=False)
    assert beams_from_model(str(parser_folder), SENTENCES[:3], k=3, max_new_tokens=30) == expected


def test_the_space_generates_with_the_beams_function(parser_folder, monkeypatch):
    import importlib
    import sys

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "spaces" / "lsplits-demo"))
    sys.modules.pop("uncertainty_tab", None)
    uncertainty_tab = importlib.import_module("uncertainty_tab")
    from lsplits.generation.models import beams_from_model

    assert uncertainty_tab.beam_generator() is beams_from_model


@pytest.fixture(scope="module")
def scratch_lm(tmp_path_factory):
    """The project's scratch GPT-2 (a byte-level BPE tokenizer) and its tokenizer, loaded."""
    from lsplits.lm.scoring import load_causal_lm
    from lsplits.lm.scratch import ScratchConfig, build_scratch_lm

    folder = tmp_path_factory.mktemp("scratch-lm")
    build_scratch_lm(tiny_sentences(), folder, ScratchConfig(**TINY_SCRATCH), n_positions=64)
    return load_causal_lm(folder / "model")


def test_causal_lm_gets_the_prompt_and_only_its_continuation_is_kept(scratch_lm):
    model, tokenizer = scratch_lm
    template = "Say: {text} Again:"
    texts = tiny_sentences(5)
    beams = generate_beams(model, tokenizer, texts, k=3, prompt_template=template, max_new_tokens=8, progress=False)
    for text, candidates in zip(texts, beams):
        prompt = tokenizer(template.format(text=text), return_tensors="pt")
        alone = model.generate(**prompt, num_beams=3, num_return_sequences=3, max_new_tokens=8, do_sample=False,
                               pad_token_id=tokenizer.eos_token_id)
        continuations = tokenizer.batch_decode(alone[:, prompt.input_ids.shape[1]:], skip_special_tokens=True)
        assert candidates == [c.strip() for c in continuations]  # left padding changed nothing
    with pytest.raises(ConfigError, match="no {text} placeholder"):
        generate_beams(model, tokenizer, texts, k=2, prompt_template="Say:", progress=False)
    with pytest.raises(ConfigError, match=r"^k must be a whole number >= 1 \(candidates per input\), got 0$"):
        generate_beams(model, tokenizer, texts, k=0, progress=False)
    with pytest.raises(DataError, match="1 of 1 inputs do not fit the model.s window of 64 less max_new_tokens 60"):
        generate_beams(model, tokenizer, ["a long input " * 10], k=2, max_new_tokens=60, progress=False)
    misuse = [("A man is here.", dict(k=2), InvalidInput, r"texts must be a list of strings, got one string"),
              ([], dict(k=2), InvalidInput, r"texts is empty"),
              ([""], dict(k=2), InvalidInput, r"texts\[0\] is an empty string"),
              (["a", "  "], dict(k=2), InvalidInput, r"texts\[1\] is an empty string"),
              ([1, 2], dict(k=2), InvalidInput, r"texts\[0\] is 1 \(int\), not a string"),
              (["a"], dict(k="2"), InvalidOption, r"k must be a whole number >= 1 \(candidates per input\), got '2'$"),
              (["a"], dict(k=2.5), InvalidOption, r"k must be a whole number >= 1 \(candidates per input\), got 2.5"),
              (["a"], dict(k=2, max_new_tokens=0), InvalidOption, r"^max_new_tokens must be a whole number >= 1, got 0$")]
    for texts, options, kind, message in misuse:
        with pytest.raises(kind, match=message):
            generate_beams(model, tokenizer, texts, progress=False, **options)


def test_decoding_a_bpe_model_prints_no_clean_up_warning(scratch_lm, caplog):
    """Issue 38 item 8: lsplits beams printed transformers' clean_up_tokenization_spaces warning on every run (it
    asked a BPE tokenizer for the clean-up that transformers then ignores, with a warning)."""
    model, tokenizer = scratch_lm
    assert type(tokenizer.backend_tokenizer.model).__name__ == "BPE"  # the tokenizers transformers warns for
    logging.Logger.warning_once.cache_clear()  # transformers warns once per process: this test must see a first time
    transformers_logger = logging.getLogger("transformers")  # does not propagate to the root logger
    transformers_logger.addHandler(caplog.handler)
    try:
        beams = generate_beams(model, tokenizer, tiny_sentences(3), k=2, max_new_tokens=6, progress=False)
    finally:
        transformers_logger.removeHandler(caplog.handler)
    assert [len(candidates) for candidates in beams] == [2, 2, 2]
    assert [r.getMessage() for r in caplog.records if "clean_up_tokenization" in r.getMessage()] == []


def test_candidates_keep_the_models_spacing():
    """No clean-up of tokenization spaces: it rewrites an output (" 's" -> "'s", " ." -> ".") of a WordPiece-like
    tokenizer, which a PENMAN graph or a SQL query does not want."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from lsplits.generation.decoding import token_texts

    words = Tokenizer(models.WordLevel({"<pad>": 0, "john": 1, "'s": 2, "dog": 3, ".": 4}, unk_token="<pad>"))
    words.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    words.decoder = decoders.WordPiece(prefix="##", cleanup=False)  # joins with spaces, no clean-up of its own
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=words, pad_token="<pad>")
    assert tokenizer.batch_decode([[1, 2, 3, 4]], clean_up_tokenization_spaces=True) == ["john's dog."]  # what it did
    assert token_texts(tokenizer, [[1, 2, 3, 4, 0]]) == ["john 's dog ."]


def _beams_argv(model: Path, inputs: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    # 14 new tokens: the short graphs fit, the long ones are cut off and invalid, as happens with real parsers
    return ["beams", str(model), str(inputs), "--k", "4", "--out", str(out), "--cache-dir", str(cache),
            "--max-new-tokens", "14", "--no-progress", *extra]


def test_beams_then_ue_end_to_end(parser_folder, tmp_path, capsys, caplog):
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"id": str(i), "amr": g}) + "\n" for i, (_, g) in enumerate(PAIRS))
                    + "".join(json.dumps({"id": str(len(PAIRS) + i), "amr": "(r / run-01 :ARG0 (c / cat))"}) + "\n"
                              for i in range(len(UNSEEN))), encoding="utf-8")
    out = tmp_path / "beams.jsonl"
    assert cli_main(_beams_argv(parser_folder, sentences, out, tmp_path / "cache", "--format", "penman",
                                "--shard-size", "5")) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [set(row) for row in rows] == [{"id", "candidates", "logprobs", "n_tokens", "token_entropies"}] * len(
        SENTENCES)
    assert [row["id"] for row in rows] == [str(i) for i in range(len(SENTENCES))]
    invalid = sum(not _valid(c) for row in rows for c in row["candidates"])
    printed = capsys.readouterr().out
    assert f"; {invalid} of {4 * len(SENTENCES)} candidates are not valid PENMAN" in printed
    assert 0 < invalid < 4 * len(SENTENCES)  # the beams hold both, as real parsers' do
    record = json.loads((tmp_path / "beams.settings.json").read_text(encoding="utf-8"))
    assert record["written_by"] == "lsplits beams" and record["model"] == str(parser_folder)
    assert record["source"] == str(sentences) and record["n_inputs"] == len(SENTENCES)
    assert record["settings"]["k"] == 4 and record["settings"]["format"] == "penman"
    assert record["settings"]["max_new_tokens"] == 14 and record["dtype_used"] == "fp32"

    report = tmp_path / "report"
    assert cli_main(["ue", str(out), "--gold", str(gold), "--out", str(report), "--similarities", "smatch",
                     "--qualities", "smatch", "--beam-sizes", "2,4", "--n-bootstrap", "0", "--workers", "1",
                     "--no-cache", "--no-progress"]) == 0
    with (report / "invalid_candidates.csv").open(encoding="utf-8") as handle:
        counted = list(csv.DictReader(handle))
    assert [row["id"] for row in counted] == [str(i) for i in range(len(SENTENCES))]
    assert sum(int(row["smatch"]) for row in counted) == invalid
    with (report / "prr.csv").open(encoding="utf-8") as handle:
        prr = list(csv.DictReader(handle))
    assert {row["k"] for row in prr} == {"2", "4"} and {row["quality"] for row in prr} == {"smatch"}
    assert len({row["method"] for row in prr}) == 4  # LexSim and three estimators on Smatch
    assert json.loads((report / "settings.json").read_text(encoding="utf-8"))["beams"] == record
    duplicates = sum(len(row["candidates"]) - len(set(row["candidates"])) for row in rows)
    assert record["duplicates"] == duplicates
    assert f"made by `lsplits beams` with {parser_folder} from {sentences} (k = 4, max_new_tokens = 14, decoding " \
        f"beam, dtype fp32; {duplicates} duplicate candidates, kept)" in (report / "report.md").read_text(
            encoding="utf-8")

    edited = tmp_path / "edited"  # beams changed after lsplits wrote them are not credited to its run
    out.write_text("".join(out.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    assert cli_main(["ue", str(out), "--gold", str(gold), "--out", str(edited), "--similarities", "smatch",
                     "--qualities", "smatch", "--beam-sizes", "2,4", "--n-bootstrap", "0", "--workers", "1",
                     "--no-cache", "--no-progress"]) == 0
    assert "beams" not in json.loads((edited / "settings.json").read_text(encoding="utf-8"))
    assert "beams.jsonl changed since lsplits beams wrote it: its settings record" in caplog.text
    assert "made by `lsplits beams`" not in (edited / "report.md").read_text(encoding="utf-8")


def test_the_settings_record_next_to_the_beams_is_replaced_only_when_lsplits_wrote_it(parser_folder, tmp_path,
                                                                                      capsys):
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("\n".join(SENTENCES[:3]) + "\n", encoding="utf-8")
    out, record = tmp_path / "beams.jsonl", tmp_path / "beams.settings.json"
    record.write_text('{"my": "notes"}', encoding="utf-8")
    assert cli_main(_beams_argv(parser_folder, sentences, out, tmp_path / "cache")) == 2
    assert re.search(r"lsplits beams: error: the settings record next to --out .*beams.settings.json: an existing "
                     r"file that lsplits did not write", capsys.readouterr().err)
    assert not out.exists() and not (tmp_path / "cache").exists()  # refused before any work
    assert record.read_text(encoding="utf-8") == '{"my": "notes"}'
    record.unlink()
    assert cli_main(_beams_argv(parser_folder, sentences, out, tmp_path / "cache")) == 0
    assert json.loads(record.read_text(encoding="utf-8"))["settings"]["k"] == 4
    assert cli_main(_beams_argv(parser_folder, sentences, out, tmp_path / "cache", "--k", "3")) == 0
    assert json.loads(record.read_text(encoding="utf-8"))["settings"]["k"] == 3  # its own record is replaced
    assert {len(json.loads(line)["candidates"]) for line in out.read_text(encoding="utf-8").splitlines()} == {3}


def test_inputs_from_jsonl_and_a_dataset_folder(tmp_path):
    rows = [{"id": f"lpp.{i}", "snt": s, "amr": "(a / b)"} for i, s in enumerate(SENTENCES[:3])]
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    read = read_inputs(str(jsonl))
    assert (read.ids, read.texts) == ([r["id"] for r in rows], [r["snt"] for r in rows])
    folder = tmp_path / "dataset"
    folder.mkdir()
    (folder / "test.jsonl").write_text("".join(json.dumps({"sentence": s}) + "\n" for s in SENTENCES[:2]),
                                       encoding="utf-8")
    read = read_inputs(str(folder), split="test")
    assert (read.ids, read.texts) == (["0", "1"], SENTENCES[:2])
    with pytest.raises(DataError, match=r"dataset: no split 'validation' \(splits: test\)$"):
        read_inputs(str(folder), split="validation")
    with pytest.raises(DataError, match=r"in.jsonl, line 1, field 'text': missing text field \(fields: id, snt, amr\)"):
        read_inputs(str(jsonl), input_field="text")
    with pytest.raises(DataError, match=r"line 1, field 'key': missing id"):
        read_inputs(str(jsonl), id_field="key")
    text = tmp_path / "in.txt"
    text.write_text("one\n\nthree\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"in.txt, line 2: empty line"):
        read_inputs(str(text))
    with pytest.raises(DataError, match="no such file"):
        read_inputs(str(tmp_path / "missing.txt"))


def test_models_that_cannot_generate_are_refused_from_their_config(tmp_path, parser_folder):
    from transformers import BertConfig, BertModel

    BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=16)).save_pretrained(tmp_path / "bert")
    with pytest.raises(ConfigError, match=r"\(bert, BertModel\) is neither a seq2seq model nor a causal LM"):
        check_model(str(tmp_path / "bert"))
    assert check_model(str(parser_folder)) == "seq2seq"


@pytest.mark.process
def test_killed_run_resumes_without_regenerating_finished_shards(parser_folder, tmp_path):
    sentences = tmp_path / "sentences.txt"
    sentences.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    cache = tmp_path / "cache"
    argv = _beams_argv(parser_folder, sentences, tmp_path / "resumed.jsonl", cache, "--shard-size", "4")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    kill_when_written([sys.executable, str(HELPER), "hang", *argv],
                      lambda: bool(list(cache.glob("*/beams-00000.jsonl"))), timeout=180, env=env)
    (run_dir,) = cache.iterdir()
    first = run_dir / "beams-00000.jsonl"
    assert sorted(p.name for p in run_dir.glob("beams-*.jsonl")) == [first.name]
    assert not (tmp_path / "resumed.jsonl").exists()
    before = (first.stat().st_ino, first.stat().st_mtime_ns)

    assert cli_main(argv) == 0

    assert (first.stat().st_ino, first.stat().st_mtime_ns) == before
    assert len(list(run_dir.glob("beams-*.jsonl"))) == 3
    fresh = tmp_path / "fresh.jsonl"
    assert cli_main(_beams_argv(parser_folder, sentences, fresh, tmp_path / "fresh-cache", "--shard-size", "4")) == 0
    assert (tmp_path / "resumed.jsonl").read_text() == fresh.read_text()


def test_two_processes_under_accelerate_launch_give_the_one_process_beams(parser_folder, tmp_path):
    from test_lm_distributed import _finish, _launch_two

    sentences = tmp_path / "sentences.txt"
    sentences.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    two = tmp_path / "two.jsonl"
    launch = _launch_two(["-m", "lsplits", *_beams_argv(parser_folder, sentences, two, tmp_path / "two-cache",
                                                         "--shard-size", "3")])
    stderr = _finish(launch, timeout=300)
    assert "(process 0 of 2)" in stderr and "(process 1 of 2)" in stderr  # both generated shards
    one = tmp_path / "one.jsonl"
    assert cli_main(_beams_argv(parser_folder, sentences, one, tmp_path / "one-cache", "--shard-size", "3")) == 0
    assert two.read_text() == one.read_text()
    assert [json.loads(line)["id"] for line in two.read_text().splitlines()] == [str(i) for i in range(len(SENTENCES))]


def test_the_window_error_lists_every_input_that_does_not_fit():
    """One run names all the inputs that are too long (the first 20, then how many more), not one per run."""
    from types import SimpleNamespace

    from lsplits.generation.search import encode_inputs

    class Words:  # one token a word, plus BOS
        model_max_length = 10 ** 30

        def __call__(self, texts, add_special_tokens=True):
            return {"input_ids": [[0] + [1] * len(text.split()) for text in texts]}

    texts = ["short one"] * 3 + [" ".join(["w"] * (8 + i)) for i in range(22)]
    ids = [f"ex{i}" for i in range(len(texts))]
    config = SimpleNamespace(max_position_embeddings=8, name_or_path="words")
    with pytest.raises(DataError) as caught:
        encode_inputs(Words(), config, "seq2seq", texts, 4, ids=ids)
    message = str(caught.value)
    assert message.startswith("22 of 25 inputs do not fit the model's window of 8 (8 tokens): ex3 (9 tokens), "
                              "ex4 (10 tokens)")
    assert "ex22 (28 tokens)" in message and "ex23" not in message and message.endswith("and 2 more; shorten or "
                                                                                         "leave them out")
    encoded, _ = encode_inputs(Words(), config, "seq2seq", texts[:3], 4, ids=ids[:3])
    assert encoded == [[0, 1, 1]] * 3
