"""The shipped AMR parser's parts: the variable-free linearisation and its tolerant reader back to PENMAN, the
two-vocabulary tokenizer, and a parser folder (built here, untrained) that ``lsplits beams`` loads with no other
option, writing valid PENMAN with scores."""

from __future__ import annotations

import json
from pathlib import Path

import penman
import pytest

from lsplits.amr_parser.linearize import is_constant, linearize, to_penman
from lsplits.similarity.amr.graph import parse_amr
from lsplits.uncertainty.quality import score_predictions

pytestmark = pytest.mark.usefixtures("one_thread")

GRAPHS = [
    "(r / reveal-01 :ARG0 (s / sheep :ARG1-of (t / thank-01)) :ARG1 (s2 / secret :poss (l / life :poss "
    "(p / prince :mod (l2 / little)))) :ARG2 (i / i) :time (d / day :ord (o / ordinal-entity :value 5)))",
    "(d / demand-01 :ARG0 (h / he) :ARG1 (e / eat-01 :ARG0 (s / sheep) :ARG1 (f / flower) :polarity - "
    ":condition (e2 / eat-01 :ARG0 s :ARG1 (b / bush :mod (l / little)))) :mode interrogative)",
    '(p / person :name (n / name :op1 "Saint" :op2 "Exupery") :ARG0-of (w / write-01 :ARG1 (b / book '
    ':quant 2)) :wiki "Antoine de Saint-Exupery")',
    "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))",
]


def test_linearisation_drops_variables_and_writes_a_reentrancy_as_its_concept():
    assert linearize(GRAPHS[3]) == "( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0 boy ) )"
    assert '"Antoine_de_Saint-Exupery"' in linearize(GRAPHS[2]).split()  # one token per quoted string


@pytest.mark.parametrize("graph", GRAPHS)
def test_every_graph_survives_the_round_trip_exactly(graph):
    back = to_penman(linearize(graph))
    assert score_predictions("smatch", [back], [graph]).corpus == pytest.approx(1.0)
    # the same triples, not just the same score: concepts and constants included
    assert sorted(t for _, _, t in penman.decode(back).instances()) == \
        sorted(t for _, _, t in penman.decode(graph).instances())
    assert sorted(str(t) for _, _, t in penman.decode(back).attributes()) == \
        sorted(str(t) for _, _, t in penman.decode(graph).attributes())


@pytest.mark.parametrize(("tokens", "concepts", "edges"), [
    # cut short mid-graph: brackets closed, the dangling role dropped
    ("( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0 boy :ARG2", ["want-01", "boy", "go-02"], 3),
    # an unknown concept becomes thing; a role with no value before ')' is dropped
    ("( [UNK] :ARG0 ( boy :mod ) )", ["thing", "boy"], 1),
    # a stray token where a role belongs is skipped; an unbalanced ')' ends the graph
    ("( see-01 boy :ARG0 ( i ) ) ) :ARG1 ( cat )", ["see-01", "i"], 1),
    # a bare concept with no earlier node becomes a new node
    ("( like-01 :ARG0 sheep )", ["like-01", "sheep"], 1),
    # no opening bracket: one is assumed
    ("rose :mod ( red )", ["rose", "red"], 1),
    # an edge written twice, once inverted (:ARG0-of back to the parent), is one edge
    ("( want-01 :ARG0 ( boy :ARG0-of want-01 ) )", ["want-01", "boy"], 1),
    # a constant under an inverted role cannot be an edge's source: dropped
    ("( have-01 :ARG2-of 5 :ARG0 ( i ) )", ["have-01", "i"], 1),
])
def test_the_reader_repairs_what_a_beam_cut_or_garbled(tokens, concepts, edges, caplog):
    text = to_penman(tokens)
    assert not caplog.records  # penman lays it out without a warning (no duplicate triple, nothing to deinvert)
    graph = penman.decode(text)
    assert sorted(t for _, _, t in graph.instances()) == sorted(concepts)
    assert len(graph.edges()) == edges
    parse_amr(text)  # well-formed for every AMR metric


def test_an_unclosed_string_is_closed_and_a_sequence_without_a_node_is_none():
    graph = penman.decode(to_penman('( name :op1 "Saint_Ex )'))
    assert [str(t) for _, _, t in graph.attributes()] == ['"Saint Ex"']
    assert to_penman("") is None and to_penman(":ARG0 ( )") is not None  # a bracket opens a node
    assert to_penman(":ARG0") is None and to_penman(")") is None and to_penman('"x"') is None


def test_constants_are_numbers_strings_polarity_and_modes():
    assert all(map(is_constant, ["5", "-3.5", "1/2", '"x"', "-", "+", "imperative"]))
    assert not any(map(is_constant, ["boy", "want-01", "1st"]))


@pytest.fixture(scope="module")
def lsplits_parser(tmp_path_factory) -> Path:
    """An untrained parser folder (random decoder over the test graphs' vocabulary), saved as training saves."""
    import torch

    from lsplits.amr_parser.model import DecoderShape, build_parser, save_parser
    from lsplits.amr_parser.train import target_vocab

    torch.manual_seed(0)
    model, tokenizer = build_parser(target_vocab([linearize(g) for g in GRAPHS]),
                                    DecoderShape(layers=1, heads=2, feed_forward=64, max_length=64))
    folder = tmp_path_factory.mktemp("lsplits-parser")
    save_parser(model, tokenizer, folder, card={"note": "untrained, for tests"})
    return folder


