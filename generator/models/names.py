"""Where a family's checkpoint keeps each part: its tensors' names and layouts, as data.

GPT-2 fuses q, k and v into `c_attn` and keeps Conv1D's [in, out] matrices; the Llama family
keeps nn.Linear's [out, in] under `q_proj`, `k_proj`, ... A size's `ModelConfig.names` says which
(generator/models/tensors.py lists the tensors from it). GPT2_NAMES is ModelConfig's default, as
its other defaults describe GPT-2; each other family writes its own in its folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Layout = Literal["in_out", "out_in"]  # Conv1D's [in, out] (GPT-2), nn.Linear's [out, in]


@dataclass(frozen=True)
class TensorNames:
    """Where a family's checkpoint keeps each part, and how it lays matrices out."""

    embed: str  # the token embedding: "wte.weight", "model.embed_tokens.weight"
    layer: str  # a layer's prefix, {i} its index: "h.{i}.", "model.layers.{i}."
    norm1: str  # the norm before attention: "ln_1", "input_layernorm"
    norm2: str  # the norm before the MLP: "ln_2", "post_attention_layernorm"
    final_norm: str  # "ln_f", "model.norm"
    attention: str = "self_attn"  # the attention module in a layer: "attn", "self_attn"
    mlp: str = "mlp"
    positions: str | None = None  # the learned position table: "wpe.weight"
    qkv: str | None = None  # one fused q, k, v projection ("c_attn"), else q, k, v apart
    q: str = "q_proj"
    k: str = "k_proj"
    v: str = "v_proj"
    o: str = "o_proj"  # GPT-2: "c_proj"
    gate: str | None = "gate_proj"  # SwiGLU's gate (None: a GELU MLP has none)
    up: str = "up_proj"  # GPT-2: "c_fc"
    down: str = "down_proj"  # GPT-2: "c_proj"
    lm_head: str = "lm_head.weight"  # the untied unembedding
    layout: Layout = "out_in"
    # the order of a layer's parts in the state dict (random weights are drawn in this order)
    layer_order: tuple[str, ...] = ("attention", "mlp", "norm1", "norm2")
    router: str = "gate"  # the experts' router in the MLP module (gpt-oss: "router")
    experts: str = "experts"
    shared: str = "shared_experts"
    # how experts store gate and up: one [E, 2I, d] per expert, gate rows then up rows
    # ("concatenated", Mixtral, DeepSeek), or [E, d, 2I] with gate and up columns alternating
    # ("interleaved-transposed", gpt-oss)
    experts_layout: Literal["concatenated", "interleaved-transposed"] = "concatenated"


GPT2_NAMES = TensorNames(
    embed="wte.weight",
    positions="wpe.weight",
    layer="h.{i}.",
    norm1="ln_1",
    norm2="ln_2",
    final_norm="ln_f",
    attention="attn",
    qkv="c_attn",
    o="c_proj",
    gate=None,
    up="c_fc",
    down="c_proj",
    layout="in_out",
    layer_order=("norm1", "attention", "norm2", "mlp"),
)
