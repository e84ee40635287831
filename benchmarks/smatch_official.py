"""Our Smatch against the official scorer (PyPI ``smatch`` 1.0.4), on the same real pairs.

The official scorer is installed into its own virtual environment (``--venv``, created on first use
with ``pip install smatch==1.0.4``; the project's environment is never touched) and run there on:

- real gold graphs (``--data``, JSONL with an ``amr`` field) against predictions made from them by
  controlled edits (:mod:`lsplits.similarity.amr.edits`: ``--per-level`` predictions at each edit level 1..4);
- pairs of different gold graphs (each graph against the next one and the one after).

Each pair is given to the official code the way its command line reads a file (``AMR.get_amr_line``:
comment lines dropped, lines stripped and joined), prediction first. Its random restarts are seeded
(it reseeds from the system on every start otherwise). It prints

- triple-count agreement: pairs where both graphs have the same number of triples here as there,
  for our ``official`` reading, our ``corrected`` reading and the previous (``parse_amr``) reading;
- the matched-triple comparison: our search (``--restarts``, default Smatch's) against the official one with its
  default 4 restarts and with ``--official-restarts`` (20) restarts, on the same triples;
- corpus Smatch of each.

    .venv/bin/python benchmarks/smatch_official.py [--data ../shared/data/amr/lpp_amr_v1.6_test.jsonl]
        [--venv /tmp/lsplits-smatch-1.0.4] [--per-level 2] [--official-restarts 20] [--seed 0] [--restarts 29]
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import penman
from data_paths import data_argument

from lsplits.similarity.amr.align import MatchCounts, micro_f1
from lsplits.similarity.amr.edits import degrade
from lsplits.similarity.amr.graph import parse_amr, parse_smatch
from lsplits.similarity.amr.smatch import DEFAULT_RESTARTS, smatch_counts

DEFAULT_VENV = Path(tempfile.gettempdir()) / "lsplits-smatch-1.0.4"
OFFICIAL = "smatch==1.0.4"

# Runs inside the official scorer's environment: reads pairs (JSON lines) on stdin, writes one JSON
# line per pair: the triple counts, and the matched count for each restart setting.
RUNNER = r'''
import io, json, random, sys
import amr, smatch

restarts = [int(r) for r in sys.argv[1].split(",")]
seed = int(sys.argv[2])
reseed = random.seed
random.seed = lambda *args, **kwargs: None  # smatch calls random.seed() before every start
for number, line in enumerate(sys.stdin):
    pair = json.loads(line)
    one_line = [amr.AMR.get_amr_line(io.StringIO(text)) for text in (pair["prediction"], pair["gold"])]
    row = {}
    try:
        for r in restarts:
            smatch.match_triple_dict.clear()
            smatch.iteration_num = r + 1
            reseed(seed * 1000003 + number)
            matched, test, gold = smatch.get_amr_match(one_line[0], one_line[1])
            row[str(r)] = matched
        row["total_a"], row["total_b"] = test, gold
    except Exception as error:  # the official code crashes on some graphs (e.g. a variable defined twice)
        row = {"error": f"{type(error).__name__}: {error}"}
    print(json.dumps(row), flush=True)
'''


def ensure_official(venv: Path) -> Path:
    """The python of a virtual environment holding smatch 1.0.4, created (once) if needed."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import importlib.metadata as m; print(m.version('smatch'))"]
    if python.exists() and subprocess.run(probe, capture_output=True, text=True).stdout.strip() == "1.0.4":
        return python
    print(f"installing {OFFICIAL} into {venv} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", OFFICIAL], check=True)
    return python


def load_gold(path: Path) -> list[tuple[str, str]]:
    """(id, PENMAN) of every graph of a JSONL file, or a clear exit if it is missing."""
    if not path.is_file():
        sys.exit(f"error: AMR data file not found: {path} (pass --data PATH to a JSONL file with an 'amr' field)")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(str(row["id"]), row["amr"]) for row in rows]


