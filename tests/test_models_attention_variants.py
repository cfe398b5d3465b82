"""The attention variants of the frontier families against transformers, in float64:
YaRN's frequencies (gpt-oss, DeepSeek-V3), attention sinks with sliding windows (gpt-oss) and
multi-head latent attention with its latent cache (DeepSeek-V3).

Every comparison goes through `_close`, which asserts at most TOLERANCE and keeps the largest
error seen per kind in MEASURED (a script can run the tests and print it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow  # imports torch / transformers

import transformers.models.deepseek_v3.modeling_deepseek_v3 as modeling_deepseek_v3  # noqa: E402
import transformers.models.gpt_oss.modeling_gpt_oss as modeling_gpt_oss  # noqa: E402
from transformers import (  # noqa: E402
    DeepseekV3Config,
    DeepseekV3ForCausalLM,
    DeepseekV3Model,
    GptOssConfig,
    GptOssModel,
    LlamaConfig,
)
from transformers.masking_utils import causal_mask_function, sliding_window_overlay  # noqa: E402
from transformers.modeling_rope_utils import _compute_yarn_parameters  # noqa: E402

from generator import decode_costs  # noqa: E402
from generator.models import FAMILIES, latent, ops  # noqa: E402
from generator.models.checkpoint import sub_weights  # noqa: E402
from generator.models.config import Yarn  # noqa: E402
from generator.models.latent import LatentAttention  # noqa: E402
from generator.models.rope import inv_freq_of, rotary_cos_sin, yarn_inv_freq  # noqa: E402
from tests.llama_helpers import float64_inside  # noqa: E402

TOLERANCE = 1e-12
MEASURED: dict[str, float] = {}


def _close(ours: np.ndarray, theirs: Any, kind: str, relative: bool = False) -> None:
    """Assert |ours − theirs| <= TOLERANCE (relative to |theirs| if asked); note the largest."""
    theirs = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    assert np.shape(ours) == theirs.shape, (kind, np.shape(ours), theirs.shape)
    error = np.abs(np.asarray(ours) - theirs)
    if relative:
        error = error / np.abs(theirs)
    worst = float(error.max()) if error.size else 0.0
    MEASURED[kind] = max(MEASURED.get(kind, 0.0), worst)
    assert worst <= TOLERANCE, f"{kind}: max error {worst:.3g}"


def t(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x))


def _randomize(model: torch.nn.Module, seed: int) -> None:
    """Weights large enough that attention is far from uniform: gains 1 ± 0.2, biases and sinks
    N(0, 0.2²) and N(0, 1), matrices N(0, 1/fan_in) (the init's 0.02 makes every score ~0)."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                value = 1 + 0.2 * rng.standard_normal(p.shape)
            elif name.endswith("sinks"):
                value = rng.standard_normal(p.shape)
            elif p.ndim == 1:
                value = 0.2 * rng.standard_normal(p.shape)
            else:
                value = rng.standard_normal(p.shape) / math.sqrt(p.shape[-1])
            p.copy_(torch.from_numpy(value))


@contextmanager
def _attention_calls(layers: Any) -> Iterator[list[tuple[int, np.ndarray, np.ndarray]]]:
    """Each call of a layer's self_attn: (layer index, input [T, d], output [T, d])."""
    calls: list[tuple[int, np.ndarray, np.ndarray]] = []

    def hook(i: int) -> Callable[..., None]:
        def note(module: Any, args: Any, kwargs: dict[str, Any], output: Any) -> None:
            x = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]
            calls.append((i, x[0].detach().numpy().copy(), output[0][0].detach().numpy().copy()))

        return note

    handles = [
        layer.self_attn.register_forward_hook(hook(i), with_kwargs=True)
        for i, layer in enumerate(layers)
    ]
    try:
        yield calls
    finally:
        for handle in handles:
            handle.remove()


def _numpy_state(model: torch.nn.Module) -> dict[str, np.ndarray]:
    return {name: value.detach().numpy() for name, value in model.state_dict().items()}


