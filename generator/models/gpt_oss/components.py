"""gpt-oss's component registry, in forward order. Its embedding, norms and unembedding are the
Llama family's modules, explained on the Llama pages; its attention (sinks, alternating windows,
YaRN-scaled rotations, biases), its experts, its layer and the whole model have pages of their
own, with gpt-oss's numbers and code."""

from __future__ import annotations

from generator.models.component import (
    RESIDUAL,
    Component,
    Source,
    Tensor,
    decoder_layer,
    whole_model,
)
from generator.models.mixtral.components import _from_llama

HEADS = ("B batch", "{n_head} heads", "T positions", "{d_head} d_head")

ATTENTION = Component(
    key="attention",
    title="Attention with sinks, alternating windows",
    short="Attention",
    kicker="Decoder layer",
    role="Grouped-query attention with biases, in which every head has a learned sink: a logit "
    "that joins each row's softmax and takes its share of the weight without a value. Even "
    "layers see only the last sliding_window positions, odd layers all of them.",
    page="gpt-oss/attention.md",
    learned=True,
    formula=(
        r"\begin{aligned} {\htmlData{light=attention}{a_{ts}}} &= \frac{e^{x_{ts}}}{e^{\,s_h} + "
        r"\sum_{s' \in W(t)} e^{x_{ts'}}} \\ x_{ts} &= \tilde q_t^{\top} \tilde k_s / "
        r"\sqrt{d_{\mathrm{head}}} \\ W(t) &= \{t - w + 1, \dots, t\}\ \text{or}\ "
        r"\{0, \dots, t\} \end{aligned}"
    ),
    inputs=(Tensor("Z_1", RESIDUAL),),
    outputs=(Tensor(r"\Delta_{\mathrm{attn}}", RESIDUAL),),
    code=("gpt-oss.attention-init", "gpt-oss.eager-attention", "gpt-oss.rotary", "hf.yarn"),
    sources=(
        Source(
            "gpt-oss.attention-init",
            "Every projection has a bias (attention_bias); sinks is one learned value per head; a "
            "layer of type sliding_attention gets the config's sliding_window, a full one None.",
        ),
        Source(
            "gpt-oss.eager-attention",
            "The sinks are appended to each row of scores as one more column, the row is "
            "softmaxed, and the sink's column is dropped before the weights meet the values.",
        ),
        Source(
            "hf.yarn",
            "YaRN stretches the slow rotary frequencies by factor, keeps the fast ones, ramps "
            "between them, and scales cos and sin by an attention factor.",
        ),
    ),
)

EXPERTS = Component(
    key="experts",
    title="Mixture of experts (router and 128 clamped-SwiGLU experts)",
    short="128 experts",
    module="mlp",
    kicker="Decoder layer",
    role="A router with a bias picks each token's four best experts and softmaxes their logits "
    "alone; each runs a SwiGLU whose gate and up are clamped, with biases, and their outputs "
    "are added by those weights.",
    page="gpt-oss/experts.md",
    learned=True,
    formula=(
        r"\begin{aligned} r &= {\htmlData{light=ln2}{Z_2}} W_r^{\top} + b_r \\ "
        r"K &= \operatorname{top4}(r) \\ {\htmlData{light=experts}{\Delta_{\mathrm{moe}}}} &= "
        r"\sum_{e \in K} \operatorname{softmax}_K(r)_e\, \operatorname{FFN}_e(Z_2) \\ "
        r"\operatorname{FFN}_e &= g\,\sigma(\alpha g)\,(u + 1) \end{aligned}"
    ),
    inputs=(Tensor("Z_2", RESIDUAL),),
    outputs=(Tensor(r"\Delta_{\mathrm{moe}}", RESIDUAL),),
    code=("gpt-oss.router", "gpt-oss.experts-init", "gpt-oss.apply-gate", "gpt-oss.experts"),
    sources=(
        Source(
            "gpt-oss.router",
            "The router keeps the top num_experts_per_tok logits and softmaxes those alone "
            "(Mixtral softmaxes all experts first, then renormalizes).",
        ),
        Source(
            "gpt-oss.apply-gate",
            "Gate and up alternate in gate_up_proj's columns; the gate is clamped above at limit, "
            "up on both sides, and the output is (up + 1) · gate · σ(α · gate).",
        ),
        Source(
            "gpt-oss.experts-init",
            "gate_up_proj is stored [in, out] per expert, [experts, hidden_size, 2 · "
            "intermediate_size], with a bias per expert; α = 1.702 and limit = 7.0.",
        ),
    ),
)

COMPONENTS: tuple[Component, ...] = (
    _from_llama("wte"),
    _from_llama("ln1"),
    _from_llama("rope"),
    ATTENTION,
    _from_llama("ln2"),
    EXPERTS,
    decoder_layer(
        "gpt-oss/index.md",
        "Decoder layer: sliding or full, with experts",
        "Llama's pre-norm layer with gpt-oss's attention and experts; layers alternate between a "
        "sliding window and full attention.",
    ),
    _from_llama("lnf"),
    _from_llama("unembed"),
    whole_model(
        "gpt-oss/model.md",
        "Token ids in, a probability for every next token out: half the layers windowed, each running a few of its experts per token.",
        code=("gpt-oss.config-defaults",),
        sources=(
            Source(
                "gpt-oss.config-defaults",
                "GptOssConfig()'s defaults: 36 layers, 128 experts, 4 per token, a window of 128 "
                "on every other layer, YaRN with factor 32 over 4,096 positions; this site reads "
                "its sizes from them.",
            ),
        ),
    ),
)
