"""One description of every option lsplits takes (its type, interval or choices) and the one check of a value.

In the spirit of scikit-learn's ``_param_validation``: each option is described once in :data:`PARAMS`
(an :class:`Interval`, :class:`Options`, :class:`Names`, :class:`Text` or an :class:`Either` of them),
and every settings object, the API, the CLI and the Space refuse a bad value through :func:`check`, with
one error class (:class:`~lsplits.errors.InvalidOption`, a ``ValueError``) and one message style::

    NAME must be RULE (WHY), got VALUE

``NAME`` is the Python name; the command line rewrites it into its flag (``--folds``) through its parser
(:func:`lsplits.cli.parser.main`), so each caller reads its own words. Torch-free and dependency-free.

>>> check("folds", 3)
3
>>> check("folds", 1)
Traceback (most recent call last):
...
lsplits.errors.InvalidOption: folds must be a whole number >= 2, got 1
>>> check("eval_size", 0.2), check("eval_size", 500)
(0.2, 500)
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lsplits.errors import InvalidOption


@dataclass(frozen=True)
class Interval:
    """A number in an interval: ``whole`` numbers or any real; ``low``/``high`` None for no bound;
    ``closed`` is ``"both"``, ``"left"``, ``"right"`` or ``"neither"``. NaN and infinities never pass."""

    whole: bool
    low: float | None = None
    high: float | None = None
    closed: str = "both"

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` is a finite number (an integer when ``whole``, never a bool) in the interval."""
        if isinstance(value, bool) or not isinstance(value, numbers.Integral if self.whole else numbers.Real):
            return False
        if not math.isfinite(value):
            return False
        if self.low is not None and not (value >= self.low if self.closed in ("both", "left") else value > self.low):
            return False
        return self.high is None or (value <= self.high if self.closed in ("both", "right") else value < self.high)

    def normalise(self, value: Any) -> Any:
        """The accepted ``value`` as a Python int or float (numpy scalars included)."""
        return int(value) if self.whole else float(value)

    def describe(self) -> str:
        """The interval in words: ``a whole number >= 2``, ``a number in (0, 1)``."""
        kind = "a whole number" if self.whole else "a number"
        if self.low is not None and self.high is not None:
            left = "[" if self.closed in ("both", "left") else "("
            right = "]" if self.closed in ("both", "right") else ")"
            return f"{kind} in {left}{self.low:g}, {self.high:g}{right}"
        if self.low is not None:
            return f"{kind} {'>=' if self.closed in ('both', 'left') else '>'} {self.low:g}"
        if self.high is not None:
            return f"{kind} {'<=' if self.closed in ('both', 'right') else '<'} {self.high:g}"
        return kind


@dataclass(frozen=True)
class Options:
    """One of a set of names: ``choices`` a tuple, or a function that gives them (a registry users extend, read
    when a value is checked). With ``fold_case`` a name is compared and kept lower-cased (estimator names)."""

    choices: tuple[str, ...] | Callable[[], Sequence[str]]
    fold_case: bool = False

    def names(self) -> tuple[str, ...]:
        """The choices now."""
        return tuple(self.choices() if callable(self.choices) else self.choices)

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and self.normalise(value) in self.names()

    def normalise(self, value: Any) -> Any:
        return value.lower() if self.fold_case else value

    def describe(self) -> str:
        return "one of " + ", ".join(self.names())


@dataclass(frozen=True)
class Each:
    """A list whose every item ``rule`` accepts, non-empty unless ``empty`` (one string is refused: it would be
    read letter by letter). :func:`check` names the first item refused."""

    rule: Rule
    empty: bool = False

    def is_list(self, value: Any) -> bool:
        """Whether ``value`` has the shape of the list (items not looked at)."""
        return not isinstance(value, (str, bytes, Mapping)) and isinstance(value, (Sequence, set, frozenset)) \
            and (self.empty or len(value) > 0)

    def accepts(self, value: Any) -> bool:
        return self.is_list(value) and all(self.rule.accepts(item) for item in value)

    def normalise(self, value: Any) -> tuple[Any, ...]:
        return tuple(self.rule.normalise(item) for item in value)

    def describe(self) -> str:
        return f"a {'' if self.empty else 'non-empty '}list, each {self.rule.describe()}"


@dataclass(frozen=True)
class Flag:
    """True or False (not 0 or 1, not a string)."""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, bool)

    def normalise(self, value: Any) -> Any:
        return value

    def describe(self) -> str:
        return "True or False"


