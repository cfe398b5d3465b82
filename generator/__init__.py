"""Inside the Model: the generator behind the site (engine, accounting, pinned sources, renderers).

`mkdocs serve` keeps the generator's modules loaded from one rebuild to the next while its code is
unchanged (generator/plugin.py), so what a module remembers of one build's inputs (a forward pass,
a continuation) must be forgotten before the next: such a module registers the function that
forgets it with `per_build`, and the plugin calls `reset()` before each build.
"""

from __future__ import annotations

from collections.abc import Callable

_FORGET: list[Callable[[], None]] = []


def per_build(forget: Callable[[], None]) -> Callable[[], None]:
    """Register `forget` (e.g. a cache's clear) to run before every build; returns it."""
    _FORGET.append(forget)
    return forget


def reset() -> None:
    """Forget everything registered with `per_build`: a new build may have new inputs."""
    for forget in _FORGET:
        forget()
