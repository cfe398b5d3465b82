"""The mkdocs.yml `itm expand` reads, loaded by MkDocs itself, with the errors MkDocs would end in
a traceback (an INHERIT loop, YAML nested past the recursion limit, a file that is not a regular
one) as one-line InputErrors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.errors import InputError

MAX_CONFIG_BYTES = 1 << 20  # a mkdocs.yml or a file it INHERITs: 3 KB today


def load_site_config(config_file: Path) -> Any:
    """The MkDocs configuration, or an InputError saying why MkDocs cannot load it."""
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, ConfigurationError

    looping = _inherit_loop(config_file)
    if looping is not None:  # MkDocs would follow it until Python's recursion limit
        raise InputError(
            f"its INHERIT chain comes back to {looping}, so it never ends",
            file=str(config_file),
            entry="INHERIT",
            fix="make INHERIT name a parent file that does not itself inherit from this one",
        )
    try:
        return load_config(str(config_file))
    except (ConfigurationError, Abort) as error:  # Abort: MkDocs has logged each error above
        raise InputError(
            f"MkDocs cannot load it: {error}",
            file=str(config_file),
            fix="correct the configuration (`mkdocs build` shows the same error)",
        ) from None
    except RecursionError:  # YAML nested thousands deep
        raise InputError(
            "MkDocs cannot load it: it nests deeper than Python's recursion limit",
            file=str(config_file),
            fix="flatten the nesting of its YAML",
        ) from None


def _inherit_loop(config_file: Path) -> Path | None:
    """The file at which `config_file`'s INHERIT chain comes back on itself, or None (no loop, or
    a file MkDocs reports itself: missing, not YAML). Each file is read bounded: an INHERIT
    naming /dev/zero was read until memory ran out, a FIFO waited on for ever."""
    from mkdocs.utils.yaml import yaml_load

    seen: set[Path] = set()
    path, holder = config_file.resolve(), None
    while path not in seen:
        seen.add(path)
        if not path.exists():  # MkDocs says which inherited file is missing
            return None
        try:  # a str: yaml_load does not follow its INHERIT
            data = yaml_load(_config_text(path, holder))
        except InputError:
            raise
        except Exception:  # noqa: BLE001 - MkDocs reads it next and says what is wrong
            return None
        parent = data.get("INHERIT") if isinstance(data, dict) else None
        if not isinstance(parent, str):
            return None
        path, holder = (path.parent / parent).resolve(), path
    return path


def _config_text(path: Path, holder: Path | None) -> str:
    """The text of a configuration file (`holder`'s INHERIT, if given), read bounded."""
    from generator.checked_io import read_text_input

    try:
        return read_text_input(path, max_bytes=MAX_CONFIG_BYTES, fix="")
    except InputError as error:
        if holder is None:
            raise InputError(
                error.problem, file=str(path), fix="name a site's mkdocs.yml"
            ) from None
        raise InputError(
            f"its INHERIT names {path}: {error.problem}",
            file=str(holder),
            entry="INHERIT",
            fix="make INHERIT name the YAML file of a parent configuration",
        ) from None
