"""Error types of lsplits: every user-facing failure names the file, example, field or option at fault.

Which class means what (one rule each; pick the first that fits):

- :class:`InvalidOutput`: one output string (a beam candidate, a prediction, a reference) that a
  similarity function's ``prepare`` cannot parse. Not a failure: the caller counts the candidate
  invalid (similarity 0 with the others). Raise it only from a similarity function.
- :class:`InvalidInput`: values handed to a library function that it cannot use (mismatched lengths,
  NaN, no examples, a string where a list is due). Names the argument.
- :class:`DataError`: a problem in the user's data (a missing field or label, an empty file, a
  duplicate id); names the file, line, example and field.
- :class:`InvalidOption`: one option or argument whose value lies outside what a function accepts
  (a range, an unknown name such as an estimator, config, setting or metric, a wrong type). Names it.
- :class:`MissingExtra`: an optional dependency is not installed; names the ``pip install
  'lsplits[EXTRA]'`` that adds it (:mod:`lsplits.runtime.extras`).
- :class:`ConfigError`: a run that cannot go ahead as configured, beyond one option's value: options
  that conflict, a model, folder, Hub repo or token the options name that cannot be used, a folder
  lsplits must not write into. The user fixes it by changing the command.
- :class:`SplitInvariantError`: a split broke one of its own invariants (not a partition, a config's
  promise); lsplits' own check, raised before anything is written.
- :class:`WorkerLost`: a worker process that lsplits started ended before its work was done (killed by
  a signal, out of memory, a crash); names its pid and how it ended, instead of waiting for ever.
- :class:`Stopped`: work ended early because its caller asked (:mod:`lsplits.runtime.cancel`: a time
  budget ran out, the Space's client left); says why.
- :class:`SimilarityFailure`: a similarity function raised anything other than InvalidOutput (a bug,
  in lsplits or a registered user function). Not an LsplitsError: the run fails with a traceback,
  and the message names the metric, the example and the candidate.

Every :class:`LsplitsError` is printed as one line by the process boundaries (the CLI in
``lsplits.cli.parser.main`` and the Space), the only places that catch ``Exception``; a library
function converts a third-party failure into one of these classes only for the exception types that
third party documents (:func:`lsplits.runtime.failures.hub_failures`), so that a bug is never turned into a user message.
:class:`InvalidInput` and :class:`InvalidOption` also derive from ``ValueError``, what Python callers
of the library functions (PRR, the estimators, the metrics) expect.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_OPTION = re.compile(r"\{opt:(\w+)\}")


def in_words(text: str, words: Mapping[str, str] | None = None) -> str:
    """``text`` with each ``{opt:NAME}`` spelled as ``words`` says (the CLI's flag, the Space's label), else NAME."""
    return _OPTION.sub(lambda found: (words or {}).get(found.group(1), found.group(1)), text)


class LsplitsError(Exception):
    """Base class for errors that the CLI prints as one readable line (no traceback).

    A message names an option by its Python name as ``{opt:NAME}`` (``give {opt:input_field}``): Python callers read
    ``input_field``, and :meth:`spelled` gives the error in another caller's words (the CLI's ``--input-field``).
    """

    def __init__(self, message: str = "") -> None:
        self.template = message
        super().__init__(in_words(message))

    def spelled(self, words: Mapping[str, str]) -> LsplitsError:
        """The same error with each option its message names spelled as ``words`` says (itself when it names none)."""
        if not _OPTION.search(self.template):
            return self
        spelled = type(self).__new__(type(self))
        spelled.__dict__.update(self.__dict__)
        Exception.__init__(spelled, in_words(self.template, words))
        return spelled


class DataError(LsplitsError):
    """Bad input data: a missing field, an empty dataset, an unparsable line.

    The message names where the problem is (file, line or example id, field) so users can fix it.
    """

    def __init__(self, problem: str, *, source: str | None = None, line: int | None = None,
                 example: str | None = None, field: str | None = None) -> None:
        where = []
        if source is not None:
            where.append(str(source))
        if line is not None:
            where.append(f"line {line}")
        if example is not None:
            where.append(f"example {example!r}")
        if field is not None:
            where.append(f"field {field!r}")
        self.source, self.line, self.example, self.field = source, line, example, field
        super().__init__(f"{', '.join(where)}: {problem}" if where else problem)


class ConfigError(LsplitsError):
    """A run that cannot go ahead as configured: conflicting options, an unusable model, folder or repo."""


class MissingExtra(ConfigError, ImportError):
    """An optional dependency is not installed; the message names the ``pip install`` that adds it."""


class SplitInvariantError(LsplitsError):
    """A split violated one of its own invariants (not a partition, duplicate ids, wrong size)."""


class InvalidInput(DataError, ValueError):
    """Values a library function cannot use: mismatched lengths, NaN, no examples, an unparsable output.

    A DataError for the CLI (one line) and a ValueError for Python callers.
    """


class InvalidOutput(InvalidInput):
    """A candidate or reference that a similarity's ``prepare`` cannot parse (counted invalid, not a failure)."""


