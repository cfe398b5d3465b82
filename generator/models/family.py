"""What a model family gives the rest of the generator: its sizes, its tensors, its forward pass.

Each family folder (generator/models/<family>/) makes one `Family` in its __init__.py, and
generator/models/__init__.py registers it. Importing a family imports no numpy: its engine is
imported when its forward pass first runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from generator.models.component import Component
from generator.models.config import ModelConfig
from generator.models.map import MapLayout
from generator.models.rows import Row

if TYPE_CHECKING:
    import numpy as np

Shapes = dict[str, tuple[int, ...]]
# the boxes generator/render/diagram.py draws its lines between
MAP_NEEDS = ("wte", "ln1", "attention", "ln2", "mlp", "lnf", "unembed")
# param_rows(cfg, component, tied=) and flop_rows(cfg, component, T): one instance's rows
ParamRows = Callable[..., list[Row]]
FlopRows = Callable[[ModelConfig, str, int], list[Row]]
# forward(weights, cfg, token_ids [T], dtype) -> logits [T, V]
Forward = Callable[
    [Mapping[str, "np.ndarray"], ModelConfig, "np.ndarray", "np.dtype | type"], "np.ndarray"
]


@dataclass(frozen=True)
class Family:
    name: str  # "llama": the `family` of each of its sizes
    label: str  # "Llama": the name a page prints
    sizes: Mapping[str, ModelConfig]  # by name, smallest first
    weight_shapes: Callable[[ModelConfig], Shapes]  # each checkpoint tensor's name and shape
    forward: Forward  # the numpy engine's logits
    registry: tuple[Component, ...]  # its components in forward order (pages, accounting)
    per_block: tuple[str, ...]  # the components each block (layer) has one instance of
    param_rows: ParamRows  # its accounting (generator/models/<family>/accounting.py)
    flop_rows: FlopRows
    map: MapLayout  # its architecture map's boxes and words (generator/models/<family>/map.py)
    # why a component without parameters of its own has none, by key (its page says it)
    no_params: Mapping[str, str] = field(default_factory=dict)
    # checks its sizes against pinned code: (excerpt id -> verified text, lock file) -> None
    check_pinned: Callable[..., None] | None = None

    def __post_init__(self) -> None:
        for name, cfg in self.sizes.items():
            if (cfg.name, cfg.family) != (name, self.name):
                raise ValueError(f"size {name!r} says it is {cfg.family} size {cfg.name!r}")
        boxed = [box.key for box in self.map.boxes]
        unknown = [key for key in boxed if key not in self.components]
        if unknown:
            raise ValueError(f"family {self.name!r}: map boxes {unknown} are not its components")
        missing = [key for key in MAP_NEEDS if key not in boxed]
        if missing or not {"wpe", "rope"} & set(boxed):  # how positions enter the stream
            raise ValueError(
                f"family {self.name!r}: its map needs boxes {list(MAP_NEEDS)} and wpe or rope "
                f"(the lines are drawn between them); missing {missing or ['wpe or rope']}"
            )

    @property
    def components(self) -> tuple[str, ...]:
        """Its component keys, in forward order."""
        return tuple(c.key for c in self.registry)

    @property
    def by_key(self) -> dict[str, Component]:
        return {c.key: c for c in self.registry}

    def check_weights(
        self, weights: Mapping[str, np.ndarray], cfg: ModelConfig, *, file: str | None = None
    ) -> None:
        """An InputError unless weights hold exactly cfg's tensors, each with its shape."""
        from generator.models.checkpoint import check_weights

        check_weights(weights, cfg, self.weight_shapes(cfg), file=file)
