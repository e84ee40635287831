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

DEFAULT_FOLDS = 3
"""k of the k-fold fine-tuned setting when none is given (the paper's)."""
