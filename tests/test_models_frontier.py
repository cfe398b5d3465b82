"""The frontier families (Mixtral, gpt-oss, DeepSeek-V3), proven like GPT-2 and Llama against
transformers: every count equals numel() of the model on the meta device at the released shape;
the engine's logits equal the family's ForCausalLM in float64 on tiny random specs of its shape
(routing, windows shorter than the sequence, sinks, latent attention, YaRN); cached decoding
equals transformers' cache step by step, and the cache holds what the site says; FLOPs equal
FlopCounterMode on those models (eager attention computes every cell, so a spec with a window
is counted without it there; the window's own count is the decoding test of the Llama family).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402
from transformers import DynamicCache  # noqa: E402

from generator import accounting, decode_costs  # noqa: E402
from generator.models import FAMILIES  # noqa: E402
from generator.models.decode import decode_step  # noqa: E402
from generator.models.decoder import forward  # noqa: E402
from generator.models.weights import random_weights  # noqa: E402
from generator.render.number_tables import describe, overview  # noqa: E402
from tests.frontier_helpers import CLASSES, hf_config, hf_logits, hf_model, tiny  # noqa: E402
from tests.llama_helpers import float64_inside  # noqa: E402

pytestmark = pytest.mark.slow
ATOL = 1e-12
FRONTIER = [name for name in CLASSES if name in FAMILIES]
SPECS = [cfg for name in FRONTIER for cfg in FAMILIES[name].sizes.values()]
TINY = [tiny(cfg, seed) for cfg in SPECS for seed in range(20)]


@pytest.mark.parametrize("cfg", SPECS, ids=lambda c: c.name)
def test_every_parameter_and_tensor_equals_the_model_on_the_meta_device(cfg) -> None:
    with torch.device("meta"):
        model = CLASSES[cfg.family][1](hf_config(cfg))
    assert accounting.params_total(cfg, "model") == sum(p.numel() for p in model.parameters())
    shapes = {name: tuple(t.shape) for name, t in model.state_dict().items()}
    if cfg.tied_embeddings:
        del shapes["lm_head.weight"]
    assert FAMILIES[cfg.family].weight_shapes(cfg) == shapes
    for component in FAMILIES[cfg.family].components:  # each row's total is the model's sum
        accounting.params_total(cfg, component)


@pytest.mark.parametrize("cfg", TINY, ids=lambda c: c.name)
def test_logits_equal_transformers_in_float64(cfg) -> None:
    weights = random_weights(cfg, seed=sum(map(ord, cfg.name)))
    ids = np.random.default_rng(7).integers(0, cfg.vocab_size, 11)
    ours = forward(weights, cfg, ids).logits
    theirs = hf_logits(hf_model(weights, cfg), ids)
    assert np.abs(ours - theirs).max() < ATOL


@pytest.mark.parametrize("cfg", TINY[::5], ids=lambda c: c.name)
def test_cached_decoding_equals_transformers_cache_step_by_step(cfg) -> None:
    weights = random_weights(cfg, seed=3)
    ids = np.random.default_rng(2).integers(0, cfg.vocab_size, 12)
    model = hf_model(weights, cfg)
    cache, ours, theirs = None, [], []
    hf_cache = DynamicCache(config=model.config)
    for chunk in (ids[:5], ids[5:6], ids[6:7], ids[7:10], ids[10:11], ids[11:12]):
        step = decode_step(weights, cfg, chunk, cache)
        cache = step.cache
        ours.append(step.logits)
        with float64_inside(), torch.no_grad():
            out = model(torch.as_tensor(chunk)[None, :], cache=hf_cache, use_cache=True)
        hf_cache = out.cache
        theirs.append(out.logits[0].numpy())
    for mine, their in zip(ours, theirs, strict=True):
        assert np.abs(mine - their).max() < ATOL
    held = sum(layer.keys.numel() + layer.values.numel() for layer in hf_cache.layers)
    assert cache is not None and cache.values == held
    rows = {r.key: r.value for r in decode_costs.kv_cache_rows(cfg, len(ids))}
    assert rows["context.values"] == held


@pytest.mark.parametrize("cfg", TINY[::4], ids=lambda c: c.name)
def test_flops_equal_the_flop_counter(cfg) -> None:
    """FlopCounterMode on the model with its real routing: each token runs its top_k experts, so
    the count is the active path's, whatever the router chose."""
    T = 9
    weights = random_weights(cfg, seed=5)
    model = hf_model(weights, cfg)
    ids = torch.as_tensor(np.random.default_rng(4).integers(0, cfg.vocab_size, T))[None, :]
    with FlopCounterMode(display=False) as counter, float64_inside(), torch.no_grad():
        model(ids, use_cache=False)
    eager = dataclasses.replace(cfg, sliding_window=None, layer_types=None)  # every cell
    assert counter.get_total_flops() == accounting.flops_per_token(eager, "model", T) * T


