"""Command line: `itm <command>`. Each module that owns a command registers it here."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

# Modules that add subcommands; each exposes `register(subparsers) -> None`
# and sets `func=` on its parser via `set_defaults`.
COMMAND_MODULES = (
    "generator.accounting_cli",
    "generator.sources.commands",
    "generator.forward.commands",
    "generator.expand",
)


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = argparse.ArgumentParser(prog="itm", description="Inside the Model: generator tools.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit code. A bug is one line asking for a report (generator.
    last_resort), Ctrl-C exits 130."""
    import shlex

    from generator.last_resort import exit_code

    argv = sys.argv[1:] if argv is None else argv
    command = shlex.join(["itm", *argv])
    return exit_code(f"`{command}`", lambda: _run(argv))


def _run(argv: list[str]) -> int:
    from generator.errors import InputError

    try:  # building the parser imports the commands, and with them the model sizes
        args = build_parser().parse_args(argv)
        func: Callable[[argparse.Namespace], int] = args.func
        return int(func(args) or 0)
    except BrokenPipeError:  # `itm numbers | head`: the reader has gone; say nothing more
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except InputError as error:  # a clear one-line error for known failures
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
