"""Scoring of query tokens under a causal LM: exactness against a naive computation, what is scored,
truncation, and the model checks of ``load_causal_lm``. A tiny scratch model is built per module."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from lm_fixtures import TINY_SCRATCH, naive_score, naive_sequence_logprobs, tiny_sentences

from lsplits.errors import ConfigError, DataError
from lsplits.lm.encode import encode_pairs
from lsplits.lm.scoring import load_causal_lm, score_pairs, token_budget_batches
from lsplits.lm.scratch import ScratchConfig, build_scratch_lm


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny-lm")
    model, tokenizer = build_scratch_lm(tiny_sentences(), folder, ScratchConfig(**TINY_SCRATCH), n_positions=64)
    return model, tokenizer, folder


def _ids(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def test_scratch_lm_is_loaded_from_its_folder(tiny_lm):
    model, tokenizer, folder = tiny_lm
    assert type(model).__name__ == "GPT2LMHeadModel"
    assert model.config.n_layer == 1 and model.config.n_positions == 64
    assert model.config.vocab_size == len(tokenizer) <= 300
    assert tokenizer.convert_ids_to_tokens([tokenizer.bos_token_id, tokenizer.eos_token_id]) == \
        ["<|endoftext|>", "<|endoftext|>"]
    assert (folder / "model" / "config.json").is_file() and (folder / "tokenizer").is_dir()
    assert tokenizer.decode(_ids(tokenizer, " the cat sees a red car.")) == " the cat sees a red car."


def test_batched_scores_equal_unbatched_unpadded_forward(tiny_lm):
    model, tokenizer, _ = tiny_lm
    sentences = tiny_sentences()
    prompts = ["", "Premise:", sentences[3] + " " + sentences[4] + " Next:", "x", sentences[7], ""] * 2
    queries = [" " + s for s in sentences[:12]]
    queries[5] = " " + " ".join(sentences[20:22])  # one long query among short ones
    lengths = [len(p.input_ids) for p in encode_pairs(tokenizer, prompts, queries, max_length=64)]
    budget = 80
    batches = token_budget_batches(lengths, budget)
    assert any(len({lengths[i] for i in b}) > 1 for b in batches), "no batch mixes lengths: test is void"

    scores, counts = score_pairs(model, tokenizer, prompts, queries, token_budget=budget, progress=False)

    expected = [naive_score(model, tokenizer, p, q) for p, q in zip(prompts, queries, strict=True)]
    np.testing.assert_allclose(scores, [s for s, _ in expected], atol=1e-4, rtol=0)
    assert counts.tolist() == [n for _, n in expected]
    assert scores.dtype == np.float64 and np.all(scores < 0)


def test_only_query_tokens_and_eos_are_scored(tiny_lm):
    model, tokenizer, _ = tiny_lm
    prompt, query = "Premise: the cat sees the ball today. Say more:", " a dog finds an apple today."
    (score,), (count,) = score_pairs(model, tokenizer, [prompt], [query], progress=False)
    prompt_ids, query_ids = _ids(tokenizer, prompt), _ids(tokenizer, query)
    assert count == len(query_ids) + 1

    whole = naive_sequence_logprobs(model, [tokenizer.bos_token_id, *prompt_ids, *query_ids, tokenizer.eos_token_id])
    prompt_part = float(whole[:len(prompt_ids)].sum())
    assert abs(prompt_part) > 1.0  # scoring the prompt too would be visible
    assert score == pytest.approx(float(whole.sum()) - prompt_part, abs=1e-4)


def test_first_query_token_is_predicted_from_last_prompt_token(tiny_lm):
    model, tokenizer, _ = tiny_lm
    bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
    prompt_ids, query_ids = _ids(tokenizer, "the old man likes"), _ids(tokenizer, " the")
    assert len(query_ids) == 1
    with torch.no_grad():  # separate prefixes, the next-token distribution at the last position
        after_prompt = torch.log_softmax(model(input_ids=torch.tensor([[bos, *prompt_ids]])).logits[0, -1], -1)
        after_query = torch.log_softmax(model(input_ids=torch.tensor([[bos, *prompt_ids, *query_ids]])).logits[0, -1], -1)
    expected = float(after_prompt[query_ids[0]] + after_query[eos])
    (score,), (count,) = score_pairs(model, tokenizer, ["the old man likes"], [" the"], progress=False)
    assert count == 2
    assert score == pytest.approx(expected, abs=1e-4)


def test_query_changes_score_and_prompt_only_acts_as_context(tiny_lm):
    model, tokenizer, _ = tiny_lm
    prompts = ["the cat sees", "the cat sees", "a small bird paints the river today. the cat sees"]
    queries = [" the ball today.", " the river today.", " the ball today."]
    scores, counts = score_pairs(model, tokenizer, prompts, queries, progress=False)
    assert scores[0] != pytest.approx(scores[1], abs=1e-3)  # a different query token
    assert scores[0] != pytest.approx(scores[2], abs=1e-3)  # same query, different context
    assert counts[0] == counts[2] == len(_ids(tokenizer, queries[0])) + 1


def test_long_prompt_is_truncated_from_its_start_keeping_bos(tiny_lm):
    model, tokenizer, _ = tiny_lm
    prompt = " ".join(tiny_sentences(12))
    query = " the cat sees the ball today."
    prompt_ids, query_ids = _ids(tokenizer, prompt), _ids(tokenizer, query)
    window = 40
    assert len(prompt_ids) + len(query_ids) + 2 > window
    (pair,) = encode_pairs(tokenizer, [prompt], [query], max_length=window, ids=["long"])
    kept = window - 2 - len(query_ids)
    bos, eos = tokenizer.bos_token_id, tokenizer.eos_token_id
    assert pair.input_ids.tolist() == [bos, *prompt_ids[-kept:], *query_ids, eos]
    assert pair.prompt_len == 1 + kept and pair.truncated == len(prompt_ids) - kept

    (score,), (count,) = score_pairs(model, tokenizer, [prompt], [query], max_length=window, progress=False)
    whole = naive_sequence_logprobs(model, pair.input_ids.tolist())
    assert count == len(query_ids) + 1
    assert score == pytest.approx(float(whole[kept:].sum()), abs=1e-4)


def test_query_longer_than_window_is_a_clear_error(tiny_lm):
    model, tokenizer, _ = tiny_lm
    query = " " + " ".join(tiny_sentences(20))
    with pytest.raises(DataError, match=r"example 'q-7'.*exceeds the model window of 64 tokens"):
        score_pairs(model, tokenizer, ["", "hi"], [" ok.", query], ids=["q-6", "q-7"], progress=False)
    # a query that exactly fills the window without its prompt is kept whole
    fitting = _ids(tokenizer, query)[:62]
    (pair,) = encode_pairs(tokenizer, ["some prompt"], [tokenizer.decode(fitting)], max_length=64)
    assert pair.prompt_len == 1 and len(pair.input_ids) == 64


def test_token_budget_batches_cover_every_example_once_within_budget():
    lengths = [5, 30, 7, 7, 12, 100, 1, 29, 30, 8]
    batches = token_budget_batches(lengths, 60)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) * max(lengths[i] for i in batch) <= 60 or len(batch) == 1
    assert [lengths[i] for i in flat] == sorted(lengths, reverse=True)


def test_models_with_rescaled_logits_are_scored_through_their_own_forward(tiny_lm):
    from transformers import GPT2LMHeadModel

    class HalvedLogits(GPT2LMHeadModel):
        def forward(self, *args, **kwargs):
            out = super().forward(*args, **kwargs)
            out.logits = out.logits * 0.5
            return out

    model, tokenizer, _ = tiny_lm
    halved = HalvedLogits(model.config)
    halved.load_state_dict(model.state_dict())
    halved.eval()
    prompts, queries = ["the cat", ""], [" sees the ball.", "a dog finds an apple today."]
    scores, _ = score_pairs(halved, tokenizer, prompts, queries, progress=False)
    expected = [naive_score(halved, tokenizer, p, q)[0] for p, q in zip(prompts, queries, strict=True)]
    np.testing.assert_allclose(scores, expected, atol=1e-4, rtol=0)
    plain, _ = score_pairs(model, tokenizer, prompts, queries, progress=False)
    assert np.all(np.abs(plain - scores) > 1e-2)


def test_non_causal_model_folder_is_a_config_error(tiny_lm, tmp_path):
    from transformers import BertConfig, BertForMaskedLM

    _, tokenizer, _ = tiny_lm
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64)
    torch.manual_seed(0)
    BertForMaskedLM(config).save_pretrained(tmp_path / "bert")
    tokenizer.save_pretrained(tmp_path / "bert")
    with pytest.raises(ConfigError, match="not a causal LM"):
        load_causal_lm(tmp_path / "bert")


def test_missing_or_incomplete_model_folder_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="no such folder"):
        load_causal_lm(tmp_path / "nowhere" / "model")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no config.json"):
        load_causal_lm(tmp_path / "empty")


def test_load_causal_lm_round_trips_the_scratch_folder(tiny_lm):
    model, tokenizer, folder = tiny_lm
    again, again_tokenizer = load_causal_lm(folder / "model", device="cpu")
    assert not again.training and next(again.parameters()).dtype == torch.float32
    pair = ([""], [" the cat sees the ball today."])
    np.testing.assert_array_equal(score_pairs(again, again_tokenizer, *pair, progress=False)[0],
                                  score_pairs(model, tokenizer, *pair, progress=False)[0])


def test_vocabulary_projection_sees_only_scored_positions_a_chunk_at_a_time(tiny_lm, monkeypatch):
    import lsplits.lm.scoring as scoring

    model, tokenizer, _ = tiny_lm
    vocab = model.get_output_embeddings().weight.shape[0]
    monkeypatch.setattr(scoring, "_LOGIT_CHUNK_ELEMENTS", 5 * vocab)  # 5 rows of logits at a time
    assert scoring._head_path_ok(model)  # done (and cached) before counting: it projects a test input
    rows_seen = []
    hook = model.get_output_embeddings().register_forward_hook(
        lambda module, args, out: rows_seen.append(args[0].shape))
    prompts = ["Premise: the cat sees the ball today. Say more:", "", "a dog"]
    queries = [" a dog finds an apple today.", "the teacher paints a red car today.", " likes the river."]
    try:
        scores, counts = score_pairs(model, tokenizer, prompts, queries, progress=False)
    finally:
        hook.remove()
    assert all(len(shape) == 2 and shape[0] <= 5 for shape in rows_seen)  # no [batch, time, vocab] at once
    assert sum(shape[0] for shape in rows_seen) == counts.sum()  # prompt positions never projected
    expected = [naive_score(model, tokenizer, p, q)[0] for p, q in zip(prompts, queries, strict=True)]
    np.testing.assert_allclose(scores, expected, atol=1e-4, rtol=0)


def test_models_load_with_sdpa_attention(tiny_lm):
    _, _, folder = tiny_lm
    model, _ = load_causal_lm(folder / "model", device="cpu")
    assert model.config._attn_implementation == "sdpa"


@pytest.mark.slow  # over 10 s in-process: make check leaves it to make test
def test_compiled_model_gives_the_same_scores(tiny_lm, tmp_path):
    _, _, folder = tiny_lm
    model, tokenizer = load_causal_lm(folder / "model", device="cpu")  # a copy: compiling changes it in place
    sentences = tiny_sentences()
    prompts = ["", sentences[1], sentences[2] + " " + sentences[3], "x"] * 2
    queries = [" " + s for s in sentences[10:18]]
    plain, _ = score_pairs(model, tokenizer, prompts, queries, token_budget=60, progress=False)
    compiled, _ = score_pairs(model, tokenizer, prompts, queries, token_budget=60, progress=False, compile=True)
    assert getattr(model.base_model, "_compiled_call_impl", None) is not None
    assert len(token_budget_batches([len(p.input_ids) for p in encode_pairs(tokenizer, prompts, queries,
                                                                            max_length=64)], 60)) > 2
    np.testing.assert_allclose(compiled, plain, atol=1e-5, rtol=0)


def test_scoring_stops_between_batches_when_its_caller_says_so(tiny_lm):
    """The Space's time budget (lsplits.runtime.cancel) reaches the scoring loop: the second batch is not scored."""
    from lsplits.errors import Stopped
    from lsplits.runtime.cancel import stop_when

    model, tokenizer, _ = tiny_lm
    asked: list[int] = []

    def reason() -> str | None:
        asked.append(1)
        return "the budget ran out" if len(asked) > 1 else None

    with stop_when(reason), pytest.raises(Stopped, match="^stopped: the budget ran out$"):
        score_pairs(model, tokenizer, ["", ""], [" the dog runs", " a cat sleeps"], token_budget=8, progress=False)
    assert len(asked) == 2
    scores, _ = score_pairs(model, tokenizer, ["", ""], [" the dog runs", " a cat sleeps"], progress=False)
    assert np.isfinite(scores).all()  # without a condition nothing stops
