"""Logging of the programs: one setup (:func:`configure_logging`) and repeated third-party warnings counted.

:func:`configure_logging` is the one setup of the CLI, the Space's app and the screenshot script
(``LEVEL name: message``), keeping third-party INFO chatter out of the terminal: penman logs every graph it
parses at INFO ("Interpreted: Graph(...)", thousands of lines in one uncertainty run), httpx/urllib3 every
request.

Repeated third-party warnings are counted into one summary line instead of one line per example.

penman warns once per graph it cannot lay out as written (``cannot deinvert attribute: ...``): a
500-example study printed 93 such lines, burying the ones that matter. :class:`RepeatedWarnings` is a
logging filter for the handlers: the first warning of each kind (logger and message template) of the
watched loggers passes, the repeats are counted, and :meth:`RepeatedWarnings.summary` gives one line per
kind with the count and the first example. The CLI installs it for every command (:data:`REPEATING_LOGGERS`)
and logs the summary at the end.

>>> import logging
>>> counter = RepeatedWarnings(["doctest"])
>>> record = lambda value: logging.LogRecord("doctest.layout", logging.WARNING, "", 0,
...                                          "cannot deinvert attribute: %r", (value,), None)
>>> [counter.filter(record(value)) for value in (1, 2, 3)]
[True, False, False]
>>> counter.summary()
['doctest.layout warned 3 times like this (2 repeats not shown): cannot deinvert attribute: 1']
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

NOISY_LOGGERS = ("penman", "httpx", "httpx2", "urllib3")
"""Loggers kept at WARNING whatever the level: they log per item or per request at INFO."""

REPEATING_LOGGERS = ("penman",)
"""Third-party loggers that warn once per example (their child loggers, e.g. ``penman.layout``, included)."""


@dataclass
class _Kind:
    logger: str
    first: str
    count: int = 1


class RepeatedWarnings(logging.Filter):
    """For the loggers ``names`` (and their children): the first WARNING of each kind passes, repeats are
    counted and dropped; every other record passes untouched."""

    def __init__(self, names: Iterable[str] = REPEATING_LOGGERS) -> None:
        super().__init__()
        self._names = tuple(names)
        self._kinds: dict[tuple[str, str], _Kind] = {}

    def _watched(self, name: str) -> bool:
        return any(name == watched or name.startswith(watched + ".") for watched in self._names)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING or not self._watched(record.name):
            return True
        key = (record.name, str(record.msg))
        kind = self._kinds.get(key)
        if kind is None:
            self._kinds[key] = _Kind(record.name, record.getMessage())
            return True
        kind.count += 1
        return False

    def summary(self) -> list[str]:
        """One line per kind of warning that repeated: the count and the first message."""
        return [f"{kind.logger} warned {kind.count} times like this ({kind.count - 1} repeats not shown): "
                f"{kind.first}" for kind in self._kinds.values() if kind.count > 1]

    def install(self) -> RepeatedWarnings:
        """Add the filter to the root logger's handlers (where every propagated record passes); returns self."""
        for handler in logging.getLogger().handlers:
            handler.addFilter(self)
        return self

    def finish(self, logger: logging.Logger) -> None:
        """Remove the filter from the root handlers and log the summary lines on ``logger`` as warnings."""
        for handler in logging.getLogger().handlers:
            handler.removeFilter(self)
        for line in self.summary():
            logger.warning(line)


def configure_logging(level: int = logging.INFO) -> None:
    """Log to stderr at ``level`` with the lsplits format; :data:`NOISY_LOGGERS` only from WARNING."""
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    for noisy in NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(logging.WARNING)
