"""The ``lsplits`` command line: argument parsing only; the work happens in the library modules."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from .errors import LsplitsError

logger = logging.getLogger("lsplits")

DESCRIPTION = """\
Likelihood Splits and black-box uncertainty for structured prediction.

Typical use:
  lsplits demo                                  # offline demo: build out/demo-likelihood
  lsplits build snli --lm gpt2-medium --out snli-likelihood --push-to-hub ORG/snli-likelihood
  lsplits build --data-files data.jsonl --query-field text --lm scratch --out my-split
  lsplits score --data-files data.jsonl --query-field text --lm gpt2 --setting pt --out scores.parquet
  lsplits analyze my-split                      # statistics of a built folder
  lsplits beams ORG/amr-parser sentences.txt --k 10 --out beams.jsonl --format penman
  lsplits ue beams.jsonl --gold gold.amr --out report/
  lsplits ue --system a=a.jsonl --system b=b.jsonl --gold gold.amr --out study/
"""


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (exit code 2), like every other error of
    lsplits; the usage is one ``--help`` away. Subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)\n")


def _one_line(message: str) -> str:
    return " ".join(line.strip() for line in message.splitlines() if line.strip())


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number of at least ``minimum`` (checked when the options are parsed)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def _eval_size(text: str) -> int | float:
    """Parse --eval-size: an integer count (at least 1) or a fraction in (0, 1)."""
    try:
        count = int(text)
    except ValueError:
        pass
    else:
        if count < 1:
            raise argparse.ArgumentTypeError(f"a count must be at least 1, got {count}")
        return count
    try:
        value = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a count nor a fraction") from exc
    if not 0 < value < 1:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"a fraction must lie in (0, 1), got {text}")
    return value


def _add_data_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", nargs="?", default=None,
                        help="snli, boolq or spider (built-in builders), a Hub dataset id, or a local file")
    parser.add_argument("--data-files", nargs="+", metavar="[SPLIT=]FILE",
                        help="local JSONL/JSON/CSV/parquet files (optionally named: train=a.jsonl)")
    parser.add_argument("--query-field", help="field scored by the LM (generic datasets)")
    parser.add_argument("--prompt-template", default="",
                        help='prompt before the query, with {field} placeholders, e.g. "Title: {title}"')
    parser.add_argument("--label-field", help="field to balance eval by (generic datasets)")


def default_cache_dir() -> Path:
    """Where the CLI caches scores by default: ``$LSPLITS_CACHE`` or ``~/.cache/lsplits/scores``."""
    return Path(os.environ.get("LSPLITS_CACHE", "~/.cache/lsplits")).expanduser() / "scores"


def _add_lm_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lm", default="scratch",
                        help="causal LM: a Hub id (gpt2-medium), a local folder, or 'scratch' (tiny offline LM)")
    parser.add_argument("--folds", type=whole_number(2), default=3, help="k for k-fold fine-tuning (default 3)")
    parser.add_argument("--seed", type=whole_number(0), default=0, help="seed for folds, training and splits")
    parser.add_argument("--cache-dir", type=Path, default=default_cache_dir(),
                        help="score shards and fold checkpoints, so a killed run resumes "
                             "(default: $LSPLITS_CACHE or ~/.cache/lsplits/scores)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the LM for scoring (long GPU runs)")
    parser.add_argument("--max-steps", type=whole_number(1), default=None,
                        help="training steps per fold (overrides default)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the token count, the time projected from a short warm-up and the cache's disk use")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (also used to render the README's command reference)."""
    parser = OneLineParser(prog="lsplits", description=DESCRIPTION,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    score = sub.add_parser("score", help="score every example with a causal LM (no split)")
    _add_data_arguments(score)
    _add_lm_arguments(score)
    score.add_argument("--setting", choices=["ft", "pt"], default="ft",
                       help="ft: k-fold fine-tuned (default); pt: frozen pretrained LM with a prompt")
    score.add_argument("--out", type=Path, required=True, help="output parquet (id, ll_score, ll_tokens, fold)")

    build = sub.add_parser("build", help="score, split and export a Likelihood-Split dataset (Hub layout)")
    _add_data_arguments(build)
    _add_lm_arguments(build)
    build.add_argument("--out", type=Path, required=True, help="output folder (Hub dataset layout)")
    build.add_argument("--configs", nargs="+", help="configs to build (default: the dataset's standard set)")
    build.add_argument("--eval-size", type=_eval_size, default=None,
                       help="eval examples: a count (2000) or a fraction (0.2); default: the paper's proportion")
    build.add_argument("--push-to-hub", metavar="REPO_ID", help="push the folder to this Hub dataset repo")
    build.add_argument("--private", action="store_true", help="create the Hub repo as private")

    push = sub.add_parser("push", help="upload a built folder to a Hub dataset repo in one commit")
    push.add_argument("folder", type=Path)
    push.add_argument("repo_id")
    push.add_argument("--private", action="store_true")

    demo = sub.add_parser("demo", help="offline demo: synthetic data, scratch LM in 3 folds, 5 configs")
    demo.add_argument("--out", type=Path, default=Path("out/demo-likelihood"))
    demo.add_argument("--n", type=whole_number(1), default=3000, help="number of synthetic examples")
    demo.add_argument("--seed", type=whole_number(0), default=0)
    demo.add_argument("--cache-dir", type=Path, default=None)
    demo.add_argument("--no-progress", action="store_true")

    analyze = sub.add_parser("analyze", help="print the statistics of a built folder")
    analyze.add_argument("folder", type=Path)
    analyze.add_argument("--configs", nargs="+", help="only these configs")

    for name, target, help_text in _PLUGIN_COMMANDS:
        module, add_arguments, _ = target.split(":")
        command = sub.add_parser(name, help=help_text)
        getattr(importlib.import_module(module), add_arguments)(command)
        command.set_defaults(_plugin=target)
    return parser


# command -> "module:add_arguments(parser):run(args) -> int" (modules import heavy libraries lazily)
_PLUGIN_COMMANDS = (
    ("ue", "lsplits.uncertainty.report:add_ue_arguments:run_ue",
     "uncertainty estimation and PRR report over beam candidates"),
    ("beams", "lsplits.generation:add_beams_arguments:run_beams",
     "k-best candidates by beam search from a Hub seq2seq model or causal LM (input of ue)"),
    ("push-metrics", "lsplits.metric_spaces:add_push_metrics_arguments:run_push_metrics",
     "create one Hub Space per evaluate metric module"),
    ("push-space", "lsplits.space:add_arguments:run", "deploy the Gradio demo Space to the Hub"),
    ("difficulty", "lsplits.difficulty.command:add_arguments:run",
     "fine-tune a task model on every config and report how much harder each is than random"),
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lsplits`` console script."""
    args = build_parser().parse_args(argv)
    if os.environ.get("WORLD_SIZE", "1") not in ("", "1"):  # one of several processes of a launcher
        from .lm.distributed import exit_with_launcher

        exit_with_launcher()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("penman", "httpx", "urllib3"):  # penman logs every parsed graph at INFO
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        if getattr(args, "_plugin", None):
            module, _, run = args._plugin.split(":")
            return int(getattr(importlib.import_module(module), run)(args) or 0)
        from . import commands

        return int(getattr(commands, args.command.replace("-", "_"))(args) or 0)
    except LsplitsError as exc:
        print(f"lsplits {args.command}: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished shards are cached and a rerun resumes from them", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
