"""Causal-LM scoring of (prompt, query) pairs: encoding, batched scoring, fine-tuning, scratch LM, k folds.

Entry point: :func:`compute_scores` (records -> ``id, ll_score, ll_tokens, fold``), on one process
or several under ``accelerate launch`` (:mod:`lsplits.lm.distributed`). Fine-tuning is
``lsplits.lm.finetune.finetune`` (not re-exported here, so the module name stays a module); the
``--dry-run`` estimate is :func:`lsplits.lm.estimate.estimate_run`; both run a :class:`RunPlan`.

The names below are imported on first use, so that ``lsplits.lm.dtype`` (read by the CLI for its
choices) loads without torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"EncodedPair": "encode", "encode_pairs": "encode", "TrainConfig": "finetune",
            "assign_folds": "pipeline", "compute_scores": "pipeline", "RunPlan": "plan",
            "load_causal_lm": "scoring", "score_pairs": "scoring", "ScratchConfig": "scratch",
            "build_scratch_lm": "scratch"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'lsplits.lm' has no attribute {name!r}")
    return getattr(importlib.import_module(f"lsplits.lm.{_EXPORTS[name]}"), name)
