"""Causal-LM scoring of (prompt, query) pairs: encoding, batched scoring, fine-tuning, scratch LM, k folds.

Entry point: :func:`compute_scores` (records -> ``id, ll_score, ll_tokens, fold``), on one process
or several under ``accelerate launch`` (:mod:`lsplits.lm.distributed`). Fine-tuning is
``lsplits.lm.finetune.finetune`` (not re-exported here, so the module name stays a module); the
``--dry-run`` estimate is :func:`lsplits.lm.estimate.estimate_run`; both run a :class:`RunPlan`.

The names below are imported on first use, so that ``lsplits.lm.dtype`` (read by the CLI for its
choices) loads without torch.
"""

from __future__ import annotations

from lsplits.runtime.lazy import lazy_exports

_EXPORTS = {"EncodedPair": "encode", "encode_pairs": "encode", "TrainConfig": "training",
            "assign_folds": "pipeline", "compute_scores": "pipeline", "RunPlan": "plan",
            "load_causal_lm": "scoring", "score_pairs": "scoring", "ScratchConfig": "scratch",
            "build_scratch_lm": "scratch"}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, {name: f"lsplits.lm.{module}" for name, module in _EXPORTS.items()})
