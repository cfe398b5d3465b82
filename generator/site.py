"""Everything a build needs, loaded once: pinned excerpts, browser assets, generated files.

Data flows one way: pins and configs -> engine, accounting, resolver -> renderers -> pages.
This module knows nothing about MkDocs; the plugin in generator/plugin.py adapts it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from generator.settings import Settings

LOCK_FILE = "sources/lock.toml"


def cache_dir_for(root: Path) -> Path:
    return Path(os.environ.get("ITM_CACHE_DIR") or root / ".cache")


@dataclass
class Site:
    root: Path
    cache_dir: Path
    excerpts: dict  # excerpt id -> generator.sources.Excerpt
    generated: dict[str, bytes] = field(default_factory=dict)  # site path -> bytes

    @classmethod
    def load(cls, settings: Settings) -> Site:
        from generator.assets import load_pins, package_files
        from generator.sources import load_lock, resolve_all

        root, cache_dir, offline = settings.root, settings.cache_dir, settings.offline
        lock = load_lock(root / LOCK_FILE)
        excerpts = resolve_all(lock, cache_dir=cache_dir, offline=offline)
        generated: dict[str, bytes] = {}
        for relative, data in package_files(
            load_pins(root)["katex"], cache_dir, offline=offline
        ).items():
            generated[f"assets/katex/{relative}"] = data
        return cls(root=root, cache_dir=cache_dir, excerpts=excerpts, generated=generated)

    def excerpt(self, excerpt_id: str, *, used_by: str):
        from generator.errors import InputError

        try:
            return self.excerpts[excerpt_id]
        except KeyError:
            raise InputError(
                f"uses excerpt {excerpt_id!r}, which is not in {LOCK_FILE}",
                file=used_by,
                entry=excerpt_id,
                fix=f"add it to {LOCK_FILE} with `itm pin`, or use one of: "
                + ", ".join(sorted(self.excerpts)),
            ) from None
