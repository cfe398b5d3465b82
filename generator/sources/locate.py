"""Which lock an `itm` command works on: `--lock PATH`, else the lock of the site it runs in.

The site is the folder of the nearest mkdocs.yml (this folder, or the closest one above), loaded
the way MkDocs loads it (INHERIT, !ENV, each plugin's defaults). Its plugins say where the lock
is and give the command the build's settings (cache_dir, offline, git_dirs, ...), so `itm
verify` reads and fills the same cache as the build:

    pinned-excerpts                 its `lock` option (default excerpts.lock.toml beside mkdocs.yml)
    inside-the-model (alias itm)    sources/lock.toml
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.errors import InputError

CONFIG_NAMES = ("mkdocs.yml", "mkdocs.yaml")
SITE_LOCK = "sources/lock.toml"  # Inside the Model's own (generator/inputs.py: LOCK_FILE)


@dataclass(frozen=True)
class SiteLock:
    """A lock and the site it belongs to."""

    path: Path  # the lock file
    root: Path  # the site's folder: settings' relative paths start here
    options: dict[str, Any] = field(default_factory=dict)  # the site plugin's options
    in_site: bool = True  # False: a --lock of no site (root is its folder; messages name it whole)
    docs: Path | None = (
        None  # the site's docs_dir: the pages `itm bump` keeps in step with the lock
    )


def find_config(start: Path) -> Path | None:
    """The nearest mkdocs.yml at or above `start`."""
    for folder in (start, *start.parents):
        for name in CONFIG_NAMES:
            if (folder / name).is_file():
                return folder / name
    return None


def site_lock(config_file: Path) -> SiteLock:
    """The lock a site's mkdocs.yml names through its plugins; InputError when none does."""
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, ConfigurationError

    from generator.pinned_excerpts.excerpts import lock_path
    from generator.pinned_excerpts.plugin import PinnedExcerptsPlugin
    from generator.plugin import ItmPlugin

    root = config_file.resolve().parent
    quiet = logging.getLogger("mkdocs")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # MkDocs' own notes on the config are the build's business
    try:
        config = load_config(str(config_file))
    except (Abort, ConfigurationError, OSError) as error:
        raise InputError(
            f"MkDocs cannot load it: {error}",
            file=str(config_file),
            fix="fix mkdocs.yml (run `mkdocs build` to see its errors), or pass --lock PATH",
        ) from None
    finally:
        quiet.setLevel(level)
    docs = Path(config.docs_dir)
    for plugin in config.plugins.values():
        if isinstance(plugin, PinnedExcerptsPlugin):
            options = dict(plugin.config)
            return SiteLock(lock_path(root, options["lock"]), root, options, docs=docs)
    for plugin in config.plugins.values():
        if isinstance(plugin, ItmPlugin):
            return SiteLock(root / SITE_LOCK, root, dict(plugin.config), docs=docs)
    raise InputError(
        "the site enables no plugin that uses a lock of pinned excerpts",
        file=str(config_file),
        fix="add `- pinned-excerpts` under `plugins:` in mkdocs.yml, or pass --lock PATH",
    )


def find_lock(given: Path | None, cwd: Path) -> SiteLock:
    """`given` (--lock), with the settings of the site around `cwd` when that site uses the same
    lock; else the lock of that site. InputError when there is neither."""
    config_file = find_config(cwd.absolute())
    if given is None:
        if config_file is None:
            raise InputError(
                f"no --lock given, and no mkdocs.yml in {cwd} or above it",
                entry="--lock",
                fix="run the command in a site's folder (where mkdocs.yml is), or pass --lock PATH",
            )
        return site_lock(config_file)
    path = given.expanduser().absolute()
    if config_file is not None and path.resolve().is_relative_to(config_file.resolve().parent):
        try:
            site = site_lock(config_file)
        except InputError:
            site = None
        if site is not None and site.path.resolve() == path.resolve():
            return site
    if not path.parent.is_dir():  # a typo in --lock must not create folders and a new lock there
        raise InputError(
            f"there is no folder {given.parent}",
            file=str(given),
            entry="--lock",
            fix="check the path; to start a lock in a new folder, create the folder first",
        )
    return SiteLock(path, path.parent, in_site=False)
