"""Error types of lsplits: every user-facing failure names the file, example and field at fault.

One family: every error a user can cause is an :class:`LsplitsError`, which the CLI and the Space
print as one line. :class:`InvalidInput` and :class:`InvalidOption` also derive from ``ValueError``,
what Python callers of the library functions (PRR, the estimators, the metrics) expect.
"""

from __future__ import annotations


class LsplitsError(Exception):
    """Base class for errors that the CLI prints as one readable line (no traceback)."""


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
    """Invalid settings: an eval size too large, an unknown config or metric name, a bad model."""


class SplitInvariantError(LsplitsError):
    """A split violated one of its own invariants (not a partition, duplicate ids, wrong size)."""


class InvalidInput(DataError, ValueError):
    """Values a library function cannot use: mismatched lengths, NaN, no examples, an unparsable output.

    A DataError for the CLI (one line) and a ValueError for Python callers.
    """


class InvalidOption(ConfigError, ValueError):
    """An option or name outside what a function accepts (a range, an unknown estimator or metric).

    A ConfigError for the CLI (one line) and a ValueError for Python callers.
    """
