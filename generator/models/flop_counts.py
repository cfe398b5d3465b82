"""FLOP rows of one instance of a component, for any family, read from its spec (the parameter
rows and the row names, `Words`: counts.py). FLOPs follow generator.accounting.FLOP_CONVENTION.

Shapes: d = d_model, h heads, dh = d_head, V = vocab_size, T the sequence length.
"""

from __future__ import annotations

from generator.models.config import ModelConfig
from generator.models.counts import Words, attention_parts, mlp_parts
from generator.models.layer_kinds import layer_groups, layer_phrases, seen_keys, typical_layer
from generator.models.names import TensorNames
from generator.models.rows import Row, prefixed, total


def _expert_flops(cfg: ModelConfig, names: TensorNames, words: Words) -> list[Row]:
    """FLOPs per token of one MoE layer on a token's active path: the router scores every
    expert, then the token runs its top_k experts (and the shared ones), not the others."""
    assert cfg.experts is not None
    moe, d = cfg.experts, cfg.d_model
    k, E, width = moe.top_k, moe.n_experts, moe.d_expert
    rows = [
        Row(names.router, words.flops["router"], ((2, d, E),)),
        Row(
            f"{names.experts}.gate_up_proj",
            f"{words.flops['experts_gate_up']}, top {k}",
            ((k, 2, d, 2 * width),),
        ),
        Row(
            f"{names.experts}.down_proj",
            f"{words.flops['experts_down']}, top {k}",
            ((k, 2, width, d),),
        ),
    ]
    shared = mlp_parts(cfg, names, moe.n_shared * width, f"{names.shared}.") if moe.n_shared else []
    return rows + [
        Row(module, f"Shared experts' {words.flops[role].lower()}", ((2, i, o),))
        for role, module, i, o, _ in shared
    ]


def flop_rows(
    cfg: ModelConfig,
    names: TensorNames,
    words: Words,
    component: str,
    T: int,
    layer: int | None = None,
) -> list[Row]:
    """Forward FLOPs per token of one instance of `component` (in layer `layer`, for the parts of
    a layer; by default the typical one, as param_rows) at sequence length T."""
    d, h, dh, V = cfg.d_model, cfg.n_head, cfg.d_head, cfg.vocab_size
    layer = typical_layer(cfg, component) if layer is None else layer
    if component == "attention":
        parts = attention_parts(cfg, names)
        rows = [
            Row(module, words.flops[role], ((2, n_in, n_out),))
            for role, module, n_in, n_out, _ in parts
        ]
        keys = seen_keys(cfg, layer, T)
        qk, v = (cfg.latent.qk_dim, cfg.latent.v_dim) if cfg.latent is not None else (dh, dh)
        grid = [
            Row("scores", words.flops["scores"], ((2, h, keys, qk),)),
            Row("weighted_sum", words.flops["weighted_sum"], ((2, h, keys, v),)),
        ]
        return [*rows[:-1], *grid, rows[-1]]
    if component == "experts":
        return _expert_flops(cfg, names, words) if cfg.experts is not None else []
    if component == "mlp":
        return [
            Row(module, words.flops[role], ((2, n_in, n_out),))
            for role, module, n_in, n_out, _ in mlp_parts(cfg, names)
        ]
    if component == "block":
        attn = flop_rows(cfg, names, words, "attention", T, layer)
        mlp = flop_rows(cfg, names, words, "experts" if cfg.moe_layer(layer) else "mlp", T, layer)
        return prefixed(names.attention, attn, label=False) + prefixed(names.mlp, mlp, label=False)
    if component == "unembed":
        return [Row("logits", words.logits, ((2, d, V),))]
    if component == "model":
        return [*layer_rows(cfg, names, words, T), Row("logits", words.unembedding, ((2, d, V),))]
    return []  # lookups and elementwise work only


def layer_rows(cfg: ModelConfig, names: TensorNames, words: Words, T: int) -> list[Row]:
    """Every layer's FLOPs per token: one row, or one per kind of layer (full, sliding)."""
    key, label = words.layers
    groups = layer_groups(cfg)
    phrases = layer_phrases(cfg, [layers for _, layers in groups])
    rows = []
    for (kind, layers), phrase in zip(groups, phrases, strict=True):
        block = total(flop_rows(cfg, names, words, "block", T, layers[0]))
        if len(groups) == 1:
            rows.append(Row(key, label, ((block, len(layers)),)))
        else:
            rows.append(Row(f"{key}.{kind}", f"{label} with {phrase}", ((block, len(layers)),)))
    return rows
