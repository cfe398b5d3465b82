"""One decoder for every family, in numpy, read from the spec (ModelConfig) and its names.

x = embed[ids] (+ positions[t] where positions are learned)
for each layer i:  x = x + attention_i(norm(x));  x = x + mlp_i(norm(x))
logits = norm(x) @ headᵀ       (head: the token embedding when tied, else lm_head)

What each step is comes from the spec: LayerNorm or RMSNorm; q, k, v fused or apart, with the
biases it names, rotated by RoPE (YaRN-scaled, or pairing neighbours) or not, each layer with its
window and any sinks, or latent attention (latent.py); a GELU or SwiGLU MLP, or experts
(experts.py) with any shared ones. This is transformers' GPT2LMHeadModel, LlamaForCausalLM,
MistralForCausalLM, MixtralForCausalLM, GptOssForCausalLM and DeepseekV3ForCausalLM read as one
pre-norm decoder (tests compare each in float64). GPT-2's pages trace its own engine
(generator/engine/, whose attention the walkthrough quotes); a test holds it equal to this one.

forward() reads nd new tokens after the positions `past` has seen (the KV cache, cache.py, which
keeps only the last W − 1 positions of a layer with a window of W): with no past it is the whole
sequence's forward pass (decode.py's decode_step grows the cache with it). Shapes: d = d_model,
h, h_kv heads, dh = d_head, V = vocab_size, nd new positions, ns = ns_past + nd positions seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from generator.models.cache import KVCache
from generator.models.checkpoint import Weights, cast, check_token_ids, check_weights, sub_weights
from generator.models.config import ModelConfig
from generator.models.experts import experts_forward, route
from generator.models.latent import LatentAttention, latent_attention
from generator.models.ops import (
    apply_rotary,
    causal_attention,
    gelu,
    layer_norm,
    linear,
    rms_norm,
    swiglu,
)
from generator.models.rope import inv_freq_of, rotary_cos_sin
from generator.models.tensors import weight_shapes


@dataclass
class AttentionTrace:
    """What one layer's attention computed (forward with keep=True); latent attention keeps its
    weights only."""

    weights: np.ndarray  # [h, nd, ns] attention weights, rows sum to 1
    q: np.ndarray | None = None  # [h, nd, dh] queries (before rotation, with RoPE)
    k: np.ndarray | None = None  # [h_kv, nd, dh] keys (before rotation)
    q_rotated: np.ndarray | None = None  # [h, nd, dh] after RoPE (q itself without)
    k_rotated: np.ndarray | None = None  # [h_kv, nd, dh] after RoPE: what the cache keeps
    v: np.ndarray | None = None  # [h_kv, nd, dh]
    scores: np.ndarray | None = None  # [h, nd, ns] scaled and masked (−∞ where hidden)


@dataclass
class Trace:
    """One forward pass: the logits, the new keys and values, and (keep=True) per-layer traces."""

    token_ids: np.ndarray  # [nd]
    positions: np.ndarray  # [nd]: ns_past … ns − 1
    logits: np.ndarray  # [nd, V]: row i predicts the token after position positions[i]
    present: list[np.ndarray]  # per layer [2, h_kv, nd, dh]: the new (rotated) keys and values
    # (latent attention: [nd, kv_rank + rope_dim], the new latent rows)
    cos: np.ndarray | None  # [nd, dh] the rotation's cosines per position (None: no RoPE)
    sin: np.ndarray | None  # [nd, dh]
    attention: list[AttentionTrace] = field(default_factory=list)  # one per layer (keep=True)
    residual: list[np.ndarray] = field(default_factory=list)  # [nd, d] entering each layer, + out


def project(x: np.ndarray, w: Weights, name: str, cfg: ModelConfig) -> np.ndarray:
    """x @ W + b for the projection `name`, in the checkpoint's layout ([out, in] is transposed)."""
    weight = w[f"{name}.weight"]
    return linear(x, weight.T if cfg.names.layout == "out_in" else weight, w.get(f"{name}.bias"))


def norm(x: np.ndarray, w: Weights, name: str, cfg: ModelConfig) -> np.ndarray:
    """The spec's norm of x [nd, d], with the gain (and LayerNorm's shift) stored under `name`."""
    if cfg.norm == "layernorm":
        out, _ = layer_norm(x, w[f"{name}.weight"], w[f"{name}.bias"], cfg.norm_eps, trace=False)
        return out
    out, _ = rms_norm(x, w[f"{name}.weight"], cfg.norm_eps)
    return out