# Branches that the official reading handles in its own way (see lsplits.similarity.amr.graph.parse_smatch).
QUIRKS = ((":mod", "7"), (":mod", "-"), (":ARG1-of", "5"), (":op1", '"New York"'), (":value", '"1 2"'),
          (":polarity", "-"), (":consist-of", ("q", [("/", "water")])), (":domain-of", ("q", [("/", "tall")])),
          (":quant", '"2"'))


def add_quirks(text: str, rng: random.Random, count: int = 3) -> str:
    """The graph with ``count`` edge-case branches added at random nodes (some repeat a branch)."""
    tree = penman.parse(text)
    nodes = [node for node in _nodes(tree.node)]
    for number in range(count):
        _variable, branches = rng.choice(nodes)
        role, target = rng.choice(QUIRKS)
        if isinstance(target, tuple):
            target = (f"{target[0]}{number}x", list(target[1]))
        branches.append((role, target))
        if rng.random() < 0.3:
            branches.append((role, target if not isinstance(target, tuple) else target[0]))  # a repeat
    return penman.format(tree)


def _nodes(node: tuple) -> list[tuple]:
    found = [node]
    for _role, target in node[1]:
        if isinstance(target, tuple):
            found.extend(_nodes(target))
    return found


def make_pairs(gold: list[tuple[str, str]], per_level: int, seed: int) -> list[dict]:
    """Edited predictions against their gold graph, pairs of different gold graphs, and gold graphs
    with edge-case branches added against the gold graph."""
    rng = random.Random(seed)
    pairs = []
    for level in (1, 2, 3, 4):
        for example, text in gold:
            for _ in range(per_level):
                pairs.append({"kind": f"edits-{level}", "id": example, "prediction": degrade(text, level, rng),
                              "gold": text})
    for shift in (1, 2):
        for (example, text), (_, other) in zip(gold, gold[shift:]):
            pairs.append({"kind": "gold-vs-gold", "id": example, "prediction": other, "gold": text})
    for example, text in gold:
        pairs.append({"kind": "edge-cases", "id": example, "prediction": add_quirks(text, rng), "gold": text})
    return pairs


