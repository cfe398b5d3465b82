"""Every checkpoint tensor of a size, by name, shape and kind, from its spec and its family's names.

A family's checkpoint stores the same parts under its own names and layouts: GPT-2 fuses q, k and
v into `c_attn` and keeps Conv1D's [in, out] matrices; Llama's family keeps nn.Linear's [out, in]
under `q_proj`, `k_proj`, ... `TensorNames` is that difference, as data in the family's folder;
`tensors(cfg, names)` lists what a size holds, in its state dict's order. The engine, the
checkpoint check, random weights and the accounting read this one list.

Shapes in comments: d = d_model, h, h_kv heads, dh = d_head, f = d_mlp, E experts, I = d_expert.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from generator.models.config import ModelConfig
from generator.models.names import TensorNames

Kind = Literal["embedding", "gain", "shift", "matrix", "bias", "experts", "logit", "buffer"]


@dataclass(frozen=True)
class Tensor:
    """One checkpoint tensor: its shape, what kind of values it holds, and the inputs of a
    matrix (the fan-in random weights are scaled by)."""

    shape: tuple[int, ...]
    kind: Kind
    fan_in: int = 0  # a matrix's (or stack of experts') input width

    @property
    def learned(self) -> bool:
        """A parameter (trained); a buffer is kept in the checkpoint but not trained."""
        return self.kind != "buffer"


def _matrix(names: TensorNames, n_in: int, n_out: int) -> Tensor:
    shape = (n_in, n_out) if names.layout == "in_out" else (n_out, n_in)
    return Tensor(shape, "matrix", n_in)


def tensors(cfg: ModelConfig, names: TensorNames) -> dict[str, Tensor]:
    """Every tensor of the model, in its state dict's order."""
    d = cfg.d_model
    found: dict[str, Tensor] = {names.embed: Tensor((cfg.vocab_size, d), "embedding")}
    if names.positions is not None:
        found[names.positions] = Tensor((cfg.n_ctx, d), "embedding")
    for i in range(cfg.n_layer):
        for part in names.layer_order:
            found.update(_layer_part(cfg, names, part, i))
    found.update(_norm(cfg, f"{names.final_norm}.", d))
    if not cfg.tied_embeddings:
        found[names.lm_head] = Tensor((cfg.vocab_size, d), "matrix", d)
    return found


def _layer_part(cfg: ModelConfig, names: TensorNames, part: str, i: int) -> dict[str, Tensor]:
    """The tensors of one part ("norm1", "attention", "norm2", "mlp") of layer i."""
    prefix = names.layer.format(i=i)
    if part in ("norm1", "norm2"):
        return _norm(cfg, f"{prefix}{getattr(names, part)}.", cfg.d_model)
    if part == "attention":
        return _attention(cfg, names, f"{prefix}{names.attention}.")
    return _mlp(cfg, names, f"{prefix}{names.mlp}.", i)


def weight_shapes(cfg: ModelConfig, names: TensorNames) -> dict[str, tuple[int, ...]]:
    """Every tensor's name and shape, in the state dict's order."""
    return {name: tensor.shape for name, tensor in tensors(cfg, names).items()}


def _norm(cfg: ModelConfig, prefix: str, width: int) -> dict[str, Tensor]:
    """A norm's gain, and LayerNorm's shift."""
    found = {f"{prefix}weight": Tensor((width,), "gain")}
    if cfg.norm == "layernorm":
        found[f"{prefix}bias"] = Tensor((width,), "shift")
    return found


def _linear(
    cfg: ModelConfig, names: TensorNames, prefix: str, n_in: int, n_out: int, bias: bool
) -> dict[str, Tensor]:
    found = {f"{prefix}weight": _matrix(names, n_in, n_out)}
    if bias:
        found[f"{prefix}bias"] = Tensor((n_out,), "bias")
    return found


def _attention(cfg: ModelConfig, names: TensorNames, prefix: str) -> dict[str, Tensor]:
    """The attention's projections (fused or apart, or latent), and its sinks."""
    d, q, kv = cfg.d_model, cfg.d_attn, cfg.d_kv
    found: dict[str, Tensor] = {}
    if cfg.attention_sinks:  # a parameter of the module itself: saved before its children
        found[f"{prefix}sinks"] = Tensor((cfg.n_head,), "logit")
    if cfg.latent is not None:
        return found | _latent(cfg, names, prefix)
    if names.qkv is not None:  # [d, 3d]: q, k, v side by side, one bias over all three
        found |= _linear(cfg, names, f"{prefix}{names.qkv}.", d, q + 2 * kv, cfg.biased("q"))
    else:
        for role, width in (("q", q), ("k", kv), ("v", kv)):
            found |= _linear(
                cfg, names, f"{prefix}{getattr(names, role)}.", d, width, cfg.biased(role)
            )
    return found | _linear(cfg, names, f"{prefix}{names.o}.", q, d, cfg.biased("o"))


