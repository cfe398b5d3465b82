"""Where the pinned-excerpts plugin's excerpts come from, and how one becomes a card.

`load_excerpts` reads a lock and returns its excerpts resolved and verified by
generator.sources.resolve.resolve_excerpts (the function the `itm` commands call too: no MkDocs event
is needed), with the renderer of their cards (generator/render/card.py, through the template
pinned_excerpt.html that a site overrides in <theme custom_dir>/pinned_excerpts/).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Render = Callable[[Any, str], Any]  # (verified excerpt, fence prefix) -> render.card.CardParts

log = logging.getLogger("mkdocs.plugins.pinned_excerpts")

DEFAULT_LOCK = "excerpts.lock.toml"  # beside mkdocs.yml
OVERRIDES = "pinned_excerpts"  # a site's templates: <theme custom_dir>/pinned_excerpts/<name>


def card_renderer(custom_dir: Path | None) -> Render:
    """(excerpt, fence prefix) -> its card (render.card.CardParts), through its template."""
    from generator import blocks
    from generator.render.card import card_parts, excerpt_card

    def render(excerpt: Any, prefix: str) -> Any:
        html = blocks.render(excerpt_card(excerpt), custom_dir, None, OVERRIDES)
        return card_parts(excerpt, html, prefix=prefix)

    return render


def load_excerpts(
    lock: str | Path, *, root: Path | None = None, options: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], Render, str]:
    """The lock's verified excerpts, their card renderer and the lock's name for messages.
    `root` is the site's folder (default: the lock's); `options` the plugin's. InputError when
    the lock cannot be read or an excerpt does not verify."""
    from generator.settings import Settings, without_nul
    from generator.sources.lock import load_lock
    from generator.sources.resolve import resolve_excerpts

    without_nul(str(lock), "lock")
    path = Path(lock).expanduser().absolute()
    root = root or path.parent
    settings = Settings.load(root, options or {})
    loaded = load_lock(path, root=root)
    excerpts = resolve_excerpts(loaded, settings, log=log.info)
    return excerpts, card_renderer(settings.custom_dir), loaded.display