@pytest.mark.parametrize("cfg", SPECS, ids=lambda c: c.name)
def test_each_numbers_row_stands_for_layers_the_meta_model_counts_alike(cfg) -> None:
    """`itm numbers`' overview: per instance × instances is each row's total, and a block row's
    per-instance parameters are numel() of every layer it stands for, on the meta device
    (gpt-oss's attention and DeepSeek-V3's block differ between layers: one row per kind)."""
    with torch.device("meta"):
        model = CLASSES[cfg.family][1](hf_config(cfg))
    layers = model.model.layers
    rows = overview(cfg, cfg.n_ctx)[2]
    for _, _, params, count, params_total, flops, flops_total in rows:
        assert (params * count, flops * count) == (params_total, flops_total)
    blocks = [row for row in rows if row[1] == "block"]
    kinds = accounting.layer_kinds(cfg, "block")
    for row, (_, group) in zip(blocks, kinds, strict=True):
        assert row[3] == len(group)
        assert {sum(p.numel() for p in layers[i].parameters()) for i in group} == {row[2]}
    assert sum(row[4] for row in blocks) == sum(p.numel() for p in layers.parameters())


def test_each_kind_of_layer_has_the_flops_the_counter_gives_its_layers() -> None:
    """A DeepSeek-V3 spec with a dense layer before two expert layers: each block row of `itm
    numbers` has the FLOPs FlopCounterMode counts in every layer it stands for (one row once
    paired the expert layer's parameters with the dense layer's FLOPs)."""
    small = tiny(FAMILIES["deepseek-v3"].sizes["deepseek-v3"], 0)
    experts = dataclasses.replace(small.experts, first_dense=1)
    cfg = dataclasses.replace(small, n_layer=3, experts=experts)
    T = 9
    model = hf_model(random_weights(cfg, seed=5), cfg)
    ids = torch.as_tensor(np.random.default_rng(4).integers(0, cfg.vocab_size, T))[None, :]
    with FlopCounterMode(display=False) as counter, float64_inside(), torch.no_grad():
        model(ids, use_cache=False)
    counts = counter.get_flop_counts()
    counted = [sum(counts[f"{type(model).__name__}.model.layers.{i}"].values()) for i in range(3)]
    blocks = [row for row in overview(cfg, T)[2] if row[1] == "block"]
    kinds = accounting.layer_kinds(cfg, "block", T)
    assert len(blocks) == 2
    for row, (_, group) in zip(blocks, kinds, strict=True):
        assert {counted[i] for i in group} == {row[5] * T}


def test_the_numbers_header_names_the_head_widths_transformers_builds() -> None:
    """No DeepSeek-V3 head is d_model / n_head wide: the header gives the query/key width (nope +
    rope) and the value width its config sets, and no d_head."""
    cfg = FAMILIES["deepseek-v3"].sizes["deepseek-v3"]
    theirs = hf_config(cfg)
    nope, rope = theirs.qk_nope_head_dim, theirs.qk_rope_head_dim
    line = describe(cfg, cfg.n_ctx)
    assert (
        f"qk_head_dim {nope + rope} (nope {nope} + rope {rope}), v_head_dim {theirs.v_head_dim}"
        in line
    )
    assert "d_head" not in line


