"""Shared test helpers: transformers' LlamaForCausalLM / MistralForCausalLM holding the engine's
weights, run in float64 all the way through, and what their attention computed inside.

transformers computes three things in float32 even in a float64 model, on purpose (for half
precision): RMSNorm's variance (`hidden_states.to(torch.float32)`), RoPE's angles (`inv_freq` and
`position_ids.float()`) and eager attention's softmax (`dtype=torch.float32`). `float64_inside()`
runs the same modules with every such float32 request made float64, so their logits are exact to
float64's precision, and comparable with the engine's at 1e-12; without it they are exact to
float32's (~1e-6), which `test_*_float32_casts` shows.

Imports torch and transformers: only the tests that need them import this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch
import transformers.models.llama.modeling_llama as modeling_llama
import transformers.models.mistral.modeling_mistral as modeling_mistral
from torch.overrides import TorchFunctionMode
from transformers import LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM

from generator.models.config import ModelConfig
from generator.models.tensors import weight_shapes as shapes_of

ARCHS = {
    "llama": (LlamaConfig, LlamaForCausalLM, modeling_llama),
    "mistral": (MistralConfig, MistralForCausalLM, modeling_mistral),
}


class _Float64Inside(TorchFunctionMode):
    """Every torch call with float32 asked for (dtype argument, .float()) gets float64 instead."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.float:
            func = torch.Tensor.double
        args = tuple(torch.float64 if arg is torch.float32 else arg for arg in args)
        kwargs = {k: torch.float64 if v is torch.float32 else v for k, v in (kwargs or {}).items()}
        return func(*args, **kwargs)


@contextmanager
def float64_inside() -> Iterator[None]:
    with _Float64Inside():
        yield


def arch_of(cfg: ModelConfig) -> str:
    """Mistral's classes for a size with a sliding window (LlamaConfig has none), Llama's else."""
    return "mistral" if cfg.sliding_window is not None else "llama"


def hf_config(cfg: ModelConfig, arch: str | None = None):
    """transformers' config of the same shape: eager attention, no dropout, no special tokens."""
    arch = arch or arch_of(cfg)
    settings = dict(
        vocab_size=cfg.vocab_size,
        hidden_size=cfg.d_model,
        intermediate_size=cfg.d_mlp,
        num_hidden_layers=cfg.n_layer,
        num_attention_heads=cfg.n_head,
        num_key_value_heads=cfg.n_kv_head,
        max_position_embeddings=cfg.n_ctx,
        rms_norm_eps=cfg.norm_eps,
        rope_parameters={"rope_type": "default", "rope_theta": cfg.rope_theta},
        tie_word_embeddings=cfg.tied_embeddings,
        bos_token_id=None,
        eos_token_id=None,
        pad_token_id=None,
        attn_implementation="eager",
    )
    if arch == "mistral":
        assert not cfg.bias, "Mistral's projections have no biases"
        settings["sliding_window"] = cfg.sliding_window
    else:
        assert cfg.sliding_window is None, "LlamaConfig has no sliding window"
        settings["attention_bias"] = settings["mlp_bias"] = cfg.bias
    return ARCHS[arch][0](**settings)


def hf_model(weights: dict[str, np.ndarray], cfg: ModelConfig, dtype=torch.float64, arch=None):
    """A LlamaForCausalLM (MistralForCausalLM) in eval mode holding exactly `weights`.

    Made inside float64_inside() when dtype is float64, so that RoPE's inv_freq buffer is
    computed in float64 too; run it inside float64_inside() as well.
    """
    arch = arch or arch_of(cfg)
    config = hf_config(cfg, arch)
    with float64_inside() if dtype == torch.float64 else _nothing():
        model = ARCHS[arch][1](config).to(dtype).eval()
    state = {name: torch.tensor(weights[name], dtype=dtype) for name in shapes_of(cfg, cfg.names)}
    if cfg.tied_embeddings:  # the state dict names the shared tensor twice
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    model.load_state_dict(state, strict=True)
    return model


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def hf_logits(model, token_ids: np.ndarray, precise: bool = True) -> np.ndarray:
    """[T, V] logits of a plain forward pass (no cache)."""
    with float64_inside() if precise else _nothing(), torch.no_grad():
        out = model(torch.as_tensor(token_ids)[None, :], use_cache=False)
    return out.logits[0].numpy()


@contextmanager
def recorded_rotations(arch: str) -> Iterator[list[dict[str, torch.Tensor]]]:
    """Per attention call: q and k before and after apply_rotary_pos_emb ([1, heads, T, dh]).

    The attention modules look apply_rotary_pos_emb up in their module at call time; wrapping it
    lets the real function run and notes its inputs and outputs.
    """
    module = ARCHS[arch][2]
    original = module.apply_rotary_pos_emb
    calls: list[dict[str, torch.Tensor]] = []

    def wrapper(q, k, cos, sin, *args, **kwargs):
        q_rotated, k_rotated = original(q, k, cos, sin, *args, **kwargs)
        calls.append({"q": q, "k": k, "q_rotated": q_rotated, "k_rotated": k_rotated})
        return q_rotated, k_rotated

    module.apply_rotary_pos_emb = wrapper
    try:
        yield calls
    finally:
        module.apply_rotary_pos_emb = original


def hf_attention_trace(model, token_ids: np.ndarray, arch: str) -> list[dict[str, np.ndarray]]:
    """Per layer: q, k (before and after rotation) and the attention weights [heads, T, ·]."""
    with recorded_rotations(arch) as calls, float64_inside(), torch.no_grad():
        out = model(torch.as_tensor(token_ids)[None, :], use_cache=False, output_attentions=True)
    assert len(calls) == len(out.attentions) == model.config.num_hidden_layers
    layers = []
    for call, weights in zip(calls, out.attentions, strict=True):
        layer = {key: value[0].numpy() for key, value in call.items()}
        layer["weights"] = weights[0].numpy()
        layers.append(layer)
    return layers
