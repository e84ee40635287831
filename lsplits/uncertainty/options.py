"""Range checks of the numeric options shared by the estimators, PRR, ``lsplits ue`` and the metric modules.

One place decides what a valid ``ecc_threshold``, ``max_rejection``, ``confidence``, ``n_bootstrap`` or
``seed`` is (``bad_below`` for the AMR qualities of a study; ``target_risk``, ``delta`` and the calibration
fraction of selective prediction): the rule of each is :data:`lsplits.params.PARAMS`', so the CLI, the Python API and the evaluate modules refuse the same values with the same
one-line message (naming the option as the caller spells it: ``--ecc-threshold`` on the command line,
``ecc_threshold`` in Python). A NaN is never in range.
"""

from __future__ import annotations

import numbers

from lsplits.errors import InvalidOption
from lsplits.params import check


def check_number(value: object, option: str) -> float:
    """``value`` as a float; InvalidOption naming ``option`` for a string, a bool or anything else not a real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidOption(f"{option} must be a number, got {value!r} ({type(value).__name__})")
    return float(value)


def check_names(values: object, argument: str) -> tuple[str, ...]:
    """``values`` as lower-cased names; InvalidOption naming ``argument`` for one string (which would be read
    one character at a time) or for an entry that is not a string."""
    if isinstance(values, (str, bytes)):
        raise InvalidOption(f"{argument} must be a list of names, got one string {values!r}; pass [{values!r}]")
    try:
        names = list(values)  # type: ignore[call-overload]
    except TypeError:
        raise InvalidOption(f"{argument} must be a list of names, got {values!r}") from None
    for name in names:
        if not isinstance(name, str):
            raise InvalidOption(f"{argument} must be names (strings), got {name!r} ({type(name).__name__})")
    return tuple(name.lower() for name in names)


def _checked(name: str, value: object, option: str) -> float | int | None:
    """:func:`lsplits.params.check` of ``name``, the error naming ``option`` (the caller's spelling)."""
    try:
        return check(name, value)
    except InvalidOption as exc:
        raise exc.renamed(option) from None


def check_ecc_threshold(value: object, option: str = "ecc_threshold") -> float:
    """The Ecc eigenvalue threshold, in (0, 2] (the normalised Laplacian's spectrum lies in [0, 2])."""
    return _checked("ecc_threshold", value, option)


def check_max_rejection(value: object, option: str = "max_rejection") -> float:
    """The largest rejection rate in the PRR area, in (0, 1]."""
    return _checked("max_rejection", value, option)


def check_confidence(value: object, option: str = "confidence") -> float:
    """The confidence level of the bootstrap interval, in (0, 1)."""
    return _checked("confidence", value, option)


def check_bad_below(value: object, option: str = "bad_below") -> float | None:
    """The quality under which a prediction is bad, in (0, 1] (AMR qualities lie in [0, 1]; at 0 none is bad)."""
    return _checked("bad_below", value, option)


def check_n_bootstrap(value: object, option: str = "n_bootstrap") -> int:
    """The number of bootstrap resamples, a whole number >= 0 (0 = no interval)."""
    return _checked("n_bootstrap", value, option)


def check_seed(value: object, option: str = "seed") -> int:
    """A random seed, a whole number >= 0 (what numpy's generators accept)."""
    return _checked("seed", value, option)


def check_target_risk(value: object, option: str = "target_risk") -> float:
    """The selective risk to certify (mean loss of the accepted outputs), in (0, 1): losses lie in [0, 1]."""
    return _checked("target_risk", value, option)


def check_delta(value: object, option: str = "delta") -> float:
    """The allowed probability that the certified risk is exceeded, in (0, 1)."""
    return _checked("delta", value, option)


def check_calibration_fraction(value: object, option: str = "calibration_fraction") -> float:
    """The share of the examples used to calibrate a selective threshold (the rest test it), in (0, 1)."""
    return _checked("calibration_fraction", value, option)
