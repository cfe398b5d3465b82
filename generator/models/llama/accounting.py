"""The Llama family's parameter and FLOP rows, one instance of a component at a time.

Keys are the family's component keys (generator/models/llama/components.py), which reuse
GPT-2's where the role is the same (ln1, attention, ln2, mlp, block, lnf, unembed, model) and add
rope; rows are keyed by transformers' module names. FLOPs follow
generator.accounting.FLOP_CONVENTION: matmuls only, over the full T × T grid. With grouped-query
attention the K and V projections are n_kv_head heads wide, but eager attention's repeat_kv
copies each to its n_head / n_kv_head query heads first, so QKᵀ and A·V still cost n_head heads'
FLOPs; a sliding window masks cells, and masked cells are counted too.
"""

from __future__ import annotations

from generator.models.config import ModelConfig
from generator.models.rows import Row, prefixed, total, with_bias

PER_BLOCK = ("ln1", "rope", "attention", "ln2", "mlp", "block")  # one instance per layer


def param_rows(cfg: ModelConfig, component: str, *, tied: bool) -> list[Row]:
    """The learned tensors of one instance of `component`, one row each (nn.Linear's
    [out, in] is written in × out, as GPT-2's rows are)."""
    d, V, f = cfg.d_model, cfg.vocab_size, cfg.d_mlp
    q, kv = cfg.d_attn, cfg.d_kv  # n_head · d_head and n_kv_head · d_head
    if component == "wte":
        return [Row("embed_tokens", "Token embedding embed_tokens", ((V, d),))]
    if component in ("ln1", "ln2", "lnf"):
        return [Row("weight", "Gain γ (no shift: RMSNorm has no β)", ((d,),))]
    if component == "rope":
        return []  # cos and sin of fixed angles: nothing is learned
    if component == "attention":
        return [
            Row("q_proj", "Query projection q_proj", with_bias(cfg, (d, q))),
            Row("k_proj", "Key projection k_proj (n_kv_head heads)", with_bias(cfg, (d, kv))),
            Row("v_proj", "Value projection v_proj (n_kv_head heads)", with_bias(cfg, (d, kv))),
            Row("o_proj", "Output projection o_proj", with_bias(cfg, (q, d))),
        ]
    if component == "mlp":
        return [
            Row("gate_proj", "Gate projection gate_proj", with_bias(cfg, (d, f))),
            Row("up_proj", "Up projection up_proj", with_bias(cfg, (d, f))),
            Row("down_proj", "Down projection down_proj", with_bias(cfg, (f, d))),
        ]
    if component == "block":
        return (
            prefixed("input_layernorm", param_rows(cfg, "ln1", tied=tied), label=False)
            + prefixed("self_attn", param_rows(cfg, "attention", tied=tied), label=False)
            + prefixed("post_attention_layernorm", param_rows(cfg, "ln2", tied=tied), label=False)
            + prefixed("mlp", param_rows(cfg, "mlp", tied=tied), label=False)
        )
    if component == "unembed":
        return [] if tied else [Row("lm_head", "Unembedding lm_head (untied)", ((d, V),))]
    # model
    layers = total(param_rows(cfg, "block", tied=tied))
    return [
        *param_rows(cfg, "wte", tied=tied),
        Row("layers", "Decoder layers", ((layers, cfg.n_layer),)),
        Row("norm", "Final RMSNorm norm", ((d,),)),
        *param_rows(cfg, "unembed", tied=tied),
    ]


def flop_rows(cfg: ModelConfig, component: str, T: int) -> list[Row]:
    """Forward FLOPs per token of one instance of `component` at sequence length T."""
    d, h, dh, V, f = cfg.d_model, cfg.n_head, cfg.d_head, cfg.vocab_size, cfg.d_mlp
    q, kv = cfg.d_attn, cfg.d_kv
    if component in ("wte", "ln1", "ln2", "lnf", "rope"):
        return []  # a lookup, and elementwise work (the rotation multiplies and adds pairs)
    if component == "attention":
        return [
            Row("q_proj", "Query projection", ((2, d, q),)),
            Row("k_proj", "Key projection (n_kv_head heads)", ((2, d, kv),)),
            Row("v_proj", "Value projection (n_kv_head heads)", ((2, d, kv),)),
            Row("scores", "Scores QKᵀ, all n_head heads", ((2, h, T, dh),)),
            Row("weighted_sum", "Weighted sum A·V, all n_head heads", ((2, h, T, dh),)),
            Row("o_proj", "Output projection", ((2, q, d),)),
        ]
    if component == "mlp":
        return [
            Row("gate_proj", "Gate projection", ((2, d, f),)),
            Row("up_proj", "Up projection", ((2, d, f),)),
            Row("down_proj", "Down projection", ((2, f, d),)),
        ]
    if component == "block":
        attn, mlp = flop_rows(cfg, "attention", T), flop_rows(cfg, "mlp", T)
        return prefixed("self_attn", attn, label=False) + prefixed("mlp", mlp, label=False)
    if component == "unembed":
        return [Row("logits", "Logits x · lm_headᵀ", ((2, d, V),))]
    # model
    return [
        Row("layers", "Decoder layers", ((total(flop_rows(cfg, "block", T)), cfg.n_layer),)),
        Row("logits", "Unembedding lm_head", ((2, d, V),)),
    ]
