"""Incremental decoding with a KV cache: GPT-2's `past` / `present`, in numpy.

A step reads nd new tokens and the cache of the ns_past tokens before them, and returns the new
tokens' logits and the grown cache. Only the new tokens are projected; their queries attend to
ns = ns_past + nd keys and values, the cached ones first:

    cache: [n_layer, 2, n_head, ns_past, d_head]   one [k, v] stack per layer, as gpt-2's `past`
    present: [n_layer, 2, n_head, nd, d_head]      the new rows, as gpt-2's `present`
    grown cache = concat(cache, present) along the positions axis

The mask is rectangular (gpt-2's attention_mask(nd, ns)): new row i sees column j when
j <= ns - nd + i, i.e. every cached position and the new ones up to itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generator.config import ModelConfig
from generator.engine.layers import Weights, cast, layer_norm, linear, mlp, sub_weights
from generator.models.cache import check_cache
from generator.models.cache import empty_cache as empty_cache
from generator.models.checkpoint import check_token_ids, check_weights
from generator.models.ops import causal_attention
from generator.models.ops import causal_mask as causal_mask
from generator.models.tensors import weight_shapes


@dataclass
class Step:
    """One decoding step: the new tokens' logits, what they added to the cache, and the cache."""

    token_ids: np.ndarray  # [nd] the tokens this step read
    positions: np.ndarray  # [nd] their positions: ns_past .. ns - 1
    logits: np.ndarray  # [nd, V]: row i predicts the token after position positions[i]
    present: np.ndarray  # [n_layer, 2, n_head, nd, d_head]: the new keys and values
    cache: np.ndarray  # [n_layer, 2, n_head, ns, d_head]: the cache the next step reads
    scores: list[np.ndarray]  # per layer, scaled and masked scores [n_head, nd, ns] (−∞: masked)
    weights: list[np.ndarray]  # per layer, the attention weights [n_head, nd, ns]
    # (both empty when decode_step was asked for grids=False)


def attention_step(
    x: np.ndarray, past: np.ndarray, w: Weights, cfg: ModelConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Attention of the new rows x [nd, d] over the cached and new keys.

    past is this layer's [2, h, ns_past, dh]. Returns the output [nd, d], this layer's present
    [2, h, nd, dh], the scaled, masked scores and the attention weights (both [h, nd, ns]).
    """
    nd, d = x.shape
    h, dh = cfg.n_head, cfg.d_head
    qkv = linear(x, w["c_attn.weight"], w.get("c_attn.bias"))  # [nd, 3d]: new rows only
    q, k, v = (t.reshape(nd, h, dh).transpose(1, 0, 2) for t in np.split(qkv, 3, axis=-1))
    present = np.stack([k, v])  # [2, h, nd, dh]: gpt-2's tf.stack([k, v], axis=1)
    k = np.concatenate([past[0], k], axis=1)  # [h, ns, dh]: cached keys first
    v = np.concatenate([past[1], v], axis=1)  # [h, ns, dh]
    heads, scores, weights = causal_attention(q, k, v)  # [h, nd, dh], [h, nd, ns] × 2
    merged = heads.transpose(1, 0, 2).reshape(nd, d)  # [nd, d]
    out = linear(merged, w["c_proj.weight"], w.get("c_proj.bias"))  # [nd, d]
    return out, present, scores, weights


def decode_step(
    weights: Weights,
    cfg: ModelConfig,
    token_ids: np.ndarray,
    cache: np.ndarray | None = None,
    dtype: np.dtype | type = np.float64,
    grids: bool = True,
) -> Step:
    """Run the nd new tokens token_ids [nd] through the model, reading and growing the cache.

    With an empty cache this is the ordinary forward pass (the prompt's "prefill"); after it,
    one token per step is enough, since every earlier position's keys and values are cached.
    grids=False keeps no layer's scores or weights: the same numbers, without holding
    2 · n_layer [n_head, nd, ns] grids at once (2.4 GB for GPT-2 small's 1,024-token prefill in
    float64) when only the logits and the cache are wanted, as in sampling.generate.
    """
    token_ids = np.asarray(token_ids, dtype=np.int64)
    check_token_ids(cfg, token_ids)
    check_weights(weights, cfg, weight_shapes(cfg, cfg.names))
    cache = empty_cache(cfg, dtype) if cache is None else np.asarray(cache, dtype=dtype)
    check_cache(cfg, cache, token_ids.shape[0])
    w = cast(weights, dtype)
    past_length = cache.shape[3]
    nd = token_ids.shape[0]
    positions = past_length + np.arange(nd)  # gpt-2's positions_for(tokens, past_length)

    x = w["wte.weight"][token_ids] + w["wpe.weight"][positions]  # [nd, d]
    presents, attn_scores, attn_weights = [], [], []
    for i in range(cfg.n_layer):
        b = sub_weights(w, f"h.{i}.")
        ln1, _ = layer_norm(x, b["ln_1.weight"], b["ln_1.bias"], cfg.layer_norm_eps, trace=False)
        a, present, scores_i, weights_i = attention_step(
            ln1, cache[i], sub_weights(b, "attn."), cfg
        )
        x = x + a  # [nd, d]
        ln2, _ = layer_norm(x, b["ln_2.weight"], b["ln_2.bias"], cfg.layer_norm_eps, trace=False)
        m, _ = mlp(ln2, sub_weights(b, "mlp."))
        x = x + m  # [nd, d]
        presents.append(present)
        if grids:
            attn_scores.append(scores_i)
            attn_weights.append(weights_i)
    lnf, _ = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], cfg.layer_norm_eps, trace=False)
    logits = lnf @ w["wte.weight"].T  # [nd, V], tied unembedding
    present = np.stack(presents)  # [n_layer, 2, h, nd, dh]
    return Step(
        token_ids=token_ids,
        positions=positions,
        logits=logits,
        present=present,
        cache=np.concatenate([cache, present], axis=3),  # gpt-2's sample.py: concat past, presents
        scores=attn_scores,
        weights=attn_weights,
    )
