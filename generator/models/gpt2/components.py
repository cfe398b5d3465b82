"""GPT-2's component registry: one entry per part of GPT-2, in forward order (a page each; ln_1
and ln_2 share the LayerNorm page)."""

from __future__ import annotations

from generator.models.component import LOGITS, RESIDUAL, TOKEN_IDS, Component, Source, Tensor

# Claims for the evidence cards, shared where several pages cite the same excerpt.
NORM_CLAIM = (
    "GPT-2's LayerNorm: subtract the mean over the features, divide by the standard deviation "
    "(with ε = 1e-5 inside the root), then scale by g and shift by b, both learned."
)
BLOCK_CLAIM = (
    "The block is pre-norm: each branch reads norm(x) and its result is added to the unnormalized "
    "x; nothing normalizes the residual stream itself inside the block."
)
HF_BLOCK_CLAIM = (
    "Transformers' GPT2Block keeps the same order: save the residual, apply ln_1, attend, add; "
    "save, apply ln_2, MLP, add."
)

COMPONENTS: tuple[Component, ...] = (
    Component(
        key="wte",
        title="Token embedding (wte)",
        short="wte",
        kicker="Embeddings",
        role="Looks up one learned vector per token id: row x of a vocabulary-sized table.",
        page="components/token-embedding.md",
        learned=True,
        call_site="gpt2.embed-sum",
        formula=r"{\htmlData{light=wte}{X_{\mathrm{tok}}}} = W_{\mathrm{te}}[\,x\,]",
        inputs=(Tensor("x", TOKEN_IDS),),
        outputs=(Tensor(r"X_{\mathrm{tok}}", RESIDUAL),),
        code=("gpt2.wte", "gpt2.embed-sum"),
        sources=(
            Source(
                "gpt2.wte",
                "wte is one learned [n_vocab, n_embd] matrix, initialized with "
                "standard deviation 0.02.",
            ),
            Source(
                "gpt2.logits",
                "The same wte matrix is reused, transposed, to turn the final "
                "vectors into logits: the embedding is tied to the unembedding.",
            ),
        ),
    ),
    Component(
        key="wpe",
        title="Position embedding (wpe)",
        short="wpe",
        kicker="Embeddings",
        role="Looks up one learned vector per position, so attention can tell order apart.",
        page="components/position-embedding.md",
        learned=True,
        call_site="gpt2.embed-sum",
        formula=r"{\htmlData{light=wpe}{X_{\mathrm{pos}}}} = W_{\mathrm{pe}}[\,0, 1, \dots, T-1\,]",
        inputs=(Tensor("t", ("T positions",)),),
        outputs=(Tensor(r"X_{\mathrm{pos}}", ("T positions", "{d_model} d")),),
        code=("gpt2.wpe", "gpt2.positions-for"),
        sources=(
            Source(
                "gpt2.wpe",
                "wpe is a learned [n_ctx, n_embd] matrix: one row per position, "
                "so the context can never be longer than n_ctx.",
            ),
            Source(
                "gpt2.positions-for",
                "Positions are simply 0, 1, 2, … (offset by the length "
                "of any cached past), tiled over the batch.",
            ),
        ),
    ),
    Component(
        key="embed",
        title="Embedding sum",
        short="+",
        kicker="Embeddings",
        role="Adds token and position vectors; the residual stream starts here.",
        page="components/embedding-sum.md",
        call_site="gpt2.embed-sum",
        formula=(
            r"{\htmlData{light=embed}{H_0}} = {\htmlData{light=wte}{X_{\mathrm{tok}}}}"
            r" + {\htmlData{light=wpe}{X_{\mathrm{pos}}}}"
        ),
        inputs=(
            Tensor(r"X_{\mathrm{tok}}", RESIDUAL),
            Tensor(r"X_{\mathrm{pos}}", ("T positions", "{d_model} d")),
        ),
        outputs=(Tensor("H_0", RESIDUAL),),
        code=("gpt2.embed-sum",),
        sources=(
            Source(
                "gpt2.embed-sum",
                "The two lookups are added element by element; no "
                "normalization or scaling comes between them and the first block.",
            ),
        ),
    ),
    Component(
        key="ln1",
        title="LayerNorm (ln_1 and ln_2)",
        short="ln_1",
        kicker="Transformer block",
        role="Rescales each token's vector to zero mean and unit variance, then applies a learned "
        "gain and shift, before attention (ln_1) or the MLP (ln_2) reads it.",
        page="components/layernorm.md",
        learned=True,
        call_site="gpt2.block-call-attn",
        formula=(
            r"{\htmlData{light=ln1}{Z_1}} = \gamma \odot "
            r"\frac{H - \mu(H)}{\sqrt{\sigma^2(H) + \epsilon}} + \beta"
        ),
        inputs=(Tensor("H", RESIDUAL),),
        outputs=(Tensor("Z_1", RESIDUAL),),
        code=("gpt2.norm", "hf.block-layernorms"),
        sources=(
            Source("gpt2.norm", NORM_CLAIM),
            Source(
                "hf.block-layernorms",
                "Transformers builds ln_1 and ln_2 as nn.LayerNorm with "
                "the config's epsilon, on either side of the attention module.",
            ),
        ),
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
        walkthrough="walkthrough/attention.md",
    ),
    Component(
        key="ln2",
        title="LayerNorm before the MLP (ln_2)",
        short="ln_2",
        kicker="Transformer block",
        role="Normalizes each token's vector before the MLP reads it.",
        page="components/layernorm.md",
        learned=True,
        call_site="gpt2.block-call-mlp",
    ),
    Component(
        key="mlp",
        title="MLP (c_fc, GELU, c_proj)",
        short="MLP",
        kicker="Transformer block",
        role="Transforms each token on its own: widen four times, apply GELU, project back.",
        page="components/mlp.md",
        learned=True,
        call_site="gpt2.block-call-mlp",
        formula=(
            r"{\htmlData{light=mlp}{\Delta_{\mathrm{mlp}}}} = \operatorname{GELU}"
            r"({\htmlData{light=ln2}{Z_2}}\,W_{\mathrm{fc}} + b_{\mathrm{fc}})\,"
            r"W_{\mathrm{proj}} + b_{\mathrm{proj}}"
        ),
        inputs=(Tensor("Z_2", RESIDUAL),),
        outputs=(Tensor(r"\Delta_{\mathrm{mlp}}", RESIDUAL),),
        code=("gpt2.mlp", "hf.gpt2-mlp"),
        sources=(
            Source(
                "gpt2.mlp",
                "The MLP is two conv1d projections (c_fc to n_state = 4·n_embd "
                "features, c_proj back) with GELU between them.",
            ),
            Source(
                "hf.gpt2-mlp",
                "Transformers' GPT2MLP: the same two Conv1D layers, with the "
                "activation looked up from the config.",
            ),
        ),
    ),
    Component(
        key="block",
        title="Pre-norm transformer block",
        short="Block",
        kicker="Transformer block",
        role="Reads the residual stream twice through LayerNorm and adds attention's and the "
        "MLP's outputs back onto it.",
        page="components/block.md",
        learned=True,
        call_site="gpt2.call-block",
        formula=(
            r"\begin{aligned} H' &= H + {\htmlData{light=attention}{\operatorname{Attn}}}"
            r"({\htmlData{light=ln1}{\operatorname{LN}_1}}(H)) \\ "
            r"{\htmlData{light=block}{H_{\mathrm{out}}}} &= H' + "
            r"{\htmlData{light=mlp}{\operatorname{MLP}}}"
            r"({\htmlData{light=ln2}{\operatorname{LN}_2}}(H')) \end{aligned}"
        ),
        inputs=(Tensor("H", RESIDUAL),),
        outputs=(Tensor(r"H_{\mathrm{out}}", RESIDUAL),),
        code=("gpt2.block", "hf.block-residuals"),
        sources=(
            Source("gpt2.block", BLOCK_CLAIM),
            Source("hf.block-residuals", HF_BLOCK_CLAIM),
        ),
    ),
    Component(
        key="lnf",
        title="Final LayerNorm (ln_f)",
        short="ln_f",
        kicker="Output",
        role="Normalizes the residual stream once more after the last block, before the "
        "unembedding reads it.",
        page="components/final-layernorm.md",
        learned=True,
        call_site="gpt2.ln-f",
        formula=(
            r"{\htmlData{light=lnf}{Z_f}} = \gamma_f \odot "
            r"\frac{H_L - \mu(H_L)}{\sqrt{\sigma^2(H_L) + \epsilon}} + \beta_f"
        ),
        inputs=(Tensor("H_L", RESIDUAL),),
        outputs=(Tensor("Z_f", RESIDUAL),),
        code=("gpt2.blocks-loop", "gpt2.norm"),
        sources=(
            Source(
                "gpt2.blocks-loop",
                "ln_f is applied once, after the loop over all blocks: "
                "with pre-norm blocks the stream itself is never normalized until here.",
            ),
            Source("gpt2.norm", NORM_CLAIM),
        ),
    ),
    Component(
        key="unembed",
        title="Unembedding and softmax",
        short="Unembed",
        kicker="Output",
        role="Scores every vocabulary entry against each final vector by reusing wte; softmax "
        "turns the scores into next-token probabilities.",
        page="components/unembedding.md",
        call_site="gpt2.call-logits",
        formula=(
            r"{\htmlData{light=unembed}{L}} = {\htmlData{light=lnf}{Z_f}}\,"
            r"{\htmlData{light=wte}{W_{\mathrm{te}}}}^{\top}, \qquad "
            r"P = \operatorname{softmax}(L)"
        ),
        inputs=(Tensor("Z_f", RESIDUAL),),
        outputs=(Tensor("L", LOGITS),),
        code=("gpt2.logits", "gpt2.softmax"),
        sources=(
            Source(
                "gpt2.logits",
                "The logits are h times wte transposed: the unembedding is the "
                "token embedding matrix itself, so it adds no parameters.",
            ),
            Source(
                "gpt2.softmax",
                "Softmax subtracts the row maximum before exponentiating, "
                "which changes nothing mathematically and keeps exp from overflowing.",
            ),
        ),
    ),
    Component(
        key="model",
        title="The whole model",
        short="Whole model",
        kicker="Model",
        role="Token ids in, a probability for every possible next token out, at every position.",
        page="components/model.md",
        learned=True,
        formula=(
            r"\begin{aligned} {\htmlData{light=embed}{H_0}} &= "
            r"{\htmlData{light=wte}{W_{\mathrm{te}}[x]}} + "
            r"{\htmlData{light=wpe}{W_{\mathrm{pe}}[0{:}T]}} \\ "
            r"{\htmlData{light=model}{P}} &= \operatorname{softmax}\big("
            r"{\htmlData{light=lnf}{\operatorname{LN}_f}}"
            r"({\htmlData{light=block}{\operatorname{Block}}}^{L}(H_0))\,"
            r"{\htmlData{light=unembed}{W_{\mathrm{te}}^{\top}}}\big) \end{aligned}"
        ),
        inputs=(Tensor("x", TOKEN_IDS),),
        outputs=(Tensor("P", LOGITS),),
        code=("gpt2.model",),
        sources=(
            Source(
                "gpt2.model",
                "The whole forward pass in one function: embeddings, the loop over "
                "blocks, ln_f, and logits against the transposed token embedding.",
            ),
        ),
    ),
)
