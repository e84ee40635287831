"""The scores a beams file carries beside each candidate (:data:`SCORE_FIELDS`), and the candidates' tokens.

A candidate's tokens are what the decoder generated up to and including its first EOS (all of them where it
stopped at ``max_new_tokens``); :mod:`lsplits.generation.forced` computes the scores from them. This module needs
no torch, so the uncertainty estimators (and the metric Spaces, which must install without torch) can read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

SCORE_FIELDS = ("logprobs", "n_tokens", "token_entropies")
"""The per-candidate lists a beams file may carry beside ``candidates``, aligned with it."""


@dataclass
class Scored:
    """The candidates of one input and, aligned with them, their scores (empty lists: not scored)."""

    candidates: list[str]
    logprobs: list[float] = field(default_factory=list)
    n_tokens: list[int] = field(default_factory=list)
    token_entropies: list[float] = field(default_factory=list)
    token_ids: list[list[int]] = field(default_factory=list)
    """The generated tokens of each candidate (EOS included where reached); not written to beams files."""

    def row(self) -> dict[str, object]:
        """The beams-file fields of this input (the score lists only when scored)."""
        row: dict[str, object] = {"candidates": self.candidates}
        if self.logprobs:
            row.update(logprobs=self.logprobs, n_tokens=self.n_tokens, token_entropies=self.token_entropies)
        return row


def generated_tokens(sequence: Sequence[int], eos_id: int | None, pad_id: int | None) -> list[int]:
    """The tokens a candidate consists of: up to and including the first EOS; trailing padding dropped where the
    search stopped without one."""
    tokens = list(sequence)
    if eos_id is not None and eos_id in tokens:
        return tokens[:tokens.index(eos_id) + 1]
    while tokens and pad_id is not None and tokens[-1] == pad_id:
        tokens.pop()
    return tokens