# -- YaRN -------------------------------------------------------------------------------------------
GPT_OSS_YARN = Yarn(factor=32.0, original_max_position_embeddings=4096, truncate=False)  # config
DEEPSEEK_V3_YARN = Yarn(  # DeepSeek-V3's released config.json (DeepseekV3Config() has no scaling)
    factor=40.0, original_max_position_embeddings=4096, mscale=1.0, mscale_all_dim=1.0
)


def _random_yarns(count: int) -> list[tuple[int, float, Yarn]]:
    """(d_rot, θ, Yarn) over the ranges configs use: truncated or not, DeepSeek's mscales or not."""
    rng = np.random.default_rng(32)
    cases = []
    for i in range(count):
        mscale, mscale_all_dim = [(None, None), (1.0, 1.0), (0.707, 1.0), (1.0, 0.5), (None, 0.8)][
            i % 5
        ]
        yarn = Yarn(
            factor=float(
                rng.choice([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 40.0]) * rng.uniform(0.8, 1.2)
            ),
            original_max_position_embeddings=int(rng.choice([16, 256, 2048, 4096, 8192, 32768])),
            beta_fast=float(rng.choice([32.0, 16.0, 4.0, 64.0])),
            beta_slow=float(rng.choice([1.0, 2.0, 0.5])),
            truncate=bool(i % 2),
            mscale=mscale,
            mscale_all_dim=mscale_all_dim,
        )
        d_rot = int(rng.choice([2, 4, 16, 32, 64, 128]))
        cases.append((d_rot, float(rng.choice([10000.0, 150000.0, 500000.0, 1e6])), yarn))
    return cases


YARNS = [
    (64, 150000.0, GPT_OSS_YARN),
    (64, 10000.0, DEEPSEEK_V3_YARN),
    (32, 10000.0, Yarn(factor=4.0, original_max_position_embeddings=2048, attention_factor=0.9)),
    *_random_yarns(22),
]


def _yarn_rope_parameters(theta: float, yarn: Yarn) -> dict[str, Any]:
    """rope_parameters as a config.json writes them (fields left out where None)."""
    fields = {k: v for k, v in vars(yarn).items() if v is not None}
    return {"rope_type": "yarn", "rope_theta": theta, **fields}


@pytest.mark.parametrize(("d_rot", "theta", "yarn"), YARNS)
def test_yarn_is_compute_yarn_parameters(d_rot: int, theta: float, yarn: Yarn) -> None:
    config = LlamaConfig(
        hidden_size=2 * d_rot,
        num_attention_heads=2,
        head_dim=d_rot,
        max_position_embeddings=int(yarn.factor * yarn.original_max_position_embeddings),
        rope_parameters=_yarn_rope_parameters(theta, yarn),
    )
    with float64_inside():
        inv_freq, attention_factor = _compute_yarn_parameters(config)
    ours, our_factor = yarn_inv_freq(d_rot, theta, **vars(yarn))
    assert inv_freq.dtype == torch.float64
    _close(ours, inv_freq, "yarn inv_freq (relative)", relative=True)
    _close(np.float64(our_factor), np.float64(attention_factor), "yarn attention_factor")


def test_yarn_cos_sin_are_the_rotary_modules() -> None:
    """gpt-oss's and DeepSeek-V3's rotary embeddings (their YaRN, attention_factor on cos and
    sin) up to gpt-oss's context: the same cos and sin (an ulp of inv_freq would be ~1e-12 in
    them at position 131,071: rope.py's θ^(2i/r) is rounded as torch's is, here)."""
    positions = np.array([0, 1, 2, 7, 100, 4095, 4096, 8191, 33_000, 131_071])
    oss = GptOssConfig()
    with float64_inside():
        rotary = modeling_gpt_oss.GptOssRotaryEmbedding(oss)
        cos, sin = rotary(torch.zeros(1, dtype=torch.float64), t(positions)[None])
    inv_freq, factor = inv_freq_of(GPT_OSS_YARN, oss.head_dim, oss.rope_parameters["rope_theta"])
    assert factor == rotary.attention_scaling != 1.0
    ours_cos, ours_sin = rotary_cos_sin(positions, inv_freq, factor)
    half = oss.head_dim // 2  # gpt-oss's cos and sin hold one half
    _close(ours_cos[:, :half], cos[0], "yarn cos/sin")
    _close(ours_sin[:, :half], sin[0], "yarn cos/sin")

    released = DeepseekV3Config(
        max_position_embeddings=163_840,
        rope_parameters=_yarn_rope_parameters(10000.0, DEEPSEEK_V3_YARN),
    )
    with float64_inside():
        rotary = modeling_deepseek_v3.DeepseekV3RotaryEmbedding(released)
        cos, sin = rotary(torch.zeros(1, dtype=torch.float64), t(positions)[None])
    ours_cos, ours_sin = latent.rotary(_latent_of(released), positions)
    _close(ours_cos, cos[0], "yarn cos/sin")
    _close(ours_sin, sin[0], "yarn cos/sin")


