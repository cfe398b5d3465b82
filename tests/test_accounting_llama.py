"""The Llama family's accounting against independent truth: numel() of transformers'
LlamaForCausalLM / MistralForCausalLM for every component, every row and every size, and torch's
FlopCounterMode (eager attention) per module at the model's own context. Every model is built on
the meta device: shapes only, no memory for the 7B weights."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from generator import accounting as acc
from generator import decode_costs, scaling
from generator.models import FAMILIES
from generator.models.config import ModelConfig
from generator.models.llama.names import NAMES as LLAMA_NAMES

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = pytest.mark.slow

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402
from transformers import DynamicCache  # noqa: E402

from tests.llama_helpers import ARCHS, arch_of, hf_config  # noqa: E402

LLAMA = FAMILIES["llama"]
# Small sizes beside the two pinned ones: grouped-query attention (n_kv_head < n_head), a model
# whose MLP is not 8/3 · d_model wide, a sliding window, multi-query attention.
SMALL = {
    "gqa": ModelConfig(
        "gqa",
        "gqa",
        2,
        8,
        64,
        96,
        101,
        family="llama",
        names=LLAMA_NAMES,
        n_kv_head=2,
        d_mlp=176,
        norm="rmsnorm",
        mlp="swiglu",
        positions="rope",
        bias=False,
        tied_embeddings=False,
        norm_eps=1e-6,
    ),  # fmt: skip
    "mqa-window": ModelConfig(
        "mqa-window",
        "mqa",
        3,
        4,
        48,
        64,
        57,
        family="llama",
        names=LLAMA_NAMES,
        n_kv_head=1,
        d_mlp=100,
        norm="rmsnorm",
        mlp="swiglu",
        positions="rope",
        bias=False,
        tied_embeddings=False,
        sliding_window=16,
        norm_eps=1e-6,
    ),  # fmt: skip
}
SIZES = {**LLAMA.sizes, **SMALL}

# transformers' parameters of one instance of each component (layer 0 for a layer's parts)
PREFIXES = {
    "wte": ("model.embed_tokens.",),
    "ln1": ("model.layers.0.input_layernorm.",),
    "rope": ("model.rotary_emb.", "model.layers.0.self_attn.rotary_emb."),
    "attention": ("model.layers.0.self_attn.",),
    "ln2": ("model.layers.0.post_attention_layernorm.",),
    "mlp": ("model.layers.0.mlp.",),
    "block": ("model.layers.0.",),
    "lnf": ("model.norm.",),
    "unembed": ("lm_head.",),
    "model": ("model.", "lm_head."),
}


@functools.cache
def meta_model(name: str):
    cfg = SIZES[name]
    _, model_class, _ = ARCHS[arch_of(cfg)]
    with torch.device("meta"):
        return model_class(hf_config(cfg)).eval()


def numel(model, prefixes: tuple[str, ...]) -> int:
    return sum(p.numel() for n, p in model.named_parameters() if n.startswith(prefixes))


@pytest.mark.parametrize("name", list(SIZES))
def test_every_component_and_row_equals_numel(name: str) -> None:
    cfg, model = SIZES[name], meta_model(name)
    assert set(PREFIXES) == set(LLAMA.components)
    for component, prefixes in PREFIXES.items():
        assert acc.params_per_instance(cfg, component) == numel(model, prefixes), component
    # each row of a layer is one module of transformers' layer: its key is the module's path
    for row in acc.param_rows(cfg, "block"):
        module = row.key.rsplit(".", 1)[0] if row.key.endswith(".weight") else row.key
        assert row.value == numel(model, (f"model.layers.0.{module}.",)), row.key
    assert acc.instances(cfg, "block") == cfg.n_layer == len(model.model.layers)
    parts = ("ln1", "attention", "ln2", "mlp")
    assert sum(acc.params_total(cfg, part) for part in parts) == numel(model, ("model.layers.",))
    summary = scaling.model_summary(cfg)  # embedding: embed_tokens; non-embedding: layers + norm
    assert summary["embedding_params"] == numel(model, ("model.embed_tokens.",))
    layers_and_norm = numel(model, ("model.layers.", "model.norm."))
    assert summary["non_embedding_params"] == layers_and_norm
    assert summary["params"] == layers_and_norm + numel(model, ("model.embed_tokens.", "lm_head."))


def test_the_pinned_sizes_have_their_published_counts() -> None:
    """numel() of the models transformers' default configs describe, and our totals."""
    for name, count in (("llama-2-7b", 6_738_415_616), ("mistral-7b-v0.1", 7_241_732_096)):
        assert numel(meta_model(name), ("model.", "lm_head.")) == count
        assert acc.params_total(LLAMA.sizes[name], "model") == count