def _latent(cfg: ModelConfig, names: TensorNames, prefix: str) -> dict[str, Tensor]:
    """DeepSeek's latent attention: queries through an optional latent, keys and values from one
    latent per position (plus the shared rotated key), each latent normalised."""
    assert cfg.latent is not None
    lat, d, h = cfg.latent, cfg.d_model, cfg.n_head
    found: dict[str, Tensor] = {}
    if lat.q_rank is None:  # transformers gives q_proj, q_b_proj and kv_b_proj no bias
        found |= _linear(cfg, names, f"{prefix}q_proj.", d, h * lat.qk_dim, False)
    else:
        found |= _linear(cfg, names, f"{prefix}q_a_proj.", d, lat.q_rank, cfg.biased("q"))
        found |= _norm(cfg, f"{prefix}q_a_layernorm.", lat.q_rank)
        found |= _linear(cfg, names, f"{prefix}q_b_proj.", lat.q_rank, h * lat.qk_dim, False)
    kv_a = lat.kv_rank + lat.rope_dim
    found |= _linear(cfg, names, f"{prefix}kv_a_proj_with_mqa.", d, kv_a, cfg.biased("k"))
    found |= _norm(cfg, f"{prefix}kv_a_layernorm.", lat.kv_rank)
    kv_b = h * (lat.nope_dim + lat.v_dim)
    found |= _linear(cfg, names, f"{prefix}kv_b_proj.", lat.kv_rank, kv_b, False)
    return found | _linear(cfg, names, f"{prefix}{names.o}.", h * lat.v_dim, d, cfg.biased("o"))


def _dense_mlp(
    cfg: ModelConfig, names: TensorNames, prefix: str, width: int, bias: bool
) -> dict[str, Tensor]:
    """GELU's up and down, or SwiGLU's gate, up and down, `width` wide."""
    d = cfg.d_model
    found: dict[str, Tensor] = {}
    if cfg.mlp != "gelu" and names.gate is not None:
        found |= _linear(cfg, names, f"{prefix}{names.gate}.", d, width, bias)
    found |= _linear(cfg, names, f"{prefix}{names.up}.", d, width, bias)
    return found | _linear(cfg, names, f"{prefix}{names.down}.", width, d, bias)


def _mlp(cfg: ModelConfig, names: TensorNames, prefix: str, layer: int) -> dict[str, Tensor]:
    """A dense MLP, or the router, the routed experts and any shared experts."""
    if not cfg.moe_layer(layer):
        return _dense_mlp(cfg, names, prefix, cfg.d_mlp, cfg.biased("mlp"))
    moe = cfg.experts
    assert moe is not None
    d, E, width = cfg.d_model, moe.n_experts, moe.d_expert
    router = f"{prefix}{names.router}."
    found = {f"{router}weight": Tensor((E, d), "matrix", d)}
    if moe.router_bias:
        found[f"{router}bias"] = Tensor((E,), "bias")
    if moe.router == "sigmoid-grouped":  # a buffer: kept in the checkpoint, not trained
        found[f"{router}e_score_correction_bias"] = Tensor((E,), "buffer")
    experts = f"{prefix}{names.experts}."
    biased = cfg.biased("mlp")
    if names.experts_layout == "concatenated":  # nn.Linear's [out, in] per expert
        found[f"{experts}gate_up_proj"] = Tensor((E, 2 * width, d), "experts", d)
        found[f"{experts}down_proj"] = Tensor((E, d, width), "experts", width)
    else:  # [in, out] per expert, gate and up columns alternating
        found[f"{experts}gate_up_proj"] = Tensor((E, d, 2 * width), "experts", d)
    if biased:
        found[f"{experts}gate_up_proj_bias"] = Tensor((E, 2 * width), "bias")
    if names.experts_layout == "interleaved-transposed":
        found[f"{experts}down_proj"] = Tensor((E, width, d), "experts", width)
    if biased:
        found[f"{experts}down_proj_bias"] = Tensor((E, d), "bias")
    if moe.n_shared:
        shared = f"{prefix}{names.shared}."
        found |= _dense_mlp(cfg, names, shared, moe.n_shared * width, biased)
    return found
