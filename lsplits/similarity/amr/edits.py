"""Controlled edits of AMR graphs, to simulate parser beams where no parser runs (tests, benchmarks).

An edit changes a concept, changes a role, deletes a branch or adds a negation, and always leaves
well-formed PENMAN. Applying ``d`` independent random edits to a gold graph gives a candidate of
known degradation: at level 0 every candidate equals the gold graph, and the higher the level, the
worse the candidates and the more they disagree, so a sound uncertainty estimator must rank high
levels as more uncertain.
"""

from __future__ import annotations

import random
from typing import Any

import penman

_CONCEPTS = ("thing", "person", "say-01", "go-02", "big", "good-02", "know-01", "see-01", "boy")
_ROLES = (":ARG0", ":ARG1", ":ARG2", ":mod", ":manner", ":time", ":location")


def _nodes(node: Any, found: list) -> list:
    """Every node of a penman tree (``(variable, branches)``), depth first."""
    found.append(node)
    for _role, target in node[1]:
        if isinstance(target, tuple):
            _nodes(target, found)
    return found


def edit_once(text: str, rng: random.Random) -> str:
    """One random edit that changes the graph; the result is still well-formed PENMAN."""
    tree = penman.parse(text)
    nodes = _nodes(tree.node, [])
    while True:
        operation = rng.choice(("concept", "role", "delete", "negate"))
        _variable, branches = rng.choice(nodes)
        edges = [i for i, (role, _) in enumerate(branches) if role != "/"]
        if operation == "concept":
            position = next(i for i, (role, _) in enumerate(branches) if role == "/")
            options = [c for c in _CONCEPTS if c != branches[position][1]]
            branches[position] = ("/", rng.choice(options))
        elif operation == "role" and edges:
            position = rng.choice(edges)
            options = [r for r in _ROLES if r != branches[position][0]]
            branches[position] = (rng.choice(options), branches[position][1])
        elif operation == "delete" and edges:
            del branches[rng.choice(edges)]
        elif operation == "negate" and (":polarity", "-") not in branches:
            branches.append((":polarity", "-"))
        else:
            continue
        return penman.format(tree)


def degrade(text: str, edits: int, rng: random.Random) -> str:
    """The graph after ``edits`` random edits (unchanged for 0)."""
    for _ in range(edits):
        text = edit_once(text, rng)
    return text


def build_beams(gold: list[tuple[str, str]], levels: list[int], k: int, seed: int = 0) -> list[dict]:
    """One beam per (gold graph, level) pair: ``{"id", "level", "candidates"}``, each candidate the
    gold graph after ``level`` independent edits. ``gold`` holds (id, PENMAN) pairs."""
    rng = random.Random(seed)
    beams = []
    for level in levels:
        for example, text in gold:
            candidates = [degrade(text, level, rng) for _ in range(k)]
            beams.append({"id": f"{example}@{level}", "level": level, "candidates": candidates})
    return beams
