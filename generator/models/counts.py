"""Parameter and FLOP rows of one instance of a component, for any family, read from its spec.

What a row counts comes from the spec (ModelConfig) and the checkpoint's names (TensorNames):
which projections there are, how wide, with which biases. What a row is called comes from the
family's `Words`, prose kept in its folder (GPT-2's "Fused Q, K, V projection", Llama's
"Query projection q_proj"). FLOPs follow generator.accounting.FLOP_CONVENTION.

Shapes: d = d_model, h heads, dh = d_head, f = d_mlp, V = vocab_size, T the sequence length.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.models.config import ModelConfig
from generator.models.rows import Row, prefixed, total
from generator.models.tensors import TensorNames

NORMS = ("ln1", "ln2", "lnf")


@dataclass(frozen=True)
class Words:
    """What a family's accounting rows are called: (key, label) pairs, and labels by role.

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
    params: dict[str, str] = field(default_factory=dict)  # parameter labels by role
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


def _attention_parts(cfg: ModelConfig, names: TensorNames) -> list[tuple[str, str, int, int, bool]]:
    """(role, module, in, out, biased) of each projection of a layer's attention."""
    d, q, kv = cfg.d_model, cfg.d_attn, cfg.d_kv
    if names.qkv is not None:
        parts = [("qkv", names.qkv, d, q + 2 * kv, cfg.biased("q"))]
    else:
        parts = [
            (role, getattr(names, role), d, width, cfg.biased(role))
            for role, width in (("q", q), ("k", kv), ("v", kv))
        ]
    return [*parts, ("o", names.o, q, d, cfg.biased("o"))]


def _mlp_parts(cfg: ModelConfig, names: TensorNames) -> list[tuple[str, str, int, int, bool]]:
    """(role, module, in, out, biased) of each projection of a dense MLP."""
    d, f, bias = cfg.d_model, cfg.d_mlp, cfg.biased("mlp")
    parts = []
    if cfg.mlp != "gelu" and names.gate is not None:
        parts.append(("gate", names.gate, d, f, bias))
    return [*parts, ("up", names.up, d, f, bias), ("down", names.down, f, d, bias)]


def param_rows(
    cfg: ModelConfig, names: TensorNames, words: Words, component: str, *, tied: bool
) -> list[Row]:
    """The learned tensors of one instance of `component`, one row each (matrices in × out)."""
    d, V = cfg.d_model, cfg.vocab_size
    if component == "wte":
        return [Row(*words.embed, ((V, d),))]
    if component == "wpe":
        return [Row(*words.positions, ((cfg.n_ctx, d),))] if names.positions else []
    if component in NORMS:
        rows = [Row(*words.gain, ((d,),))]
        return rows + [Row(*words.shift, ((d,),))] if cfg.norm == "layernorm" else rows
    if component == "attention":
        return [
            Row(module, words.param_label(role, module), _matrix_terms(cfg, n_in, n_out, bias))
            for role, module, n_in, n_out, bias in _attention_parts(cfg, names)
        ]
    if component == "mlp":
        return [
            Row(module, words.param_label(role, module), _matrix_terms(cfg, n_in, n_out, bias))
            for role, module, n_in, n_out, bias in _mlp_parts(cfg, names)
        ]
    if component == "block":
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
            "mlp": prefixed(
                names.mlp, param_rows(cfg, names, words, "mlp", tied=tied), label=False
            ),
        }
        return [row for part in ("norm1", "attention", "norm2", "mlp") for row in parts[part]]
    if component == "unembed":
        return [] if tied else [Row("lm_head", words.lm_head, ((d, V),))]
    if component == "model":
        layers = total(param_rows(cfg, names, words, "block", tied=tied))
        final = total(param_rows(cfg, names, words, "lnf", tied=tied))
        norm_terms = ((d,), (d,)) if final == 2 * d else ((d,),)
        return [
            *param_rows(cfg, names, words, "wte", tied=tied),
            *param_rows(cfg, names, words, "wpe", tied=tied),
            Row(*words.layers, ((layers, cfg.n_layer),)),
            Row(*words.final_norm, norm_terms),
            *param_rows(cfg, names, words, "unembed", tied=tied),
        ]
    return []  # no tensors of its own: a sum, a lookup of positions, rotations


def seen_keys(cfg: ModelConfig, layer: int, T: int) -> int:
    """The keys a query of layer `layer` is compared with, at sequence length T: T, or the window
    W when the layer has one (a kernel computes those; the masked rest is never needed)."""
    window = cfg.window(layer)
    return T if window is None else min(T, window)


def layer_groups(cfg: ModelConfig) -> list[tuple[str, tuple[int, ...]]]:
    """The model's layers grouped by what their rows depend on (their window): (kind, layers),
    in order of each kind's first layer. One group when every layer is alike."""
    groups: dict[str, list[int]] = {}
    for i in range(cfg.n_layer):
        groups.setdefault(cfg.layer_type(i), []).append(i)
    return [(kind, tuple(layers)) for kind, layers in groups.items()]


def flop_rows(
    cfg: ModelConfig, names: TensorNames, words: Words, component: str, T: int, layer: int = 0
) -> list[Row]:
    """Forward FLOPs per token of one instance of `component` (in layer `layer`, for the parts of
    a layer) at sequence length T."""
    d, h, dh, V = cfg.d_model, cfg.n_head, cfg.d_head, cfg.vocab_size
    if component == "attention":
        parts = _attention_parts(cfg, names)
        rows = [
            Row(module, words.flops[role], ((2, n_in, n_out),))
            for role, module, n_in, n_out, _ in parts
        ]
        keys = seen_keys(cfg, layer, T)
        grid = [
            Row("scores", words.flops["scores"], ((2, h, keys, dh),)),
            Row("weighted_sum", words.flops["weighted_sum"], ((2, h, keys, dh),)),
        ]
        return [*rows[:-1], *grid, rows[-1]]
    if component == "mlp":
        return [
            Row(module, words.flops[role], ((2, n_in, n_out),))
            for role, module, n_in, n_out, _ in _mlp_parts(cfg, names)
        ]
    if component == "block":
        attn = flop_rows(cfg, names, words, "attention", T, layer)
        mlp = flop_rows(cfg, names, words, "mlp", T, layer)
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
    rows = []
    for kind, layers in groups:
        block = total(flop_rows(cfg, names, words, "block", T, layers[0]))
        if len(groups) == 1:
            rows.append(Row(key, label, ((block, len(layers)),)))
        else:
            rows.append(
                Row(f"{key}.{kind}", f"{label} with {kind} attention", ((block, len(layers)),))
            )
    return rows
