"""Test helpers for the families read from transformers config rows (Mixtral, gpt-oss,
DeepSeek-V3): the transformers model class of a spec, holding the engine's weights, in float64,
and tiny random specs of a family's shape.

Imports torch and transformers: only the tests that need them import this module.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from transformers import (
    DeepseekV3Config,
    DeepseekV3ForCausalLM,
    GptOssConfig,
    GptOssForCausalLM,
    MixtralConfig,
    MixtralForCausalLM,
)

from generator.models.config import ModelConfig
from tests.llama_helpers import float64_inside

CLASSES = {
    "mixtral": (MixtralConfig, MixtralForCausalLM),
    "gpt-oss": (GptOssConfig, GptOssForCausalLM),
    "deepseek-v3": (DeepseekV3Config, DeepseekV3ForCausalLM),
}


def hf_config(cfg: ModelConfig):
    """transformers' config of the spec's family and shape: eager attention, no special tokens."""
    settings: dict = dict(
        vocab_size=cfg.vocab_size,
        hidden_size=cfg.d_model,
        intermediate_size=cfg.d_mlp,
        num_hidden_layers=cfg.n_layer,
        num_attention_heads=cfg.n_head,
        num_key_value_heads=cfg.n_kv_head,
        max_position_embeddings=cfg.n_ctx,
        rms_norm_eps=cfg.norm_eps,
        tie_word_embeddings=cfg.tied_embeddings,
        bos_token_id=None,
        eos_token_id=None,
        pad_token_id=None,
        attn_implementation="eager",
        experts_implementation="eager",  # the per-expert loop (grouped_mm refuses float64)
    )
    rope: dict = {"rope_type": "default", "rope_theta": cfg.rope_theta}
    if cfg.rope_scaling is not None:
        yarn = cfg.rope_scaling
        rope = {
            "rope_type": "yarn",
            "rope_theta": cfg.rope_theta,
            "factor": yarn.factor,
            "original_max_position_embeddings": yarn.original_max_position_embeddings,
            "beta_fast": yarn.beta_fast,
            "beta_slow": yarn.beta_slow,
            "truncate": yarn.truncate,
            **({"mscale": yarn.mscale} if yarn.mscale is not None else {}),
            **({"mscale_all_dim": yarn.mscale_all_dim} if yarn.mscale_all_dim else {}),
        }
    settings["rope_parameters"] = rope
    moe = cfg.experts
    if cfg.family == "mixtral":
        assert moe is not None
        settings |= dict(
            num_local_experts=moe.n_experts,
            num_experts_per_tok=moe.top_k,
            intermediate_size=moe.d_expert,
            sliding_window=cfg.sliding_window,
            head_dim=cfg.d_head,
        )
    elif cfg.family == "gpt-oss":
        assert moe is not None
        settings |= dict(
            num_local_experts=moe.n_experts,
            num_experts_per_tok=moe.top_k,
            intermediate_size=moe.d_expert,
            head_dim=cfg.d_head,
            sliding_window=cfg.sliding_window,
            layer_types=["sliding_attention" if w else "full_attention" for w in cfg.windows],
            attention_bias=cfg.bias,
            swiglu_alpha=cfg.swiglu_alpha,
            swiglu_limit=cfg.swiglu_limit,
        )
    else:
        assert moe is not None and cfg.latent is not None
        lat = cfg.latent
        settings |= dict(
            moe_intermediate_size=moe.d_expert,
            n_routed_experts=moe.n_experts,
            n_shared_experts=moe.n_shared,
            num_experts_per_tok=moe.top_k,
            first_k_dense_replace=moe.first_dense,
            n_group=moe.n_group,
            topk_group=moe.topk_group,
            norm_topk_prob=moe.norm_topk_prob,
            routed_scaling_factor=moe.routed_scaling,
            kv_lora_rank=lat.kv_rank,
            q_lora_rank=lat.q_rank,
            qk_nope_head_dim=lat.nope_dim,
            qk_rope_head_dim=lat.rope_dim,
            v_head_dim=lat.v_dim,
            rope_interleave=cfg.rope_interleave,
            attention_bias=cfg.bias,
        )
    return CLASSES[cfg.family][0](**settings)


def hf_model(weights: dict[str, np.ndarray], cfg: ModelConfig):
    """The family's ForCausalLM in float64 and eval mode holding exactly `weights`."""
    with float64_inside():
        model = CLASSES[cfg.family][1](hf_config(cfg)).to(torch.float64).eval()
    state = {name: torch.tensor(value, dtype=torch.float64) for name, value in weights.items()}
    if cfg.tied_embeddings:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    model.load_state_dict(state, strict=True)
    return model


def hf_logits(model, token_ids: np.ndarray) -> np.ndarray:
    with float64_inside(), torch.no_grad():
        return model(torch.as_tensor(token_ids)[None, :], use_cache=False).logits[0].numpy()


def tiny(cfg: ModelConfig, seed: int) -> ModelConfig:
    """A small random spec of cfg's shape: its kinds of parts (experts, router, latent, sinks,
    windows, biases), tiny widths and counts drawn from `seed`."""
    rng = np.random.default_rng(seed)
    pick = lambda *values: int(rng.choice(values))  # noqa: E731
    n_head = pick(2, 4)
    n_kv = (
        n_head if cfg.latent is not None else pick(*(k for k in (1, 2, n_head) if n_head % k == 0))
    )
    d_head = pick(4, 8)
    n_layer = pick(1, 2, 3)
    fields: dict = dict(
        name=f"{cfg.name}-tiny-{seed}",
        label="tiny",
        n_layer=n_layer,
        n_head=n_head,
        n_kv_head=n_kv,
        d_model=pick(16, 24),
        head_dim=d_head,
        d_mlp=pick(12, 20),
        n_ctx=64,
        vocab_size=pick(37, 61),
        rope_theta=float(pick(100, 10000)),
    )
    if cfg.sliding_window is not None:
        fields["sliding_window"] = pick(2, 3, 5)
    if cfg.layer_types is not None:
        fields["layer_types"] = tuple(cfg.layer_types[i % 2] for i in range(n_layer))
    if cfg.experts is not None:
        n_group = pick(1, 2) if cfg.experts.n_group > 1 else 1
        n_experts = pick(4, 8)
        topk_group = pick(*range(1, n_group + 1))
        searched = n_experts // n_group * topk_group
        fields["experts"] = dataclasses.replace(
            cfg.experts,
            n_experts=n_experts,
            top_k=pick(*range(1, min(searched, 4) + 1)),
            d_expert=pick(6, 10),
            n_group=n_group,
            topk_group=topk_group,
            first_dense=min(cfg.experts.first_dense, pick(0, 1)),
            routed_scaling=cfg.experts.routed_scaling
            * (float(rng.choice([1.0, 0.5])) if cfg.experts.routed_scaling != 1.0 else 1.0),
        )
    if cfg.latent is not None:
        fields["latent"] = dataclasses.replace(
            cfg.latent,
            kv_rank=pick(6, 8),
            q_rank=None if seed % 3 == 0 else pick(5, 7),
            nope_dim=pick(4, 6),
            rope_dim=pick(2, 4),
            v_dim=pick(4, 6),
        )
    if cfg.rope_scaling is not None:
        fields["rope_scaling"] = dataclasses.replace(
            cfg.rope_scaling, original_max_position_embeddings=16, factor=float(pick(2, 4))
        )
    return dataclasses.replace(cfg, **fields)
