"""Everything a build needs, loaded once: pinned excerpts, browser assets, generated files.

Data flows one way: pins and configs -> engine, accounting, resolver -> renderers -> pages.
This module knows nothing about MkDocs (the plugin in generator/plugin.py adapts it) nor about
the models: what the excerpts are checked against beyond the lock is the caller's `check`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from generator.settings import Settings

if TYPE_CHECKING:
    from generator.sources.excerpt import Excerpt

LOCK_FILE = "sources/lock.toml"
T = TypeVar("T")


@dataclass
class BuildInputs:
    settings: Settings
    excerpts: dict[str, Excerpt]  # by excerpt id
    generated: dict[str, bytes] = field(default_factory=dict)  # site path -> bytes
    katex_js: bytes = b""  # the pinned KaTeX bundle: run at build time, not shipped

    @property
    def root(self) -> Path:
        return self.settings.root

    @property
    def cache_dir(self) -> Path:
        return self.settings.cache_dir

    @classmethod
    def load(cls, settings: Settings, check: Callable[[dict[str, Excerpt]], None]) -> BuildInputs:
        """The inputs, every excerpt verified against the lock and then passed to `check` (which
        raises InputError), before the web assets' download is waited for."""
        from generator.assets import katex_files, load_asset_pins
        from generator.log import progress
        from generator.sources.fetch import NetSettings
        from generator.sources.lock import load_lock
        from generator.sources.resolve import resolve_excerpts

        lock = load_lock(settings.root / LOCK_FILE, root=settings.root)
        katex = in_background(  # its download overlaps the excerpts' (a cold build waits less)
            lambda: katex_files(  # a bad web-assets pin is reported after a bad lock, as before
                load_asset_pins(settings.root)["katex"],
                settings.cache_dir,
                offline=settings.offline,
                net=NetSettings(deadline=settings.download_deadline),
            )
        )
        excerpts = resolve_excerpts(lock, settings, log=progress)  # fetches, retries, hosts
        check(excerpts)
        katex_js, generated = katex()
        return cls(settings=settings, excerpts=excerpts, generated=generated, katex_js=katex_js)

    def excerpt(self, excerpt_id: str, *, used_by: str) -> Excerpt:
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


def in_background(work: Callable[[], T]) -> Callable[[], T]:
    """Start work() on a thread now; the function returned waits for it, then returns what it
    returned or raises what it raised. A daemon thread: an interrupted build does not wait for
    it (its downloads have their deadlines anyway)."""
    values: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            values.append(work())
        except BaseException as error:  # noqa: BLE001  (handed to the caller, raised there)
            errors.append(error)

    thread = threading.Thread(target=run, name="inputs", daemon=True)
    thread.start()

    def result() -> T:
        thread.join()
        if errors:
            raise errors[0]
        return values[0]

    return result


def pinned_archives(settings: Settings) -> set[str]:
    """The sha256 of every archive the pins name (registry mirrors, web assets): cache blobs
    that are inputs of an offline build, never pruned."""
    from generator.assets import load_asset_pins
    from generator.sources.lock import load_lock

    lock = load_lock(settings.root / LOCK_FILE)
    return {m.sha256 for m in lock.mirrors} | {
        pin.sha256 for pin in load_asset_pins(settings.root).values()
    }
