"""Model configs: the toy is seed 000's, the sizes are GPT-2's, unknown names get a clear error."""

from __future__ import annotations

import pytest

from generator.config import CONFIGS, SIZES, TOY_TOKENS, get_config
from generator.errors import InputError


def test_toy_is_the_walkthrough_toy():
    """Seed 000: 5 tokens, d_model 8, 2 heads, d_head 4, no biases."""
    toy = get_config("toy")
    assert (TOY_TOKENS, toy.d_model, toy.n_head, toy.d_head, toy.bias) == (5, 8, 2, 4, False)
    assert toy.n_ctx >= TOY_TOKENS


def test_gpt2_sizes():
    """Radford et al. (2019) Table 2: layers and d_model; 64-wide heads, 4× MLP, 50,257 tokens."""
    published = {"gpt2": (12, 768), "gpt2-medium": (24, 1024), "gpt2-large": (36, 1280),
                 "gpt2-xl": (48, 1600)}  # fmt: skip
    assert tuple(published) == SIZES
    for name, (n_layer, d_model) in published.items():
        cfg = get_config(name)
        assert (cfg.n_layer, cfg.d_model) == (n_layer, d_model)
        assert cfg.d_head == 64 and cfg.d_head * cfg.n_head == cfg.d_model == cfg.d_attn
        assert cfg.d_mlp == 4 * cfg.d_model
        assert (cfg.vocab_size, cfg.n_ctx, cfg.layer_norm_eps, cfg.bias) == (
            50257,
            1024,
            1e-5,
            True,
        )
    assert set(CONFIGS) == {"toy", *SIZES}


def test_unknown_model_lists_the_valid_names():
    with pytest.raises(InputError) as caught:
        get_config("gpt-2")
    assert caught.value.entry == "gpt-2"
    for name in CONFIGS:
        assert name in caught.value.fix
