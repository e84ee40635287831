"""What the model says of each candidate it produced: the sequence log-probability, the token count and the mean
entropy of its next-token distributions, all from one teacher-forced pass of the candidate's tokens.

The pass is the same whatever decoding made the candidate (beam, diverse beam, sampling at any temperature): the
model's own, unwarped distribution, with no length penalty. In fp32 the log-probability equals a forward pass of
the candidate alone (the tests check 1e-4); under bf16 autocast it is computed in bf16 like the search. Measured
on the tests' tiny seq2seq and causal models (CPU autocast, 60 candidates each), bf16 moved a candidate's
log-probability by a median 0.011 and 0.003 (at most 0.054), about 1e-3 per token: enough to reorder candidates
whose scores are that close, not to change an estimator's ranking of examples.
"""

from __future__ import annotations

from collections.abc import Sequence


def teacher_forced(model, kind: str, prompt: Sequence[int], candidates: Sequence[Sequence[int]], *,
                   start_id: int | None, device) -> tuple[list[float], list[int], list[float]]:
    """(sum of log-probabilities, token count, mean next-token entropy) of each candidate of one input, from one
    forward pass over all of them (right-padded, so no real position sees padding)."""
    import torch

    if not candidates:
        return [], [], []
    prefix = [start_id] if kind == "seq2seq" else list(prompt)
    rows = [prefix + list(tokens) for tokens in candidates]
    width = max(len(row) for row in rows)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for r, row in enumerate(rows):
        ids[r, :len(row)] = torch.tensor(row, dtype=torch.long)
        mask[r, :len(row)] = 1
    ids, mask = ids.to(device), mask.to(device)
    with torch.inference_mode():
        if kind == "seq2seq":
            source = torch.tensor([list(prompt)] * len(rows), dtype=torch.long, device=device)
            logits = model(input_ids=source, attention_mask=torch.ones_like(source), decoder_input_ids=ids,
                           decoder_attention_mask=mask).logits
        else:
            logits = model(input_ids=ids, attention_mask=mask).logits
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    sums, counts, entropies = [], [], []
    for r, tokens in enumerate(candidates):
        if not tokens:
            sums.append(0.0), counts.append(0), entropies.append(0.0)
            continue
        positions = torch.arange(len(prefix) - 1, len(prefix) - 1 + len(tokens), device=logprobs.device)
        rows_lp = logprobs[r, positions]
        picked = rows_lp.gather(1, torch.tensor(list(tokens), device=logprobs.device)[:, None]).squeeze(1)
        entropy = torch.special.entr(rows_lp.exp()).sum(dim=-1)  # 0 log 0 = 0 where a token is impossible
        sums.append(float(picked.sum()))
        counts.append(len(tokens))
        entropies.append(float(entropy.mean()))
    return sums, counts, entropies
