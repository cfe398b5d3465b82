"""Weights are checked where they enter an engine: a missing tensor, an extra one or a wrong shape
is an InputError naming the family, the size, the tensor and the fix, for both families; GPT-2's
engine no longer runs on a dict without a bias (it used to read it as zero)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from generator.config import TOY
from generator.engine import forward as gpt2_forward
from generator.engine import forward_from, random_weights
from generator.engine.decode import decode_step as gpt2_decode_step
from generator.errors import InputError
from generator.models import FAMILIES
from generator.models.config import ModelConfig
from generator.models.decode import decode_step as llama_decode_step
from generator.models.decoder import forward as llama_forward
from generator.models.llama.names import NAMES as LLAMA_NAMES
from generator.models.weights import random_weights as llama_random_weights

GPT2 = ModelConfig(
    "gpt2-tiny", "tiny GPT-2", n_layer=2, n_head=2, d_model=8, n_ctx=8, vocab_size=11
)
LLAMA = ModelConfig(
    "llama-tiny", "tiny Llama", n_layer=2, n_head=4, n_kv_head=2, d_model=16, d_mlp=24, n_ctx=8,
    vocab_size=13, family="llama", names=LLAMA_NAMES, norm="rmsnorm", mlp="swiglu", positions="rope", bias=False,
    tied_embeddings=False,
)  # fmt: skip
IDS = np.array([1, 2, 3, 4])

# Every way weights enter an engine, per family: each must refuse a bad dict.
RUNS: dict[str, list[Callable]] = {
    "gpt2": [
        lambda w, cfg: gpt2_forward(w, cfg, IDS),
        lambda w, cfg: gpt2_decode_step(w, cfg, IDS),
        lambda w, cfg: forward_from(w, cfg, np.zeros((len(IDS), cfg.d_model)), 1),
        lambda w, cfg: FAMILIES["gpt2"].forward(w, cfg, IDS, np.float64),
        lambda w, cfg: FAMILIES["gpt2"].check_weights(w, cfg),
    ],
    "llama": [
        lambda w, cfg: llama_forward(w, cfg, IDS),
        lambda w, cfg: llama_decode_step(w, cfg, IDS),
        lambda w, cfg: FAMILIES["llama"].forward(w, cfg, IDS, np.float64),
        lambda w, cfg: FAMILIES["llama"].check_weights(w, cfg),
    ],
}
CASES = {
    "gpt2": (GPT2, random_weights(GPT2, seed=1), "h.1.attn.c_attn.bias", "h.0.mlp.c_fc.weight"),
    "llama": (
        LLAMA,
        llama_random_weights(LLAMA, seed=1),
        "model.layers.1.self_attn.k_proj.weight",
        "model.layers.0.mlp.gate_proj.weight",
    ),
}


def refused(run: Callable, weights: dict, cfg: ModelConfig) -> InputError:
    with pytest.raises(InputError) as caught:
        run(weights, cfg)
    error = caught.value
    assert f"{cfg.family} size {cfg.name!r}" in error.problem, error.problem  # family and size
    assert error.fix
    return error


@pytest.mark.parametrize("family", list(CASES))
def test_complete_weights_run(family: str) -> None:
    cfg, weights, _, _ = CASES[family]
    for run in RUNS[family]:
        run(weights, cfg)


@pytest.mark.parametrize("family", list(CASES))
def test_a_missing_tensor_is_refused(family: str) -> None:
    cfg, weights, missing, _ = CASES[family]
    partial = {name: value for name, value in weights.items() if name != missing}
    for run in RUNS[family]:
        error = refused(run, partial, cfg)
        assert error.entry == missing and "missing 1 tensor(s)" in error.problem
        # the weights are the size's otherwise: the fix names the tensors, not another size
        assert "every tensor" in error.fix and "size" not in error.fix, error.fix
    fewer_layers = {name: value for name, value in partial.items() if ".1." not in name}
    for run in RUNS[family]:
        error = refused(run, fewer_layers, cfg)
        assert f"needs {cfg.n_layer} of width {cfg.d_model}" in error.fix, error.fix


@pytest.mark.parametrize("family", list(CASES))
def test_an_extra_tensor_is_refused(family: str) -> None:
    cfg, weights, _, _ = CASES[family]
    extra = {**weights, "model.layers.2.input_layernorm.weight": np.ones(cfg.d_model)}
    for run in RUNS[family]:
        error = refused(run, extra, cfg)
        assert error.entry == "model.layers.2.input_layernorm.weight"
        assert "unexpected tensor" in error.problem
        assert "the weights have 3 block(s)" in error.fix, error.fix
    stray = {**weights, "unused.weight": np.ones(cfg.d_model)}  # the size's blocks, one more
    for run in RUNS[family]:
        error = refused(run, stray, cfg)
        assert error.fix == f"remove 'unused.weight' from the weights: {cfg.name} has no use for it"


@pytest.mark.parametrize("family", list(CASES))
def test_a_wrong_shape_is_refused(family: str) -> None:
    cfg, weights, _, matrix = CASES[family]
    cut = {**weights, matrix: weights[matrix][:-1]}
    for run in RUNS[family]:
        error = refused(run, cut, cfg)
        assert error.entry == matrix
        assert (
            f"shape {list(cut[matrix].shape)}, expected {list(weights[matrix].shape)}"
            in error.problem
        )
    transposed = {**weights, matrix: weights[matrix].T}
    for run in RUNS[family]:
        assert "transpose" in refused(run, transposed, cfg).fix


def test_gpt2_without_c_attn_bias_is_refused_not_read_as_zero() -> None:
    """The engine used to read a missing bias with w.get() as None, i.e. as zero: these logits."""
    cfg = GPT2
    weights = random_weights(cfg, seed=4)
    without = {name: value for name, value in weights.items() if name != "h.0.attn.c_attn.bias"}
    error = refused(RUNS["gpt2"][0], without, cfg)
    assert error.entry == "h.0.attn.c_attn.bias"
    # What the engine computed before the check: the bias as zero, the logits silently off.
    zeroed = {**weights, "h.0.attn.c_attn.bias": np.zeros_like(weights["h.0.attn.c_attn.bias"])}
    shift = np.abs(gpt2_forward(zeroed, cfg, IDS).logits - gpt2_forward(weights, cfg, IDS).logits)
    assert shift.max() > 1e-2


def test_the_toy_has_no_biases_by_design() -> None:
    """TOY says bias=False: its expected tensors have none, and a bias is an extra tensor."""
    shapes = FAMILIES["gpt2"].weight_shapes(TOY)
    assert not [
        name
        for name in shapes
        if name.endswith(".bias") and ".ln_" not in name and "ln_f" not in name
    ]
    weights = random_weights(TOY, seed=2)
    gpt2_forward(weights, TOY, IDS)
    error = refused(
        RUNS["gpt2"][0], {**weights, "h.0.attn.c_attn.bias": np.zeros(3 * TOY.d_model)}, TOY
    )
    assert "no projection biases" in error.fix


def test_tied_and_untied_heads() -> None:
    """An untied size needs lm_head.weight; a tied one refuses it (it would be ignored)."""
    weights = llama_random_weights(LLAMA, seed=3)
    assert "lm_head.weight" in weights
    tied = ModelConfig(**{**LLAMA.__dict__, "name": "llama-tied", "tied_embeddings": True})
    error = refused(RUNS["llama"][0], weights, tied)
    assert error.entry == "lm_head.weight" and "unexpected" in error.problem
    without = {name: value for name, value in weights.items() if name != "lm_head.weight"}
    assert refused(RUNS["llama"][0], without, LLAMA).entry == "lm_head.weight"
    llama_forward(without, tied, IDS)
