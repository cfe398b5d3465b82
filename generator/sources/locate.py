"""Which lock an `itm` command works on: `--lock PATH`, else the lock of the site it runs in.

The site is the folder of the nearest mkdocs.yml (this folder, or the closest one above), read
the way MkDocs reads it (INHERIT, !ENV, each plugin's defaults). Its plugins say where the lock
is and give the command the build's settings (cache_dir, offline, git_dirs, ...), so `itm
verify` reads and fills the same cache as the build. Each plugin's options are checked by the
class the plugin registers with MkDocs (its entry point): this module imports no plugin.

    pinned-excerpts (plugin)        its `lock` option (default excerpts.lock.toml beside mkdocs.yml)
    pinned_excerpts (extension)     the same option, under markdown_extensions (Zensical's route)
    inside-the-model (alias itm)    sources/lock.toml
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from generator.errors import InputError
from generator.sources.lockschema import display_path

CONFIG_NAMES = ("mkdocs.yml", "mkdocs.yaml")
# How mkdocs.yml (or Zensical's config) names the pinned-excerpts Markdown extension: its entry
# point, its module, its class
EXTENSION_NAMES = (
    "pinned_excerpts",
    "generator.pinned_excerpts.markdown",
    "generator.pinned_excerpts.markdown:PinnedExcerptsExtension",
)
SITE_LOCK = "sources/lock.toml"  # Inside the Model's own (generator/inputs.py: LOCK_FILE)
MAX_CONFIG_BYTES = 1 << 20  # a mkdocs.yml is a page of settings
PLUGIN_ONLY = (
    "mkdocs.yml enables the pinned-excerpts plugin only: engines that ignore MkDocs plugins"
    " (Zensical) would publish the excerpt blocks as text; list `- pinned_excerpts` under"
    " markdown_extensions too (the plugin takes its place under MkDocs)"
)


@dataclass(frozen=True)
class SiteLock:
    """A lock and the site it belongs to."""

    path: Path  # the lock file
    root: Path  # the site's folder: settings' relative paths start here
    options: dict[str, Any] = field(default_factory=dict)  # the site plugin's options
    in_site: bool = True  # False: a --lock of no site (root is its folder; messages name it whole)
    docs: Path | None = None  # the site's docs_dir: the pages `itm bump` keeps in step with it
    note: str = ""  # what the site's configuration means elsewhere, for the commands to print


def find_config(start: Path) -> Path | None:
    """The nearest mkdocs.yml at or above `start`."""
    for folder in (start, *start.parents):
        for name in CONFIG_NAMES:
            if (folder / name).is_file():
                return folder / name
    return None


def site_lock(config_file: Path) -> SiteLock:
    """The lock a site's mkdocs.yml names through its plugins or its Markdown extensions;
    InputError when none does.

    The file is read with MkDocs' own YAML loader (INHERIT, !ENV) and each entry's options are
    checked by its plugin's config class (defaults, types), but the rest of the site is not
    loaded: its theme and other plugins need not be installed (a Zensical site's theme is
    Zensical's own, and `itm verify` still finds its lock)."""
    root = config_file.resolve().parent
    data = _read_config(config_file)
    docs = root / str(data.get("docs_dir") or "docs")  # the pages `itm bump` keeps in step
    plugins = _entries(data.get("plugins"))
    extensions = _entries(data.get("markdown_extensions"))
    found: list[SiteLock] = []
    if "pinned-excerpts" in plugins:
        schema = _config_class("pinned-excerpts", config_file)
        options = _options(schema, plugins["pinned-excerpts"], config_file)
        found.append(SiteLock(lock_path(root, options["lock"]), root, options, docs=docs))
    for name in EXTENSION_NAMES:
        if name in extensions:  # the extension takes the plugin's options
            schema = _config_class("pinned-excerpts", config_file)
            options = _options(schema, extensions[name], config_file, name)
            found.append(SiteLock(lock_path(root, options["lock"]), root, options, docs=docs))
    if len({site.path for site in found}) > 1:
        raise InputError(
            "the pinned-excerpts plugin and its Markdown extension name different locks"
            f" ({', '.join(display_path(site.path, root) for site in found)}): MkDocs would"
            " quote one and Zensical the other",
            file=str(config_file),
            fix="give both the same `lock`, or leave it out of one (the default is the same)",
        )
    if found and not any(name in extensions for name in EXTENSION_NAMES):
        return replace(found[0], note=PLUGIN_ONLY)
    if found:
        return found[0]
    for name in ("inside-the-model", "itm"):
        if name in plugins:
            options = _options(_config_class(name, config_file), plugins[name], config_file)
            return SiteLock(root / SITE_LOCK, root, options, docs=docs)
    raise InputError(
        "the site enables no plugin or Markdown extension that uses a lock of pinned excerpts",
        file=str(config_file),
        fix="add `- pinned_excerpts` under `markdown_extensions:` (or `- pinned-excerpts` under"
        " `plugins:`) in mkdocs.yml, or pass --lock PATH",
    )


def lock_path(root: Path, option: str) -> Path:
    """The `lock` option as a path: relative to the site's folder (mkdocs.yml's)."""
    from generator.settings import without_nul

    without_nul(option, "lock")  # before expanduser: "~a\0" is a ValueError there already
    return root / Path(option).expanduser()


def _config_class(plugin: str, config_file: Path) -> type[Any]:
    """The options class of the installed MkDocs plugin `plugin`, found as MkDocs finds the
    plugin: by the entry point it registers (pyproject.toml). InputError when none does."""
    from mkdocs.plugins import BasePlugin, get_plugins

    entry = get_plugins().get(plugin)
    if entry is None:
        raise InputError(
            f"mkdocs.yml uses the plugin {plugin!r}, which is not installed here",
            file=str(config_file),
            fix="install inside-the-model (pip install inside-the-model) where `itm` runs",
        )
    plugin_class: type[BasePlugin[Any]] = entry.load()
    return plugin_class.config_class


def _read_config(config_file: Path) -> dict[str, Any]:
    """mkdocs.yml as MkDocs reads it (INHERIT followed, !ENV resolved); a regular file of at most
    MAX_CONFIG_BYTES. InputError when it cannot be read."""
    from mkdocs.exceptions import ConfigurationError
    from mkdocs.utils.yaml import yaml_load

    from generator.store import read_regular

    def refuse(problem: object) -> InputError:
        return InputError(
            f"MkDocs cannot load it: {problem}",
            file=str(config_file),
            fix="fix mkdocs.yml (run `mkdocs build` to see its errors), or pass --lock PATH",
        )

    try:
        source = io.BytesIO(read_regular(config_file, max_bytes=MAX_CONFIG_BYTES))
        source.name = str(config_file)  # where INHERIT's relative path starts
        data = yaml_load(source)
    except (ConfigurationError, OSError, UnicodeDecodeError) as error:
        raise refuse(getattr(error, "strerror", None) or error) from None
    except RecursionError:  # an INHERIT chain that comes back, or YAML nested thousands deep
        raise refuse("its INHERIT chain or its nesting never ends") from None
    if not isinstance(data, dict):
        raise refuse("it is not a mapping of settings")
    return data


def _entries(value: object) -> dict[str, Any]:
    """A `plugins:` or `markdown_extensions:` setting (a list of names and one-key mappings, or a
    mapping) as name -> options (None when the entry has none)."""
    if isinstance(value, dict):
        return {str(name): options for name, options in value.items()}
    entries: dict[str, Any] = {}
    for item in value if isinstance(value, list) else []:
        if isinstance(item, str):
            entries[item] = None
        elif isinstance(item, dict) and len(item) == 1:
            name, options = next(iter(item.items()))
            entries[str(name)] = options
    return entries


def _options(schema: type[Any], given: object, config_file: Path, name: str = "") -> dict[str, Any]:
    """One plugin's (or the extension's) options, with defaults, checked by its config class as
    MkDocs checks them; InputError naming the option otherwise."""
    config = schema()
    config.load_dict(given if isinstance(given, dict) else {})
    errors, _warnings = config.validate()
    if errors:
        option, error = errors[0]
        raise InputError(
            f"option {option!r}: {error}",
            file=str(config_file),
            entry=name or "plugins",
            fix="correct the option in mkdocs.yml (`mkdocs build` shows the same error)",
        )
    return dict(config)


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