def run_official(python: Path, pairs: list[dict], restarts: list[int], seed: int) -> tuple[list[dict], float]:
    """The official scorer's counts for every pair, and its wall time."""
    with tempfile.TemporaryDirectory() as folder:
        runner = Path(folder) / "runner.py"
        runner.write_text(RUNNER, encoding="utf-8")
        payload = "".join(json.dumps({"prediction": p["prediction"], "gold": p["gold"]}) + "\n" for p in pairs)
        start = time.perf_counter()
        done = subprocess.run([str(python), str(runner), ",".join(map(str, restarts)), str(seed)], input=payload,
                              capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - start
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    if len(rows) != len(pairs):
        sys.exit(f"error: the official scorer answered {len(rows)} of {len(pairs)} pairs:\n{done.stderr[-2000:]}")
    return rows, seconds


def percent(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.2f}%)" if whole else "0/0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    data_argument(parser, "--data", "amr/lpp_amr_v1.6_test.jsonl", "JSONL of gold AMR graphs")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--per-level", type=int, default=2, help="edited predictions per gold graph and level")
    parser.add_argument("--official-restarts", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--restarts", type=int, default=DEFAULT_RESTARTS,
                        help=f"random restarts of our search (default {DEFAULT_RESTARTS}, Smatch's)")
    parser.add_argument("--show", type=int, default=5, help="examples of disagreements to print")
    args = parser.parse_args()
    logging.getLogger("penman").setLevel(logging.ERROR)  # it warns about every repeated triple

    gold = load_gold(args.data)
    pairs = make_pairs(gold, args.per_level, args.seed)
    python = ensure_official(args.venv)
    restarts = sorted({4, args.official_restarts})
    official, official_s = run_official(python, pairs, restarts, args.seed)
    failed = [n for n, row in enumerate(official) if "error" in row]
    scored = [n for n in range(len(pairs)) if n not in set(failed)]
    kinds = {kind: sum(p["kind"] == kind for p in pairs) for kind in dict.fromkeys(p["kind"] for p in pairs)}
    print(f"{len(pairs)} pairs from {len(gold)} gold graphs in {args.data}: "
          + ", ".join(f"{n} {kind}" for kind, n in kinds.items()))
    for n in failed[:args.show]:
        print(f"  the official scorer fails on pair {n} ({pairs[n]['kind']} {pairs[n]['id']}): {official[n]['error']}")
    print(f"official smatch 1.0.4 ({', '.join(f'{r} restarts' for r in restarts)}): {official_s:.1f} s, "
          f"failed on {len(failed)} pairs (left out below)")

    readers = {"official": lambda text: parse_smatch(text, dialect="official"),
               "corrected": lambda text: parse_smatch(text, dialect="corrected"),
               "previous (parse_amr)": parse_amr}
    counts: dict[str, list[MatchCounts]] = {}
    times: dict[str, float] = {}
    for name, read in readers.items():
        start = time.perf_counter()
        counts[name] = [smatch_counts(read(pairs[n]["prediction"]), read(pairs[n]["gold"]), restarts=args.restarts)
                        for n in scored]
        times[name] = time.perf_counter() - start

    print("\ntriple counts equal to the official scorer's (both graphs of a pair):")
    for name, rows in counts.items():
        same = [(c.total_a, c.total_b) == (official[n]["total_a"], official[n]["total_b"]) for c, n in zip(rows, scored)]
        print(f"  {name:22} {percent(sum(same), len(scored))}")
        shown = 0
        for ok, c, n in zip(same, rows, scored):
            if not ok and shown < args.show and name != "corrected":
                one = " ".join(pairs[n]["gold"].split())
                print(f"      {pairs[n]['kind']} {pairs[n]['id']}: here {c.total_a}+{c.total_b}, official "
                      f"{official[n]['total_a']}+{official[n]['total_b']}; gold {one[:110]}")
                shown += 1

    ours = counts["official"]
    print(f"\nmatched triples, our search ({args.restarts + 1} seeded starts, {times['official']:.1f} s for all pairs) "
          "vs the official:")
    for r in restarts:
        theirs = [official[n][str(r)] for n in scored]
        more = sum(c.matched > t for c, t in zip(ours, theirs))
        fewer = sum(c.matched < t for c, t in zip(ours, theirs))
        print(f"  vs {r:2d} restarts: ours >= official on {percent(len(scored) - fewer, len(scored))}, "
              f"more on {more}, fewer on {fewer} (at most {max([t - c.matched for c, t in zip(ours, theirs)] + [0])} "
              "triples fewer)")

    print("\ncorpus Smatch (micro average, prediction vs gold):")
    totals = [(official[n]["total_a"], official[n]["total_b"]) for n in scored]
    for r in restarts:
        theirs = [MatchCounts(official[n][str(r)], a, b) for n, (a, b) in zip(scored, totals)]
        print(f"  official smatch 1.0.4, {r:2d} restarts      {micro_f1(theirs):.6f}")
    for name, rows in counts.items():
        print(f"  lsplits, {name:22}       {micro_f1(rows):.6f}")
    for kind in sorted({p["kind"] for p in pairs}):
        chosen = [i for i, n in enumerate(scored) if pairs[n]["kind"] == kind]
        theirs = [MatchCounts(official[scored[i]][str(args.official_restarts)], *totals[i]) for i in chosen]
        print(f"    {kind:12} official {micro_f1(theirs):.4f}  lsplits official {micro_f1([ours[i] for i in chosen]):.4f}"
              f"  corrected {micro_f1([counts['corrected'][i] for i in chosen]):.4f}"
              f"  previous {micro_f1([counts['previous (parse_amr)'][i] for i in chosen]):.4f}")
    changed = sum((a.total_a, a.total_b) != (b.total_a, b.total_b) for a, b in zip(ours, counts["corrected"]))
    print(f"\nthe corrected reading changes the triple counts of {percent(changed, len(scored))} pairs")


if __name__ == "__main__":
    main()
