"""The Llama family's forward pass in numpy (Llama 2, Mistral): transformers' LlamaForCausalLM.

x = embed_tokens[ids]
for each layer:  x = x + attn(rms_norm(x));  x = x + mlp(rms_norm(x))
logits = rms_norm(x) @ lm_headᵀ            (embed_tokensᵀ when the unembedding is tied)

attn: q from n_head heads, k and v from n_kv_head heads; q and k rotated by their positions
(RoPE), k and v repeated to n_head heads (repeat_kv), causal softmax attention (within the sliding
window, if any), o_proj. mlp: down(silu(gate(x)) · up(x)). No biases unless the size has them.

forward() reads nd new tokens after the ns_past positions of `past` (a KV cache, see decode.py):
with no past it is the whole sequence's forward pass. Shapes: d = d_model, h, h_kv heads,
dh = d_head, V = vocab_size, nd new positions, ns = ns_past + nd positions seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from generator.models.cache import check_cache, empty_cache
from generator.models.checkpoint import (
    Weights,
    cast,
    check_token_ids,
    check_weights,
    sub_weights,
)
from generator.models.config import ModelConfig
from generator.models.llama.tensors import weight_shapes
from generator.models.ops import (
    apply_rotary,
    causal_attention,
    linear,
    rms_norm,
    rope_cos_sin,
    swiglu,
)


@dataclass
class AttentionTrace:
    """What one layer's attention computed (forward with keep=True)."""

    q: np.ndarray  # [h, nd, dh] queries before rotation
    k: np.ndarray  # [h_kv, nd, dh] keys before rotation
    q_rotated: np.ndarray  # [h, nd, dh] after RoPE
    k_rotated: np.ndarray  # [h_kv, nd, dh] after RoPE: what the cache keeps
    v: np.ndarray  # [h_kv, nd, dh]
    scores: np.ndarray  # [h, nd, ns] scaled and masked (−∞ where a query may not look)
    weights: np.ndarray  # [h, nd, ns] attention weights, rows sum to 1


@dataclass
class Trace:
    """One forward pass: the logits, the new keys and values, and (keep=True) per-layer traces."""

    token_ids: np.ndarray  # [nd]
    positions: np.ndarray  # [nd]: ns_past … ns − 1
    logits: np.ndarray  # [nd, V]: row i predicts the token after position positions[i]
    present: np.ndarray  # [n_layer, 2, h_kv, nd, dh]: the new rotated keys and values
    cos: np.ndarray  # [nd, dh] the rotation's cosines per position
    sin: np.ndarray  # [nd, dh]
    attention: list[AttentionTrace] = field(default_factory=list)  # one per layer (keep=True)
    residual: list[np.ndarray] = field(default_factory=list)  # [nd, d] entering each layer, + out


def attention(
    x: np.ndarray,
    w: Weights,
    cfg: ModelConfig,
    cos: np.ndarray,
    sin: np.ndarray,
    past: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, AttentionTrace]:
    """Grouped-query attention of the new rows x [nd, d] over past [2, h_kv, ns_past, dh] and
    themselves. w holds the layer's self_attn tensors without prefix ("q_proj.weight").

    Returns the output [nd, d], this layer's present [2, h_kv, nd, dh] and the trace.
    """
    nd, d = x.shape
    h, h_kv, dh = cfg.n_head, cfg.n_kv_head, cfg.d_head
    # nn.Linear stores [out, in]: x @ Wᵀ. Then split the heads: [nd, h·dh] -> [h, nd, dh].
    q = linear(x, w["q_proj.weight"].T, w.get("q_proj.bias"))  # [nd, h·dh]
    k = linear(x, w["k_proj.weight"].T, w.get("k_proj.bias"))  # [nd, h_kv·dh]
    v = linear(x, w["v_proj.weight"].T, w.get("v_proj.bias"))  # [nd, h_kv·dh]
    q = q.reshape(nd, h, dh).transpose(1, 0, 2)  # [h, nd, dh]
    k = k.reshape(nd, h_kv, dh).transpose(1, 0, 2)  # [h_kv, nd, dh]
    v = v.reshape(nd, h_kv, dh).transpose(1, 0, 2)  # [h_kv, nd, dh]
    q_rotated = apply_rotary(q, cos, sin)  # [h, nd, dh]: each pair turned by its position
    k_rotated = apply_rotary(k, cos, sin)  # [h_kv, nd, dh]
    present = np.stack([k_rotated, v])  # [2, h_kv, nd, dh]: the cache keeps rotated keys
    keys = np.concatenate([past[0], k_rotated], axis=1)  # [h_kv, ns, dh], cached ones first
    values = np.concatenate([past[1], v], axis=1)  # [h_kv, ns, dh]
    heads, scores, weights = causal_attention(q_rotated, keys, values, cfg.sliding_window)
    merged = heads.transpose(1, 0, 2).reshape(nd, h * dh)  # [nd, h·dh]
    out = linear(merged, w["o_proj.weight"].T, w.get("o_proj.bias"))  # [nd, d]
    return out, present, AttentionTrace(q, k, q_rotated, k_rotated, v, scores, weights)


