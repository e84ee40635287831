"""What one request to the Space may ask for, and the time it may take: a shared CPU serves everybody.

Each limit is checked before any work and refused in one line naming it and the value sent
(:class:`SpaceLimits`); a request whose similarity work is large (:func:`work_units`) runs only when no other
large one does, so small requests stay quick. Every request runs under :func:`request_budget`: when its time
budget runs out or its client leaves, the work stops (the similarity workers are ended, see
:mod:`lsplits.runtime.cancel`) and the user reads one line saying which.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from lsplits.errors import ConfigError, InvalidOption
from lsplits.runtime.cancel import stop_when

_NODE = re.compile(r"\(\s*([^\s()/:]+)\s*/")  # "(v / concept": one AMR node in PENMAN, its variable
_REFERENCE = re.compile(r":[^\s()]+\s+([^\s()\"]+)")  # ":ROLE v": a role whose value is a bare token
_LOCAL = "; the lsplits package takes more on your own machine"


@dataclass(frozen=True)
class SpaceLimits:
    """The most one request may hold (uploads and pasted text alike) and the seconds it may run.

    Attributes:
        upload_bytes: size of one uploaded file or one pasted text.
        examples: examples of one uncertainty study or one system.
        candidates: beam candidates per example (k).
        graph_nodes: AMR nodes of one candidate or gold graph (Smatch++ on a 50-node pair takes seconds).
        systems: systems in one comparison.
        score_examples: examples scored by "Score your own".
        sentences: sentences parsed by one beam generation.
        parse_sentences: sentences of one "Parse a sentence" request (each answered in seconds, not minutes).
        parse_tokens: longest candidate of a live parse, in tokens (a parser that does not stop is cut there).
        large_work: :func:`work_units` above which a request is large (one large request at a time).
        seconds: time budget of one request.
    """

    upload_bytes: int = 1_000_000
    examples: int = 500
    candidates: int = 10
    graph_nodes: int = 30
    systems: int = 4
    score_examples: int = 1_000
    sentences: int = 20
    parse_sentences: int = 5
    parse_tokens: int = 200
    large_work: int = 50_000
    seconds: float = 60.0

    def check_files(self, paths: Sequence[str | os.PathLike[str]] | None, what: str) -> None:
        """Refuse an upload larger than :attr:`upload_bytes`, naming it."""
        for path in paths or ():
            size = os.path.getsize(path)
            if size > self.upload_bytes:
                raise InvalidOption(f"{what} {os.path.basename(path)} is {size:,} bytes; this Space takes files of "
                                    f"at most {self.upload_bytes:,} bytes{_LOCAL}")

    def check_text(self, text: str | None, what: str) -> None:
        """Refuse pasted text longer than :attr:`upload_bytes` (in UTF-8)."""
        size = len((text or "").encode("utf-8"))
        if size > self.upload_bytes:
            raise InvalidOption(f"the pasted {what} is {size:,} bytes; this Space takes at most "
                                f"{self.upload_bytes:,} bytes{_LOCAL}")

    def check_count(self, count: int, limit_name: str, what: str) -> None:
        """Refuse ``count`` above the limit called ``limit_name`` (an attribute), saying ``what`` is counted."""
        limit = getattr(self, limit_name)
        if count > limit:
            raise InvalidOption(f"{count:,} {what}; this Space takes at most {limit:,}{_LOCAL}")

    def check_beams(self, ids: Sequence[str], candidates: Sequence[Sequence[str]], gold: Sequence[str],
                    what: str = "") -> int:
        """Refuse too many examples, candidates or graph nodes; returns the request's :func:`work_units`."""
        of = f" of {what}" if what else ""
        self.check_count(len(ids), "examples", f"examples{of}")
        for example, texts in zip(ids, candidates):
            self.check_count(len(texts), "candidates", f"candidates for example {example!r}{of}")
            for rank, text in enumerate(texts, 1):
                self.check_count(graph_nodes(text), "graph_nodes",
                                 f"AMR nodes in candidate {rank} of example {example!r}{of}")
        for example, text in zip(ids, gold):
            self.check_count(graph_nodes(text), "graph_nodes", f"AMR nodes in the gold graph of example {example!r}")
        return work_units(candidates, gold)


