"""What changed from GPT-2 to Llama, one difference at a time: what it is, why the field made it
(the reason its paper gives, with the papers to look up), the components it touches, and the
pinned code on each side. The costs are computed by the accounting of both
families (generator/pages/compare.py), at each Llama size and at a GPT-2-shaped model of the same
width, depth, heads, context and vocabulary."""

from __future__ import annotations

from dataclasses import dataclass

from generator.models.papers import (
    GQA,
    LLAMA,
    LLAMA_2,
    MISTRAL,
    PALM,
    RMSNORM,
    ROPE,
    SWIGLU,
    TYING,
    Paper,
)


@dataclass(frozen=True)
class Change:
    key: str  # "norm": its anchor on the page
    title: str
    text: str  # Markdown, in words: the numbers come from the cost table
    gpt2: str  # the excerpt id of GPT-2's side (openai/gpt-2)
    llama: tuple[str, ...]  # the excerpt ids of Llama's side (transformers), one tab each
    page: str  # the Llama component page that explains it
    why: str  # plain words: the reason the papers give for the change (no numbers the code has)
    cite: tuple[Paper, ...]  # the papers that give it, the first the change's own
    only_with: str | None = None  # shown for the sizes whose spec sets this field only


CHANGES: tuple[Change, ...] = (
    Change(
        "norm",
        "LayerNorm → RMSNorm",
        "RMSNorm subtracts no mean and adds no shift β: it divides by the root mean square and "
        "multiplies by a learned gain. Each norm holds half the parameters; the arithmetic it "
        "saves is elementwise, which the FLOP convention does not count.",
        "gpt2.norm",
        ("llama.rmsnorm",),
        "llama/rmsnorm.md",
        why=(
            "Zhang & Sennrich found LayerNorm's re-centring dispensable: dividing by the root "
            "mean square alone matched LayerNorm's quality in their experiments and ran 7 to 64 "
            "% faster, depending on the model. LLaMA took it up; Llama 2 and Mistral kept it."
        ),
        cite=(RMSNORM, LLAMA, LLAMA_2),
    ),
    Change(
        "positions",
        "Learned positions → rotary positions inside attention",
        "GPT-2 adds a learned vector per position (wpe) to the token vector once, before the "
        "first block. Llama rotates each query and key by an angle set by its position, in every "
        "layer, and learns nothing for it: the table's parameters go, and the context is no "
        "longer capped by a table's rows.",
        "gpt2.wpe",
        ("llama.apply-rope",),
        "llama/rope.md",
        why=(
            "Su et al. built RoPE so that rotating queries and keys by their absolute positions "
            "makes each score depend on the tokens' distance only (the rotary walkthrough shows "
            "it with numbers), with no table to cap the sequence's length. LLaMA put it in every "
            "layer in place of the absolute position embeddings; Llama 2 and Mistral kept it."
        ),
        cite=(ROPE, LLAMA, LLAMA_2),
    ),
    Change(
        "attention",
        "Multi-head → grouped-query attention",
        "With n_kv_head key/value heads for n_head query heads, the key and value projections and "
        "the KV cache shrink by n_head / n_kv_head. The score and weighted-sum matmuls (matrix products) do not: "
        "repeat_kv copies each key/value head to its query heads first. (Llama 2 7B keeps one "
        "key/value head per query head; Mistral groups them.)",
        "gpt2.attn",
        ("llama.attention-init", "llama.repeat-kv"),  # the narrower K/V; the copies before QKᵀ
        "llama/attention.md",
        why=(
            "Decoding reads every cached key and value at each step; Ainslie et al. showed that "
            "a few key/value heads shared by groups of query heads decode nearly as fast as "
            "one shared head, at a quality close to multi-head attention's. Llama 2 uses it in "
            "its 34B and 70B models for inference scalability; Mistral 7B uses it too, and adds "
            "a sliding window: each layer attends to the last W tokens only, to handle long "
            "sequences at a lower cost, while the stacked layers carry information further back."
        ),
        cite=(GQA, LLAMA_2, MISTRAL),
    ),
    Change(
        "mlp",
        "GELU at 4 × d_model → SwiGLU with three matrices",
        "GPT-2's MLP is two matrices around GELU, four times wider than the stream. SwiGLU gates "
        "one projection with SiLU (x·σ(x), σ the logistic sigmoid) of another and projects back: three matrices, at a width "
        "d_ff the config chooses.",
        "gpt2.mlp",
        ("llama.mlp",),
        "llama/mlp.md",
        why=(
            "Shazeer compared gated variants of the feed-forward layer: SwiGLU, a product of two "
            "projections one of which passes through SiLU, gave better quality than ReLU or "
            "GELU at the same parameters and compute, its hidden width cut by a third to pay "
            "for the third matrix. LLaMA adopted it; Llama 2 and Mistral kept it."
        ),
        cite=(SWIGLU, LLAMA),
    ),
    Change(
        "window",
        "Every earlier position → a sliding window (Mistral)",
        "GPT-2 and Llama 2 let each token attend to every position before it. Mistral's layers "
        "see only the last sliding_window positions, the token's own included: past the window "
        "a query costs no more to score, and the cache keeps only the window's last positions, "
        "so a decoding step stops growing with the context. Information from further back still "
        "arrives, passed on from layer to layer. Both sides below are Mistral's shape, with and "
        "without its window; the sizes without a window have no such change.",
        "gpt2.attention-mask",
        ("mistral.attention-forward",),
        "llama/attention.md",
        why=(
            "Jiang et al. give Mistral sliding-window attention to cut the cost of long inputs: "
            "each layer attends to a fixed number of recent positions, so a step's attention and "
            "its cache stop growing with the sequence, while stacked layers still pass "
            "information forward from further back than one window reaches."
        ),
        cite=(MISTRAL,),
        only_with="sliding_window",
    ),
    Change(
        "biases",
        "Biases gone",
        "GPT-2 adds a bias after each of its four projections. Llama's projections have none "
        "(LlamaConfig's attention_bias and mlp_bias are False; MistralConfig has no such fields: "
        "its projections are built without biases); adding a bias is elementwise work, not counted "
        "as FLOPs here.",
        "gpt2.conv1d",
        ("llama.attention-init",),
        "llama/attention.md",
        why=(
            "The Llama papers do not discuss it. PaLM, which LLaMA follows for SwiGLU, dropped "
            "the biases of every dense layer and norm, reporting that this made training large "
            "models more stable."
        ),
        cite=(PALM, LLAMA),
    ),
    Change(
        "unembedding",
        "A tied → an untied unembedding",
        "GPT-2 scores the vocabulary with its token embedding, transposed. Llama keeps a separate "
        "lm_head of the same shape: as many parameters again as the embedding, and the same "
        "FLOPs.",
        "gpt2.logits",
        ("llama.causal-lm-init",),
        "llama/lm-head.md",
        why=(
            "Neither the Llama papers nor Mistral's give a reason. Tying was proposed to save "
            "parameters and lower perplexity in smaller models (Press & Wolf); at these sizes "
            "the table it saves is a small share of the model, as the cost below shows."
        ),
        cite=(TYING,),
    ),
)
