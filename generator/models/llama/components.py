"""The Llama family's component registry, in forward order: GPT-2's keys where the role is the
same (so the accounting, the diagram and the comparison line them up), and `rope`, which GPT-2
does not have. The three RMSNorms share a page, as GPT-2's LayerNorms do."""

from __future__ import annotations

from generator.models.component import LOGITS, RESIDUAL, TOKEN_IDS, Component, Source, Tensor

HEADS = ("B batch", "{n_head} heads", "T positions", "{d_head} d_head")
KV_HEADS = ("B batch", "{n_kv_head} kv heads", "T positions", "{d_head} d_head")

RMS_CLAIM = (
    "RMSNorm divides each vector by the root of its mean square (ε = rms_norm_eps inside the "
    "root), in float32, then multiplies by a learned weight: no mean is subtracted and nothing "
    "is added."
)
LAYER_CLAIM = (
    "Pre-norm, as in GPT-2: save the residual, normalize, attend, add; save, normalize, MLP, "
    "add. The rotary cos and sin arrive from the model, computed once for all layers."
)

COMPONENTS: tuple[Component, ...] = (
    Component(
        key="wte",
        title="Token embedding (embed_tokens)",
        short="embed_tokens",
        kicker="Embeddings",
        role="Looks up one learned vector per token id. No position vector is added: positions "
        "enter later, inside attention, as rotations.",
        page="llama/token-embedding.md",
        learned=True,
        call_site="llama.call-embed-tokens",
        formula=r"{\htmlData{light=wte}{H_0}} = E[\,x\,]",
        inputs=(Tensor("x", TOKEN_IDS),),
        outputs=(Tensor("H_0", RESIDUAL),),
        code=("llama.model-init", "llama.model-forward"),
        sources=(
            Source(
                "llama.model-init",
                "embed_tokens is an nn.Embedding of vocab_size rows; the layers, the final "
                "norm and one rotary embedding shared by every layer are built beside it.",
            ),
            Source(
                "llama.model-forward",
                "The embeddings go straight into the first layer: no position table is added.",
            ),
        ),
    ),
    Component(
        key="ln1",
        title="RMSNorm (input_layernorm, post_attention_layernorm, norm)",
        short="RMSNorm",
        module="input_layernorm",
        kicker="Decoder layer",
        role="Scales each token's vector to unit root-mean-square and applies a learned gain, "
        "before attention (input_layernorm), before the MLP (post_attention_layernorm) and "
        "once at the end (norm).",
        page="llama/rmsnorm.md",
        learned=True,
        call_site="llama.call-input-layernorm",
        formula=(
            r"{\htmlData{light=ln1}{Z_1}} = g \odot "
            r"\frac{H}{\sqrt{\tfrac{1}{d}\sum_{i} H_i^2 + \epsilon}}"
        ),
        inputs=(Tensor("H", RESIDUAL),),
        outputs=(Tensor("Z_1", RESIDUAL),),
        code=("llama.rmsnorm",),
        sources=(Source("llama.rmsnorm", RMS_CLAIM),),
    ),
    Component(
        key="rope",
        title="Rotary position embedding (RoPE)",
        short="RoPE",
        kicker="Decoder layer",
        role="Rotates each query and key, pair of dimensions by pair, by an angle that grows with "
        "the position, so a query-key product depends on how far apart the two tokens are.",
        page="llama/rope.md",
        call_site="llama.call-rotary-emb",
        formula=(
            r"\begin{gathered} {\htmlData{light=rope}{\tilde q_t}} = R_{t}\, q_t,\quad "
            r"\tilde k_s = R_{s}\, k_s,\quad \theta_i = b^{-2i/d_{\mathrm{head}}} \\ "
            r"\tilde q_t^{\top} \tilde k_s = q_t^{\top} R_{s-t}\, k_s \end{gathered}"
        ),
        inputs=(Tensor("q", HEADS), Tensor("k", KV_HEADS)),
        outputs=(Tensor(r"\tilde q", HEADS), Tensor(r"\tilde k", KV_HEADS)),
        code=("llama.rope-inv-freq", "llama.rope-forward", "llama.rotate-half", "llama.apply-rope"),
        sources=(
            Source(
                "llama.rope-inv-freq",
                "One inverse frequency per pair of dimensions: b^(−2i/d_head) for i = 0 … "
                "d_head/2 − 1, with the base b = rope_theta.",
            ),
            Source(
                "hf.rope-default-theta",
                "A config that sets no rope_parameters takes this default base b.",
            ),
            Source(
                "llama.rope-forward",
                "The angle of pair i at position t is t · θ_i; cos and sin are computed once "
                "per forward pass, for all layers.",
            ),
            Source(
                "llama.apply-rope",
                "q and k are rotated as x · cos + rotate_half(x) · sin: dimension i is paired "
                "with dimension i + d_head/2, not with its neighbour.",
            ),
        ),
        walkthrough="llama/walkthrough.md",
    ),
    Component(
        key="attention",
        title="Grouped-query self-attention",
        short="Attention",
        kicker="Decoder layer",
        role="Each token retrieves a mixture of values from itself and earlier positions; "
        "n_head query heads share n_kv_head key/value heads (Mistral: only the last "
        "sliding_window positions).",
        page="llama/attention.md",
        learned=True,
        call_site="llama.call-self-attn",
        formula=(
            r"\begin{aligned} S &= \tfrac{{\htmlData{light=rope}{\operatorname{RoPE}}}(Z_1 W_Q)\,"
            r"{\htmlData{light=rope}{\operatorname{RoPE}}}(Z_1 W_K)^{\top}}{\sqrt{d_{\mathrm{head}}}}"
            r" \\ {\htmlData{light=attention}{\Delta_{\mathrm{attn}}}} &= "
            r"\operatorname{softmax}(S + M)\, Z_1 W_V\, W_O \end{aligned}"
        ),
        inputs=(Tensor("Z_1", RESIDUAL),),
        outputs=(Tensor(r"\Delta_{\mathrm{attn}}", RESIDUAL),),
        code=(
            "llama.attention-init",
            "llama.attention-forward",
            "llama.repeat-kv",
            "llama.eager-attention",
        ),
        sources=(
            Source(
                "llama.attention-init",
                "q_proj has num_attention_heads heads, k_proj and v_proj only "
                "num_key_value_heads; no projection has a bias (attention_bias is False).",
            ),
            Source(
                "llama.attention-forward",
                "Queries and keys are rotated after the projections and before the cache: the "
                "cache holds rotated keys.",
            ),
            Source(
                "llama.repeat-kv",
                "Each key/value head is copied to the n_head / n_kv_head query heads it serves "
                "before QKᵀ, so the saving is in weights and cache, not in these matmuls.",
            ),
            Source(
                "mistral.attention-forward",
                "Mistral's attention is Llama's plus the config's sliding_window, handed to the "
                "attention function.",
            ),
        ),
        walkthrough="walkthrough/attention.md",
    ),
    Component(
        key="ln2",
        title="RMSNorm before the MLP (post_attention_layernorm)",
        short="RMSNorm",
        module="post_attention_layernorm",
        kicker="Decoder layer",
        role="Normalizes each token's vector before the MLP reads it.",
        page="llama/rmsnorm.md",
        learned=True,
        call_site="llama.call-post-attention-layernorm",
    ),
    Component(
        key="mlp",
        title="SwiGLU MLP (gate, up, down)",
        short="SwiGLU MLP",
        kicker="Decoder layer",
        role="Transforms each token on its own: two projections to d_ff, one through SiLU (x·σ(x)), "
        "multiplied element by element, then projected back down.",
        page="llama/mlp.md",
        learned=True,
        call_site="llama.call-mlp",
        formula=(
            r"\begin{gathered} {\htmlData{light=mlp}{\Delta_{\mathrm{mlp}}}} = \big("
            r"\operatorname{SiLU}({\htmlData{light=ln2}{Z_2}}\,W_{\mathrm{gate}}) \odot "
            r"Z_2\,W_{\mathrm{up}}\big)\, W_{\mathrm{down}} \\ "
            r"\operatorname{SiLU}(u) = u\,\sigma(u) \end{gathered}"
        ),
        inputs=(Tensor("Z_2", RESIDUAL),),
        outputs=(Tensor(r"\Delta_{\mathrm{mlp}}", RESIDUAL),),
        code=("llama.mlp",),
        sources=(
            Source(
                "llama.mlp",
                "Three bias-free projections: down_proj(act_fn(gate_proj(x)) * up_proj(x)), "
                "with the config's hidden_act, SiLU.",
            ),
        ),
    ),
    Component(
        key="block",
        title="Decoder layer",
        short="Layer",
        kicker="Decoder layer",
        role="Reads the residual stream twice through RMSNorm and adds attention's and the MLP's "
        "outputs back onto it, as GPT-2's block does.",
        page="llama/decoder-layer.md",
        learned=True,
        call_site="llama.call-decoder-layer",
        formula=(
            r"\begin{aligned} H' &= H + {\htmlData{light=attention}{\operatorname{Attn}}}"
            r"({\htmlData{light=ln1}{\operatorname{RMS}_1}}(H)) \\ "
            r"{\htmlData{light=block}{H_{\mathrm{out}}}} &= H' + "
            r"{\htmlData{light=mlp}{\operatorname{MLP}}}"
            r"({\htmlData{light=ln2}{\operatorname{RMS}_2}}(H')) \end{aligned}"
        ),
        inputs=(Tensor("H", RESIDUAL),),
        outputs=(Tensor(r"H_{\mathrm{out}}", RESIDUAL),),
        code=("llama.decoder-layer",),
        sources=(Source("llama.decoder-layer", LAYER_CLAIM),),
    ),
    Component(
        key="lnf",
        title="Final RMSNorm (norm)",
        short="norm",
        kicker="Output",
        role="Normalizes the residual stream once more after the last layer.",
        page="llama/rmsnorm.md",
        learned=True,
        call_site="llama.call-norm",
    ),
    Component(
        key="unembed",
        title="Unembedding (lm_head, untied)",
        short="lm_head",
        kicker="Output",
        role="Scores every vocabulary entry against each final vector with a matrix of its own, "
        "not the token embedding: as many parameters again as embed_tokens.",
        page="llama/lm-head.md",
        learned=True,
        call_site="llama.call-lm-head",
        formula=(
            r"{\htmlData{light=unembed}{L}} = {\htmlData{light=lnf}{Z_f}}\,"
            r"W_{\mathrm{lm}}^{\top}, \qquad P = \operatorname{softmax}(L)"
        ),
        inputs=(Tensor("Z_f", RESIDUAL),),
        outputs=(Tensor("L", LOGITS),),
        code=("llama.causal-lm-init",),
        sources=(
            Source(
                "llama.causal-lm-init",
                "lm_head is an nn.Linear of its own, without bias; tie_word_embeddings is False "
                "in both configs, so it is not the embedding matrix.",
            ),
            Source(
                "llama.config-defaults",
                "LlamaConfig's defaults: the sizes of Llama 2 7B, and tie_word_embeddings = False.",
            ),
        ),
    ),
    Component(
        key="model",
        title="The whole model",
        short="Whole model",
        kicker="Model",
        role="Token ids in, a probability for every possible next token out, at every position.",
        page="llama/model.md",
        learned=True,
        formula=(
            r"\begin{aligned} {\htmlData{light=wte}{H_0}} &= E[x] \\ "
            r"{\htmlData{light=model}{P}} &= \operatorname{softmax}\big("
            r"{\htmlData{light=lnf}{\operatorname{RMS}_f}}"
            r"({\htmlData{light=block}{\operatorname{Layer}}}^{L}(H_0))\,"
            r"{\htmlData{light=unembed}{W_{\mathrm{lm}}^{\top}}}\big) \end{aligned}"
        ),
        inputs=(Tensor("x", TOKEN_IDS),),
        outputs=(Tensor("P", LOGITS),),
        code=("llama.model-forward", "llama.config-defaults", "mistral.config-defaults"),
        sources=(
            Source(
                "llama.model-forward",
                "The whole forward pass: embeddings, one rotary embedding for all layers, the "
                "loop over layers, the final norm.",
            ),
            Source(
                "llama.config-defaults",
                "LlamaConfig()'s defaults are Llama 2 7B's sizes; this site reads them from "
                "these pinned lines.",
            ),
            Source(
                "mistral.config-defaults",
                "MistralConfig()'s defaults are Mistral 7B v0.1's: fewer key/value heads than "
                "query heads, a wider MLP and a sliding window.",
            ),
        ),
    ),
)