def attention(
    x: np.ndarray,
    w: Weights,
    cfg: ModelConfig,
    layer: int,
    cos: np.ndarray | None,
    sin: np.ndarray | None,
    past: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, AttentionTrace]:
    """Attention of the new rows x [nd, d] over the layer's cache past [2, h_kv, kept, dh] (the
    positions just before them, as many as the layer keeps) and themselves. w holds the layer's
    attention tensors without prefix ("q_proj.weight"); with sinks, "sinks" [h] joins each
    softmax row. Latent attention's cache rows are [kept, kv_rank + rope_dim] instead.

    Returns the output [nd, d], this layer's present [2, h_kv, nd, dh] and the trace.
    """
    if cfg.latent is not None:
        assert cos is not None and sin is not None, "latent attention rotates its rope part"
        out, rows, weights = latent_attention(x, w, latent_of(cfg), cos, sin, past)
        return out, rows, AttentionTrace(weights)
    nd, _ = x.shape
    names, h, h_kv, dh = cfg.names, cfg.n_head, cfg.n_kv_head, cfg.d_head
    if names.qkv is not None:  # one GEMM for all three, then split: [nd, (h + 2·h_kv)·dh]
        q, k, v = np.split(project(x, w, names.qkv, cfg), [h * dh, (h + h_kv) * dh], axis=-1)
    else:
        q, k, v = (project(x, w, getattr(names, role), cfg) for role in ("q", "k", "v"))
    q = q.reshape(nd, h, dh).transpose(1, 0, 2)  # [h, nd, dh]
    k = k.reshape(nd, h_kv, dh).transpose(1, 0, 2)  # [h_kv, nd, dh]
    v = v.reshape(nd, h_kv, dh).transpose(1, 0, 2)  # [h_kv, nd, dh]
    q_rotated, k_rotated = q, k
    if cos is not None and sin is not None:  # each pair turned by its position's angle
        q_rotated, k_rotated = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
    present = np.stack([k_rotated, v])  # [2, h_kv, nd, dh]: the cache keeps rotated keys
    keys = np.concatenate([past[0], k_rotated], axis=1)  # [h_kv, ns, dh], cached ones first
    values = np.concatenate([past[1], v], axis=1)  # [h_kv, ns, dh]
    sinks = w["sinks"] if cfg.attention_sinks else None  # [h]: a logit per head, no value
    heads, scores, weights = causal_attention(
        q_rotated, keys, values, cfg.window(layer), sinks=sinks
    )
    merged = heads.transpose(1, 0, 2).reshape(nd, h * dh)  # [nd, h·dh]
    out = project(merged, w, names.o, cfg)  # [nd, d]
    return out, present, AttentionTrace(weights, q, k, q_rotated, k_rotated, v, scores)


def latent_of(cfg: ModelConfig) -> LatentAttention:
    """The spec's latent attention, as generator/models/latent.py reads it."""
    assert cfg.latent is not None
    lat = cfg.latent
    return LatentAttention(
        d_model=cfg.d_model,
        n_head=cfg.n_head,
        q_lora_rank=lat.q_rank,
        kv_lora_rank=lat.kv_rank,
        qk_nope_head_dim=lat.nope_dim,
        qk_rope_head_dim=lat.rope_dim,
        v_head_dim=lat.v_dim,
        rope_theta=cfg.rope_theta,
        yarn=cfg.rope_scaling,
        rope_interleave=cfg.rope_interleave,
        bias=cfg.biased("o"),
    )


