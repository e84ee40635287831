"""Regenerate the Space's built-in uncertainty example from real gold AMR graphs.

Usage (from the repository root; the source file is The Little Prince AMR corpus v1.6, test split,
freely distributed by ISI, as JSONL with fields id, snt, amr)::

    python spaces/lsplits-demo/examples/make_amr_example.py lpp_amr_v1.6_test.jsonl

It writes ``amr_gold.amr`` (PENMAN, ``# ::id`` and ``# ::snt`` metadata) and ``amr_beams.jsonl``
(``{"id", "candidates": [k PENMAN strings]}``) next to this script. ``--large`` writes ``amr_large_gold.amr``
and ``amr_large_beams.jsonl`` instead, from every graph of the source whatever its size: enough examples
(143) for ``lsplits ue --target-risk`` to certify a threshold on half of them.

The candidates stand in for a parser's beam: controlled edits of the gold graph (a concept replaced,
a sense changed, a role relabelled, a leaf dropped or added). Each example gets a difficulty level;
its top-1 candidate carries that many edits and the other candidates a random number of further,
independent edits, so harder examples have both a worse top-1 and candidates that disagree more.
That is the situation uncertainty estimation is meant to detect, so PRR comes out clearly positive.
One candidate is made malformed on purpose to show how invalid candidates are reported.
Everything is seeded: the output is the same on every run.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import penman

HERE = Path(__file__).resolve().parent
BEAM_SIZE = 5
ROLES = [":ARG0", ":ARG1", ":ARG2", ":mod", ":location", ":time", ":manner", ":poss", ":domain"]
EXTRA_CONCEPTS = ["good", "small", "thing", "person", "again", "very", "other", "planet", "star", "day"]


def _leaves(graph: penman.Graph) -> list[str]:
    """Variables with no outgoing edge or attribute and exactly one incoming edge (removable)."""
    sources = {t[0] for t in graph.triples if t[1] != ":instance"}
    incoming: dict[str, int] = {}
    for edge in graph.edges():
        incoming[edge.target] = incoming.get(edge.target, 0) + 1
    return sorted(v for v in graph.variables() if v not in sources and incoming.get(v) == 1 and v != graph.top)


def _edit(graph: penman.Graph, rng: random.Random, concepts: list[str]) -> penman.Graph:
    """One random controlled edit of ``graph`` that keeps it a connected, well-formed graph."""
    triples = list(graph.triples)
    for _ in range(20):
        kind = rng.choice(["concept", "sense", "role", "drop", "add"])
        new = list(triples)
        if kind in ("concept", "sense"):
            index = rng.choice([i for i, t in enumerate(new) if t[1] == ":instance"])
            source, role, concept = new[index]
            if kind == "sense":
                stem, _, sense = concept.rpartition("-")
                if not (stem and sense.isdigit()):
                    continue
                concept = f"{stem}-{int(sense) % 3 + 1:02d}" if int(sense) != 2 else f"{stem}-01"
            else:
                concept = rng.choice([c for c in concepts if c != concept])
            new[index] = (source, role, concept)
        elif kind == "role":
            edges = [i for i, t in enumerate(new) if t[1] != ":instance" and t[2] in graph.variables()]
            if not edges:
                continue
            index = rng.choice(edges)
            source, role, target = new[index]
            new[index] = (source, rng.choice([r for r in ROLES if r != role]), target)
        elif kind == "drop":
            leaves = _leaves(penman.Graph(new, top=graph.top))
            if not leaves:
                continue
            leaf = rng.choice(leaves)
            new = [t for t in new if leaf not in (t[0], t[2])]
        else:
            variables = sorted({t[0] for t in new if t[1] == ":instance"})
            name = f"x{len(new)}"
            new += [(rng.choice(variables), ":mod", name), (name, ":instance", rng.choice(EXTRA_CONCEPTS))]
        candidate = penman.Graph(new, top=graph.top)
        try:
            penman.encode(candidate)
        except penman.exceptions.LayoutError:
            continue
        return candidate
    return graph


def _edited(gold: penman.Graph, edits: int, rng: random.Random, concepts: list[str]) -> str:
    graph = gold
    for _ in range(edits):
        graph = _edit(graph, rng, concepts)
    return penman.encode(graph)


def make_example(rows: list[dict], *, n: int | None = 12, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """``(gold rows, beam rows)`` for ``n`` short graphs of ``rows`` (None: every graph; see the module docstring)."""
    rng = random.Random(seed)
    if n is None:
        chosen = sorted(rows, key=lambda r: r["id"])
    else:
        short = [r for r in rows if 6 <= len(penman.decode(r["amr"]).triples) <= 16]
        chosen = sorted(rng.sample(short, n), key=lambda r: r["id"])
    concepts = sorted({c for r in rows for _, _, c in penman.decode(r["amr"]).instances() if c})
    golds, beams = [], []
    for number, row in enumerate(chosen):
        gold = penman.decode(row["amr"])
        level = number % 5
        candidates = [_edited(gold, level, rng, concepts)]
        candidates += [_edited(gold, level + rng.randint(0, level + 1), rng, concepts)
                       for _ in range(BEAM_SIZE - 1)]
        golds.append({"id": row["id"], "snt": row["snt"], "amr": penman.encode(gold)})
        beams.append({"id": row["id"], "candidates": candidates})
    broken = beams[-1]["candidates"]
    broken[-1] = broken[-1].rstrip(")")  # unbalanced parentheses: an invalid candidate
    return golds, beams


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="lpp_amr_v1.6_test.jsonl (id, snt, amr)")
    parser.add_argument("--n", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--large", action="store_true",
                        help="every graph of the source, into amr_large_gold.amr and amr_large_beams.jsonl")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.source.read_text(encoding="utf-8").splitlines() if line.strip()]
    golds, beams = make_example(rows, n=None if args.large else args.n, seed=args.seed)
    gold_text = "".join(f"# ::id {g['id']}\n# ::snt {g['snt']}\n{g['amr']}\n\n" for g in golds)
    prefix = "amr_large" if args.large else "amr"
    (HERE / f"{prefix}_gold.amr").write_text(gold_text, encoding="utf-8")
    (HERE / f"{prefix}_beams.jsonl").write_text("".join(json.dumps(b) + "\n" for b in beams), encoding="utf-8")
    print(f"wrote {len(golds)} gold graphs and {len(beams)} x {BEAM_SIZE} candidates to {HERE}")


if __name__ == "__main__":
    main()