@dataclass(frozen=True)
class Kind:
    """An instance of ``kinds`` (a path, an object of settings), described as ``says``."""

    kinds: tuple[type, ...]
    says: str

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.kinds) and not isinstance(value, bool)

    def normalise(self, value: Any) -> Any:
        return value

    def describe(self) -> str:
        return self.says


@dataclass(frozen=True)
class Names:
    """A non-empty list of non-empty strings (one string is refused: it would be read letter by letter)."""

    def accepts(self, value: Any) -> bool:
        return not isinstance(value, (str, bytes)) and isinstance(value, Sequence) and bool(value) \
            and all(isinstance(item, str) and item for item in value)

    def normalise(self, value: Any) -> tuple[str, ...]:
        return tuple(value)

    def describe(self) -> str:
        return "a non-empty list of names"


@dataclass(frozen=True)
class Text:
    """A string; ``empty`` says whether ``""`` is one."""

    empty: bool = False

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and (self.empty or bool(value))

    def normalise(self, value: Any) -> Any:
        return value

    def describe(self) -> str:
        return "text" if self.empty else "a non-empty string"


@dataclass(frozen=True)
class Either:
    """The first of ``rules`` that accepts the value (``eval_size``: a count or a fraction)."""

    rules: tuple[Rule, ...]

    def accepts(self, value: Any) -> bool:
        return any(rule.accepts(value) for rule in self.rules)

    def normalise(self, value: Any) -> Any:
        return next(rule for rule in self.rules if rule.accepts(value)).normalise(value)

    def describe(self) -> str:
        return " or ".join(rule.describe() for rule in self.rules)


@dataclass(frozen=True)
class Pair:
    """Two values that ``rule`` accepts, as a tuple or list of two (``rename``'s ``(OLD, NEW)``)."""

    rule: Rule

    def accepts(self, value: Any) -> bool:
        return isinstance(value, (tuple, list)) and len(value) == 2 and all(self.rule.accepts(v) for v in value)

    def normalise(self, value: Any) -> tuple[Any, Any]:
        return tuple(self.rule.normalise(v) for v in value)  # type: ignore[return-value]

    def describe(self) -> str:
        return f"a pair, each {self.rule.describe()}"


Rule = Interval | Options | Names | Text | Either | Each | Flag | Kind | Pair


@dataclass(frozen=True)
class Param:
    """One option: its rule, whether None is accepted (``optional``) and why the rule holds (said in messages)."""

    rule: Rule
    optional: bool = False
    why: str = ""
    says: str = ""
    """The rule in words, where the rule's own (:meth:`Interval.describe`) would read badly."""
    most: int | None = None
    """The largest value accepted, checked after the rule: a bound set by what a run can afford (memory, time)
    or by what a library accepts (a seed's 32 bits), said in its own message so that the rule's stays short."""
    most_why: str = ""

    def describe(self) -> str:
        """``RULE (WHY)``, as a message states it."""
        return (self.says or self.rule.describe()) + (f" ({self.why})" if self.why else "")


WHOLE_FROM_0 = Interval(whole=True, low=0)
WHOLE_FROM_1 = Interval(whole=True, low=1)
POSITIVE = Interval(whole=False, low=0, closed="neither")
SHARE = Interval(whole=False, low=0, high=1, closed="neither")
"""A share strictly between 0 and 1."""
PATH = Kind((str, os.PathLike), "a path")
"""A file or folder, as a string or a ``pathlib.Path``."""

DTYPES = ("auto", "fp32", "bf16")
"""The choices of ``--dtype`` (:mod:`lsplits.lm.dtype` decides what each means), here because settings of several
layers check a dtype."""


MAX_SEED = 2**32 - 1
"""The largest seed: numpy's legacy generator (``np.random.seed``, behind ``transformers.set_seed``) takes 32 bits,
and ``torch.manual_seed`` overflows above 64."""
DEFAULT_CONFIDENCE = 0.95
"""The confidence level of every interval lsplits reports (PRR and accuracy bootstraps, rare-word shares)."""

MAX_BOOTSTRAP = 100_000
"""The most bootstrap resamples: one float per resample and statistic is kept (10**11 would take 745 GiB), and an
interval's ends move by less than their Monte-Carlo error beyond a few thousand."""
MAX_DEMO_EXAMPLES = 100_000
"""The most synthetic examples ``lsplits demo`` makes (33 times its default): a demo, not a benchmark."""