def test_the_tokenizer_reads_sentences_with_wordpieces_and_writes_graph_tokens(lsplits_parser):
    from lsplits.amr_parser.model import parser_tokenizer

    tokenizer = parser_tokenizer(lsplits_parser)
    ids = tokenizer.encode_target("( boy :mod zebra )")
    assert ids[-1] == tokenizer.eos_token_id and ids[3] == tokenizer.unk_token_id  # zebra: not in the vocabulary
    assert tokenizer.decode(ids) == "( boy :mod [UNK] )"  # [UNK] kept: the reader turns it into thing
    assert tokenizer(["The little prince ."])["input_ids"][0][0] == tokenizer.source.cls_token_id


def test_a_saved_parser_holds_the_decoder_only_and_loads_to_the_same_outputs(lsplits_parser):
    import torch

    from lsplits.amr_parser.model import load_parser

    sizes = sum(path.stat().st_size for path in lsplits_parser.rglob("*") if path.is_file())
    assert sizes < 5_000_000  # one small decoder layer in float16; the 90 MB encoder is not copied
    first, tokenizer = load_parser(lsplits_parser)
    second, _ = load_parser(lsplits_parser)
    batch = tokenizer(["the sheep ate a flower"], return_tensors="pt")
    start = torch.tensor([[2]])
    with torch.no_grad():
        one = first(**batch, decoder_input_ids=start).logits
        two = second(**batch, decoder_input_ids=start).logits
    assert torch.equal(one, two) and one.shape[-1] == len(tokenizer.vocab)


def test_a_folder_that_names_another_encoder_is_refused_in_one_line(lsplits_parser, tmp_path):
    import shutil

    from lsplits.amr_parser.model import load_parser
    from lsplits.errors import ConfigError

    copy = tmp_path / "copy"
    shutil.copytree(lsplits_parser, copy)
    manifest = json.loads((copy / "lsplits_parser.json").read_text())
    (copy / "lsplits_parser.json").write_text(json.dumps({**manifest, "encoder_package": "bert_base"}))
    with pytest.raises(ConfigError, match="lsplits_parser.json: field 'encoder_package' must be"):
        load_parser(copy)


def test_lsplits_beams_loads_a_parser_folder_and_writes_penman_with_scores(lsplits_parser, tmp_path, capsys):
    from lsplits.cli.parser import main

    inputs = tmp_path / "sentences.jsonl"
    inputs.write_text("".join(json.dumps({"id": f"s{i}", "text": text}) + "\n" for i, text in
                              enumerate(["The prince smiled .", "I drew a sheep ."])))
    out = tmp_path / "beams.jsonl"
    assert main(["beams", str(lsplits_parser), str(inputs), "--format", "penman", "--k", "3", "--max-new-tokens",
                 "12", "--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["id"] for row in rows] == ["s0", "s1"]
    for row in rows:
        assert len(row["candidates"]) == len(row["logprobs"]) == 3
        assert all(lp < 0 for lp in row["logprobs"])
        for candidate in row["candidates"]:  # to_penman ran: each is empty (no node) or well-formed PENMAN
            assert candidate == "" or parse_amr(candidate)
    record = json.loads((tmp_path / "beams.settings.json").read_text())
    assert record["settings"]["postprocess"] == "lsplits.amr_parser.linearize:to_penman"


SHIPPED = Path(__file__).resolve().parents[1] / "spaces" / "lsplits-demo" / "parser"


def test_the_shipped_parser_parses_unseen_sentences_into_valid_graphs_with_scores():
    """The committed weights load with the packaged encoder and parse test sentences (never trained on) and a
    sentence of another book into k valid graphs each, with their scores."""
    from lsplits.amr_parser.model import load_parser
    from lsplits.generation.search import generate_beams

    rows = [json.loads(line) for line in (SHIPPED.parent / "examples" / "lpp_test.jsonl").read_text().splitlines()]
    sentences = [rows[5]["snt"], rows[40]["snt"], "The old fisherman did not want to sell his boat ."]
    model, tokenizer = load_parser(SHIPPED)
    beams = generate_beams(model, tokenizer, sentences, k=3, max_new_tokens=120, progress=False, return_scores=True)
    manifest = json.loads((SHIPPED / "lsplits_parser.json").read_text())
    assert manifest["test"]["smatchpp"] >= 0.30 and manifest["test"]["valid_share"] >= 0.95
    for scored in beams:
        graphs = [to_penman(text) for text in scored.candidates]
        assert all(graph is not None and parse_amr(graph) for graph in graphs)
        assert all(lp < 0 for lp in scored.logprobs) and all(n > 1 for n in scored.n_tokens)
    # the best graph of a test sentence shares concepts with its gold graph (a trained parser, not noise)
    top = penman.decode(to_penman(beams[0].candidates[0]))
    gold = penman.decode(rows[5]["amr"])
    assert {c for _, _, c in top.instances()} & {c for _, _, c in gold.instances()}


def test_beams_from_model_gives_penman_for_a_parser_folder(lsplits_parser):
    """The Space's "Generate a system's beams" path applies the parser folder's postprocess, as lsplits beams does."""
    from lsplits.generation.models import beams_from_model

    beams = beams_from_model(str(lsplits_parser), ["I drew a sheep ."], k=2, max_new_tokens=10)
    assert len(beams) == 1 and len(beams[0]) == 2
    for candidate in beams[0]:
        assert candidate == "" or (candidate.startswith("(n0 / ") and parse_amr(candidate))
