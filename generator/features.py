"""Features that plug extra pages into the build (walkthrough, forward pass, ...).

A feature module may define any of:
    files(site: BuildInputs) -> dict[str, bytes]          generated site files (JSON, SVG), by site path
    figures(site: BuildInputs) -> list[generator.drawing.Figure]   matplotlib figures, drawn in workers
    macros(page: PageMacros) -> dict[str, Callable[..., str]]   {{ name(...) }} calls for pages
    PAGE, TITLE, CITES      its docs page, that page's title, and the ids of the pinned excerpts
                            the page quotes (the Sources page lists it under each of them)
A new feature adds its module to FEATURE_MODULES in the same commit.
"""

from __future__ import annotations

import importlib
from types import ModuleType

FEATURE_MODULES = (
    "generator.walkthrough.feature",
    "generator.walkthrough.rotary_feature",
    "generator.forward.feature",
    "generator.generation.feature",
)


def feature_citations() -> list[tuple[str, str, tuple[str, ...]]]:
    """(docs page, title, excerpt ids) of each feature whose page quotes pinned excerpts."""
    return [
        (feature.PAGE, feature.TITLE, tuple(feature.CITES))
        for feature in load_features()
        if hasattr(feature, "CITES")
    ]


def load_features() -> list[ModuleType]:
    """The feature modules, imported (a missing one is an error, not a silent skip)."""
    return [importlib.import_module(name) for name in FEATURE_MODULES]
