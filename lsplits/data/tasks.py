"""Tasks: how one example becomes a (prompt, query) pair for the LM, which field is the label,
and which examples are filtered out. One :class:`Task` per dataset; a generic one for user data.

The LM scores ``query_text`` given ``prompt_text``. BOS and EOS are added by the
scorer, not here, so the same task works with any tokenizer.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from lsplits.errors import DataError, InvalidOption
from lsplits.params import Options, Param, check

Setting = Literal["ft", "pt"]
"""How the LM that scores a query was obtained: ``ft`` fine-tuned in k folds, ``pt`` frozen pretrained + prompt."""
SETTINGS: tuple[Setting, ...] = ("ft", "pt")
DEFAULT_SETTING: Setting = "ft"
SETTING_HELP: dict[Setting, str] = {"ft": "k-fold fine-tuned LM", "pt": "frozen pretrained LM with a prompt"}
SETTING_RULE = Param(Options(SETTINGS), says=" or ".join(f"{name!r} ({SETTING_HELP[name]})" for name in SETTINGS))
"""The rule of an LM setting (the settings' field ``setting``, the API's and the CLI's)."""
Example = Mapping[str, Any]


@dataclass(frozen=True)
class Task:
    """A prompt format, a query field, an optional label field and filters for one dataset.

    Attributes:
        name: short name (``snli``, ``boolq``, ``spider``, ``generic``).
        query_field: field holding the text that is scored and whose word count is the length.
        prompt: setting -> (example -> prompt text, without BOS).
        query: setting -> (example -> query text as scored, without EOS; usually " " + field).
        label_field: field used for label balance, or None.
        required_fields: fields every example must have (checked with a clear error).
        filters: (reason, keep predicate) pairs; examples failing a predicate are dropped.
        added_fields: fields the dataset's builder writes into every example (Spider: ``hardness``),
            so a user field of that name is refused instead of overwritten.
        label_names: the label's class names in id order (SNLI: entailment, neutral, contradiction), written
            as a ``ClassLabel``; None lets :mod:`lsplits.data.labels` decide from the values.
    """

    name: str
    query_field: str
    prompt: Callable[[Setting], Callable[[Example], str]]
    query: Callable[[Setting], Callable[[Example], str]]
    label_field: str | None = None
    required_fields: tuple[str, ...] = ()
    filters: tuple[tuple[str, Callable[[Example], bool]], ...] = field(default_factory=tuple)
    added_fields: tuple[str, ...] = ()
    label_names: tuple[str, ...] | None = None

    def prompt_text(self, example: Example, setting: Setting = DEFAULT_SETTING) -> str:
        """The unscored context for ``example`` (BOS is prepended by the scorer)."""
        return self.prompt(setting)(example)

    def query_text(self, example: Example, setting: Setting = DEFAULT_SETTING) -> str:
        """The scored text for ``example`` (EOS is appended by the scorer)."""
        return self.query(setting)(example)

    def length_text(self, example: Example) -> str:
        """The text whose NLTK word count is the example's length (the raw query field)."""
        return str(example[self.query_field])

    def keep(self, example: Example) -> str | None:
        """Return None when ``example`` passes every filter, else the reason it is dropped."""
        for reason, predicate in self.filters:
            if not predicate(example):
                return reason
        return None

    def check_fields(self, columns: Sequence[str], source: str) -> None:
        """Raise DataError naming the first required field missing from ``columns``."""
        needed = list(self.required_fields) or [self.query_field]
        if self.label_field:
            needed.append(self.label_field)
        for name in needed:
            if name not in columns:
                raise DataError(
                    f"missing field {name!r} (the file has: {', '.join(columns) or 'no fields'})",
                    source=source, field=name)


def is_missing(value: object) -> bool:
    """Whether a field value is absent: None, NaN, or a string that is empty or only whitespace.

    >>> [is_missing(v) for v in (None, float("nan"), " ", "", 0, "a")]
    [True, True, True, True, False, False]
    """
    if value is None:
        return True
    if isinstance(value, float):
        return value != value
    if isinstance(value, str):
        return not value.strip()
    return False


def resolve_setting(value: object, *, what: str = "setting") -> Setting:
    """``value`` as a :data:`Setting`; the one check every entry point (CLI, API, strategies, plan) uses.

    >>> resolve_setting("pt")
    'pt'
    >>> resolve_setting("xx")
    Traceback (most recent call last):
    ...
    lsplits.errors.InvalidOption: setting must be 'ft' (k-fold fine-tuned LM) or 'pt' (frozen pretrained LM with a prompt), got 'xx'
    """
    return check(what, value, SETTING_RULE)


def _same(fn: Callable[[Example], str]) -> Callable[[Setting], Callable[[Example], str]]:
    return lambda setting: fn


def template_fields(template: str, option: str = "prompt_template") -> list[str]:
    """Names of the ``{field}`` placeholders in a prompt template, after :func:`check_template_fields`."""
    return [name for name in check_template_fields(template, option) if name]


def check_template_fields(template: str, option: str = "prompt_template") -> list[str]:
    """The field names of every placeholder in ``template`` (``""`` for ``{}``), each checked to be plain.

    A placeholder is ``{name}`` and nothing more: a format spec (``{text:>9000000}`` pads every prompt to
    9 million characters, gigabytes for a few lines), a conversion (``{text!r}``) or an attribute or index
    (``{text.upper}``, ``{text[0]}``) is refused here, before any example is formatted, as is a template
    that ``str.format`` cannot read (an unmatched brace).

    Raises:
        InvalidOption: naming ``option`` (the caller's word for the template) and the placeholder at fault.

    >>> check_template_fields("Title: {title} Text:")
    ['title']
    >>> check_template_fields("{text:>9000000}")
    Traceback (most recent call last):
    ...
    lsplits.errors.InvalidOption: prompt_template has a format spec in {text:>9000000}: write plain {field} placeholders (and literal braces as {{ and }}), got '{text:>9000000}'
    """
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise InvalidOption(name=option, problem=f"is not a template that Python's str.format reads ({exc}): write "
                            "literal braces as {{ and }}", value=template) from None
    names = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        problem = ("a format spec" if spec else "a conversion" if conversion
                   else "an attribute or index" if any(c in name for c in ".[") else None)
        if problem:
            raise InvalidOption(name=option, problem=f"has {problem} in {shown}: write plain {{field}} placeholders "
                                "(and literal braces as {{ and }})", value=template)
        names.append(name)
    return names


def generic_task(query_field: str, prompt_template: str = "", label_field: str | None = None) -> Task:
    """A task for any user dataset: ``prompt_template`` is formatted with the example's fields.

    The query is scored as ``" " + example[query_field]`` after a non-empty prompt and as the bare
    field after an empty one (then only BOS precedes it), matching the Spider fine-tuning format.
    """
    fields = template_fields(prompt_template)  # before any example: a format spec can cost gigabytes
    sep = " " if prompt_template else ""
    return Task(
        name="generic",
        query_field=query_field,
        prompt=_same(lambda ex: prompt_template.format(**ex)),
        query=_same(lambda ex: sep + str(ex[query_field])),
        label_field=label_field,
        required_fields=tuple(dict.fromkeys([query_field, *fields])),
    )


# --- The paper's tasks (Godbole & Jia 2023). The builders in builders/ add loading, filters and cards. ---

NLI_LABELS: tuple[str, ...] = ("entailment", "neutral", "contradiction")
"""The three NLI labels, in the order of the integer labels of ``stanfordnlp/snli`` (0, 1, 2)."""

_LABEL_PHRASES = {"entailment": "entailed", "neutral": "neutral", "contradiction": "a contradiction"}


def nli_prompt(premise: str, label: str | int) -> str:
    """The paper's SNLI prompt (BOS is added by the scorer), label-conditioned.

    ``label`` is a label name or the Hub's integer convention (0 entailment, 1 neutral,
    2 contradiction). Raises DataError for anything else (e.g. SNLI's ``-`` or ``-1``).

    >>> nli_prompt("A man sings.", "neutral")
    'Premise: A man sings. This hypothesis is neutral:'
    """
    name = NLI_LABELS[label] if isinstance(label, int) and 0 <= label < len(NLI_LABELS) else label
    if name not in _LABEL_PHRASES:
        raise DataError(f"unknown NLI label {label!r}; expected one of {', '.join(NLI_LABELS)} or 0/1/2")
    return f"Premise: {premise} This hypothesis is {_LABEL_PHRASES[name]}:"


def nli_task(name: str = "snli", premise_field: str = "premise", hypothesis_field: str = "hypothesis",
             label_field: str = "label", filters: tuple[tuple[str, Callable[[Example], bool]], ...] = ()) -> Task:
    """A :class:`Task` scoring ``" " + hypothesis`` after :func:`nli_prompt` (same in ``pt`` and ``ft``)."""

    def prompt(example: Example) -> str:
        try:
            return nli_prompt(str(example[premise_field]), example[label_field])
        except DataError as exc:
            raise DataError(str(exc), example=example.get("id"), field=label_field) from None

    return Task(
        name=name,
        query_field=hypothesis_field,
        prompt=_same(prompt),
        query=_same(lambda example: " " + str(example[hypothesis_field])),
        label_field=label_field,
        required_fields=(premise_field, hypothesis_field, label_field),
        filters=tuple(filters),
        label_names=NLI_LABELS,
    )


def boolq_task() -> Task:
    """BoolQ: ``Passage: {passage} Ask a question about the passage:`` then the question (both settings)."""
    return Task(
        name="boolq",
        query_field="question",
        prompt=_same(lambda ex: f"Passage: {ex['passage']} Ask a question about the passage:"),
        query=_same(lambda ex: " " + str(ex["question"])),
        label_field="answer",
        required_fields=("question", "passage", "answer"),
    )


def spider_task() -> Task:
    """Spider: prompted with ``write a database question:``; fine-tuned on the bare question after BOS."""
    prompts = {"pt": lambda ex: "write a database question:", "ft": lambda ex: ""}
    queries = {"pt": lambda ex: " " + str(ex["question"]), "ft": lambda ex: str(ex["question"])}
    return Task(name="spider", query_field="question", prompt=lambda s: prompts[s], query=lambda s: queries[s],
                required_fields=("question", "query", "db_id"), added_fields=("hardness",))
