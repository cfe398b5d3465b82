"""`itm verify`, `itm pin`, `itm bump`, `itm claim`: check the lock, add an excerpt, move a
repo's pin, approve claims (`itm mirror` is generator/sources/mirrors.py).

Each works on any site's lock: `--lock PATH`, else the lock of the site in the current folder
(generator/sources/locate.py), with that site's settings. Nothing here depends on where the
package is installed.
"""

from __future__ import annotations

import argparse

from generator.sources.commands import bump, claim, pin, verify


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for command in (verify, pin, bump, claim):
        command.register(subparsers)