def graph_nodes(text: str) -> int:
    """How many nodes (``(var / concept``) a PENMAN string holds; 0 for any other text."""
    return len(_NODE.findall(text or ""))


def graph_shape(text: str) -> tuple[int, int]:
    """``(nodes, reentrancies)`` of a PENMAN string: its ``(var / concept`` nodes, and the roles whose value is
    the variable of a node (``:ARG0 v``, a second edge into ``v``); ``(0, 0)`` for any other text."""
    variables = _NODE.findall(text or "")
    if not variables:
        return 0, 0
    declared = set(variables)
    return len(variables), sum(1 for token in _REFERENCE.findall(text) if token in declared)


def pair_units(first: tuple[int, int], second: tuple[int, int]) -> int:
    """What Smatch++ costs to align two graphs of :func:`graph_shape` ``first`` and ``second``: the product of
    their sizes (the match tables are that large), times one plus their reentrancies. Trees are aligned by the
    assignment search almost always; each reentrancy couples more variables, and graphs with many of them need
    the integer program, whose time grows far faster than the tables (a 30-node pair with 20 reentrancies each
    runs into its time limit, where a 30-node tree pair takes milliseconds)."""
    (nodes_a, reentrant_a), (nodes_b, reentrant_b) = first, second
    return max(1, nodes_a) * max(1, nodes_b) * (1 + reentrant_a + reentrant_b)


def work_units(candidates: Sequence[Sequence[str]], gold: Sequence[str]) -> int:
    """A measure of the similarity work (:func:`pair_units` summed) over the candidate pairs of every example
    and each top-1 against its gold."""
    total = 0
    for texts, reference in zip(candidates, gold):
        shapes = [graph_shape(t) for t in dict.fromkeys(texts)]
        total += sum(pair_units(a, b) for i, a in enumerate(shapes) for b in shapes[i + 1:])
        if texts:
            total += pair_units(graph_shape(texts[0]), graph_shape(reference))
    return total


_LARGE = threading.BoundedSemaphore(1)


@contextmanager
def one_large_request(units: int, limits: SpaceLimits) -> Iterator[None]:
    """Hold the one slot for a large request (``units`` above :attr:`SpaceLimits.large_work`), or refuse at once."""
    if units <= limits.large_work:
        yield
        return
    if not _LARGE.acquire(blocking=False):
        raise ConfigError(f"the Space is busy with another large request; this one is large too ({units:,} units of "
                          f"similarity work, more than {limits.large_work:,}): try again in a minute, send fewer "
                          f"examples or candidates{_LOCAL}")
    try:
        yield
    finally:
        _LARGE.release()


def client_gone(blocks: Any, session_hash: str | None) -> bool:
    """Whether the session that sent a running request has no live event left in Gradio's queue: its browser
    closed (Gradio marks the event dead) or it cancelled (Gradio drops the event)."""
    queue = getattr(blocks, "_queue", None)
    if queue is None or session_hash is None or not getattr(queue, "active_jobs", None):
        return False
    return not any(getattr(event, "alive", True) for jobs in queue.active_jobs if jobs for event in jobs
                   if getattr(event, "session_hash", None) == session_hash)


@contextmanager
def request_budget(limits: SpaceLimits, blocks: Any = None, session_hash: str | None = None
                   ) -> Iterator[Counter[str]]:
    """Run the block under the request's time budget; the work stops when it runs out or the client leaves.

    Work that can bound itself reads the deadline (:func:`lsplits.runtime.cancel.time_left`: Smatch++'s solver
    gets no more than what is left) and notes what it approximated to stay within it (yielded, for the handler
    to say: :func:`budget_notes`)."""
    end = time.monotonic() + limits.seconds

    def reason() -> str | None:
        if time.monotonic() > end:
            return (f"this request ran past the Space's time budget of {limits.seconds:g} s: send fewer examples, "
                    f"candidates or smaller graphs{_LOCAL}")
        if client_gone(blocks, session_hash):
            return "the browser that sent this request left"
        return None

    with stop_when(reason, end=end) as notes:
        yield notes


def budget_notes(notes: Counter[str]) -> str:
    """What the work approximated to stay within the budget (each note with its count), as a sentence for the
    summary; "" when nothing was."""
    if not notes:
        return ""
    return "The time budget ran short: " + "; ".join(f"{count} {what}" for what, count in notes.items()) + "."
