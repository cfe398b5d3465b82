"""The component registry: one entry per part of GPT-2, in forward order.

Pages, the architecture diagram and the accounting all key on `Component.key`
(which is also the `\\htmlData{light=...}` key that ties formula symbols to diagram boxes).
Numbers never live here: shapes name config fields (`{d_model}`), the accounting computes counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
    page: str | None = None  # docs path of its page, once it has one
    learned: bool = False  # has trained parameters of its own (else "fixed")
    call_site: str | None = None  # excerpt id of the line in model.py that calls it
    formula: str = ""  # TeX with \htmlData{light=KEY}{...} on symbols that have a box
    inputs: tuple[Tensor, ...] = ()
    outputs: tuple[Tensor, ...] = ()
    code: tuple[str, ...] = ()  # excerpt ids for the Code tabs, in order
    sources: tuple[Source, ...] = ()
    walkthrough: str | None = None  # docs path of the step-by-step walkthrough, if any
    in_block: bool = False  # repeated once per transformer block
    extra: dict[str, str] = field(default_factory=dict)


RESIDUAL = ("B batch", "T positions", "{d_model} d")

COMPONENTS: tuple[Component, ...] = (
    Component(
        key="wte",
        title="Token embedding",
        short="wte",
        kicker="Embeddings",
        role="Looks up a learned vector for each token id.",
        learned=True,
    ),
    Component(
        key="wpe",
        title="Position embedding",
        short="wpe",
        kicker="Embeddings",
        role="Looks up a learned vector for each position, so order is visible to attention.",
        learned=True,
    ),
    Component(
        key="embed",
        title="Embedding sum",
        short="+",
        kicker="Embeddings",
        role="Adds token and position vectors: the residual stream starts here.",
    ),
    Component(
        key="ln1",
        title="LayerNorm before attention (ln_1)",
        short="ln_1",
        kicker="Transformer block",
        role="Normalizes each token's vector before attention reads it.",
        learned=True,
        in_block=True,
    ),
    Component(
        key="attention",
        title="Masked multi-head self-attention",
        short="Attention",
        kicker="Transformer block",
        role=(
            "Each token retrieves a content-dependent mixture of values from its own position "
            "and earlier positions."
        ),
        page="components/attention.md",
        learned=True,
        call_site="gpt2.block-call-attn",
        formula=(
            r"{\htmlData{light=attention}{\Delta_{\mathrm{attn}}}}"
            r"=\operatorname{Attention}({\htmlData{light=ln1}{Z_1}})"
        ),
        inputs=(Tensor("Z_1", RESIDUAL),),
        outputs=(Tensor(r"\Delta_{\mathrm{attn}}", RESIDUAL),),
        code=("gpt2.attn", "hf.gpt2-attention-forward"),
        sources=(
            Source(
                "gpt2.attn",
                "The original fused Q, K, V projection, head split, causal mask, softmax "
                "and output projection, in one function.",
            ),
            Source(
                "hf.gpt2-attention-forward",
                "Transformers keeps the same fused projection and head split, and hands the "
                "score, mask and softmax steps to a pluggable attention backend.",
            ),
        ),
        in_block=True,
    ),
    Component(
        key="ln2",
        title="LayerNorm before the MLP (ln_2)",
        short="ln_2",
        kicker="Transformer block",
        role="Normalizes each token's vector before the MLP reads it.",
        learned=True,
        in_block=True,
    ),
    Component(
        key="mlp",
        title="MLP (c_fc, GELU, c_proj)",
        short="MLP",
        kicker="Transformer block",
        role="Transforms each token on its own: widen, apply GELU, project back.",
        learned=True,
        in_block=True,
    ),
    Component(
        key="block",
        title="Pre-norm transformer block",
        short="Block",
        kicker="Transformer block",
        role="Adds attention's and the MLP's outputs back onto the residual stream.",
        learned=True,
    ),
    Component(
        key="lnf",
        title="Final LayerNorm (ln_f)",
        short="ln_f",
        kicker="Output",
        role="Normalizes the residual stream once more after the last block.",
        learned=True,
    ),
    Component(
        key="unembed",
        title="Unembedding and softmax",
        short="Unembed",
        kicker="Output",
        role="Scores every vocabulary entry against the final vector, reusing wte; softmax makes "
        "the scores probabilities.",
    ),
    Component(
        key="model",
        title="The whole model",
        short="GPT-2",
        kicker="Model",
        role="Token ids in, a probability for every next token out.",
        learned=True,
    ),
)

BY_KEY: dict[str, Component] = {c.key: c for c in COMPONENTS}
