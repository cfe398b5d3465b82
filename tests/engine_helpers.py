"""Shared test helpers: build transformers' GPT-2 from the engine's weights and record every
intermediate it computes, so engine tests compare against the real modules.

Imports torch and transformers: only the tests that need them import this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch
import transformers.models.gpt2.modeling_gpt2 as modeling_gpt2
from torch.overrides import TorchFunctionMode
from transformers import GPT2Config, GPT2LMHeadModel

from generator.config import ModelConfig
from generator.engine.weights import weight_shapes


def hf_config(cfg: ModelConfig, **overrides) -> GPT2Config:
    """transformers' config for the same shape, eager attention, no dropout."""
    settings = dict(
        vocab_size=cfg.vocab_size,
        n_positions=cfg.n_ctx,
        n_embd=cfg.d_model,
        n_layer=cfg.n_layer,
        n_head=cfg.n_head,
        layer_norm_epsilon=cfg.layer_norm_eps,
        activation_function="gelu_new",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=None,
        eos_token_id=None,
        attn_implementation="eager",
    )
    settings.update(overrides)
    return GPT2Config(**settings)


def hf_state_dict(weights: dict[str, np.ndarray], cfg: ModelConfig, dtype) -> dict:
    """GPT2LMHeadModel's state dict holding `weights` (absent toy biases become zeros)."""
    state = {}
    for name, shape in weight_shapes(cfg).items():
        state[f"transformer.{name}"] = torch.tensor(weights[name], dtype=dtype).reshape(shape)
    if not cfg.bias:  # transformers' Conv1D always has a bias: the toy's are zero
        for name in weight_shapes(cfg):
            if name.endswith(".weight") and (".attn.c_" in name or ".mlp.c_" in name):
                n_out = weights[name].shape[1]
                state[f"transformer.{name[: -len('weight')]}bias"] = torch.zeros(n_out, dtype=dtype)
    state["lm_head.weight"] = state["transformer.wte.weight"]
    return state


def hf_model(weights: dict[str, np.ndarray], cfg: ModelConfig, dtype=torch.float64):
    """A GPT2LMHeadModel in eval mode holding exactly `weights`."""
    model = GPT2LMHeadModel(hf_config(cfg)).to(dtype).eval()
    model.load_state_dict(hf_state_dict(weights, cfg, dtype), strict=True)
    return model


class _Recorder(TorchFunctionMode):
    """Every torch function called inside, with its result, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, object]] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        self.calls.append((getattr(func, "__name__", str(func)), result))
        return result


@contextmanager
def recorded_attention() -> Iterator[list[dict[str, torch.Tensor]]]:
    """Record, per attention call, the intermediates transformers' eager attention computes.

    eager_attention_forward is looked up in modeling_gpt2 at call time; wrapping it lets the real
    function run while a TorchFunctionMode notes each result: matmul (scores), mul (scaled),
    add (masked), softmax (weights), matmul (heads).
    """
    original = modeling_gpt2.eager_attention_forward
    calls: list[dict[str, torch.Tensor]] = []

    def wrapper(module, query, key, value, attention_mask, **kwargs):
        with _Recorder() as recorder:
            output = original(module, query, key, value, attention_mask, **kwargs)
        results: dict[str, list] = {}
        for name, result in recorder.calls:
            results.setdefault(name, []).append(result)
        entry = {"q": query, "k": key, "v": value, "mask": attention_mask}
        entry["scores"], entry["heads"] = results["matmul"]
        entry["scaled"] = results["mul"][0]
        entry["masked"] = results["add"][0] if "add" in results else entry["scaled"]
        entry["weights"] = results["softmax"][0]
        calls.append(entry)
        return output

    modeling_gpt2.eager_attention_forward = wrapper
    try:
        yield calls
    finally:
        modeling_gpt2.eager_attention_forward = original


def hf_trace(model, token_ids: np.ndarray) -> dict[str, np.ndarray]:
    """Run `model` on token_ids [T] and return every intermediate by the engine's names.

    Keys: "embed.tok", "embed.pos", "embed.sum", "lnf", "logits", "probs", and per block i
    "{i}.ln1", "{i}.attention.{q,k,v,scores,scaled,masked,weights,heads,merged,projected}",
    "{i}.resid_mid", "{i}.ln2", "{i}.mlp.{fc,gelu,proj}", "{i}.resid_out".
    """
    seen: dict[str, torch.Tensor] = {}
    handles = []

    def output_of(module, key):
        handles.append(module.register_forward_hook(lambda m, a, out: seen.__setitem__(key, out)))

    def input_of(module, key):
        handles.append(module.register_forward_pre_hook(lambda m, a: seen.__setitem__(key, a[0])))

    gpt = model.transformer
    output_of(gpt.wte, "embed.tok")
    output_of(gpt.wpe, "embed.pos")
    input_of(gpt.h[0], "embed.sum")
    for i, block in enumerate(gpt.h):
        output_of(block.ln_1, f"{i}.ln1")
        input_of(block.attn.c_proj, f"{i}.attention.merged")
        output_of(block.attn.c_proj, f"{i}.attention.projected")
        input_of(block.ln_2, f"{i}.resid_mid")
        output_of(block.ln_2, f"{i}.ln2")
        output_of(block.mlp.c_fc, f"{i}.mlp.fc")
        output_of(block.mlp.act, f"{i}.mlp.gelu")
        output_of(block.mlp.c_proj, f"{i}.mlp.proj")
        output_of(block, f"{i}.resid_out")
    output_of(gpt.ln_f, "lnf")
    try:
        with recorded_attention() as attention_calls, torch.no_grad():
            out = model(torch.as_tensor(token_ids)[None, :], use_cache=False)
    finally:
        for handle in handles:
            handle.remove()
    assert len(attention_calls) == len(gpt.h)
    for i, call in enumerate(attention_calls):
        for key in ("q", "k", "v", "scores", "scaled", "masked", "weights", "heads"):
            seen[f"{i}.attention.{key}"] = call[key]
    seen["logits"] = out.logits
    seen["probs"] = torch.softmax(out.logits, dim=-1)
    return {key: _numpy(value) for key, value in seen.items()}


def _numpy(value) -> np.ndarray:
    if isinstance(value, tuple):
        value = value[0]
    array = value.detach().cpu().numpy()
    return array[0] if array.ndim >= 2 and array.shape[0] == 1 else array


def engine_trace_dict(trace) -> dict[str, np.ndarray]:
    """The engine's Trace flattened to hf_trace's keys."""
    flat = {f"embed.{key}": value for key, value in trace.embed.items()}
    for i, block in enumerate(trace.blocks):
        flat[f"{i}.ln1"] = block.ln1
        flat.update({f"{i}.attention.{key}": value for key, value in block.attention.items()})
        flat[f"{i}.resid_mid"] = block.resid_mid
        flat[f"{i}.ln2"] = block.ln2
        flat.update({f"{i}.mlp.{key}": value for key, value in block.mlp.items()})
        flat[f"{i}.resid_out"] = block.resid_out
    flat["lnf"] = trace.lnf
    flat["logits"] = trace.logits
    flat["probs"] = trace.probs
    return flat
