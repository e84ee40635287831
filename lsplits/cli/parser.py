"""The ``lsplits`` command line: every subcommand's arguments and the table of commands; nothing else.

The work happens in the library: each :class:`Command` names the ``module:function`` that takes the
parsed ``argparse.Namespace`` and returns an exit code. This is the only module that imports argparse.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import lsplits
from lsplits.cli.arguments import (
    analyze_arguments,
    beams_arguments,
    build_arguments,
    demo_arguments,
    difficulty_arguments,
    push_arguments,
    push_metrics_arguments,
    push_space_arguments,
    score_arguments,
    ue_arguments,
)
from lsplits.errors import LsplitsError
from lsplits.io.locks import holding_outputs
from lsplits.io.storage import storage_problem

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


S = TypeVar("S")


def settings_of(args: argparse.Namespace, kind: type[S], **given: Any) -> S:
    """A command's settings object (a frozen dataclass that checks itself) from the parsed options of the same
    names (a field the command has no option for keeps its default; ``given`` wins): the one way the CLI hands
    its options to the library. A bad value raises InvalidOption naming the field, which :func:`main` prints
    as the option's flag (:func:`in_cli_words`)."""
    import dataclasses

    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(kind) if f.init and hasattr(args, f.name)}
    return kind(**{**values, **given})  # type: ignore[arg-type]


class DefaultsFormatter(argparse.HelpFormatter):
    """Help whose ``%(default)s`` shows a tuple or list default as the option is typed: ``smatch,smatchpp``."""

    def _expand_help(self, action: argparse.Action) -> str:
        if isinstance(action.default, (tuple, list)):
            action = copy.copy(action)
            action.default = ",".join(map(str, action.default))
        return super()._expand_help(action)


def _one_line(message: str) -> str:
    return " ".join(line.strip() for line in message.splitlines() if line.strip())


def option_flags(command: str) -> dict[str, str]:
    """The flag of each option of ``command`` by its destination (``n_bootstrap`` -> ``--n-bootstrap``): how the
    command line spells the settings field or keyword that an :class:`~lsplits.errors.InvalidOption` names."""
    [found] = [c for c in COMMANDS if c.name == command]
    parser = OneLineParser(prog=f"lsplits {command}")
    found.arguments(parser)
    flags: dict[str, str] = {}
    for action in parser._actions:  # argparse keeps no public list of a parser's actions
        if action.option_strings:
            flags.setdefault(action.dest, next((o for o in action.option_strings if o.startswith("--")),
                                               action.option_strings[0]))
        else:
            flags.setdefault(action.dest, (action.metavar if isinstance(action.metavar, str) else action.dest.upper()))
    return flags


def in_cli_words(exc: LsplitsError, command: str) -> LsplitsError:
    """``exc`` naming its options by the command line's flags (``folds`` -> ``--folds``), as the user typed them;
    unchanged where it names no option of ``command``."""
    from lsplits.errors import InvalidOption

    if command not in {c.name for c in COMMANDS}:
        return exc
    flags = option_flags(command)
    if isinstance(exc, InvalidOption) and exc.name is not None:
        if exc.where:
            return exc.spelled(flags)  # a value read from a file keeps the file's key; its source is spelled
        return exc.renamed(flags.get(exc.name, exc.name), flags)
    return exc.spelled(flags)


