"""How the ``k`` candidates of an input are decoded: beam search, diverse beam search or sampling.

``beam`` and ``sample`` run ``model.generate``. ``diverse-beam`` (Vijayakumar et al., 2018: ``G`` groups of
``k / G`` beams, each group's step penalised by the tokens the earlier groups chose at that step, Hamming
diversity) is written here, since transformers 5 moved its group beam search to code on the Hub that an offline
machine cannot fetch. Sampling draws each input's ``k`` candidates alone, from a generator seeded by the run's
seed and the input itself, so the candidates do not depend on batching, shards or the number of processes.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lsplits.errors import InvalidOption
from lsplits.params import PARAMS, Checked, Options, Param, spelled

DECODINGS = ("beam", "diverse-beam", "sample")
"""The decoding strategies, the first the default."""
OWN_OPTIONS = {"diverse-beam": ("num_beam_groups", "diversity_penalty"),
               "sample": ("temperature", "top_p", "top_k", "seed")}
"""The options each strategy takes; setting one of another strategy is an error naming it."""
OPTIONS = tuple(name for names in OWN_OPTIONS.values() for name in names)


def token_texts(tokenizer: Any, rows: Any) -> list[str]:
    """Generated token rows (lists of ids or a tensor) as text, special tokens dropped, the model's spacing kept:
    transformers' clean-up of tokenization spaces rewrites an output (``"a ."`` -> ``"a."``, ``"x 's"`` -> ``"x's"``)
    and warns on every run for a BPE tokenizer, whose output it leaves alone."""
    return tokenizer.batch_decode(rows, skip_special_tokens=True, clean_up_tokenization_spaces=False)


@dataclass(frozen=True)
class Decoding(Checked):
    """A decoding strategy and its options (checked when built, :class:`lsplits.params.Checked`; the ones of other
    strategies must be unset).

    Attributes:
        strategy: one of :data:`DECODINGS`.
        num_beam_groups: ``diverse-beam``: groups of ``k / num_beam_groups`` beams (None: ``k`` groups of one).
        diversity_penalty: ``diverse-beam``: subtracted from a token's log-probability once for every earlier
            group that chose it at this step (None: 1.0).
        temperature, top_p, top_k: ``sample``: the sampling distribution (None: 1.0, 1.0, no top-k).
        seed: ``sample``: with the input, decides its candidates (None: 0).
    """

    RULES = {"strategy": Param(Options(DECODINGS)), "seed": dataclasses.replace(PARAMS["seed"], optional=True)}

    strategy: str = DECODINGS[0]
    num_beam_groups: int | None = None
    diversity_penalty: float | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None

    @classmethod
    def named(cls, decoding: str, **options: Any) -> Decoding:
        """The decoding a caller's ``decoding`` (the API's ``decoding=``, ``lsplits beams --decoding``) and its
        options ask for; an unknown strategy is named ``decoding``, as the caller named it."""
        try:
            return cls(decoding, **options)
        except InvalidOption as exc:
            raise spelled(exc, {"strategy": "decoding"}) from None

    def check_together(self) -> None:
        """Only the chosen strategy's own options are set."""
        for name in OPTIONS:
            if name not in OWN_OPTIONS.get(self.strategy, ()) and getattr(self, name) is not None:
                raise InvalidOption(name=name, problem=f"applies to decoding {_users_of(name)!r}, not "
                                    f"{self.strategy!r}", value=getattr(self, name))

    def groups(self, k: int) -> int:
        """``diverse-beam``'s number of groups for ``k`` candidates; InvalidOption unless it divides ``k``."""
        groups = self.num_beam_groups if self.num_beam_groups is not None else k
        if k % groups:
            raise InvalidOption(name="num_beam_groups", problem=f"must divide k ({k}) so that every group has "
                                "as many beams", value=groups)
        return groups

    def to_dict(self) -> dict[str, object]:
        """The strategy and the options it uses (defaults filled in), as recorded with the candidates and in
        the cache key; ``Decoding(**to_dict())`` decodes the same."""
        if self.strategy == "diverse-beam":
            return {"strategy": self.strategy, "num_beam_groups": self.num_beam_groups,
                    "diversity_penalty": 1.0 if self.diversity_penalty is None else self.diversity_penalty}
        if self.strategy == "sample":
            return {"strategy": self.strategy, "temperature": 1.0 if self.temperature is None else self.temperature,
                    "top_p": 1.0 if self.top_p is None else self.top_p, "top_k": self.top_k,
                    "seed": 0 if self.seed is None else self.seed}
        return {"strategy": self.strategy}

    def describe(self) -> str:
        """One line for logs and reports: ``sample (temperature 1.0, top_p 0.9, top_k None, seed 0)``."""
        options = [f"{name} {value}" for name, value in self.to_dict().items() if name != "strategy"]
        return f"{self.strategy} ({', '.join(options)})" if options else self.strategy

    def generate_settings(self, k: int) -> dict[str, Any]:
        """``model.generate`` keywords of ``beam`` and ``sample`` for ``k`` candidates."""
        if self.strategy == "sample":
            return dict(do_sample=True, num_beams=1, num_return_sequences=k,
                        temperature=1.0 if self.temperature is None else self.temperature,
                        top_p=1.0 if self.top_p is None else self.top_p, top_k=self.top_k or 0)
        return dict(num_beams=k, num_return_sequences=k, do_sample=False)


