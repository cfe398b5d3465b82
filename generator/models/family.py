"""What a model family is: its sizes (specs), the words of its rows, its components' prose and
its map. Everything else (tensors, engine, accounting) is shared code reading the spec.

Each family folder (generator/models/<family>/) holds its declarative part in family.toml (read
by generator/models/family_file.py) and its sizes in sizes.py (their rows in sizes.toml, where it
has one); Family.from_folder makes the `Family`, and generator/models/__init__.py registers each.
Importing a family imports no numpy: the shared decoder is imported when a forward pass first runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from generator.errors import InputError
from generator.models.component import Component, Source
from generator.models.config import ModelConfig
from generator.models.counts import Words, param_rows
from generator.models.family_file import FAMILY_FILE, FIX, read_family_file, registry
from generator.models.flop_counts import flop_rows
from generator.models.map import MapLayout
from generator.models.rows import Row
from generator.models.tensors import weight_shapes

if TYPE_CHECKING:
    import numpy as np

Shapes = dict[str, tuple[int, ...]]
# the boxes generator/render/diagram.py draws its lines between (the MLP's: "mlp" or "experts")
MAP_NEEDS = ("wte", "ln1", "attention", "ln2", "lnf", "unembed")
# the components a layer has one instance of, where a family has them
LAYER_PARTS = ("ln1", "rope", "attention", "ln2", "mlp", "experts", "block")


@dataclass(frozen=True)
class Family:
    name: str  # "llama": the `family` of each of its sizes
    label: str  # "Llama": the name a page prints
    sizes: Mapping[str, ModelConfig]  # by name, smallest first: each a spec
    words: Words  # what its accounting rows are called ([words] of its family.toml)
    registry: tuple[Component, ...]  # its components in forward order (pages, accounting)
    map: MapLayout  # its architecture map's boxes and words ([map] of its family.toml)
    # why a component without parameters of its own has none, by key (its page says it)
    no_params: Mapping[str, str] = field(default_factory=dict)
    # checks its sizes against pinned code: (excerpt id -> verified text, lock file) -> None
    check_pinned: Callable[..., None] | None = None
    file: str = ""  # the family.toml it was read from, as errors name it

    def __post_init__(self) -> None:
        for name, cfg in self.sizes.items():
            if (cfg.name, cfg.family) != (name, self.name):
                raise ValueError(f"size {name!r} says it is {cfg.family} size {cfg.name!r}")
        repeated = sorted({key for key in self.components if self.components.count(key) > 1})
        if repeated:
            raise ValueError(f"family {self.name!r}: components {repeated} appear twice")
        boxed = [box.key for box in self.map.boxes]
        unknown = [key for key in boxed if key not in self.components]
        if unknown:
            raise ValueError(f"family {self.name!r}: map boxes {unknown} are not its components")
        missing = [key for key in MAP_NEEDS if key not in boxed]
        if not {"wpe", "rope"} & set(boxed):  # how positions enter the stream
            missing.append("wpe or rope")
        if not {"mlp", "experts"} & set(boxed):
            missing.append("mlp or experts")
        if missing:
            raise ValueError(
                f"family {self.name!r}: its map needs boxes {list(MAP_NEEDS)}, wpe or rope, and "
                f"mlp or experts (the lines are drawn between them); missing {missing}"
            )

    @classmethod
    def from_folder(cls, folder: Path, loaded: Mapping[str, Family]) -> Family:
        """The family of `folder` (a package of generator.models): its family.toml, and its
        sizes.py's SIZES (checked against pinned code by its TABLE, where it has one).
        `loaded`: the families made before it, by name, one of which it may borrow from."""
        path = folder / FAMILY_FILE
        data = read_family_file(path)
        sizes = importlib.import_module(f"{__package__}.{folder.name}.sizes")
        table = getattr(sizes, "TABLE", None)
        try:
            return cls(
                data.name,
                data.label,
                sizes.SIZES,
                data.words,
                registry=registry(data, {n: f.registry for n, f in loaded.items()}, path),
                map=data.map,
                no_params=data.no_params,
                check_pinned=None if table is None else table.check_pinned,
                file=str(path),
            )
        except ValueError as error:  # the cross checks of __post_init__
            raise InputError(str(error), file=str(path), fix=FIX) from None

    @property
    def components(self) -> tuple[str, ...]:
        """Its component keys, in forward order."""
        return tuple(c.key for c in self.registry)

    @property
    def claims(self) -> dict[str, Source]:
        """Each Source of its registry as a claim bound to its excerpt's text, by claim id
        ("gpt2.block/gpt2.block": the family, the component, the excerpt): the lock's [[claims]]
        must approve each against the excerpt as pinned (generator/sources/claims.py)."""
        found: dict[str, Source] = {}
        for component in self.registry:
            for source in component.sources:
                claim_id = f"{self.name}.{component.key}/{source.excerpt}"
                if claim_id in found:
                    raise ValueError(f"{claim_id}: a component cites one excerpt once")
                found[claim_id] = source
        return found

    @property
    def by_key(self) -> dict[str, Component]:
        return {c.key: c for c in self.registry}

    @property
    def per_block(self) -> tuple[str, ...]:
        """The components each block (layer) has one instance of."""
        return tuple(key for key in self.components if key in LAYER_PARTS)

    def weight_shapes(self, cfg: ModelConfig) -> Shapes:
        """Each checkpoint tensor's name and shape."""
        return weight_shapes(cfg, cfg.names)

    def param_rows(
        self, cfg: ModelConfig, component: str, *, tied: bool, layer: int | None = None
    ) -> list[Row]:
        """The learned tensors of one instance of `component` (in layer `layer`), one row each."""
        return param_rows(cfg, cfg.names, self.words, component, tied=tied, layer=layer)

    def flop_rows(
        self, cfg: ModelConfig, component: str, T: int, layer: int | None = None
    ) -> list[Row]:
        """Forward FLOPs per token of one instance of `component` (in layer `layer`; None: the
        layer whose parameters param_rows counts) at T."""
        return flop_rows(cfg, cfg.names, self.words, component, T, layer)

    def forward(
        self,
        weights: Mapping[str, np.ndarray],
        cfg: ModelConfig,
        token_ids: np.ndarray,
        dtype: np.dtype | type,
    ) -> np.ndarray:
        """The logits [T, V] of the shared decoder (imported when first run: it needs numpy)."""
        from generator.models.decoder import forward

        return forward(dict(weights), cfg, token_ids, dtype).logits

    def check_weights(
        self, weights: Mapping[str, np.ndarray], cfg: ModelConfig, *, file: str | None = None
    ) -> None:
        """An InputError unless weights hold exactly cfg's tensors, each with its shape."""
        from generator.models.checkpoint import check_weights

        check_weights(weights, cfg, self.weight_shapes(cfg), file=file)
