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
    try:  # building the parser imports the commands, and with them the model sizes
        args = build_parser().parse_args(argv)
        func: Callable[[argparse.Namespace], int] = args.func
        return int(func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `itm numbers | head`: the reader has gone; say nothing more
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as error:  # a clear one-line error for known failures
        from generator.errors import InputError

        if isinstance(error, InputError):
            print(f"error: {error}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    raise SystemExit(main())