@dataclass(frozen=True)
class Command:
    """One subcommand: its name, one-line help, the function adding its arguments, and ``module:function``
    that runs it (imported only when the command runs, so heavy libraries load late)."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: str


COMMANDS: tuple[Command, ...] = (
    Command("score", "score every example with a causal LM (no split)", score_arguments, "lsplits.cli.commands:score"),
    Command("build", "score, split and export a Likelihood-Split dataset (Hub layout)", build_arguments,
            "lsplits.cli.commands:build"),
    Command("push", "upload a built folder to a Hub dataset repo in one commit", push_arguments,
            "lsplits.cli.publish:push"),
    Command("demo", "offline demo: synthetic data, scratch LM in 3 folds, 5 configs", demo_arguments,
            "lsplits.cli.commands:demo"),
    Command("analyze", "print the statistics of a built folder", analyze_arguments, "lsplits.cli.commands:analyze"),
    Command("ue", "uncertainty estimation and PRR report over beam candidates", ue_arguments,
            "lsplits.cli.ue:run"),
    Command("beams", "k-best candidates by beam search from a Hub seq2seq model or causal LM (input of ue)",
            beams_arguments, "lsplits.cli.beams:run_beams"),
    Command("push-metrics", "create one Hub Space per evaluate metric module", push_metrics_arguments,
            "lsplits.cli.publish:push_metrics"),
    Command("push-space", "deploy the Gradio demo Space to the Hub", push_space_arguments, "lsplits.cli.publish:push_space"),
    Command("difficulty", "fine-tune a task model on every config and report how much harder each is than random",
            difficulty_arguments, "lsplits.cli.difficulty:run"),
)
"""Every subcommand of ``lsplits``, in the order ``lsplits --help`` lists them."""


def build_parser(defaults: Mapping[str, Mapping[str, Any]] | None = None, *,
                 only: str | None = None) -> argparse.ArgumentParser:
    """The full argument parser (also used to render the README's command reference); ``defaults`` replaces
    a command's defaults (command name -> option dest -> value: ``build --from-record``). With ``only``, the other
    commands are listed without their options, so parsing one command imports only its own settings modules
    (``ue``'s would import scipy.stats: 2 s of every ``lsplits build`` error line)."""
    parser = OneLineParser(prog="lsplits", description=DESCRIPTION, allow_abbrev=False,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument("--version", action="version", version=f"lsplits {lsplits.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command_parser = sub.add_parser(command.name, help=command.help, formatter_class=DefaultsFormatter,
                                        allow_abbrev=False)  # an abbreviation must not read as another option
        if only is None or command.name == only:
            command.arguments(command_parser)
        command_parser.set_defaults(**dict((defaults or {}).get(command.name, {})))
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs (its first word, after the global options), None when it names none."""
    names = {command.name for command in COMMANDS}
    for word in argv:
        if word in names:
            return word
        if not word.startswith("-"):
            return None
    return None


def recorded_defaults(args: argparse.Namespace) -> dict[str, dict[str, Any]] | None:
    """For ``build --from-record FILE``: the recorded :class:`~lsplits.building.settings.BuildSettings` as the
    build command's defaults, so options given on the command line still win (None without ``--from-record``)."""
    path = getattr(args, "from_record", None)
    if path is None:
        return None
    from lsplits.building.record import settings_of_record

    return {args.command: settings_of_record(path).to_dict()}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """``argv`` (``["ue", "beams.jsonl", ...]``) parsed as the command line is (``--from-record`` included), for
    callers that run a command's function themselves (tests, benchmarks)."""
    args = build_parser().parse_args(list(argv))
    recorded = recorded_defaults(args)
    return args if recorded is None else build_parser(recorded).parse_args(list(argv))


def run_command(args: argparse.Namespace) -> int:
    """Run the parsed command's function; its exit code."""
    [command] = [c for c in COMMANDS if c.name == args.command]
    module, function = command.run.split(":")
    return int(getattr(importlib.import_module(module), function)(args) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lsplits`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(only=command_named(argv)).parse_args(argv)
    if os.environ.get("WORLD_SIZE", "1") not in ("", "1"):  # one of several processes of a launcher
        from lsplits.lm.distributed import exit_with_launcher

        exit_with_launcher()
    from lsplits.cli.interrupt import (
        SIGPIPE_EXIT,
        command_ended,
        interrupt_behind,
        raise_on_sigterm,
        report_interrupt,
    )
    from lsplits.runtime.logs import RepeatedWarnings, configure_logging
    from lsplits.runtime.progress import silence_bars

    configure_logging(logging.DEBUG if args.verbose else logging.INFO)
    silence_bars(False)  # a previous command in this process (a notebook, a test) may have ended by an interrupt

    raise_on_sigterm()  # SIGTERM unwinds like Ctrl-C: temporary folders are removed, one line is printed
    repeats = RepeatedWarnings().install()  # penman's per-graph warnings: the first, then one count at the end
    try:
        try:
            recorded = recorded_defaults(args)
            if recorded is not None:
                args = build_parser(recorded, only=args.command).parse_args(argv)
            with holding_outputs():  # the outputs it checks stay locked until it ends: one writer each
                code = run_command(args)
            sys.stdout.flush()  # a reader that went away is raised here, where it is handled, not at exit
            return code
        finally:
            command_ended()  # a signal from here on is handled below: the watchdog raises it no more
            repeats.finish(logger)
    except KeyboardInterrupt as interrupt:  # Ctrl-C, or SIGTERM as interrupt.Terminated
        return report_interrupt(args, interrupt)
    except Exception as exc:
        interrupt = interrupt_behind(exc)
        if interrupt is not None:  # a cleanup's own error replaced the signal: still the signal's one line
            return report_interrupt(args, interrupt)
        if isinstance(exc, BrokenPipeError):  # `lsplits analyze DIR | head`: stop quietly, as Unix tools do
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's flush at exit must not fail
            return SIGPIPE_EXIT
        if isinstance(exc, LsplitsError):
            print(f"lsplits {args.command}: error: {_one_line(str(in_cli_words(exc, args.command)))}", file=sys.stderr)
            return 2
        full = storage_problem(exc, option_flags(args.command))  # a full or read-only disk is the machine's state, not a bug: one line
        if full is not None:
            print(f"lsplits {args.command}: error: {full}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
