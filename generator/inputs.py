"""Everything a build needs, loaded once: pinned excerpts, browser assets, generated files.

Data flows one way: pins and configs -> engine, accounting, resolver -> renderers -> pages.
This module knows nothing about MkDocs; the plugin in generator/plugin.py adapts it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.settings import Settings

LOCK_FILE = "sources/lock.toml"


@dataclass
class BuildInputs:
    settings: Settings
    excerpts: dict  # excerpt id -> generator.sources.Excerpt
    generated: dict[str, bytes] = field(default_factory=dict)  # site path -> bytes
    katex_js: bytes = b""  # the pinned KaTeX bundle: run at build time, not shipped

    @property
    def root(self) -> Path:
        return self.settings.root

    @property
    def cache_dir(self) -> Path:
        return self.settings.cache_dir

    @classmethod
    def load(cls, settings: Settings) -> BuildInputs:
        from generator.assets import katex_files, load_asset_pins
        from generator.log import progress
        from generator.sources import load_lock
        from generator.sources.fetch import NetSettings
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
        from generator.models import FAMILIES

        texts = {excerpt_id: excerpt.text for excerpt_id, excerpt in excerpts.items()}
        for family in FAMILIES.values():  # sizes read from pinned code must match it
            if family.check_pinned is not None:
                family.check_pinned(texts, file=LOCK_FILE)
        check_registry_claims(excerpts)
        katex_js, generated = katex()
        return cls(settings=settings, excerpts=excerpts, generated=generated, katex_js=katex_js)

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


def check_registry_claims(excerpts: dict) -> None:
    """Each Source of every family's registry is a claim about its excerpt: InputError naming
    the claim and `itm claim approve` unless the lock approved it against the text as pinned."""
    from generator.errors import InputError
    from generator.models import FAMILIES
    from generator.sources.claims import claim_problem

    for family in FAMILIES.values():
        for claim_id, source in family.claims.items():
            problem = claim_problem(claim_id, source.excerpt, excerpts)
            if problem is not None:
                raise InputError(
                    f"{problem[0]}: {source.claim!r}",
                    file=f"generator/models/{family.name}/components.py",
                    entry=claim_id,
                    fix=problem[1],
                )


def in_background(work: Callable[[], Any]) -> Callable[[], Any]:
    """Start work() on a thread now; the function returned waits for it, then returns what it
    returned or raises what it raised. A daemon thread: an interrupted build does not wait for
    it (its downloads have their deadlines anyway)."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:  # noqa: BLE001  (handed to the caller, raised there)
            outcome["error"] = error

    thread = threading.Thread(target=run, name="inputs", daemon=True)
    thread.start()

    def result() -> Any:
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    return result


def pinned_archives(settings: Settings) -> set[str]:
    """The sha256 of every archive the pins name (registry mirrors, web assets): cache blobs
    that are inputs of an offline build, never pruned."""
    from generator.assets import load_asset_pins
    from generator.sources import load_lock

    lock = load_lock(settings.root / LOCK_FILE)
    return {m.sha256 for m in lock.mirrors} | {
        pin.sha256 for pin in load_asset_pins(settings.root).values()
    }
