"""Command line: argparse and the handler of every subcommand (the only place that sees a Namespace)."""