def mlp(x: np.ndarray, w: Weights) -> np.ndarray:
    """SwiGLU: down(silu(gate(x)) · up(x)); x [nd, d] -> [nd, d_mlp] -> [nd, d]."""
    gate = linear(x, w["gate_proj.weight"].T, w.get("gate_proj.bias"))  # [nd, d_mlp]
    up = linear(x, w["up_proj.weight"].T, w.get("up_proj.bias"))  # [nd, d_mlp]
    return linear(swiglu(gate, up), w["down_proj.weight"].T, w.get("down_proj.bias"))  # [nd, d]


def forward(
    weights: Weights,
    cfg: ModelConfig,
    token_ids: np.ndarray,
    dtype: np.dtype | type = np.float64,
    *,
    past: np.ndarray | None = None,
    keep: bool = False,
) -> Trace:
    """Run token_ids [nd] through the model in `dtype` (float64 or float32).

    past: the cache [n_layer, 2, h_kv, ns_past, dh] of the positions before them (None: none).
    keep: also return each layer's attention trace and the residual stream.
    """
    token_ids = np.asarray(token_ids, dtype=np.int64)
    check_token_ids(cfg, token_ids)
    check_weights(weights, cfg, weight_shapes(cfg))  # a missing tensor is an error, never a zero
    past = empty_cache(cfg, dtype) if past is None else np.asarray(past, dtype=dtype)
    check_cache(cfg, past, token_ids.shape[0])
    w = cast(weights, dtype)
    positions = past.shape[3] + np.arange(token_ids.shape[0])  # [nd]: after the cached ones
    cos, sin = rope_cos_sin(positions, cfg.d_head, cfg.rope_theta, dtype)  # [nd, dh] each
    eps = cfg.norm_eps

    x = w["model.embed_tokens.weight"][token_ids]  # [nd, d]
    presents, traces, residual = [], [], []
    for i in range(cfg.n_layer):
        layer = sub_weights(w, f"model.layers.{i}.")
        if keep:
            residual.append(x)
        normed, _ = rms_norm(x, layer["input_layernorm.weight"], eps)
        a, present, trace = attention(
            normed, sub_weights(layer, "self_attn."), cfg, cos, sin, past[i]
        )
        x = x + a  # [nd, d]
        normed, _ = rms_norm(x, layer["post_attention_layernorm.weight"], eps)
        x = x + mlp(normed, sub_weights(layer, "mlp."))  # [nd, d]
        presents.append(present)
        if keep:
            traces.append(trace)
    if keep:
        residual.append(x)
    normed, _ = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight" if cfg.tied_embeddings else "lm_head.weight"]  # [V, d]
    logits = normed @ head.T  # [nd, d] @ [d, V] -> [nd, V]
    return Trace(
        token_ids=token_ids,
        positions=positions,
        logits=logits,
        present=np.stack(presents),  # [n_layer, 2, h_kv, nd, dh]
        cos=cos,
        sin=sin,
        attention=traces,
        residual=residual,
    )