def _users_of(name: str) -> str:
    return next(strategy for strategy, names in OWN_OPTIONS.items() if name in names)


def input_seed(seed: int, text: str) -> int:
    """The seed of one input's samples: from the run's seed and the input's text, the same in every process."""
    digest = hashlib.sha256(f"{seed}\0{text}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & 0x7FFF_FFFF_FFFF_FFFF


def diverse_beam_search(model, kind: str, prompt: Sequence[int], *, k: int, groups: int, penalty: float,
                        max_new_tokens: int, eos_id: int | None, start_id: int | None, device,
                        length_penalty: float = 1.0) -> list[list[int]]:
    """The ``k`` candidates (generated token ids, EOS included where reached) of one input by diverse beam search,
    best first by length-normalised score (log-probability sum / length ** ``length_penalty``, as beam search)."""
    import torch

    size = k // groups
    encoder = None
    if kind == "seq2seq":
        with torch.inference_mode():
            encoder = model.get_encoder()(input_ids=torch.tensor([list(prompt)], device=device))
    beams: list[list[tuple[list[int], float]]] = [[([], 0.0)] for _ in range(groups)]  # alive (tokens, score)
    done: list[list[tuple[list[int], float]]] = [[] for _ in range(groups)]
    for _ in range(max_new_tokens):
        alive = [(g, tokens, score) for g in range(groups) if len(done[g]) < size for tokens, score in beams[g]]
        if not alive:
            break
        logprobs = _next_token_logprobs(model, kind, prompt, [tokens for _, tokens, _ in alive], encoder,
                                        start_id, device)
        chosen = torch.zeros(logprobs.shape[1], device=logprobs.device)
        for g in range(groups):
            rows = [row for row, (group, _, _) in enumerate(alive) if group == g]
            if not rows:
                continue
            scores = torch.stack([alive[row][2] + logprobs[row] - penalty * chosen for row in rows])
            top = torch.topk(scores.flatten(), min(2 * size, scores.numel()))
            kept: list[tuple[list[int], float]] = []
            for value, flat in zip(top.values.tolist(), top.indices.tolist(), strict=True):
                row, token = divmod(flat, scores.shape[1])
                tokens = [*alive[rows[row]][1], token]
                if eos_id is not None and token == eos_id:
                    if len(done[g]) < size:
                        done[g].append((tokens, value))
                        chosen[token] += 1  # an ended beam chose EOS: later groups are penalised for it too
                elif len(kept) < size:
                    kept.append((tokens, value))
                    chosen[token] += 1
                if len(kept) == size:
                    break
            beams[g] = kept
    for g in range(groups):  # groups that reached max_new_tokens keep their best open beams
        done[g].extend(beams[g][:size - len(done[g])])
    finished = [hyp for group in done for hyp in group]
    finished.sort(key=lambda hyp: hyp[1] / max(len(hyp[0]), 1) ** length_penalty, reverse=True)
    return [tokens for tokens, _ in finished[:k]]


def _next_token_logprobs(model, kind: str, prompt: Sequence[int], continuations: list[list[int]], encoder,
                         start_id: int | None, device):
    """Log-probabilities of the next token after each continuation (one forward pass over all of them)."""
    import torch

    prefix = [start_id] if kind == "seq2seq" else list(prompt)
    rows = [prefix + tokens for tokens in continuations]
    lengths = [len(row) for row in rows]
    width = max(lengths)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for r, row in enumerate(rows):  # right padding: the last real position is read, padding never attended
        ids[r, :len(row)] = torch.tensor(row, dtype=torch.long)
        mask[r, :len(row)] = 1
    ids, mask = ids.to(device), mask.to(device)
    with torch.inference_mode():
        if kind == "seq2seq":
            hidden = encoder.last_hidden_state.expand(len(rows), -1, -1)
            logits = model(encoder_outputs=(hidden,), decoder_input_ids=ids, decoder_attention_mask=mask).logits
        else:
            logits = model(input_ids=ids, attention_mask=mask).logits
    last = torch.tensor(lengths, device=logits.device) - 1
    return torch.log_softmax(logits[torch.arange(len(rows), device=logits.device), last].float(), dim=-1)