# -- attention sinks --------------------------------------------------------------------------------
def _additive_mask(nd: int, ns: int, window: int | None) -> torch.Tensor:
    """transformers' mask functions' verdicts as an additive [1, 1, nd, ns] mask."""
    mask = torch.zeros(nd, ns, dtype=torch.float64)
    for i in range(nd):
        for j in range(ns):
            q = ns - nd + i
            visible = causal_mask_function(0, 0, q, j)
            if window is not None:
                visible = visible and sliding_window_overlay(window)(0, 0, q, j)
            if not visible:
                mask[i, j] = torch.finfo(torch.float64).min
    return mask[None, None]


@pytest.mark.parametrize(
    ("h", "h_kv", "nd", "ns", "window", "sink_shift"),
    [
        (4, 4, 9, 9, None, 0.0),  # causal
        (4, 2, 12, 12, 4, 0.0),  # a window shorter than the sequence
        (8, 2, 3, 11, 5, 0.0),  # a cached prefix and a window
        (2, 1, 1, 20, 6, 0.0),  # one decoding step
        (4, 2, 7, 10, None, 6.0),  # sinks larger than every score: most weight goes nowhere
        (4, 2, 7, 10, 2, -30.0),  # sinks far below: almost plain softmax
    ],
)
def test_sinks_are_gpt_oss_eager_attention(h, h_kv, nd, ns, window, sink_shift) -> None:
    rng = np.random.default_rng(h * nd + ns)
    q = 2 * rng.standard_normal((h, nd, 8))
    k, v = rng.standard_normal((2, h_kv, ns, 8))
    sinks = rng.standard_normal(h) + sink_shift

    class Module(torch.nn.Module):
        num_key_value_groups = h // h_kv

    module = Module().eval()
    module.sinks = t(sinks)
    with float64_inside(), torch.no_grad():
        out, weights = modeling_gpt_oss.eager_attention_forward(
            module, t(q)[None], t(k)[None], t(v)[None], _additive_mask(nd, ns, window), 8**-0.5
        )
    heads, _, ours = ops.causal_attention(q, k, v, window, sinks=sinks)
    _close(ours, weights[0], "sinks: weights")
    _close(heads, out[0].transpose(0, 1), "sinks: heads")
    assert (ours.sum(-1) < 1).all()  # the sink took its share of every row
    tiled = ops.causal_attention_by_tiles(q, k, v, window, rows=4, sinks=sinks)
    _close(tiled, out[0].transpose(0, 1), "sinks: heads by tiles")


def test_sinks_of_minus_infinity_are_no_sinks() -> None:
    """A sink at −∞ takes no share: the tiles give exactly the bits of no sinks at all."""
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((3, 4, 40, 8))
    for window in (None, 7):
        plain = ops.causal_attention_by_tiles(q, k, v, window, rows=16)
        none = ops.causal_attention_by_tiles(q, k, v, window, rows=16, sinks=np.full(4, -np.inf))
        np.testing.assert_array_equal(none, plain)


@pytest.mark.parametrize(("window", "sinks"), [(None, False), (5, True)])
def test_tiles_take_values_of_another_width_and_a_scale(window, sinks) -> None:
    """MLA's absorbed form: one key head c + r wide, values c wide, its own scale; by tiles as
    in one grid (the tiles' heads were once shaped like the queries)."""
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((4, 50, 12)), rng.standard_normal((1, 60, 12))
    v = rng.standard_normal((1, 60, 5))
    head_sinks = rng.standard_normal(4) if sinks else None
    full, _, _ = ops.causal_attention(q, k, v, window, sinks=head_sinks, scale=0.3)
    tiled = ops.causal_attention_by_tiles(q, k, v, window, rows=16, sinks=head_sinks, scale=0.3)
    assert tiled.shape == (4, 50, 5)
    _close(tiled, full, "tiles: other value width, scale")