def rotary(
    cfg: ModelConfig, positions: np.ndarray, dtype: np.dtype | type
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """cos and sin [nd, r] of the new positions' angles (r: the rotated part of a head), YaRN's
    scaled where the spec says; (None, None) without RoPE."""
    if cfg.positions != "rope":
        return None, None
    d_rot = cfg.latent.rope_dim if cfg.latent is not None else cfg.d_head
    inv_freq, factor = inv_freq_of(cfg.rope_scaling, d_rot, cfg.rope_theta)
    return rotary_cos_sin(positions, inv_freq, factor, dtype)


def mlp(x: np.ndarray, w: Weights, cfg: ModelConfig) -> np.ndarray:
    """GELU: down(gelu(up(x))); SwiGLU: down(silu(gate(x)) · up(x)). x [nd, d] -> [nd, d]."""
    names = cfg.names
    if cfg.mlp == "gelu":
        hidden = gelu(project(x, w, names.up, cfg))  # [nd, d_mlp]
    else:  # SwiGLU (a clamped one is the experts' only: a dense MLP beside them is plain)
        assert names.gate is not None
        gate = project(x, w, names.gate, cfg)  # [nd, d_mlp]
        hidden = swiglu(gate, project(x, w, names.up, cfg))  # [nd, d_mlp]
    return project(hidden, w, names.down, cfg)  # [nd, d]


def moe(x: np.ndarray, w: Weights, cfg: ModelConfig) -> np.ndarray:
    """A mixture of experts: the router scores every expert for each of x [nd, d]'s tokens, each
    token runs its top_k (experts.py), weighted, plus the shared experts every token runs."""
    assert cfg.experts is not None
    spec, names = cfg.experts, cfg.names
    router = f"{names.router}."
    logits = linear(x, w[f"{router}weight"].T, w.get(f"{router}bias"))  # [nd, E]
    chosen, weights = route(
        logits,
        top_k=spec.top_k,
        kind=spec.router,
        norm_topk_prob=spec.norm_topk_prob,
        n_group=spec.n_group,
        topk_group=spec.topk_group,
        correction_bias=w.get(f"{router}e_score_correction_bias"),
        scaling=spec.routed_scaling,
    )  # [nd, k] each
    experts = f"{names.experts}."
    out = experts_forward(
        x,
        chosen,
        weights,
        w[f"{experts}gate_up_proj"],
        w[f"{experts}down_proj"],
        layout=names.experts_layout,
        act="clamped" if cfg.mlp == "swiglu-clamped" else "silu",
        gate_up_bias=w.get(f"{experts}gate_up_proj_bias"),
        down_bias=w.get(f"{experts}down_proj_bias"),
        swiglu_alpha=cfg.swiglu_alpha,
        swiglu_limit=cfg.swiglu_limit,
    )  # [nd, d]
    if spec.n_shared:
        out = out + mlp(x, sub_weights(w, f"{names.shared}."), cfg)
    return out


def forward(
    weights: Weights,
    cfg: ModelConfig,
    token_ids: np.ndarray,
    dtype: np.dtype | type = np.float64,
    *,
    past: KVCache | None = None,
    keep: bool = False,
) -> Trace:
    """Run token_ids [nd] through the model in `dtype` (float64 or float32).

    past: the cache of the positions before them (None: none).
    keep: also return each layer's attention trace and the residual stream.
    """
    token_ids = np.asarray(token_ids, dtype=np.int64)
    check_token_ids(cfg, token_ids)
    check_weights(weights, cfg, weight_shapes(cfg, cfg.names))  # never a missing tensor read as 0
    past = KVCache.empty(cfg, dtype) if past is None else past
    past.check(cfg, token_ids.shape[0])
    w, names = cast(weights, dtype), cfg.names
    positions = past.seen + np.arange(token_ids.shape[0])  # [nd]: after the cached ones
    cos, sin = rotary(cfg, positions, dtype)  # [nd, r] each, or None without RoPE

    x = w[names.embed][token_ids]  # [nd, d]
    if names.positions is not None:  # learned positions: a row of the table per position
        x = x + w[names.positions][positions]  # [nd, d]
    presents, traces, residual = [], [], []
    for i in range(cfg.n_layer):
        layer = sub_weights(w, names.layer.format(i=i))
        if keep:
            residual.append(x)
        normed = norm(x, layer, names.norm1, cfg)
        a, present, trace = attention(
            normed,
            sub_weights(layer, f"{names.attention}."),
            cfg,
            i,
            cos,
            sin,
            np.asarray(past.layers[i], dtype=dtype),
        )
        x = x + a  # [nd, d]
        normed = norm(x, layer, names.norm2, cfg)
        branch = moe if cfg.moe_layer(i) else mlp
        x = x + branch(normed, sub_weights(layer, f"{names.mlp}."), cfg)  # [nd, d]
        presents.append(present)
        if keep:
            traces.append(trace)
    if keep:
        residual.append(x)
    normed = norm(x, w, names.final_norm, cfg)
    head = w[names.embed if cfg.tied_embeddings else names.lm_head]  # [V, d]
    logits = normed @ head.T  # [nd, d] @ [d, V] -> [nd, V]
    return Trace(
        token_ids=token_ids,
        positions=positions,
        logits=logits,
        present=presents,
        cos=cos,
        sin=sin,
        attention=traces,
        residual=residual,
    )