@pytest.mark.parametrize("cfg", TINY[1::5], ids=lambda c: c.name)
def test_a_decoding_step_equals_the_flop_counter(cfg) -> None:
    """One cached step at token t: FlopCounterMode on transformers' own step equals decode_flops
    (a window's layers read only what their cache keeps; latent attention reads every cached
    latent out again, as transformers does)."""
    t = 10
    weights = random_weights(cfg, seed=6)
    model = hf_model(weights, cfg)
    ids = np.random.default_rng(8).integers(0, cfg.vocab_size, t)
    cache = DynamicCache(config=model.config)
    with float64_inside(), torch.no_grad():
        cache = model(torch.as_tensor(ids[:-1])[None, :], cache=cache, use_cache=True).cache
        with FlopCounterMode(display=False) as counter:
            model(torch.as_tensor(ids[-1:])[None, :], cache=cache, use_cache=True)
    assert counter.get_total_flops() == decode_costs.decode_flops(cfg, t, cached=True)


@pytest.mark.parametrize(
    ("family", "change", "field", "words"),
    [
        ("mixtral", {"top_k": 9}, "experts.top_k", "top_k 9 is more than the 8 experts"),
        ("deepseek-v3", {"top_k": 200}, "experts.top_k", "(4 of 8 groups)"),
        ("deepseek-v3", {"n_group": 7}, "experts.n_group", "256 experts in 7 groups"),
        ("deepseek-v3", {"first_dense": 62}, "experts.first_dense", "more than n_layer 61"),
    ],
)
def test_an_inconsistent_expert_spec_is_refused(family, change, field, words) -> None:
    from generator.errors import InputError

    cfg = next(iter(FAMILIES[family].sizes.values()))
    with pytest.raises(InputError) as caught:
        dataclasses.replace(cfg, experts=dataclasses.replace(cfg.experts, **change))
    assert caught.value.entry == f"{cfg.name}.{field}" and words in caught.value.problem
    assert caught.value.fix


def test_a_latent_rank_of_zero_and_a_window_list_of_the_wrong_length_are_refused() -> None:
    from generator.errors import InputError

    deepseek = FAMILIES["deepseek-v3"].sizes["deepseek-v3"]
    with pytest.raises(InputError, match="kv_rank is 0") as caught:
        dataclasses.replace(deepseek, latent=dataclasses.replace(deepseek.latent, kv_rank=0))
    assert caught.value.entry == "deepseek-v3.latent.kv_rank"
    oss = FAMILIES["gpt-oss"].sizes["gpt-oss-120b"]
    with pytest.raises(InputError, match="lists 35 layers") as caught:
        dataclasses.replace(oss, layer_types=oss.layer_types[:-1])
    assert caught.value.entry == "gpt-oss-120b.layer_types"


def test_weights_missing_an_expert_or_carrying_an_extra_are_refused() -> None:
    from generator.errors import InputError

    cfg = TINY[3]  # a Mixtral spec
    weights = random_weights(cfg, seed=1)
    name = "model.layers.0.mlp.experts.gate_up_proj"
    for experts in (cfg.experts.n_experts - 1, cfg.experts.n_experts + 1):
        changed = {**weights, name: np.zeros((experts, *weights[name].shape[1:]))}
        with pytest.raises(InputError) as caught:
            forward(changed, cfg, np.array([1, 2]))
        assert caught.value.entry == name
        assert f"expected [{cfg.experts.n_experts}" in caught.value.problem


@pytest.mark.parametrize("family", ["mixtral", "gpt-oss", "deepseek-v3"])
def test_a_checkpoint_missing_an_expert_or_carrying_one_more_names_it(family, tmp_path) -> None:
    """A safetensors file whose stacked experts (or router rows) count one expert too few or too
    many: the error names the file, the layer and which expert is missing or extra, and the fix
    (it once said only that the layer count and width were right and the shape was not)."""
    from generator.engine.safetensors_file import load_safetensors, write_safetensors
    from generator.errors import InputError

    cfg = next(c for c in TINY if c.family == family and c.n_layer > c.experts.first_dense)
    E, layer = cfg.experts.n_experts, cfg.experts.first_dense
    weights = random_weights(cfg, seed=1, dtype=np.float32)
    stacked = [n for n in weights if n.startswith(cfg.names.layer.format(i=layer) + "mlp.")]
    assert stacked
    for name in (n for n in stacked if weights[n].shape[0] == E):  # router rows, experts, biases
        for count, words in ((E - 1, f"expert {E - 1} of layer {layer} is missing"),
                             (E + 1, f"layer {layer} carries extra expert {E}")):  # fmt: skip
            path = tmp_path / f"{count}.safetensors"
            with path.open("wb") as out:
                write_safetensors(
                    out,
                    {**weights, name: np.resize(weights[name], (count, *weights[name].shape[1:]))},
                )
            with pytest.raises(InputError) as caught:
                load_safetensors(path, cfg)
            error = caught.value
            assert error.entry == name and str(path) in (error.file or ""), error
            assert error.problem.startswith(words) and name in error.problem, error
            assert f"{E} experts" in (error.fix or "") and name in (error.fix or ""), error


