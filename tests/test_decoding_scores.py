"""Issue 36 items 1-2: every candidate's score, and the decoding strategies (beam, diverse beam, sampling).

The recorded log-probability of a candidate must equal a forward pass of that candidate alone (no batch, no
padding) computed here by HF's own loss (seq2seq) or a plain log-softmax (causal), within 1e-4 in fp32, whatever
decoding produced it.
"""

from __future__ import annotations

import math

import pytest
import torch
from beams_fixtures import PAIRS, UNSEEN, build_tiny_parser
from lm_fixtures import naive_sequence_logprobs, tiny_model_folder, tiny_sentences

STRATEGIES = [("beam", {}), ("diverse-beam", {"num_beam_groups": 2, "diversity_penalty": 2.0}),
              ("sample", {"temperature": 1.5, "top_p": 0.95, "seed": 3})]


@pytest.fixture(scope="module")
def parser(tmp_path_factory):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    folder = build_tiny_parser(tmp_path_factory.mktemp("parser") / "model", steps=60)
    return AutoModelForSeq2SeqLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)


@pytest.fixture(scope="module")
def causal(tmp_path_factory):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = tiny_model_folder(tmp_path_factory.mktemp("causal"))
    return AutoModelForCausalLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)


def _alone_seq2seq(model, tokenizer, text: str, tokens: list[int]) -> float:
    """Sum of the candidate's token log-probabilities from HF's loss: mean over its tokens, times their count."""
    source = tokenizer([text], return_tensors="pt").input_ids
    with torch.no_grad():
        loss = model(input_ids=source, labels=torch.tensor([tokens])).loss
    return -float(loss) * len(tokens)


def _alone_causal(model, tokenizer, prompt: str, tokens: list[int]) -> tuple[float, float]:
    """(sum of log-probabilities, mean entropy) of the candidate's tokens after the prompt, one unpadded pass."""
    prompt_ids = tokenizer(prompt)["input_ids"]
    ids = prompt_ids + tokens
    per_token = naive_sequence_logprobs(model, ids)[len(prompt_ids) - 1:]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0, len(prompt_ids) - 1:-1].double()
    p = torch.softmax(logits, dim=-1)
    entropy = -(p * torch.log(p)).nansum(dim=-1)
    return float(per_token.sum()), float(entropy.mean())


@pytest.mark.parametrize("strategy, options", STRATEGIES, ids=[s for s, _ in STRATEGIES])
def test_seq2seq_scores_equal_a_forward_pass_of_each_candidate_alone(parser, strategy, options):
    from lsplits.generation import generate_beams
    from lsplits.generation.decoding import Decoding

    model, tokenizer = parser
    texts = [PAIRS[0][0], UNSEEN[1], PAIRS[2][0]]
    results = generate_beams(model, tokenizer, texts, k=4, max_new_tokens=40, progress=False, dtype="fp32",
                             decoding=Decoding(strategy, **options), return_scores=True)
    assert len(results) == len(texts)
    for text, result in zip(texts, results, strict=True):
        assert len(result.candidates) == len(result.logprobs) == len(result.n_tokens) == 4
        for candidate, tokens, logprob, count in zip(result.candidates, result.token_ids, result.logprobs,
                                                     result.n_tokens, strict=True):
            assert count == len(tokens) >= 1
            assert math.isclose(logprob, _alone_seq2seq(model, tokenizer, text, tokens), abs_tol=1e-4)
            assert candidate == tokenizer.decode(tokens, skip_special_tokens=True).strip()
        assert all(0 <= h <= math.log(len(tokenizer)) + 1e-6 for h in result.token_entropies)


@pytest.mark.parametrize("strategy, options", STRATEGIES, ids=[s for s, _ in STRATEGIES])
def test_causal_scores_and_entropies_equal_a_forward_pass_of_each_candidate_alone(causal, strategy, options):
    from lsplits.generation import generate_beams
    from lsplits.generation.decoding import Decoding

    model, tokenizer = causal
    texts = tiny_sentences(3)
    template = "Say again: {text} ->"
    results = generate_beams(model, tokenizer, texts, k=4, max_new_tokens=6, progress=False, dtype="fp32",
                             prompt_template=template, decoding=Decoding(strategy, **options),
                             return_scores=True)
    for text, result in zip(texts, results, strict=True):
        for tokens, logprob, entropy in zip(result.token_ids, result.logprobs, result.token_entropies,
                                            strict=True):
            expected, expected_entropy = _alone_causal(model, tokenizer, template.format(text=text), tokens)
            assert math.isclose(logprob, expected, abs_tol=1e-4)
            assert math.isclose(entropy, expected_entropy, abs_tol=1e-4)


def test_beam_candidates_and_their_order_are_those_of_hf_beam_search(parser):
    """Scoring changes nothing of beam search: the same strings, in the same order, as without scores."""
    from lsplits.generation import generate_beams

    model, tokenizer = parser
    texts = [pair[0] for pair in PAIRS[:4]]
    plain = generate_beams(model, tokenizer, texts, k=3, max_new_tokens=40, progress=False, dtype="fp32")
    scored = generate_beams(model, tokenizer, texts, k=3, max_new_tokens=40, progress=False, dtype="fp32",
                            return_scores=True)
    assert [result.candidates for result in scored] == plain
    for text, candidates in zip(texts, plain, strict=True):  # HF's beam search on the input alone
        source = tokenizer([text], return_tensors="pt")
        with torch.no_grad():
            output = model.generate(**source, num_beams=3, num_return_sequences=3, do_sample=False,
                                    max_new_tokens=40)
        assert candidates == [t.strip() for t in tokenizer.batch_decode(output, skip_special_tokens=True)]


