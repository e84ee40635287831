"""Causal-LM scoring of (prompt, query) pairs: encoding, batched scoring, fine-tuning, scratch LM, k folds.

Entry point: :func:`compute_scores` (records -> ``id, ll_score, ll_tokens, fold``), on one process
or several under ``accelerate launch`` (:mod:`lsplits.lm.distributed`). Fine-tuning is
``lsplits.lm.finetune.finetune`` (not re-exported here, so the module name stays a module); the
``--dry-run`` estimate is :func:`lsplits.lm.estimate.estimate_run`; both run a :class:`RunPlan`.
"""

from lsplits.lm.encode import EncodedPair, encode_pairs
from lsplits.lm.finetune import TrainConfig
from lsplits.lm.pipeline import assign_folds, compute_scores
from lsplits.lm.plan import RunPlan
from lsplits.lm.scoring import load_causal_lm, score_pairs
from lsplits.lm.scratch import ScratchConfig, build_scratch_lm

__all__ = ["EncodedPair", "RunPlan", "ScratchConfig", "TrainConfig", "assign_folds", "build_scratch_lm",
           "compute_scores", "encode_pairs", "load_causal_lm", "score_pairs"]