def test_stacked_experts_with_their_last_axes_swapped_are_told_so() -> None:
    from generator.errors import InputError

    cfg = TINY[3]  # a Mixtral spec: [E, 2I, d] per layer (gpt-oss stores [E, d, 2I])
    weights = random_weights(cfg, seed=1)
    name = "model.layers.0.mlp.experts.gate_up_proj"
    swapped = {**weights, name: weights[name].transpose(0, 2, 1)}
    with pytest.raises(InputError) as caught:
        forward(swapped, cfg, np.array([1, 2]))
    assert caught.value.entry == name and "last two axes are swapped" in (caught.value.fix or "")


def test_the_cache_crossover_of_latent_attention_is_where_transformers_reading_passes_the_rest():
    """The crossover `itm numbers` prints, on a DeepSeek spec: at t the FLOPs that grow with the
    cache (the scores and weighted sum over t keys, and kv_b_proj reading the t - 1 cached latents
    out again), counted by FlopCounterMode on transformers' own step, first exceed the rest."""
    cfg = next(c for c in TINY if c.latent is not None)
    weights = random_weights(cfg, seed=6)
    model = hf_model(weights, cfg)
    new_row = 2 * cfg.latent.kv_rank * cfg.n_head * (cfg.latent.nope_dim + cfg.latent.v_dim)

    def reading_and_rest(t: int) -> tuple[int, int]:
        ids = np.random.default_rng(8).integers(0, cfg.vocab_size, t)
        cache = DynamicCache(config=model.config)
        with float64_inside(), torch.no_grad():
            cache = model(torch.as_tensor(ids[:-1])[None, :], cache=cache, use_cache=True).cache
            with FlopCounterMode(display=False) as counter:
                model(torch.as_tensor(ids[-1:])[None, :], cache=cache, use_cache=True)
        counts = {name: sum(ops.values()) for name, ops in counter.get_flop_counts().items()}
        reading = 0
        for layer in range(cfg.n_layer):
            attn = f"{type(model).__name__}.model.layers.{layer}.self_attn"
            linears = sum(v for name, v in counts.items() if name.startswith(f"{attn}."))
            reading += counts[attn] - linears  # QKᵀ and A·V over the t keys
            reading += counts[f"{attn}.kv_b_proj"] - new_row  # the cached latents read out
        return reading, counter.get_total_flops() - reading

    t = decode_costs.cache_crossover(cfg)
    assert t is not None and t <= cfg.n_ctx
    reading, rest = reading_and_rest(t)
    assert reading > rest
    reading, rest = reading_and_rest(t - 1)
    assert reading <= rest


def test_the_caches_that_outweigh_the_weights_are_the_caches_transformers_holds() -> None:
    """`itm numbers`' "full-context sequences whose caches outweigh the weights", on a spec with
    windows: the caches are what transformers' cache holds after n_ctx tokens (a window's layers
    keep their last W - 1 positions), not n_ctx positions in every layer."""
    cfg = next(c for c in TINY if c.sliding_window is not None and c.sliding_window < c.n_ctx)
    weights = random_weights(cfg, seed=6)
    model = hf_model(weights, cfg)
    ids = np.random.default_rng(8).integers(0, cfg.vocab_size, cfg.n_ctx)
    cache = DynamicCache(config=model.config)
    with float64_inside(), torch.no_grad():
        cache = model(torch.as_tensor(ids)[None, :], cache=cache, use_cache=True).cache
    held = sum(layer.keys.numel() + layer.values.numel() for layer in cache.layers)
    params = sum(p.numel() for p in model.parameters())
    assert decode_costs.cache_outweighs_weights(cfg) == params // held + 1
