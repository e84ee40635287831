"""The LM layer's shared names and defaults, in a module that imports nothing of lsplits.

The LM modules (:mod:`~lsplits.lm.plan`, :mod:`~lsplits.lm.pipeline`, :mod:`~lsplits.lm.estimate`,
:mod:`~lsplits.lm.model_files`) and the settings above them (:mod:`lsplits.building.settings`) read these
from here, so the layers import downwards only: ``building`` sees ``lm``, never the reverse.

>>> SCRATCH_LM, DEFAULT_FOLDS
('scratch', 3)
"""

from __future__ import annotations

SCRATCH_LM = "scratch"
"""The ``lm`` of the small GPT-2 trained from random weights on the data itself (offline)."""

PT_NEEDS_PRETRAINED = ("--setting pt needs a pretrained LM (--lm gpt2, a Hub id or a local model folder), not "
                       "scratch: the scratch LM has to be trained first (--setting ft)")
"""Why the scratch LM cannot score prompted (it exists only once trained on the data)."""

PRETRAINED_ONLY = "needs a pretrained LM for prompting; the scratch LM has none until it is trained on the data"
"""Why a ``pt`` config is not built with the scratch LM (the card and ``lsplits.json`` say it)."""

DEFAULT_FOLDS = 3
"""k of the k-fold fine-tuned setting when none is given (the paper's)."""

SCRATCH_PATIENCE = 2
"""The scratch LM's early stopping (:attr:`lsplits.lm.training.TrainConfig.patience`): its validation perplexity
often bottoms out early (issue 38: best at step 64 of 320 on SNLI and BoolQ); one check without improvement is
allowed for noise. Pretrained LMs default to 0, the paper's fixed steps."""


def check_prompted(lm: str, setting: str) -> None:
    """The one rule that the scratch LM cannot score prompted (``setting="pt"``): InvalidOption naming
    ``setting`` (and ``lm``) in the caller's words, for the settings, the plan, the API and the CLI alike."""
    if str(lm) == SCRATCH_LM and setting == "pt":
        from lsplits.errors import InvalidOption

        raise InvalidOption(name="setting", problem=f"'pt' {PRETRAINED_ONLY}: give a pretrained {{opt:lm}} (gpt2, a "
                            "Hub id or a local model folder), or {opt:setting} 'ft' to train the scratch LM in folds")