_NO_VALUE = object()


def shown(value: object, limit: int = 80) -> str:
    """``repr(value)`` for a one-line message: cut to ``limit`` characters, and an object whose repr spans lines
    (a model's runs to dozens) named by its type: ``a GPT2LMHeadModel object``."""
    text = repr(value)
    if "\n" in text:
        return f"a {type(value).__name__} object"
    return text if len(text) <= limit else text[:limit - 3] + "..."


class InvalidOption(ConfigError, ValueError):
    """THE error for one bad value: an option or name outside what a function accepts (a range, an unknown
    estimator or metric, a wrong type). A ConfigError for the CLI (one line) and a ValueError for Python callers.

    Raised with ``name``, ``problem`` and ``value`` (:func:`lsplits.params.check`), its message is
    ``NAME PROBLEM, got VALUE``; :meth:`renamed` spells ``NAME`` (and each ``{opt:OTHER}`` the problem names)
    as another caller does (the CLI's ``--folds``) and ``where`` prefixes the source (``--from-record FILE``).
    A plain message is kept as it is.
    """

    def __init__(self, message: str | None = None, *, name: str | None = None, problem: str | None = None,
                 value: object = _NO_VALUE, where: str | None = None,
                 words: Mapping[str, str] | None = None) -> None:
        self.name, self.problem, self.value, self.where = name, problem, value, where
        if message is None:
            said = in_words(problem or "", words)
            separator = "" if said.startswith(":") else " "  # "NAME: PROBLEM" for a problem said as a sentence
            message = f"{name}{separator}{said}" + ("" if value is _NO_VALUE else f", got {shown(value)}")
            if where:
                message = f"{where}: {message}"
        super().__init__(message)
        self.words = dict(words or {})

    def renamed(self, name: str, words: Mapping[str, str] | None = None) -> InvalidOption:
        """The same error naming the option ``name``, and the other options it names as ``words`` says
        (unchanged when it was raised with a plain message)."""
        if self.name is None:
            return self
        return type(self)(name=name, problem=self.problem, value=self.value, where=self.where, words=words)

    def within(self, where: str) -> InvalidOption:
        """The same error prefixed by ``where`` (a file the value was read from)."""
        if self.name is None:
            return type(self)(f"{where}: {self}")
        return type(self)(name=self.name, problem=self.problem, value=self.value, where=where, words=self.words)


class WorkerLost(LsplitsError):
    """A worker process ended before its work was done (killed, out of memory): one line, not a hang."""


class Stopped(LsplitsError):
    """Work stopped before its end because its caller asked (a time budget ran out, the client left)."""


class SimilarityFailure(RuntimeError):
    """A similarity function raised something other than InvalidOutput: a bug, reported with its traceback."""
