"""Check the Spider split logic on real Spider data: divergences, hardness mix and timings per split.

Usage: python benchmarks/spider_splits.py PATH_TO_spider.jsonl [--eval-size 0.2] [--seeds 5]

PATH is Spider in JSONL (one example per line with ``question`` and ``query``; a parsed ``sql``
field, when present, is used to check our hardness against Spider's own parse). Prints, for the
random baseline (mean over seeds), the length, template and TMCD splits: atom and compound
divergence (paper Table 13 on the full 8,034 examples: random 0.077/0.046, TMCD 0.296/0.322),
the eval hardness mix (paper Table 5: random eval .225/.409/.201/.164), whether every eval atom
is in train, and the time each split takes. The TMCD/random compound-divergence ratio is the
issue's acceptance figure (>= 3).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter

import numpy as np
from nltk.tokenize import NLTKWordTokenizer

from lsplits.errors import DataError
from lsplits.splits.engine import length_partition, random_partition
from lsplits.splits.spider import (
    HARDNESS_LEVELS,
    UNKNOWN_HARDNESS,
    atom_divergence,
    compound_divergence,
    enforce_atom_constraint,
    missing_eval_atoms,
    normalize_question,
    spider_hardness,
    sql_atoms,
    sql_compounds,
    template_partition,
    tmcd_partition,
)


def mix(levels: list[str], indices: np.ndarray) -> str:
    counts = Counter(levels[i] for i in indices.tolist())
    return " ".join(f"{counts[level] / max(indices.size, 1):.3f}" for level in HARDNESS_LEVELS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--eval-size", type=float, default=0.2)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    rows = [json.loads(line) for line in open(args.path, encoding="utf-8")]
    sqls = [row["query"] for row in rows]
    n = len(rows)

    start = time.perf_counter()
    atoms = [sql_atoms(sql) for sql in sqls]
    atoms_s = time.perf_counter() - start
    start = time.perf_counter()
    compounds, unparsable = [], []
    for index, sql in enumerate(sqls):
        try:
            compounds.append(sql_compounds(sql))
        except DataError:  # as in `lsplits build spider`: no compounds, hardness unknown
            compounds.append(Counter())
            unparsable.append(index)
    compounds_s = time.perf_counter() - start
    levels = [UNKNOWN_HARDNESS if index in unparsable else spider_hardness(sql) for index, sql in enumerate(sqls)]
    print(f"{n} examples: {len(set().union(*atoms))} distinct atoms ({atoms_s:.2f} s), "
          f"{len(set().union(*compounds))} distinct compounds ({compounds_s:.2f} s)")
    print(f"unparsable queries: {len(unparsable)}" + (f" (rows {unparsable[:20]})" if unparsable else ""))
    if all("sql" in row for row in rows):
        official = [spider_hardness(row["sql"]) for row in rows]
        agree = sum(a == b for a, b in zip(levels, official, strict=True))
        print(f"hardness from the SQL string vs Spider's parsed 'sql': {agree}/{n} agree ({agree / n:.1%})")
    print(f"hardness mix of all examples (easy medium hard extra): {mix(levels, np.arange(n))}")

    tokenizer = NLTKWordTokenizer()
    lengths = [len(tokenizer.tokenize(normalize_question(row["question"]))) for row in rows]
    header = f"{'split':<22}{'atom div':>9}{'comp div':>9}{'missing':>8}{'seconds':>9}   eval hardness mix"
    print(f"\neval size {args.eval_size} of {n}\n{header}")

    def report(name: str, make) -> float:
        begin = time.perf_counter()
        partition = make()
        seconds = time.perf_counter() - begin
        atom = atom_divergence(partition.train, partition.eval, atoms)
        compound = compound_divergence(partition.train, partition.eval, compounds)
        missing = len(missing_eval_atoms(partition, atoms))
        print(f"{name:<22}{atom:9.4f}{compound:9.4f}{missing:8d}{seconds:9.2f}   {mix(levels, partition.eval)}")
        return compound

    random_compound = np.mean([
        report(f"random (seed {seed})",
               lambda seed=seed: enforce_atom_constraint(random_partition(n, args.eval_size, seed=seed), atoms))
        for seed in range(args.seeds)
    ])
    report("length", lambda: enforce_atom_constraint(length_partition(lengths, args.eval_size), atoms))
    report("template", lambda: enforce_atom_constraint(template_partition(sqls, args.eval_size, seed=0), atoms))
    tmcd = [report(f"tmcd (seed {seed})", lambda seed=seed: tmcd_partition(atoms, compounds, args.eval_size,
                                                                           seed=seed))
            for seed in range(args.seeds)]
    report("tmcd atom<=0.1", lambda: tmcd_partition(atoms, compounds, args.eval_size, seed=0,
                                                    max_atom_divergence=0.1))
    print(f"\nTMCD / random compound divergence: {np.mean(tmcd):.4f} / {random_compound:.4f} "
          f"= x{np.mean(tmcd) / random_compound:.1f} (acceptance: >= 3; paper: 0.322 / 0.046 = x7.0)")


if __name__ == "__main__":
    main()
