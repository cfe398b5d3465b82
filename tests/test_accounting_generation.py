"""The KV cache's size, the FLOPs of a decoding step with and without it, and a training step's
FLOPs and memory, against transformers' GPT-2 under torch's FlopCounterMode (eager attention) and
torch's own Adam, for every size. Meta tensors carry shapes only, so even XL costs no memory."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from generator import accounting as acc
from generator import decode_costs, scaling
from generator.config import CONFIGS, SIZES, TOY

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow  # runs torch / transformers

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402
from transformers import DynamicCache, GPT2LMHeadModel  # noqa: E402

from generator.engine import random_weights  # noqa: E402
from generator.engine.decode import decode_step  # noqa: E402
from tests.engine_helpers import hf_config  # noqa: E402


@functools.cache
def meta_model(name: str, n_positions: int | None = None):
    cfg = CONFIGS[name]
    settings = {} if n_positions is None else {"n_positions": n_positions}
    with torch.device("meta"):
        return GPT2LMHeadModel(hf_config(cfg, **settings)).eval()


def mask(nd: int, ns: int):
    """An additive 4-D mask: on meta tensors transformers cannot build its own from values."""
    return torch.zeros((1, 1, nd, ns), device="meta")


def ids(n: int):
    return torch.zeros((1, n), dtype=torch.long, device="meta")


def prefill(model, n: int) -> DynamicCache:
    cache = DynamicCache()
    if n:
        with torch.no_grad():
            model(ids(n), cache=cache, use_cache=True, attention_mask=mask(n, n))
    return cache


def counted(run) -> FlopCounterMode:
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        run()
    return counter


@pytest.mark.parametrize("name", SIZES)
def test_cache_values_per_token_equal_transformers_cache(name):
    cfg = CONFIGS[name]
    model = meta_model(name)
    cache = prefill(model, 7)
    held = sum(layer.keys.numel() + layer.values.numel() for layer in cache.layers)
    assert held == decode_costs.kv_values_per_token(cfg) * 7
    assert decode_costs.kv_values_per_token(cfg) == 2 * cfg.n_layer * cfg.d_model
    rows = {r.key: r.value for r in decode_costs.kv_cache_rows(cfg)}
    assert rows["bytes.float32"] == held // 7 * cache.layers[0].keys.element_size()
    assert rows["context.float16"] == rows["values"] * cfg.n_ctx * torch.float16.itemsize


def test_engine_cache_holds_the_counted_values():
    cfg = dataclasses.replace(TOY, name="toy-bias", bias=True)
    step = decode_step(random_weights(cfg), cfg, np.arange(5))
    assert step.cache.size == decode_costs.kv_values_per_token(cfg) * 5


@pytest.mark.parametrize("name", SIZES)
@pytest.mark.parametrize("t", (1, 100, 1024))
def test_decode_step_flops_equal_flop_counter(name, t):
    cfg = CONFIGS[name]
    model = meta_model(name)
    cache = prefill(model, t - 1)
    with_cache = counted(
        lambda: model(ids(1), cache=cache, use_cache=True, attention_mask=mask(1, t))
    )
    assert with_cache.get_total_flops() == decode_costs.decode_flops(cfg, t, cached=True)
    recompute = counted(
        lambda: model(ids(t), use_cache=False, attention_mask=mask(t, t), logits_to_keep=1)
    )
    assert recompute.get_total_flops() == decode_costs.decode_flops(cfg, t, cached=False)


@pytest.mark.parametrize("name", ("gpt2", "gpt2-xl"))
def test_cache_crossover_is_where_the_counted_grid_passes_the_rest(name):
    """Past n_ctx, as if wpe had more rows: eager attention's grid matmuls are its bmm calls."""
    cfg = CONFIGS[name]
    t = decode_costs.cache_crossover(cfg)
    model = meta_model(name, n_positions=t)

    def grid_and_rest(t: int) -> tuple[int, int]:
        cache = prefill(model, t - 1)
        run = counted(lambda: model(ids(1), cache=cache, use_cache=True, attention_mask=mask(1, t)))
        by_op = run.get_flop_counts()["Global"]
        grid = sum(v for op, v in by_op.items() if "bmm" in str(op))
        return grid, run.get_total_flops() - grid

    grid, rest = grid_and_rest(t)
    assert grid > rest
    grid, rest = grid_and_rest(t - 1)
    assert grid <= rest


@pytest.mark.parametrize("name", SIZES)
@pytest.mark.parametrize("T", (1, 1024))
def test_training_step_flops_equal_flop_counter(name, T):
    cfg = CONFIGS[name]
    model = meta_model(name)  # eval mode: no dropout either way; gradients flow all the same
    tokens = ids(T)
    with FlopCounterMode(display=False) as counter:
        loss = model(tokens, labels=tokens, use_cache=False, attention_mask=mask(T, T)).loss
        loss.backward()
    assert counter.get_total_flops() == scaling.train_flops_per_token(cfg, T) * T
    assert scaling.train_flops_per_token(cfg, T) == 3 * acc.flops_per_token(cfg, "model", T)


def test_six_n_error_is_the_grid_and_the_unembedding():
    for name in SIZES:
        cfg = CONFIGS[name]
        extra = scaling.train_flops_per_token(cfg) - scaling.six_n(cfg)
        grid = 2 * 2 * cfg.n_layer * cfg.n_ctx * cfg.d_model  # QKᵀ and A·V, full grid
        assert extra == 3 * (grid + 2 * cfg.d_model * cfg.vocab_size)


def test_adam_memory_equals_torch_adam_state():
    """One real Adam step on a small GPT-2 (tied wte): weights, gradients, exp_avg, exp_avg_sq."""
    cfg = dataclasses.replace(
        CONFIGS["gpt2"], name="tiny", n_layer=2, d_model=64, n_head=4, vocab_size=301
    )
    model = GPT2LMHeadModel(hf_config(cfg)).train()
    optimizer = torch.optim.Adam(model.parameters())
    tokens = torch.arange(12)[None, :] % cfg.vocab_size
    model(tokens, labels=tokens).loss.backward()
    optimizer.step()
    params = list(model.parameters())  # tied: wte appears once
    found = {
        "weights": sum(p.numel() * p.element_size() for p in params),
        "gradients": sum(p.grad.numel() * p.grad.element_size() for p in params),
        "adam.m": sum(optimizer.state[p]["exp_avg"].nbytes for p in params),
        "adam.v": sum(optimizer.state[p]["exp_avg_sq"].nbytes for p in params),
    }
    assert found == {row.key: row.value for row in scaling.train_memory_rows(cfg)}