PARAMS: dict[str, Param] = {
    # building (score, build, demo) and the LM
    "folds": Param(Interval(whole=True, low=2)),
    "seed": Param(WHOLE_FROM_0, why="a random seed", most=MAX_SEED,
                  most_why="numpy and torch take seeds of 32 bits"),
    "max_steps": Param(WHOLE_FROM_1, optional=True),
    "patience": Param(WHOLE_FROM_0, optional=True,
                      why="validation checks without improvement before a fold stops; 0 = never, train all steps"),
    "eval_size": Param(Either((WHOLE_FROM_1, SHARE)), optional=True,
                       says="a count (a whole number >= 1) or a fraction in (0, 1)"),
    "n": Param(WHOLE_FROM_1, why="synthetic examples", most=MAX_DEMO_EXAMPLES,
               most_why="the demo's synthetic data; build a larger dataset of your own with `lsplits build`"),
    "data": Param(Text(), optional=True, why="a builder name, a Hub id or a path"),
    "data_files": Param(Names(), optional=True),
    "configs": Param(Names(), optional=True),
    "rename": Param(Names(), optional=True),
    "drop_labels": Param(Names(), optional=True),
    "models": Param(Names(), optional=True),
    "query_field": Param(Text(), optional=True, why="a field name"),
    "label_field": Param(Text(), optional=True, why="a field name"),
    "prompt_template": Param(Text(empty=True)),
    "lm": Param(Text(), why="'scratch', a Hub model id or a model folder"),
    "token_budget": Param(WHOLE_FROM_1, optional=True),
    "dtype": Param(Options(DTYPES), why="the compute dtype"),
    # training (the LM folds, the scratch LM, the task models of difficulty)
    "lr": Param(POSITIVE),
    "warmup_steps": Param(WHOLE_FROM_0),
    "grad_accum_steps": Param(WHOLE_FROM_1),
    "weight_decay": Param(Interval(whole=False, low=0)),
    "max_grad_norm": Param(POSITIVE, optional=True),
    "val_fraction": Param(SHARE),
    "epochs": Param(POSITIVE),
    "batch_size": Param(WHOLE_FROM_1),
    "max_length": Param(Interval(whole=True, low=8), why="input tokens per example"),
    "max_train_examples": Param(Interval(whole=True, low=2), optional=True),
    "evals_per_epoch": Param(WHOLE_FROM_1),
    # beams
    "k": Param(WHOLE_FROM_1, why="candidates per input"),
    "max_new_tokens": Param(WHOLE_FROM_1),
    "shard_size": Param(WHOLE_FROM_1),
    # uncertainty, PRR, selective prediction
    "n_bootstrap": Param(WHOLE_FROM_0, why="bootstrap resamples; 0 = no interval", most=MAX_BOOTSTRAP,
                         most_why="more resamples barely move an interval's ends but cost memory and time in "
                                  "proportion"),
    "confidence": Param(SHARE, why="for example 0.95"),
    "max_rejection": Param(Interval(whole=False, low=0, high=1, closed="right"),
                           why="a rejection rate; 1 = the whole curve"),
    "ecc_threshold": Param(Interval(whole=False, low=0, high=2, closed="right"),
                           why="eigenvalues of the normalised Laplacian lie in [0, 2]"),
    "bad_below": Param(Interval(whole=False, low=0, high=1, closed="right"), optional=True,
                       why="a quality: Smatch++, S2Match and SemBLEU lie in [0, 1], and below 0 none would be bad"),
    "sets_threshold": Param(Interval(whole=False, low=0, high=1, closed="right"), why="a similarity"),
    "kle_t": Param(POSITIVE, why="the heat-kernel time"),
    "sar_t": Param(POSITIVE, says="the SentenceSAR temperature, a number > 0"),
    "target_risk": Param(SHARE, why="a mean loss such as 1 - Smatch++"),
    "delta": Param(SHARE, why="for example 0.1"),
    "calibration_fraction": Param(SHARE, why="the rest is held out to test the threshold"),
    "workers": Param(WHOLE_FROM_0, why="0 = one per CPU core"),
    "n_bins": Param(WHOLE_FROM_1, why="equal-width bins of the calibration error"),
    "cache_dir": Param(PATH, optional=True),
    "progress": Param(Flag()),
    # decoding (lsplits.generation.decoding); None: the strategy's default
    "num_beam_groups": Param(WHOLE_FROM_1, optional=True, why="it must divide k"),
    "diversity_penalty": Param(Interval(whole=False, low=0), optional=True),
    "temperature": Param(POSITIVE, optional=True),
    "top_p": Param(Interval(whole=False, low=0, high=1, closed="right"), optional=True),
    "top_k": Param(WHOLE_FROM_1, optional=True, why="None = no top-k"),
}
"""Every option checked by :func:`check`, by its Python name (the settings field, the API keyword)."""


