"""Mixtral's component registry, in forward order. Its layer is Mistral's but for the MLP: the
norms, the embedding, the rotary positions, the attention and the unembedding are the Llama
family's modules, explained on the Llama pages (linked from Mixtral's map); the experts, the
layer and the whole model have pages of their own, with Mixtral's numbers and code."""

from __future__ import annotations

import dataclasses

from generator.models.component import (
    RESIDUAL,
    Component,
    Source,
    Tensor,
    decoder_layer,
    whole_model,
)
from generator.models.llama.components import COMPONENTS as LLAMA

SHARED = ("wte", "ln1", "rope", "attention", "ln2", "lnf", "unembed")


def _from_llama(key: str) -> Component:
    """Llama's component `key`, whose page explains Mixtral's too (cited there, not again)."""
    found = next(c for c in LLAMA if c.key == key)
    return dataclasses.replace(found, code=(), sources=(), call_site=None, tables=False)


EXPERTS = Component(
    key="experts",
    title="Mixture of experts (router and 8 SwiGLU experts)",
    short="8 experts",
    module="mlp",
    kicker="Decoder layer",
    role="A router scores every expert for each token and keeps the best two; the token runs "
    "only those two SwiGLU MLPs, and their outputs are added, weighted by the router's scores.",
    page="mixtral/experts.md",
    learned=True,
    formula=(
        r"\begin{aligned} p &= \operatorname{softmax}({\htmlData{light=ln2}{Z_2}}\, "
        r"W_{\mathrm{gate}}^{\top}),\quad K = \operatorname{top2}(p) \\ "
        r"{\htmlData{light=experts}{\Delta_{\mathrm{moe}}}} &= \sum_{e \in K}"
        r" \frac{p_e}{\sum_{e' \in K} p_{e'}}\, \operatorname{SwiGLU}_e(Z_2) \end{aligned}"
    ),
    inputs=(Tensor("Z_2", RESIDUAL),),
    outputs=(Tensor(r"\Delta_{\mathrm{moe}}", RESIDUAL),),
    code=("mixtral.moe-block", "mixtral.router", "mixtral.experts-init", "mixtral.experts"),
    sources=(
        Source(
            "mixtral.router",
            "The router is one bias-free linear map to an expert's score; a softmax over all "
            "experts, the top num_experts_per_tok kept, and those renormalized to sum to 1.",
        ),
        Source(
            "mixtral.experts-init",
            "All experts' matrices are stored stacked: gate_up_proj is [experts, 2 · "
            "intermediate_size, hidden_size], down_proj [experts, hidden_size, intermediate_size].",
        ),
        Source(
            "mixtral.experts",
            "Each expert runs only on the tokens routed to it; its output is weighted by the "
            "token's routing weight and added into the token's row.",
        ),
    ),
)

COMPONENTS: tuple[Component, ...] = (
    _from_llama("wte"),
    _from_llama("ln1"),
    _from_llama("rope"),
    _from_llama("attention"),
    _from_llama("ln2"),
    EXPERTS,
    decoder_layer(
        "mixtral/index.md",
        "Decoder layer with experts",
        "Mistral's pre-norm layer, with the mixture of experts where the MLP was.",
        formula=(
            r"\begin{aligned} H' &= H + {\htmlData{light=attention}{\operatorname{Attn}}}"
            r"({\htmlData{light=ln1}{\operatorname{RMS}_1}}(H)) \\ "
            r"{\htmlData{light=block}{H_{\mathrm{out}}}} &= H' + "
            r"{\htmlData{light=experts}{\operatorname{MoE}}}"
            r"({\htmlData{light=ln2}{\operatorname{RMS}_2}}(H')) \end{aligned}"
        ),
    ),
    _from_llama("lnf"),
    _from_llama("unembed"),
    whole_model(
        "mixtral/model.md",
        "Token ids in, a probability for every next token out: every layer reads two of its eight experts per token.",
        code=("mixtral.decoder-layer", "mixtral.config-defaults"),
        sources=(
            Source(
                "mixtral.decoder-layer",
                "The layer adds attention's output to the stream, then the mixture of experts'; "
                "each branch reads an RMSNorm of the stream.",
            ),
            Source(
                "mixtral.config-defaults",
                "MixtralConfig()'s defaults: Mistral's widths, 8 local experts, 2 per token, "
                "rope_theta 1,000,000 and no sliding window; this site reads its sizes from them.",
            ),
        ),
    ),
)
