"""Beam candidates with a known degradation order, built by controlled edits of real gold AMR graphs.

An example at degradation level d gets k candidates, each the gold graph with d random edits drawn
independently (change a concept, change a role, delete a branch, add a negation). At level 0 all
candidates equal the gold graph (quality 1, no disagreement); the higher the level, the worse the
top-1 candidate and the more the candidates disagree, so a sound uncertainty estimator must rank
high levels as more uncertain (PRR well above 0). Used by the tests and by the benchmarks.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import penman

SAMPLE = Path(__file__).parent / "fixtures" / "amr_sample.jsonl"
_CONCEPTS = ("thing", "person", "say-01", "go-02", "big", "good-02", "know-01", "see-01", "boy")
_ROLES = (":ARG0", ":ARG1", ":ARG2", ":mod", ":manner", ":time", ":location")


def sample_gold() -> list[tuple[str, str]]:
    """(id, PENMAN) of the real gold graphs in tests/fixtures/amr_sample.jsonl."""
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(row["id"], row["amr"]) for row in rows]


def _nodes(node, found: list) -> list:
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
    """The graph after ``edits`` random edits."""
    for _ in range(edits):
        text = edit_once(text, rng)
    return text


def build_beams(gold: list[tuple[str, str]], levels: list[int], k: int, seed: int = 0) -> list[dict]:
    """One beam example per (gold graph, level) pair: ``{"id", "level", "candidates"}``."""
    rng = random.Random(seed)
    beams = []
    for level in levels:
        for example, text in gold:
            candidates = [degrade(text, level, rng) for _ in range(k)]
            beams.append({"id": f"{example}@{level}", "level": level, "candidates": candidates})
    return beams
