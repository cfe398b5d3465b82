"""GPT-2's parameter and FLOP rows, one instance of a component at a time.

Keys are the component keys of generator/components.py; rows are keyed by GPT-2's module names.
FLOPs follow generator.accounting.FLOP_CONVENTION (forward, per token, matmuls only, the full
T × T grid). The generic sums, totals and the KV cache are in generator/accounting.py.
"""

from __future__ import annotations

from generator.models.config import ModelConfig
from generator.models.rows import Row, prefixed, total, with_bias

PER_BLOCK = ("ln1", "attention", "ln2", "mlp", "block")  # one instance per block


def param_rows(cfg: ModelConfig, component: str, *, tied: bool) -> list[Row]:
    """The learned tensors of one instance of `component`, one row each.

    tied: the unembedding reuses wte (GPT-2) and adds no parameters; untied adds lm_head [d, V].
    """
    d, V = cfg.d_model, cfg.vocab_size
    if component == "wte":
        return [Row("wte", "Token embedding table wte", ((V, d),))]
    if component == "wpe":
        return [Row("wpe", "Position embedding table wpe", ((cfg.n_ctx, d),))]
    if component == "embed":
        return []  # wte[ids] + wpe[:T] has no parameters of its own
    if component in ("ln1", "ln2", "lnf"):
        return [Row("g", "Gain γ", ((d,),)), Row("b", "Shift β", ((d,),))]
    if component == "attention":
        return [
            Row("c_attn", "Fused Q, K, V projection", with_bias(cfg, (d, 3 * d))),
            Row("c_proj", "Attention output projection", with_bias(cfg, (d, d))),
        ]
    if component == "mlp":
        return [
            Row("c_fc", "MLP expansion c_fc", with_bias(cfg, (d, cfg.d_mlp))),
            Row("c_proj", "MLP projection c_proj", with_bias(cfg, (cfg.d_mlp, d))),
        ]
    if component == "block":
        return (
            prefixed("ln_1", param_rows(cfg, "ln1", tied=tied))
            + prefixed("attn", param_rows(cfg, "attention", tied=tied), label=False)
            + prefixed("ln_2", param_rows(cfg, "ln2", tied=tied))
            + prefixed("mlp", param_rows(cfg, "mlp", tied=tied), label=False)
        )
    if component == "unembed":
        return [] if tied else [Row("lm_head", "Unembedding lm_head (untied)", ((d, V),))]
    # model
    rows = param_rows(cfg, "wte", tied=tied) + param_rows(cfg, "wpe", tied=tied)
    blocks = total(param_rows(cfg, "block", tied=tied))
    rows.append(Row("h", "Transformer blocks", ((blocks, cfg.n_layer),)))
    rows.append(Row("ln_f", "Final LayerNorm ln_f", ((d,), (d,))))
    return rows + param_rows(cfg, "unembed", tied=tied)


def flop_rows(cfg: ModelConfig, component: str, T: int) -> list[Row]:
    """Forward FLOPs per token of one instance of `component` at sequence length T."""
    d, h, dh, V = cfg.d_model, cfg.n_head, cfg.d_head, cfg.vocab_size
    if component in ("wte", "wpe", "embed", "ln1", "ln2", "lnf"):
        return []  # lookups and elementwise work only
    if component == "attention":
        return [
            Row("c_attn", "Fused Q, K, V projection", ((2, d, 3 * d),)),
            Row("scores", "Scores QKᵀ, all heads", ((2, h, T, dh),)),
            Row("weighted_sum", "Weighted sum A·V, all heads", ((2, h, T, dh),)),
            Row("c_proj", "Attention output projection", ((2, d, d),)),
        ]
    if component == "mlp":
        return [
            Row("c_fc", "MLP expansion c_fc", ((2, d, cfg.d_mlp),)),
            Row("c_proj", "MLP projection c_proj", ((2, cfg.d_mlp, d),)),
        ]
    if component == "block":
        attn, mlp = flop_rows(cfg, "attention", T), flop_rows(cfg, "mlp", T)
        return prefixed("attn", attn, label=False) + prefixed("mlp", mlp, label=False)
    if component == "unembed":
        return [Row("logits", "Logits x · wteᵀ", ((2, d, V),))]
    # model
    return [
        Row("h", "Transformer blocks", ((total(flop_rows(cfg, "block", T)), cfg.n_layer),)),
        Row("logits", "Unembedding", ((2, d, V),)),
    ]
