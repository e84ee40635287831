"""Losses of selective prediction: what a certified threshold bounds the mean of, from per-example qualities.

The default is ``1 - quality`` (qualities in [0, 1]); ``bad`` is 1 below a quality threshold, the rate of bad
outputs (0/1 losses, which the exact binomial test takes); any callable mapping qualities to [0, 1] also works.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lsplits.errors import InvalidInput, InvalidOption
from lsplits.params import check_choice

Loss = Callable[[np.ndarray], np.ndarray]
"""A loss: qualities in, one loss in [0, 1] per quality out."""


def losses_of(qualities, loss: Loss | None = None) -> np.ndarray:
    """Per-example losses in [0, 1]: ``1 - quality`` (qualities must lie in [0, 1]) or ``loss(qualities)``.

    InvalidInput when a quality (default loss) or a loss falls outside [0, 1] or is not finite.
    """
    q = np.asarray(qualities, dtype=float).ravel()
    if loss is None:
        if q.size and (np.nanmin(q) < 0 or np.nanmax(q) > 1):
            raise InvalidInput(f"the default loss 1 - quality needs qualities in [0, 1], got {np.nanmin(q):g} to "
                               f"{np.nanmax(q):g} (pass loss= to map them to [0, 1])")
        return 1.0 - q
    values = np.asarray(loss(q), dtype=float).ravel()
    if values.shape != q.shape:
        raise InvalidInput(f"loss returned {values.size} values for {q.size} qualities")
    if not np.isfinite(values).all() or (values.size and (values.min() < 0 or values.max() > 1)):
        raise InvalidInput("loss must map every quality to a finite value in [0, 1]")
    return values


DEFAULT_LOSS = "1-quality"
"""The loss whose mean selective prediction certifies unless told otherwise."""
QUALITY_LOSSES = (DEFAULT_LOSS, "bad")


def quality_loss(name: str, bad_below: float | None = None) -> Loss | None:
    """The named loss of a quality: ``1-quality`` (None, the default loss) or ``bad``, 1 when the quality is below
    ``bad_below`` and 0 otherwise (0/1 losses, so the exact binomial test): its mean is the rate of bad outputs."""
    name = check_choice("selective_loss", name, QUALITY_LOSSES, fold_case=True)
    if name == DEFAULT_LOSS:
        return None
    if bad_below is None:
        raise InvalidOption("selective_loss 'bad' needs bad_below: the quality under which an output is bad")
    threshold = float(bad_below)

    def bad(qualities: np.ndarray) -> np.ndarray:
        return (np.asarray(qualities, dtype=float) < threshold).astype(float)

    return bad
