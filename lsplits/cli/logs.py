"""The one logging setup of the programs (the CLI, the Space's app, the screenshot script): ``LEVEL name: message``.

Third-party INFO chatter stays out of the terminal: penman logs every graph it parses at INFO
("Interpreted: Graph(...)", thousands of lines in one uncertainty run), httpx/urllib3 every request.
"""

from __future__ import annotations

import logging

NOISY_LOGGERS = ("penman", "httpx", "urllib3")
"""Loggers kept at WARNING whatever the level: they log per item or per request at INFO."""


def configure_logging(level: int = logging.INFO) -> None:
    """Log to stderr at ``level`` with the lsplits format; :data:`NOISY_LOGGERS` only from WARNING."""
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    for noisy in NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(logging.WARNING)
