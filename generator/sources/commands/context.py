"""What every `itm` command of the lock starts from: its options (--lock, --cache-dir, --git),
the lock and site they name, that site's settings, and a resolver for them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Unpack

from generator.errors import InputError
from generator.settings import Settings
from generator.sources.clones import GIT_DIRS_SETTING, check_clones
from generator.sources.forges import valid_name
from generator.sources.locate import SiteLock, find_lock
from generator.sources.lock import load_lock
from generator.sources.lockschema import Lock, Pin
from generator.sources.resolve import Resolver, SourceOptions


def add_lock_options(parser: argparse.ArgumentParser) -> None:
    """--lock, --cache-dir and --git, which every command of the lock takes."""
    parser.add_argument(
        "--lock",
        type=Path,
        default=None,
        help="the lock file (default: the lock of the site whose mkdocs.yml is in this folder or"
        " above)",
    )
    parser.add_argument(
        "--cache-dir", type=Path, default=None, help="blob cache (default $ITM_CACHE_DIR or .cache)"
    )
    parser.add_argument(
        "--git",
        action="append",
        default=[],
        metavar="[REPO=]DIR",
        help="a local clone to read files from at the commit (repeatable)",
    )


def git_dirs(values: list[str], default_repo: str | None, lock: Lock) -> dict[str, Path]:
    """--git [REPO=]DIR values by repo: a bare DIR is `default_repo`'s, or the lock's only repo's."""
    dirs: dict[str, Path] = {}
    for value in values:
        name, sep, directory = value.partition("=")
        if sep and valid_name(name):
            dirs[name] = Path(directory)
        elif default_repo is not None:
            dirs[default_repo] = Path(value)
        elif len(lock.repos) == 1:
            dirs[next(iter(lock.repos))] = Path(value)
        else:
            raise InputError(
                f"--git {value}: which repo is this a clone of?",
                file=lock.display,
                entry="--git",
                fix="write --git OWNER/REPO=DIR",
            )
    return dirs


def say(message: str) -> None:
    """A command's progress, on stderr (its report is on stdout)."""
    print(message, file=sys.stderr)


def site_of(args: argparse.Namespace) -> SiteLock:
    """The lock the command works on, and the site whose settings go with it."""
    return find_lock(args.lock, Path.cwd())


def lock_of(site: SiteLock) -> Lock:
    """The site's lock, loaded and checked (messages name it from the site's folder)."""
    return load_lock(site.path, root=site.root if site.in_site else None)


def chosen_pins(lock: Lock, ids: list[str] | None, *, nothing: str, fix: str) -> list[Pin]:
    """The pins `ids` names (every pin of the lock when none), or an InputError when the lock
    lists none: a command with no excerpt to work on says so instead of doing nothing."""
    pins = [lock.pin(i) for i in ids] if ids else list(lock.pins)
    if not pins:
        raise InputError(
            f"the lock lists no excerpts: there is nothing to {nothing}",
            file=lock.display,
            fix=fix,
        )
    return pins


def settings_of(site: SiteLock) -> Settings:
    """The site's settings: its plugin's options, then ITM_* variables (generator.settings)."""
    return Settings.load(site.root, site.options)


def resolver_for(
    args: argparse.Namespace,
    site: SiteLock,
    lock: Lock,
    default_repo: str | None,
    *,
    commits: dict[str, str] | None = None,
    **options: Unpack[SourceOptions],
) -> Resolver:
    """A resolver for the site's settings, the flags winning over them. Every clone given is
    checked first (a folder in a git repository holding the commit needed: the lock's, or the
    one in `commits`), so a command never answers from its cache for a clone it was told to
    read."""
    settings = settings_of(site)
    given = git_dirs(args.git, default_repo, lock)
    configured = {k: v for k, v in settings.git_dirs.items() if k not in given}
    check_clones(lock, configured, option=GIT_DIRS_SETTING, commits=commits)
    check_clones(lock, given, option="--git", commits=commits)
    return Resolver.for_settings(
        lock,
        settings,
        cache_dir=args.cache_dir or settings.cache_dir,
        offline=not getattr(args, "online", False) and (args.offline or settings.offline),
        git_dirs={**configured, **given},
        log=say,
        **options,
    )
