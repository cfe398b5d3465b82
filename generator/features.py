"""Features that plug extra pages into the build (walkthrough, forward pass, ...).

A feature module may define either or both of:
    files(site: Site) -> dict[str, bytes]          generated site files (JSON, SVG), by site path
    macros(page: PageMacros) -> dict[str, Callable[..., str]]   {{ name(...) }} calls for pages
A module that is not written yet is skipped, so a feature lands in one commit of its own.
"""

from __future__ import annotations

import importlib
from types import ModuleType

FEATURE_MODULES = (
    "generator.walkthrough.feature",
    "generator.forward.feature",
)


def load_features() -> list[ModuleType]:
    modules = []
    for name in FEATURE_MODULES:
        try:
            modules.append(importlib.import_module(name))
        except ModuleNotFoundError as error:
            if error.name is None or not name.startswith(error.name):
                raise
    return modules
