"""Parameter rows of one instance of a component, for any family, read from its spec (its FLOP
rows: flop_counts.py; which layers are alike: layer_kinds.py).

What a row counts comes from the spec (ModelConfig) and the checkpoint's names (TensorNames):
which projections there are, how wide, with which biases. What a row is called comes from the
family's `Words`, prose kept in its folder (GPT-2's "Fused Q, K, V projection", Llama's
"Query projection q_proj").

Shapes: d = d_model, h heads, dh = d_head, f = d_mlp, V = vocab_size.
"""

from __future__ import annotations

import msgspec

from generator.models.config import ModelConfig
from generator.models.layer_kinds import layer_groups, layer_phrases, typical_layer
from generator.models.names import TensorNames
from generator.models.rows import Row, prefixed, total

NORMS = ("ln1", "ln2", "lnf")


class Words(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a family's accounting rows are called: (key, label) pairs, and labels by role (each
    family's [words] in its family.toml).

    Roles: "qkv" (a fused projection), "q", "k", "v", "o", "gate", "up", "down", "scores",
    "weighted_sum". `params` labels the parameter rows, `flops` the FLOP rows; a role missing
    from `params` takes its FLOP label and the module's name.
    """

    embed: tuple[str, str]  # ("wte", "Token embedding table wte")
    layers: tuple[str, str]  # the model's row of every layer: ("h", "Transformer blocks")
    final_norm: tuple[str, str]  # ("ln_f", "Final LayerNorm ln_f")
    logits: str  # the unembedding's FLOP row: "Logits x · wteᵀ"
    unembedding: str  # the model's FLOP row of it: "Unembedding"
    flops: dict[str, str]  # FLOP labels by role
    params: dict[str, str] = {}  # parameter labels by role
    positions: tuple[str, str] = ("wpe", "Position embedding table wpe")
    gain: tuple[str, str] = ("weight", "Gain γ (no shift: RMSNorm has no β)")
    shift: tuple[str, str] = ("b", "Shift β")
    norms_labelled: bool = False  # a layer's norm rows say which norm ("ln_1 gain γ")
    lm_head: str = "Unembedding lm_head (untied)"

    def param_label(self, role: str, module: str) -> str:
        return self.params.get(role) or f"{self.flops[role]} {module}"


def _matrix_terms(
    cfg: ModelConfig, n_in: int, n_out: int, bias: bool
) -> tuple[tuple[int, ...], ...]:
    """A projection's parameters: in × out, plus out when it has a bias."""
    return ((n_in, n_out), (n_out,)) if bias else ((n_in, n_out),)


def attention_parts(cfg: ModelConfig, names: TensorNames) -> list[tuple[str, str, int, int, bool]]:
    """(role, module, in, out, biased) of each projection of a layer's attention."""
    d, q, kv = cfg.d_model, cfg.d_attn, cfg.d_kv
    if cfg.latent is not None:
        return _latent_parts(cfg, names)
    if names.qkv is not None:
        parts = [("qkv", names.qkv, d, q + 2 * kv, cfg.biased("q"))]
    else:
        parts = [
            (role, getattr(names, role), d, width, cfg.biased(role))
            for role, width in (("q", q), ("k", kv), ("v", kv))
        ]
    return [*parts, ("o", names.o, q, d, cfg.biased("o"))]


def _latent_parts(cfg: ModelConfig, names: TensorNames) -> list[tuple[str, str, int, int, bool]]:
    """Latent attention's projections: queries through their latent (or q_proj), keys and values
    from one latent per position (kv_a), read out for every head (kv_b); the output. Biases as
    transformers gives them: the attention bias on q_a, kv_a and o only."""
    assert cfg.latent is not None
    lat, d, h, bias = cfg.latent, cfg.d_model, cfg.n_head, cfg.biased("o")
    if lat.q_rank is None:
        parts = [("q", "q_proj", d, h * lat.qk_dim, False)]
    else:
        parts = [
            ("q_a", "q_a_proj", d, lat.q_rank, bias),
            ("q_b", "q_b_proj", lat.q_rank, h * lat.qk_dim, False),
        ]
    return [
        *parts,
        ("kv_a", "kv_a_proj_with_mqa", d, lat.kv_rank + lat.rope_dim, bias),
        ("kv_b", "kv_b_proj", lat.kv_rank, h * (lat.nope_dim + lat.v_dim), False),
        ("o", names.o, h * lat.v_dim, d, bias),
    ]


def _latent_norms(cfg: ModelConfig, words: Words) -> list[Row]:
    """The gains of latent attention's two latent norms (q's when it has a latent)."""
    assert cfg.latent is not None
    lat = cfg.latent
    widths = [("kv_a_layernorm", lat.kv_rank)]
    if lat.q_rank is not None:
        widths.insert(0, ("q_a_layernorm", lat.q_rank))
    return [
        Row(f"{module}.weight", f"{words.gain[1]} of {module}", ((width,),))
        for module, width in widths
    ]


def mlp_parts(
    cfg: ModelConfig, names: TensorNames, width: int | None = None, prefix: str = ""
) -> list[tuple[str, str, int, int, bool]]:
    """(role, module, in, out, biased) of each projection of a dense MLP `width` wide (d_mlp)."""
    d, f, bias = cfg.d_model, width or cfg.d_mlp, cfg.biased("mlp")
    parts = []
    if cfg.mlp != "gelu" and names.gate is not None:
        parts.append(("gate", f"{prefix}{names.gate}", d, f, bias))
    return [
        *parts,
        ("up", f"{prefix}{names.up}", d, f, bias),
        ("down", f"{prefix}{names.down}", f, d, bias),
    ]


def _expert_rows(cfg: ModelConfig, names: TensorNames, words: Words) -> list[Row]:
    """The router, every routed expert (stacked as the checkpoint stores them) and the shared
    experts of one MoE layer."""
    assert cfg.experts is not None
    moe, d, bias = cfg.experts, cfg.d_model, cfg.biased("mlp")
    E, width = moe.n_experts, moe.d_expert
    router = ((d, E), (E,)) if moe.router_bias else ((d, E),)
    # a bias is written as one number (E · 2I, not E × 2I): block weights count the terms of two
    # or more factors as matrices
    rows = [
        Row(names.router, words.flops["router"], router),
        Row(
            f"{names.experts}.gate_up_proj",
            f"{words.flops['experts_gate_up']}, all {E}",
            ((E, d, 2 * width), (E * 2 * width,)) if bias else ((E, d, 2 * width),),
        ),
        Row(
            f"{names.experts}.down_proj",
            f"{words.flops['experts_down']}, all {E}",
            ((E, width, d), (E * d,)) if bias else ((E, width, d),),
        ),
    ]
    shared = mlp_parts(cfg, names, moe.n_shared * width, f"{names.shared}.") if moe.n_shared else []
    return rows + [
        Row(module, f"Shared experts' {words.flops[role].lower()}", _matrix_terms(cfg, i, o, b))
        for role, module, i, o, b in shared
    ]


def param_rows(
    cfg: ModelConfig,
    names: TensorNames,
    words: Words,
    component: str,
    *,
    tied: bool,
    layer: int | None = None,
) -> list[Row]:
    """The learned tensors of one instance of `component` (a block: layer `layer`'s, by default
    a typical one), one row each (matrices in × out)."""
    d, V = cfg.d_model, cfg.vocab_size
    layer = typical_layer(cfg, component) if layer is None else layer
    if component == "wte":
        return [Row(*words.embed, ((V, d),))]
    if component == "wpe":
        return [Row(*words.positions, ((cfg.n_ctx, d),))] if names.positions else []
    if component in NORMS:
        rows = [Row(*words.gain, ((d,),))]
        return rows + [Row(*words.shift, ((d,),))] if cfg.norm == "layernorm" else rows
    if component == "attention":
        rows = [
            Row(module, words.param_label(role, module), _matrix_terms(cfg, n_in, n_out, bias))
            for role, module, n_in, n_out, bias in attention_parts(cfg, names)
        ]
        if cfg.latent is not None:
            rows[-1:-1] = _latent_norms(cfg, words)
        if cfg.attention_sinks:
            rows.append(Row("sinks", "Sinks: a learned logit per head", ((cfg.n_head,),)))
        return rows
    if component == "experts":
        return _expert_rows(cfg, names, words) if cfg.experts is not None else []
    if component == "mlp":
        return [
            Row(module, words.param_label(role, module), _matrix_terms(cfg, n_in, n_out, bias))
            for role, module, n_in, n_out, bias in mlp_parts(cfg, names)
        ]
    if component == "block":
        mlp = "experts" if cfg.moe_layer(layer) else "mlp"
        parts = {
            "norm1": prefixed(
                names.norm1,
                param_rows(cfg, names, words, "ln1", tied=tied),
                label=words.norms_labelled,
            ),
            "attention": prefixed(
                names.attention, param_rows(cfg, names, words, "attention", tied=tied), label=False
            ),
            "norm2": prefixed(
                names.norm2,
                param_rows(cfg, names, words, "ln2", tied=tied),
                label=words.norms_labelled,
            ),
            "mlp": prefixed(names.mlp, param_rows(cfg, names, words, mlp, tied=tied), label=False),
        }
        return [row for part in ("norm1", "attention", "norm2", "mlp") for row in parts[part]]
    if component == "unembed":
        return [] if tied else [Row("lm_head", words.lm_head, ((d, V),))]
    if component == "model":
        final = total(param_rows(cfg, names, words, "lnf", tied=tied))
        norm_terms = ((d,), (d,)) if final == 2 * d else ((d,),)
        groups = layer_groups(cfg, by_window=False)
        phrases = layer_phrases(cfg, [layers for _, layers in groups])
        layer_rows = [
            Row(
                words.layers[0] if len(groups) == 1 else f"{words.layers[0]}.{kind}",
                words.layers[1] if len(groups) == 1 else f"{words.layers[1]} with {phrase}",
                (
                    (
                        total(param_rows(cfg, names, words, "block", tied=tied, layer=layers[0])),
                        len(layers),
                    ),
                ),
            )
            for (kind, layers), phrase in zip(groups, phrases, strict=True)
        ]
        return [
            *param_rows(cfg, names, words, "wte", tied=tied),
            *param_rows(cfg, names, words, "wpe", tied=tied),
            *layer_rows,
            Row(*words.final_norm, norm_terms),
            *param_rows(cfg, names, words, "unembed", tied=tied),
        ]
    return []  # no tensors of its own: a sum, a lookup of positions, rotations
