"""What changed from GPT-2 to Llama, one difference at a time: what it is, the components it
touches, and the pinned code on each side. The costs are computed by the accounting of both
families (generator/pages/compare.py), at each Llama size and at a GPT-2-shaped model of the same
width, depth, heads, context and vocabulary."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Change:
    key: str  # "norm": its anchor on the page
    title: str
    text: str  # Markdown, in words: the numbers come from the cost table
    gpt2: str  # the excerpt id of GPT-2's side (openai/gpt-2)
    llama: tuple[str, ...]  # the excerpt ids of Llama's side (transformers), one tab each
    page: str  # the Llama component page that explains it
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
    ),
    Change(
        "attention",
        "Multi-head → grouped-query attention",
        "With n_kv_head key/value heads for n_head query heads, the key and value projections and "
        "the KV cache shrink by n_head / n_kv_head. The score and weighted-sum matmuls do not: "
        "repeat_kv copies each key/value head to its query heads first. (Llama 2 7B keeps one "
        "key/value head per query head; Mistral groups them.)",
        "gpt2.attn",
        ("llama.attention-init", "llama.repeat-kv"),  # the narrower K/V; the copies before QKᵀ
        "llama/attention.md",
    ),
    Change(
        "mlp",
        "GELU at 4 × d_model → SwiGLU with three matrices",
        "GPT-2's MLP is two matrices around GELU, four times wider than the stream. SwiGLU gates "
        "one projection with SiLU of another and projects back: three matrices, at a width "
        "d_mlp the config chooses.",
        "gpt2.mlp",
        ("llama.mlp",),
        "llama/mlp.md",
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
    ),
)
