"""DeepSeek-V3's component registry, in forward order. Its embedding, norms, rotary positions
and unembedding are the Llama family's modules, explained on the Llama pages; its latent
attention, its dense MLP (first layers), its experts, its layer and the whole model have pages of
their own, with DeepSeek-V3's numbers and code."""

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
from generator.models.mixtral.components import _from_llama

ATTENTION = Component(
    key="attention",
    title="Multi-head latent attention (MLA)",
    short="Latent attention",
    kicker="Decoder layer",
    role="Keys and values come from one small latent vector per position, read out for every "
    "head; only a narrow part of each head carries position, through a rotated key shared by "
    "all heads. So a cache can hold the latent instead of every head's keys and values.",
    page="deepseek-v3/attention.md",
    learned=True,
    formula=(
        r"\begin{aligned} c_t &= \operatorname{RMS}(W_{\mathrm{DKV}}\,{\htmlData{light=ln1}{z_t}})"
        r" \\ k^{R}_t &= \operatorname{RoPE}(W_{\mathrm{KR}} z_t) \\ "
        r"[k^{C}_{t,h}; v_{t,h}] &= W_{\mathrm{UKV},h}\,c_t \\ "
        r"{\htmlData{light=attention}{o_{t,h}}} &= \sum_s \operatorname{softmax}_s\Big("
        r"\tfrac{q^{C\top}_{t,h} k^{C}_{s,h} + q^{R\top}_{t,h} k^{R}_s}"
        r"{\sqrt{d_{\mathrm{nope}} + d_{\mathrm{rope}}}}\Big) v_{s,h} \end{aligned}"
    ),
    inputs=(Tensor("Z_1", RESIDUAL),),
    outputs=(Tensor(r"\Delta_{\mathrm{attn}}", RESIDUAL),),
    code=(
        "deepseek-v3.attention-init",
        "deepseek-v3.attention-forward",
        "deepseek-v3.rope-interleave",
    ),
    sources=(
        Source(
            "deepseek-v3.attention-init",
            "Queries pass through a latent of q_lora_rank (q_a_proj, an RMSNorm, q_b_proj); "
            "keys and values through one of kv_lora_rank plus the qk_rope_head_dim-wide rotated "
            "key (kv_a_proj_with_mqa), read out per head by kv_b_proj.",
        ),
        Source(
            "deepseek-v3.attention-forward",
            "Only the rope part of each query and key is rotated; the rotated key is one for all "
            "heads and is repeated to each before the scores.",
        ),
        Source(
            "deepseek-v3.rope-interleave",
            "DeepSeek's checkpoints pair neighbouring dimensions (2i, 2i + 1) for the rotation, "
            "not i and i + d/2 as Llama does.",
        ),
    ),
)

DENSE = Component(
    key="mlp",
    title="Dense SwiGLU MLP (the first layers)",
    short="SwiGLU MLP",
    kicker="Decoder layer",
    role="The first first_k_dense_replace layers keep one SwiGLU MLP of intermediate_size, as "
    "Llama's; the layers after them have experts instead.",
    page="deepseek-v3/mlp.md",
    learned=True,
)

EXPERTS = Component(
    key="experts",
    title="Mixture of experts (256 routed, 1 shared, group-limited routing)",
    short="256 + 1 experts",
    module="mlp",
    kicker="Decoder layer",
    role="Every token runs the shared expert and eight of 256 routed ones: a sigmoid score per "
    "expert, biased for the choice only, the four best of eight groups searched, the chosen "
    "scores normalized and scaled by routed_scaling_factor.",
    page="deepseek-v3/experts.md",
    learned=True,
    formula=(
        r"\begin{aligned} {\htmlData{light=experts}{\Delta_{\mathrm{moe}}}} &= "
        r"\operatorname{FFN}_{\mathrm{shared}}({\htmlData{light=ln2}{z}}) \\ &+ \gamma "
        r"\sum_{e \in \mathcal{K}} \frac{\sigma(z^{\top} w_e)}{\sum_{e' \in \mathcal{K}} "
        r"\sigma(z^{\top} w_{e'})}\operatorname{FFN}_e(z) \end{aligned}"
    ),
    inputs=(Tensor("Z_2", RESIDUAL),),
    outputs=(Tensor(r"\Delta_{\mathrm{moe}}", RESIDUAL),),
    code=("deepseek-v3.moe", "deepseek-v3.router", "deepseek-v3.decoder-layer-init"),
    sources=(
        Source(
            "deepseek-v3.decoder-layer-init",
            "A layer whose index is first_k_dense_replace or more gets the mixture of experts; "
            "the ones before it a dense MLP.",
        ),
        Source(
            "deepseek-v3.router",
            "Sigmoid scores plus e_score_correction_bias choose: each group is scored by its two "
            "best, topk_group groups kept, the top num_experts_per_tok experts of those chosen; "
            "their weights are the unbiased scores, normalized and scaled.",
        ),
        Source(
            "deepseek-v3.moe",
            "The routed experts' weighted sum plus the shared experts, an MLP of "
            "moe_intermediate_size × n_shared_experts that every token runs.",
        ),
    ),
)

COMPONENTS: tuple[Component, ...] = (
    _from_llama("wte"),
    _from_llama("ln1"),
    dataclasses.replace(
        _from_llama("rope"),
        role="Rotates the qk_rope_head_dim part of each query and the shared key by an angle "
        "that grows with the position, pairing neighbouring dimensions.",
    ),
    ATTENTION,
    _from_llama("ln2"),
    DENSE,
    EXPERTS,
    decoder_layer(
        "deepseek-v3/index.md",
        "Decoder layer: latent attention, a dense MLP or experts",
        "Llama's pre-norm layer with latent attention; the first layers keep a dense MLP, the "
        "rest have experts.",
    ),
    _from_llama("lnf"),
    _from_llama("unembed"),
    whole_model(
        "deepseek-v3/model.md",
        "Token ids in, a probability for every next token out: latent attention in every layer, and past the first few, experts of which each token runs a few and a shared one.",
        code=("deepseek-v3.config-defaults",),
        sources=(
            Source(
                "deepseek-v3.config-defaults",
                "DeepseekV3Config()'s defaults: the released model's widths, depth, heads, "
                "latent ranks and experts; its context and RoPE are not the release's.",
            ),
        ),
    ),
)