def _gpt_oss_attention(
    x: np.ndarray, w: dict[str, np.ndarray], config: Any, window: int | None, cos, sin, past
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """GptOssAttention in numpy from ops: biased projections, rope, sinks, the layer's window."""
    nd, h, h_kv = x.shape[0], config.num_attention_heads, config.num_key_value_heads
    dh = config.head_dim
    q = ops.linear(x, w["q_proj.weight"].T, w["q_proj.bias"]).reshape(nd, h, dh).transpose(1, 0, 2)
    k = ops.linear(x, w["k_proj.weight"].T, w["k_proj.bias"]).reshape(nd, h_kv, dh)
    v = ops.linear(x, w["v_proj.weight"].T, w["v_proj.bias"]).reshape(nd, h_kv, dh)
    keys = np.concatenate([past[0], ops.apply_rotary(k.transpose(1, 0, 2), cos, sin)], axis=1)
    values = np.concatenate([past[1], v.transpose(1, 0, 2)], axis=1)
    heads, _, _ = ops.causal_attention(
        ops.apply_rotary(q, cos, sin), keys, values, window, sinks=w["sinks"]
    )
    out = ops.linear(heads.transpose(1, 0, 2).reshape(nd, h * dh), w["o_proj.weight"].T, None)
    return out + w["o_proj.bias"], (keys, values)


def test_gpt_oss_attention_layers_decoding_with_their_cache() -> None:
    """A 2-layer GptOssModel (a sliding layer of window 3, then a full one; YaRN; sinks;
    biases) prefilled with 5 tokens, then decoding 4: every attention call's output equals the
    ops' from the same input, the sliding layer's cache holding fewer positions than ours."""
    config = GptOssConfig(
        vocab_size=13, hidden_size=16, intermediate_size=8, head_dim=4, num_attention_heads=4,
        num_key_value_heads=2, num_hidden_layers=2, sliding_window=3, num_local_experts=2,
        num_experts_per_tok=1, max_position_embeddings=512, attn_implementation="eager",
        experts_implementation="eager",
        rope_parameters=_yarn_rope_parameters(
            150000.0, Yarn(factor=8.0, original_max_position_embeddings=64, truncate=False)
        ),
    )  # fmt: skip
    assert config.layer_types == ["sliding_attention", "full_attention"]
    with float64_inside():
        model = GptOssModel(config).double().eval()
    _randomize(model, 5)
    state = _numpy_state(model)
    ids = np.random.default_rng(5).integers(0, 13, 9)
    with _attention_calls(model.layers) as calls, float64_inside(), torch.no_grad():
        out = model(t(ids[:5])[None], use_cache=True)
        for token in ids[5:]:
            out = model(t(token[None])[None], cache=out.cache, use_cache=True)
    inv_freq, factor = inv_freq_of(
        Yarn(factor=8.0, original_max_position_embeddings=64, truncate=False), 4, 150000.0
    )
    pasts = [(np.zeros((2, 0, 4)), np.zeros((2, 0, 4))) for _ in range(2)]
    for i, x, theirs in calls:
        ns_past = pasts[i][0].shape[1]
        cos, sin = rotary_cos_sin(ns_past + np.arange(len(x)), inv_freq, factor)
        window = config.sliding_window if config.layer_types[i] == "sliding_attention" else None
        w = sub_weights(state, f"layers.{i}.self_attn.")
        ours, pasts[i] = _gpt_oss_attention(x, w, config, window, cos, sin, pasts[i])
        _close(ours, theirs, "gpt-oss attention (sinks, window, cache)")
    assert len(calls) == 2 * 5
    sliding, full = out.cache.layers
    assert full.keys.shape[2] == 9 and sliding.keys.shape[2] < 9  # a rolling cache for windows


# -- multi-head latent attention --------------------------------------------------------------------
def _latent_of(config: Any) -> LatentAttention:
    """The LatentAttention a DeepseekV3Config describes."""
    params = config.rope_parameters
    yarn = None
    if params["rope_type"] == "yarn":
        fields = set(Yarn.__dataclass_fields__)
        yarn = Yarn(**{k: v for k, v in params.items() if k in fields})
    return LatentAttention(
        d_model=config.hidden_size,
        n_head=config.num_attention_heads,
        q_lora_rank=config.q_lora_rank,
        kv_lora_rank=config.kv_lora_rank,
        qk_nope_head_dim=config.qk_nope_head_dim,
        qk_rope_head_dim=config.qk_rope_head_dim,
        v_head_dim=config.v_head_dim,
        rope_theta=params["rope_theta"],
        yarn=yarn,
        rope_interleave=config.rope_interleave,
        bias=config.attention_bias,
    )


def _random_latent(i: int) -> tuple[LatentAttention, float]:
    """A tiny MLA shape (the i-th): no query compression every third, YaRN every other."""
    rng = np.random.default_rng(100 + i)
    yarn = None
    if i % 2:
        yarn = Yarn(
            factor=float(rng.uniform(1.5, 40.0)),
            original_max_position_embeddings=int(rng.integers(8, 256)),
            beta_fast=float(rng.choice([32.0, 8.0])),
            truncate=bool(rng.integers(2)),
            mscale=[None, 1.0, 0.707][i % 3],
            mscale_all_dim=[None, 1.0, 0.8, 1.0][i % 4],
        )
    cfg = LatentAttention(
        d_model=int(rng.integers(4, 17)),
        n_head=int(rng.integers(1, 5)),
        q_lora_rank=None if i % 3 == 0 else int(rng.integers(2, 9)),
        kv_lora_rank=int(rng.integers(2, 9)),
        qk_nope_head_dim=int(rng.integers(1, 7)),
        qk_rope_head_dim=2 * int(rng.integers(1, 5)),
        v_head_dim=int(rng.integers(1, 8)),
        rope_theta=float(rng.choice([10000.0, 500.0])),
        yarn=yarn,
        rope_interleave=i % 5 != 4,
        bias=i % 4 == 1,
    )
    return cfg, float(rng.choice([1e-6, 1e-5, 0.1]))  # the model's rms_norm_eps


def _deepseek_config(cfg: LatentAttention, eps: float, n_layer: int, vocab: int = 11) -> Any:
    """A DeepseekV3Config of this attention, n_layer dense layers (no experts), eager."""
    rope: dict[str, Any] = {"rope_type": "default", "rope_theta": cfg.rope_theta}
    if cfg.yarn is not None:
        rope = _yarn_rope_parameters(cfg.rope_theta, cfg.yarn)
    return DeepseekV3Config(
        vocab_size=vocab, hidden_size=cfg.d_model, intermediate_size=2 * cfg.d_model,
        num_hidden_layers=n_layer, first_k_dense_replace=n_layer, n_routed_experts=2,
        num_experts_per_tok=1, n_group=1, topk_group=1, num_attention_heads=cfg.n_head,
        num_key_value_heads=cfg.n_head, q_lora_rank=cfg.q_lora_rank,
        kv_lora_rank=cfg.kv_lora_rank, qk_nope_head_dim=cfg.qk_nope_head_dim,
        qk_rope_head_dim=cfg.qk_rope_head_dim, v_head_dim=cfg.v_head_dim,
        rope_parameters=rope, rope_interleave=cfg.rope_interleave, attention_bias=cfg.bias,
        max_position_embeddings=8192, rms_norm_eps=eps, bos_token_id=None, eos_token_id=None,
        pad_token_id=None, attn_implementation="eager",
    )  # fmt: skip


LATENTS = [_random_latent(i) for i in range(24)]


def latent_cache_values_per_token(cfg: LatentAttention, n_layer: int = 1) -> int:
    """Values one more position adds to a latent cache: c_kv and k_rope per layer, c + r."""
    return n_layer * cfg.latent_width


def full_cache_values_per_token(cfg: LatentAttention, n_layer: int = 1) -> int:
    """Values one more position adds to a cache of every head's key and value (the keys and
    values DeepseekV3Attention.expand_kv makes): h · ((nope + r) + dv) per layer."""
    return n_layer * cfg.n_head * (cfg.qk_head_dim + cfg.v_head_dim)


def empty_latent_cache(
    cfg: LatentAttention, n_layer: int, dtype: np.dtype | type = np.float64
) -> np.ndarray:
    """A latent cache holding no positions yet: [n_layer, 0, c + r] (c_kv ‖ k_rope per row)."""
    return np.zeros((n_layer, 0, cfg.latent_width), dtype=dtype)


@pytest.mark.parametrize(("cfg", "eps"), LATENTS, ids=[f"mla{i}" for i in range(len(LATENTS))])
def test_latent_attention_is_deepseek_v3_attention(cfg: LatentAttention, eps: float) -> None:
    """Inside a 1-layer DeepseekV3Model, at positions offset up to 3000 (YaRN's ramp), T = 1 to
    6: the state dict holds weight_shapes' tensors, and both ways of computing MLA (keys and
    values expanded, or absorbed into the query and output) give the module's output."""
    config = _deepseek_config(cfg, eps, n_layer=1)
    assert _latent_of(config) == cfg
    with float64_inside():
        model = DeepseekV3Model(config).double().eval()
    _randomize(model, cfg.d_model)
    state = sub_weights(_numpy_state(model), "layers.0.self_attn.")
    assert {name: tuple(v.shape) for name, v in state.items()} == latent.weight_shapes(cfg)
    assert model.layers[0].self_attn.scaling == latent.softmax_scale(cfg)
    rng = np.random.default_rng(cfg.d_model + cfg.n_head)
    nd, offset = int(rng.integers(1, 7)), int(rng.integers(0, 3000))
    x = rng.standard_normal((1, nd, cfg.d_model))
    with _attention_calls(model.layers) as calls, float64_inside(), torch.no_grad():
        model(inputs_embeds=t(x), position_ids=t(offset + np.arange(nd))[None], use_cache=False)
    [(_, normed, theirs)] = calls
    cos, sin = latent.rotary(cfg, offset + np.arange(nd))
    empty = empty_latent_cache(cfg, 1)[0]
    for absorb in (False, True):
        ours, present, _ = latent.latent_attention(
            normed, state, cfg, cos, sin, empty, absorb=absorb
        )
        _close(ours, theirs, f"MLA (absorb={absorb})")
        assert present.shape == (nd, latent_cache_values_per_token(cfg))


def _numpy_deepseek(
    state: dict[str, np.ndarray], cfg: LatentAttention, eps: float, ids: np.ndarray, cache
) -> tuple[np.ndarray, np.ndarray]:
    """A dense DeepSeek-V3 decoder from ops and latent_attention: logits [nd, V] of the new ids
    after the latent cache [n_layer, ns_past, c + r], and the cache with them."""
    x = state["model.embed_tokens.weight"][ids]  # [nd, d]
    cos, sin = latent.rotary(cfg, cache.shape[1] + np.arange(len(ids)))
    presents = []
    for i in range(cache.shape[0]):
        layer = sub_weights(state, f"model.layers.{i}.")
        normed, _ = ops.rms_norm(x, layer["input_layernorm.weight"], eps)
        attn = sub_weights(layer, "self_attn.")
        out, present, _ = latent.latent_attention(normed, attn, cfg, cos, sin, cache[i])
        x = x + out
        normed, _ = ops.rms_norm(x, layer["post_attention_layernorm.weight"], eps)
        gate = normed @ layer["mlp.gate_proj.weight"].T
        x = (
            x
            + ops.swiglu(gate, normed @ layer["mlp.up_proj.weight"].T)
            @ layer["mlp.down_proj.weight"].T
        )
        presents.append(present)
    normed, _ = ops.rms_norm(x, state["model.norm.weight"], eps)
    return normed @ state["lm_head.weight"].T, np.concatenate([cache, np.stack(presents)], axis=1)


@pytest.mark.parametrize("index", [0, 1, 3, 4, 6, 9])
def test_latent_cache_decoding_is_transformers_cached_decoding(index: int) -> None:
    """A 2-layer DeepseekV3ForCausalLM prefilled with 4 tokens, then 5 steps of one: the logits
    of the numpy decoder reading its latent cache (absorbed) equal transformers' at every step,
    its cache rows equal what DynamicCache holds, and the counts the site prints equal the
    tensors' numel per position: DynamicCache holds the latent; expand_kv's keys and values
    (what a cache of full keys and values holds) are full_cache_values_per_token."""
    cfg, eps = LATENTS[index]
    config = _deepseek_config(cfg, eps, n_layer=2)
    with float64_inside():
        model = DeepseekV3ForCausalLM(config).double().eval()
    _randomize(model, 7 + index)
    state = _numpy_state(model)
    ids = np.random.default_rng(index).integers(0, 11, 9)
    cache = empty_latent_cache(cfg, 2)
    with _expanded_kv() as expanded, float64_inside(), torch.no_grad():
        theirs = model(t(ids[:4])[None], use_cache=True)
        for step in range(4, 10):
            ours, cache = _numpy_deepseek(state, cfg, eps, ids[len(cache[0]) : step], cache)
            _close(ours, theirs.logits[0], "latent-cache decoding: logits")
            held = theirs.cache.layers
            for i, layer in enumerate(held):  # c_kv and rotated k_rope per position
                _close(cache[i], torch.cat([layer.keys, layer.values], -1)[0, 0], "latent cache")
            if step < 9:
                theirs = model(t(ids[step : step + 1])[None], cache=theirs.cache, use_cache=True)
    ns = len(ids)
    assert sum(layer.keys.numel() + layer.values.numel() for layer in held) == ns * (
        latent_cache_values_per_token(cfg, n_layer=2)
    )
    assert cache.size == ns * latent_cache_values_per_token(cfg, n_layer=2)
    last_step = expanded[-2:]  # both layers' keys and values over all ns positions
    assert all(keys.shape == (1, cfg.n_head, ns, cfg.qk_head_dim) for keys, _ in last_step)
    assert all(values.shape == (1, cfg.n_head, ns, cfg.v_head_dim) for _, values in last_step)
    full = sum(keys.numel() + values.numel() for keys, values in last_step)
    assert full == ns * full_cache_values_per_token(cfg, n_layer=2)


@contextmanager
def _expanded_kv() -> Iterator[list[tuple[torch.Tensor, torch.Tensor]]]:
    """Each DeepseekV3Attention.expand_kv's result: every head's keys and values."""
    module = modeling_deepseek_v3
    original = module.DeepseekV3Attention.expand_kv
    results: list[tuple[torch.Tensor, torch.Tensor]] = []

    def wrapper(self: Any, kv_nope: torch.Tensor, k_rot: torch.Tensor) -> Any:
        keys, values = original(self, kv_nope, k_rot)
        results.append((keys, values))
        return keys, values

    module.DeepseekV3Attention.expand_kv = wrapper
    try:
        yield results
    finally:
        module.DeepseekV3Attention.expand_kv = original


def test_cache_values_per_token_of_deepseek_v3_config() -> None:
    """DeepseekV3Config()'s attention at full width, one step on the meta device (no memory):
    the numel per position of what DynamicCache holds and of expand_kv's keys and values are
    the counts the site prints, for each of its 61 layers."""
    config = DeepseekV3Config(attn_implementation="eager")
    cfg = _latent_of(config)
    with torch.device("meta"):
        attention = modeling_deepseek_v3.DeepseekV3Attention(config, layer_idx=0)
        x = torch.empty(1, 1, config.hidden_size)
        cos = sin = torch.empty(1, 1, config.qk_rope_head_dim)
        cache = modeling_deepseek_v3.DynamicCache()
    with _expanded_kv() as expanded:
        attention(x, (cos, sin), None, cache=cache)
    [layer] = cache.layers
    held = layer.keys.numel() + layer.values.numel()
    [(keys, values)] = expanded
    assert held * config.num_hidden_layers == latent_cache_values_per_token(cfg, 61)
    assert keys.numel() + values.numel() == full_cache_values_per_token(cfg)
    assert config.num_hidden_layers == 61
    printed = FAMILIES["deepseek-v3"].sizes["deepseek-v3"]  # what the page's numbers come from
    assert held * config.num_hidden_layers == decode_costs.kv_values_per_token(printed)
    full = (keys.numel() + values.numel()) * config.num_hidden_layers
    assert full == decode_costs.full_kv_values_per_token(printed)