def check(name: str, value: Any, param: Param | None = None, *, called: str | None = None) -> Any:
    """``value`` normalised (a tuple for names, an int or float for numbers) if option ``name`` accepts it,
    else :class:`~lsplits.errors.InvalidOption` naming ``name``, or ``called`` where the caller's argument has
    another name (``order_fraction`` checked as ``calibration_fraction``); ``param`` overrides :data:`PARAMS`."""
    param = param or PARAMS[name]
    if called is not None and called != name:
        try:
            return check(name, value, param)
        except InvalidOption as exc:
            raise exc.renamed(called) from None
    if value is None and param.optional:
        return None
    rule = param.rule
    if isinstance(rule, Each) and rule.is_list(value):
        for position, item in enumerate(value):
            if not rule.rule.accepts(item):
                why = f" ({param.why})" if param.why else ""
                raise InvalidOption(name=name, problem=f"item {position} must be {rule.rule.describe()}{why}",
                                    value=item)
    if not rule.accepts(value):
        raise InvalidOption(name=name, problem=f"must be {param.describe()}", value=value)
    if param.most is not None and value > param.most:
        why = f" ({param.most_why})" if param.most_why else ""
        raise InvalidOption(name=name, problem=f"must be at most {param.most}{why}", value=value)
    return param.rule.normalise(value)


def check_choice(name: str, value: Any, choices: Sequence[str], *, fold_case: bool = False) -> str:
    """``value`` if it is one of ``choices`` (lower-cased first with ``fold_case``); otherwise THE "unknown name"
    error of lsplits, InvalidOption naming ``name`` and listing the choices: ``NAME must be one of A, B, got X``."""
    return check(name, value, Param(Options(tuple(choices), fold_case=fold_case)))


class Checked:
    """The one ``__post_init__`` of lsplits' settings dataclasses (frozen): every field is checked by its rule and
    stored normalised (a tuple for a list, an int or float for a number), lists item by item, so a field added
    later is checked too. A field's rule is the class's own (``RULES``, a mapping field -> :class:`Param`, looked
    up along the classes it derives from) or else :data:`PARAMS`' of the same name; a field with neither is a
    programming error (KeyError). Rules across fields go into :meth:`check_together`, called after.

    >>> @dataclass(frozen=True)
    ... class Example(Checked):
    ...     folds: int = 3
    >>> Example(folds=1)
    Traceback (most recent call last):
    ...
    lsplits.errors.InvalidOption: folds must be a whole number >= 2, got 1
    """

    RULES: Mapping[str, Param] = {}

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            if field.init:
                value = check(field.name, getattr(self, field.name), rule_of(type(self), field.name))
                object.__setattr__(self, field.name, value)
        self.check_together()

    def check_together(self) -> None:
        """Rules that read several fields (none here); each field has passed its own rule when this runs."""


def rule_of(cls: type, name: str) -> Param:
    """The rule of field ``name`` of settings class ``cls`` (see :class:`Checked`)."""
    for klass in cls.__mro__:
        own = vars(klass).get("RULES")
        if own and name in own:
            return own[name]
    return PARAMS[name]  # a field without a rule is a bug: KeyError naming it (tests/test_settings_contract.py)


def refuse(name: str, problem: str, value: Any) -> InvalidOption:
    """The error for a value that a rule beyond :data:`PARAMS` refuses (``problem``: ``must ...``, ``cannot ...``),
    in the same words and class as :func:`check`."""
    return InvalidOption(name=name, problem=problem, value=value)


def spelled(exc: InvalidOption, names: Mapping[str, str]) -> InvalidOption:
    """``exc`` with its option named as in ``names`` (Python name -> the caller's word), or ``exc`` itself."""
    if exc.name is None or exc.name not in names:
        return exc
    return exc.renamed(names[exc.name])
