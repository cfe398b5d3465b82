"""A component of a model family: one entry of its registry, in forward order.

Pages, the architecture diagram and the accounting all key on `Component.key` (which is also the
`\\htmlData{light=...}` key that ties formula symbols to diagram boxes). Families reuse a key
where the role is the same (attention, mlp, block, ...). Numbers never live here: shapes name
config fields (`{d_model}`), the accounting computes counts.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    """A "Direct evidence" card: a claim, backed by one pinned excerpt."""

    excerpt: str  # excerpt id in sources/lock.toml
    claim: str


@dataclass(frozen=True)
class Tensor:
    """An input or output: its symbol (TeX) and its dims (templates over config fields)."""

    symbol: str  # "Z_1"
    dims: tuple[str, ...]  # ("B batch", "T positions", "{d_model} d")


@dataclass(frozen=True)
class Component:
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


RESIDUAL = ("B batch", "T positions", "{d_model} d")
TOKEN_IDS = ("B batch", "T positions")
LOGITS = ("B batch", "T positions", "{vocab_size} V")


def pages_in_order(registry: tuple[Component, ...]) -> list[Component]:
    """One component per page, in forward order (components sharing a page: the first)."""
    seen: set[str] = set()
    ordered = []
    for component in registry:
        if component.page not in seen:
            seen.add(component.page)
            ordered.append(component)
    return ordered


# The whole model of a decoder family with an untied lm_head and rotary positions: the formula its
# page heads with (the frontier families share it).
MODEL_FORMULA = (
    r"{\htmlData{light=model}{P}} = \operatorname{softmax}\big("
    r"{\htmlData{light=lnf}{\operatorname{RMS}_f}}"
    r"({\htmlData{light=block}{\operatorname{Layer}}}^{L}({\htmlData{light=wte}{E[x]}}))"
    r"\,{\htmlData{light=unembed}{W_{\mathrm{lm}}^{\top}}}\big)"
)


def whole_model(
    page: str, role: str, code: tuple[str, ...], sources: tuple[Source, ...]
) -> Component:
    """A family's "model" component: token ids in, next-token probabilities out."""
    return Component(
        key="model",
        title="The whole model",
        short="Whole model",
        kicker="Model",
        role=role,
        page=page,
        learned=True,
        formula=MODEL_FORMULA,
        inputs=(Tensor("x", TOKEN_IDS),),
        outputs=(Tensor("P", LOGITS),),
        code=code,
        sources=sources,
    )


def decoder_layer(page: str, title: str, role: str, formula: str = "") -> Component:
    """A family's "block" component drawn as the map's layer frame, whose page is the family's:
    that page shows the layers' sums, so it makes no table of one layer."""
    return Component(
        key="block",
        title=title,
        short="Layer",
        kicker="Decoder layer",
        role=role,
        page=page,
        learned=True,
        tables=False,
        formula=formula,
        inputs=(Tensor("H", RESIDUAL),),
        outputs=(Tensor(r"H_{\mathrm{out}}", RESIDUAL),),
    )
