"""A component of a model family: one entry of its registry, in forward order.

Pages, the architecture diagram and the accounting all key on `Component.key` (which is also the
`\\htmlData{light=...}` key that ties formula symbols to diagram boxes). Families reuse a key
where the role is the same (attention, mlp, block, ...). Numbers never live here: shapes name
config fields (`{d_model}`), the accounting computes counts. Each family writes its components
in its folder's family.toml (generator/models/family_file.py reads them into these types).
"""

from __future__ import annotations

import msgspec


class Source(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A "Direct evidence" card: a claim, backed by one pinned excerpt."""

    excerpt: str  # excerpt id in sources/lock.toml
    claim: str


class Tensor(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An input or output: its symbol (TeX) and its dims (templates over config fields)."""

    symbol: str  # "Z_1"
    dims: tuple[str, ...]  # ("B batch", "T positions", "{d_model} d")


class Component(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    key: str  # "attention"; also the light key and the accounting key
    title: str  # "Masked multi-head self-attention"
    short: str  # diagram label: "Attention"
    kicker: str  # "Transformer block"
    role: str  # one line: what it does for a token
    page: str  # docs path of its page (ln_1 and ln_2 share one)
    learned: bool = False  # has trained parameters of its own (else "fixed")
    call_site: str | None = None  # excerpt id of the line in model.py that calls it
    formula: str = ""  # TeX with \htmlData{light=KEY}{...} on symbols that have a box
    inputs: tuple[Tensor, ...] = ()
    outputs: tuple[Tensor, ...] = ()
    code: tuple[str, ...] = ()  # excerpt ids for the Code tabs, in order
    sources: tuple[Source, ...] = ()
    walkthrough: str | None = None  # docs path of the step-by-step walkthrough, if any
    module: str = ""  # the checkpoint's name for it where `short` is not: "input_layernorm"
    tables: bool = True  # its LaTeX tables are made (False: its page is another family's, or
    # shows no table of it, as a family page drawn as the map's layer frame)

    @property
    def name(self) -> str:
        """What the accounting lines call it: its module name, else its diagram label."""
        return self.module or self.short

    def borrowed(self, role: str | None = None) -> Component:
        """This component in another family whose page is this one's (cited there, not again):
        no code, no evidence, no call site, no tables of its own; `role` its own words."""
        return msgspec.structs.replace(
            self, code=(), sources=(), call_site=None, tables=False, role=role or self.role
        )


def pages_in_order(registry: tuple[Component, ...]) -> list[Component]:
    """One component per page, in forward order (components sharing a page: the first)."""
    seen: set[str] = set()
    ordered = []
    for component in registry:
        if component.page not in seen:
            seen.add(component.page)
            ordered.append(component)
    return ordered
