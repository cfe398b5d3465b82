"""The generator's modules stand on layers, every import points down, and none forms a cycle.

The layers, highest first (ARCHITECTURE.md, "Layers"): adapters (the MkDocs plugins, the `itm`
commands, `itm expand`, publishing) -> the build core -> page areas -> rendering -> models and
sources, side by side -> base. A module imports modules of lower layers, or of its own; models
and sources know nothing of each other. An import inside a function (or under TYPE_CHECKING)
still ties two modules together, so this reads every import statement, wherever it is.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.site_helpers import ROOT

PACKAGE = ROOT / "generator"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules: set[str]) -> set[str]:
    """The generator modules `path` imports (`from generator.x import y` counts y if a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in modules)
    return found


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    modules = set(paths)
    # A package's __init__ is an edge only where it is named (`from generator.forward import
    # current`): Python runs it before its submodules, but a submodule does not depend on it.
    return {name: imports(path, modules) - {name} for name, path in paths.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return stack[stack.index(target) :] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


# How high each layer stands: an arrow may point to a lower number, or within its own layer.
RANK = {
    "adapters": 6,
    "build core": 5,
    "page areas": 4,
    "rendering": 3,
    "models": 2,  # specs, the engine, the accounting: they know no pin
    "sources": 2,  # pins, their resolution and verification: they know no model
    "base": 1,
}
# Module-name prefix -> its layer; the longest prefix that names a module decides.
LAYER_OF = {
    # adapters: what a program calls the generator through
    "generator.plugin": "adapters",
    "generator.pinned_excerpts": "adapters",
    "generator.cli": "adapters",
    "generator.accounting_cli": "adapters",
    "generator.sources.commands": "adapters",
    "generator.sources.mirrors": "adapters",
    "generator.sources.mirror_window": "adapters",
    "generator.forward.commands": "adapters",
    "generator.expand": "adapters",
    "generator.expand_config": "adapters",
    "generator.expand_out": "adapters",
    "generator.publish": "adapters",
    # the build core: one build, from settings to filled pages, without MkDocs
    "generator.build": "build core",
    "generator.memo": "build core",
    # page areas: macros, blocks and generated files of the pages
    "generator.pages": "page areas",
    "generator.features": "page areas",
    "generator.walkthrough": "page areas",
    "generator.forward": "page areas",
    "generator.generation": "page areas",
    # rendering: blocks, templates, Markdown and LaTeX, charts and their drawing
    "generator.render": "rendering",
    "generator.blocks": "rendering",
    "generator.charts": "rendering",
    "generator.chart_style": "rendering",
    "generator.drawing": "rendering",
    # models: specs, families, the engine, the accounting and its data
    "generator.models": "models",
    "generator.config": "models",
    "generator.engine": "models",
    "generator.accounting": "models",
    "generator.decode_costs": "models",
    "generator.scaling": "models",
    "generator.glossary": "models",
    "generator.differences": "models",
    # sources: pinned inputs (excerpts, checkpoints, web assets), resolved and verified
    "generator.sources": "sources",
    "generator.inputs": "sources",
    "generator.assets": "sources",
    "generator.checkpoints": "sources",
    "generator.checkpoint_files": "sources",
    # base: settings, the store, errors, bounded reads, logging
    "generator": "base",  # the package itself (per_build, reset), not a prefix of the others
    "generator.settings": "base",
    "generator.store": "base",
    "generator.digests": "base",
    "generator.errors": "base",
    "generator.checked_io": "base",
    "generator.data_file": "base",
    "generator.log": "base",
    "generator.last_resort": "base",
}
# Arrows that run up on purpose (at most 2): (importer, imported) -> why.
ALLOWED_UP: dict[tuple[str, str], str] = {}


def layer_of(module: str) -> str | None:
    """The layer of `module`: its longest prefix in LAYER_OF (the package alone by its name)."""
    prefixes = [
        prefix
        for prefix in LAYER_OF
        if module == prefix or (prefix != "generator" and module.startswith(prefix + "."))
    ]
    return LAYER_OF[max(prefixes, key=len)] if prefixes else None


def arrows_up(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Every (importer, imported) whose target stands in another layer at the same height or
    higher."""
    return {
        (source, target)
        for source, targets in graph.items()
        for target in targets
        if layer_of(source) != layer_of(target)
        and RANK[str(layer_of(target))] >= RANK[str(layer_of(source))]
    }


def test_every_module_stands_on_a_layer() -> None:
    assert [name for name in sorted(import_graph()) if layer_of(name) is None] == []
    assert set(LAYER_OF.values()) <= set(RANK)


def test_every_import_points_down_or_within_its_layer() -> None:
    found = arrows_up(import_graph())
    unexplained = sorted(found - set(ALLOWED_UP))
    assert unexplained == [], "imports that run up a layer:\n" + "\n".join(
        f"  {source} ({layer_of(source)}) -> {target} ({layer_of(target)})"
        for source, target in unexplained
    )
    gone = sorted(set(ALLOWED_UP) - found)
    assert gone == [], f"listed as running up, but no longer do: {gone}"


def test_at_most_two_arrows_run_up_each_with_its_reason() -> None:
    assert len(ALLOWED_UP) <= 2
    assert all(why.strip() for why in ALLOWED_UP.values())


def test_the_layer_check_finds_an_arrow_up() -> None:
    graph = {
        "generator.accounting": {"generator.errors"},  # down
        "generator.engine.model": {"generator.models.ops"},  # within a layer
        "generator.sources.lock": {"generator.models.config"},  # across, models and sources
        "generator.store": {"generator.plugin"},  # up
    }
    assert arrows_up(graph) == {
        ("generator.sources.lock", "generator.models.config"),
        ("generator.store", "generator.plugin"),
    }
    assert layer_of("generator") == "base" and layer_of("generator.forward.commands") == "adapters"


def test_the_generator_import_graph_has_no_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