def count_flops(name: str, T: int) -> dict[str, int]:
    """FlopCounterMode's totals per module for one forward pass over T tokens, on meta tensors
    (a 4-D additive mask is passed: transformers' own mask builder reads values)."""
    model = meta_model(name)
    with torch.device("meta"):
        ids = torch.zeros((1, T), dtype=torch.long)
        mask = torch.zeros((1, 1, T, T))
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(ids, attention_mask=mask, use_cache=False)
    return {module: sum(ops.values()) for module, ops in counter.get_flop_counts().items()}


@pytest.mark.parametrize("name", list(SIZES))
def test_flops_per_module_equal_the_flop_counter_at_the_models_context(name: str) -> None:
    """Eager attention computes every cell of the T × T grid, masked or not: a size with a window
    is compared as its spec without the window (the window's own count is the next test's)."""
    cfg = dataclasses.replace(SIZES[name], sliding_window=None)
    T = cfg.n_ctx  # Mistral: 131,072 positions, over the full grid as eager computes it
    counts = count_flops(name, T)
    root = type(meta_model(name)).__name__
    at = lambda module: counts.get(f"{root}.{module}" if module else root, 0)  # noqa: E731
    per_token = {c: acc.flops_per_token(cfg, c, T) for c in LLAMA.components}
    for i in range(cfg.n_layer):
        layer = f"model.layers.{i}"
        assert at(layer) == per_token["block"] * T
        assert at(f"{layer}.self_attn") == per_token["attention"] * T
        assert at(f"{layer}.mlp") == per_token["mlp"] * T
        for norm in ("input_layernorm", "post_attention_layernorm"):
            assert at(f"{layer}.{norm}") == 0 == per_token["ln1"]
    for row in acc.flop_rows(cfg, "block", T):
        if row.key.endswith(("scores", "weighted_sum")):
            continue  # inside the attention function, not a module of its own
        assert at(f"model.layers.0.{row.key}") == row.value * T, row.key
    assert at("lm_head") == per_token["unembed"] * T
    assert at("") == acc.flops_per_token(cfg, "model", T) * T
    # the shared identity (FLOP convention): 2 · block weights + the T × T grid + unembedding
    grid = scaling.attention_grid_flops(cfg, T)
    assert (
        per_token["model"]
        == 2 * scaling.block_weights(cfg) + grid + 2 * cfg.d_model * cfg.vocab_size
    )


@pytest.mark.parametrize("name", list(SIZES))
def test_a_decoding_step_equals_the_flop_counter_and_the_cache_its_count(name: str) -> None:
    """transformers' cached decoding step at token t = n_ctx (and, with a window, just past it):
    FlopCounterMode's count is the site's decode_flops, where a layer with a window compares the
    new query with the W keys its cache holds; and the cache holds what kv_cache_rows says (a
    window's layers the last W − 1 positions). On the meta device: shapes only."""
    cfg = SIZES[name]
    model = meta_model(name)
    window = cfg.sliding_window
    for t in sorted({cfg.n_ctx, *((window + 3,) if window and window + 3 <= cfg.n_ctx else ())}):
        with torch.device("meta"):
            cache = DynamicCache(config=model.config)
            prefix = torch.zeros((1, t - 1), dtype=torch.long)
            mask = torch.zeros((1, 1, t - 1, t - 1))
        with torch.no_grad():
            cache = model(prefix, attention_mask=mask, cache=cache, use_cache=True).cache
        held = sum(layer.keys.numel() + layer.values.numel() for layer in cache.layers)
        rows = {r.key: r.value for r in decode_costs.kv_cache_rows(cfg, t - 1)}
        assert held == rows["context.values"], t
        keys = cache.layers[0].keys.shape[2] + 1  # what the new query is compared with
        with torch.device("meta"):
            step = torch.zeros((1, 1), dtype=torch.long)
            mask = torch.zeros((1, 1, 1, keys))
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(step, attention_mask=mask, cache=cache, use_cache=True)
        assert counter.get_total_flops() == decode_costs.decode_flops(cfg, t, cached=True), t


@pytest.mark.parametrize("name", ["gqa", "mqa-window"])
@pytest.mark.parametrize("T", [1, 5, 16])
def test_flops_at_shorter_contexts(name: str, T: int) -> None:
    cfg = SIZES[name]
    counts = count_flops(name, min(T, cfg.n_ctx))
    root = type(meta_model(name)).__name__
    assert counts[root] == acc.flops_per_token(cfg, "model", min(T, cfg.n_ctx)) * min(T, cfg.n_ctx)


def test_the_kv_cache_shrinks_by_n_head_over_n_kv_head() -> None:
    llama, mistral = LLAMA.sizes["llama-2-7b"], LLAMA.sizes["mistral-7b-v0.1"]
    assert decode_costs.kv_values_per_token(llama) == 2 * 32 * 4096
    assert decode_costs.kv_values_per_token(
        mistral
    ) * mistral.n_rep == decode_costs.kv_values_per_token(llama)
    for cfg in SIZES.values():  # what transformers' cache holds per token: k and v of each layer
        assert decode_costs.kv_values_per_token(cfg) == 2 * cfg.n_layer * cfg.n_kv_head * cfg.d_head
