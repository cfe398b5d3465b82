"""Command line: `itm <command>`. Each module that owns a command registers it here.

A light install (`pip install inside-the-model`: MkDocs and pymdown-extensions, for the pinned
excerpts) lacks the GPT-2 site's packages (numpy, matplotlib, ...): the commands that need them
are still listed, and asking for one says which extra to install, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from generator.errors import InputError, install_hint, lacking, missing_package

# Modules that add subcommands, and the commands each adds (tests/test_cli.py checks the two
# agree): each exposes `register(subparsers) -> None` and sets `func=` via `set_defaults`.
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "generator.accounting_cli": ("numbers",),
    "generator.sources.commands": ("verify", "pin", "bump", "claim"),
    "generator.sources.mirrors": ("mirror",),
    "generator.forward.commands": ("forward", "train-standin", "check-heads"),
    "generator.expand": ("expand",),
}


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = argparse.ArgumentParser(prog="itm", description="Inside the Model: generator tools.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name, commands in COMMAND_MODULES.items():
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            package = missing_package(error)
            if package is None:
                raise
            for command in commands:
                _needs_extra(subparsers, command, package)
            continue
        module.register(subparsers)
    return parser


def _needs_extra(subparsers: argparse._SubParsersAction, command: str, package: str) -> None:
    """A stand-in for a command whose module cannot be imported here: it says what to install."""
    stand_in = subparsers.add_parser(  # every argument kept, none read: "\0" starts no option
        command, help=f"(needs: {install_hint(package)})", prefix_chars="\0", add_help=False
    )
    stand_in.add_argument("args", nargs="*")

    def refuse(args: argparse.Namespace) -> int:
        raise lacking(package, f"itm {command}")

    stand_in.set_defaults(func=refuse)


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit code. A bug is one line asking for a report (generator.
    last_resort), Ctrl-C exits 130."""
    import shlex

    from generator.last_resort import exit_code

    argv = sys.argv[1:] if argv is None else argv
    command = shlex.join(["itm", *argv])
    return exit_code(f"`{command}`", lambda: _run(argv))


def _run(argv: list[str]) -> int:

    args = None
    try:  # building the parser imports the commands, and with them the model sizes
        args = build_parser().parse_args(argv)
        func: Callable[[argparse.Namespace], int] = args.func
        return int(func(args) or 0)
    except BrokenPipeError:  # `itm numbers | head`: the reader has gone; say nothing more
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as error:  # a clear one-line error for known failures
        package = missing_package(error)
        if package is not None:  # a package the command imports as it runs
            error = lacking(package, f"itm {getattr(args, 'command', None) or 'COMMAND'}")
        if isinstance(error, InputError):
            print(f"error: {error}", file=sys.stderr)
            return 2
        raise  # a bug: generator.last_resort makes it one line


if __name__ == "__main__":
    raise SystemExit(main())