def test_a_seeded_sample_run_reproduces_and_does_not_depend_on_the_batch(parser):
    """Each input's samples come from its own seed: the same run twice, or the input alone, gives the same."""
    from lsplits.generation import generate_beams

    model, tokenizer = parser
    texts = [PAIRS[1][0], UNSEEN[0], PAIRS[3][0]]
    kwargs = dict(k=5, max_new_tokens=40, progress=False, dtype="fp32", decoding="sample", return_scores=True)
    first = generate_beams(model, tokenizer, texts, **kwargs)
    again = generate_beams(model, tokenizer, texts, **kwargs)
    alone = generate_beams(model, tokenizer, texts[1:2], **kwargs)
    assert [r.candidates for r in first] == [r.candidates for r in again]
    assert [r.logprobs for r in first] == [r.logprobs for r in again]
    assert alone[0].candidates == first[1].candidates
    other_seed = generate_beams(model, tokenizer, texts, **{**kwargs, "decoding": "sample"}, seed=1)
    assert [r.candidates for r in other_seed] != [r.candidates for r in first]
    state = torch.random.get_rng_state()
    generate_beams(model, tokenizer, texts[:1], **kwargs)
    assert torch.equal(state, torch.random.get_rng_state())  # the caller's random state is left alone


def test_do_sample_among_the_generate_keywords_means_sampling(parser):
    """``generate_beams(..., do_sample=True)`` failed (do_sample=False was fixed first): it is the sample strategy."""
    from lsplits.generation import generate_beams

    model, tokenizer = parser
    texts = [UNSEEN[2]]
    by_keyword = generate_beams(model, tokenizer, texts, k=3, max_new_tokens=30, progress=False, dtype="fp32",
                                do_sample=True, temperature=1.3)
    by_strategy = generate_beams(model, tokenizer, texts, k=3, max_new_tokens=30, progress=False, dtype="fp32",
                                 decoding="sample", temperature=1.3)
    assert by_keyword == by_strategy and len(by_keyword[0]) == 3


def test_diverse_beam_groups_start_differently_under_a_strong_penalty(parser):
    """Hamming diversity: with a penalty far above any log-probability gap, no two groups take the same first
    token; plain beam search on the same input shares its first token across beams."""
    from lsplits.generation import generate_beams
    from lsplits.generation.decoding import Decoding

    model, tokenizer = parser
    text = [PAIRS[0][0]]
    diverse = generate_beams(model, tokenizer, text, k=4, max_new_tokens=40, progress=False, dtype="fp32",
                             decoding=Decoding("diverse-beam", num_beam_groups=4, diversity_penalty=100.0),
                             return_scores=True)[0]
    plain = generate_beams(model, tokenizer, text, k=4, max_new_tokens=40, progress=False, dtype="fp32",
                           return_scores=True)[0]
    assert len({tokens[0] for tokens in diverse.token_ids}) == 4
    assert len({tokens[0] for tokens in plain.token_ids}) < 4
    source = tokenizer(text, return_tensors="pt")
    with torch.no_grad():  # the first group is plain beam search of width 1: greedy decoding
        greedy = model.generate(**source, num_beams=1, do_sample=False, max_new_tokens=40)
    assert tokenizer.decode(greedy[0], skip_special_tokens=True).strip() in diverse.candidates


@pytest.mark.parametrize("decoding, message", [
    ({"strategy": "diverse-beam", "num_beam_groups": 3}, "num_beam_groups must divide k (4)"),
    ({"strategy": "beam", "temperature": 0.7}, "temperature applies to decoding 'sample', not 'beam'"),
    ({"strategy": "nucleus"}, "strategy must be one of beam, diverse-beam, sample, got 'nucleus'"),
    ({"strategy": "sample", "top_p": 1.5}, "top_p must be"),
])
def test_bad_decoding_options_are_one_invalid_option_naming_them(parser, decoding, message):
    from lsplits.errors import InvalidOption
    from lsplits.generation import generate_beams
    from lsplits.generation.decoding import Decoding

    model, tokenizer = parser
    with pytest.raises(InvalidOption) as caught:
        generate_beams(model, tokenizer, ["the dog runs"], k=4, progress=False,
                       decoding=Decoding(**decoding))
    assert message in str(caught.value)


def test_an_unknown_strategy_is_named_as_each_caller_names_it():
    """Decoding names its field ``strategy``; the API's ``decoding=`` and ``lsplits beams --decoding`` name theirs."""
    from argparse import Namespace

    from lsplits.cli.beams import decoding_of
    from lsplits.cli.parser import in_cli_words
    from lsplits.errors import InvalidOption
    from lsplits.generation.decoding import OPTIONS, Decoding
    from lsplits.generation.search import as_decoding

    choices = "must be one of beam, diverse-beam, sample, got 'nucleus'"
    with pytest.raises(InvalidOption) as caught:
        Decoding("nucleus")
    assert (caught.value.name, str(caught.value)) == ("strategy", f"strategy {choices}")
    with pytest.raises(InvalidOption) as caught:
        as_decoding("nucleus", {})
    assert (caught.value.name, str(caught.value)) == ("decoding", f"decoding {choices}")
    with pytest.raises(InvalidOption) as caught:
        decoding_of(Namespace(decoding="nucleus", **dict.fromkeys(OPTIONS)))
    assert str(in_cli_words(caught.value, "beams")) == f"--decoding {choices}"
    with pytest.raises(InvalidOption) as caught:  # an option keeps its own name
        decoding_of(Namespace(decoding="sample", **{**dict.fromkeys(OPTIONS), "seed": -1}))
    assert str(in_cli_words(caught.value, "beams")).startswith("--seed must be a whole number >= 0")
