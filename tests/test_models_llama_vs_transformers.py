"""The Llama-family engine against transformers' LlamaForCausalLM and MistralForCausalLM holding
the same random weights (eager attention, torch float64 all the way through: see llama_helpers).

Several small configs: multi-head, grouped-query (n_kv_head < n_head) and multi-query attention,
RoPE with a non-default base, biases, a tied unembedding, and Mistral's sliding window shorter
than the sequence. Logits must agree to float64 precision; q and k before and after rotation and
the attention weights of every layer too; cached decoding (a prefill, one-token steps and a
multi-token step) must equal transformers' own cache and the engine's full forward pass.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow  # runs torch / transformers

from transformers import DynamicCache  # noqa: E402

from generator import decode_costs  # noqa: E402
from generator.models import FAMILIES  # noqa: E402
from generator.models.config import ModelConfig  # noqa: E402
from generator.models.decode import decode_step  # noqa: E402
from generator.models.decoder import forward  # noqa: E402
from generator.models.llama.names import NAMES as LLAMA_NAMES  # noqa: E402
from generator.models.weights import random_weights  # noqa: E402
from tests.llama_helpers import (  # noqa: E402
    arch_of,
    float64_inside,
    hf_attention_trace,
    hf_logits,
    hf_model,
)

ATOL = 1e-12  # float64: the logits are O(1)–O(10); their rounding is ~1e-15


def llama(name: str, **fields) -> ModelConfig:
    settings = dict(
        name=name, label=name, family="llama", names=LLAMA_NAMES, n_layer=2, n_head=4, d_model=32, d_mlp=56,
        n_ctx=64, vocab_size=97, norm="rmsnorm", norm_eps=1e-6, mlp="swiglu",
        positions="rope", bias=False, tied_embeddings=False,
    )  # fmt: skip
    settings.update(fields)
    return ModelConfig(**settings)


CONFIGS = {
    "mha": llama("mha"),
    "gqa-theta": llama("gqa-theta", n_head=8, n_kv_head=2, d_model=64, rope_theta=500000.0),
    "mqa": llama("mqa", n_layer=3, n_head=6, n_kv_head=1, d_model=48, rope_theta=123.0),
    "bias-tied": llama("bias-tied", n_kv_head=2, bias=True, tied_embeddings=True, norm_eps=1e-5),
    "mistral-window": llama("mistral-window", n_head=8, n_kv_head=2, d_model=64, sliding_window=5),
    "mistral-window-1": llama("mistral-window-1", n_kv_head=1, sliding_window=1),
}
SEQ = 19  # longer than every window above


def ids_for(cfg: ModelConfig, seed: int, n: int = SEQ) -> np.ndarray:
    return np.random.default_rng([seed, 7]).integers(0, cfg.vocab_size, size=n)


MEASURED: dict[str, float] = {}  # printed at the end of the module (pytest -s), for the report


@pytest.fixture(scope="module", autouse=True)
def report_measured():
    yield
    for key, value in sorted(MEASURED.items()):
        print(f"max |logit difference| {key}: {value:.2e}")


@pytest.mark.parametrize("name", list(CONFIGS))
def test_logits_equal_transformers_float64(name: str) -> None:
    cfg = CONFIGS[name]
    weights = random_weights(cfg, seed=len(name))
    ids = ids_for(cfg, 1)
    theirs = hf_logits(hf_model(weights, cfg), ids)
    ours = forward(weights, cfg, ids).logits
    assert ours.shape == theirs.shape == (SEQ, cfg.vocab_size)
    MEASURED[f"{name} forward"] = float(np.abs(ours - theirs).max())
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=ATOL)
    np.testing.assert_array_equal(FAMILIES["llama"].forward(weights, cfg, ids, np.float64), ours)


def test_the_window_changes_the_logits() -> None:
    """The sliding-window configs are a real test: without the window the logits differ after
    the window's length, and are the same before it."""
    cfg = CONFIGS["mistral-window"]
    weights = random_weights(cfg, seed=3)
    ids = ids_for(cfg, 2)
    windowed = forward(weights, cfg, ids).logits
    full = forward(weights, llama("full", n_head=8, n_kv_head=2, d_model=64), ids).logits
    window = cfg.sliding_window
    np.testing.assert_allclose(windowed[:window], full[:window], rtol=0, atol=1e-12)
    assert np.abs(windowed[window:] - full[window:]).min(axis=-1).max() > 1e-3


@pytest.mark.parametrize("name", ["gqa-theta", "mistral-window", "bias-tied"])
def test_rotations_and_attention_weights_equal_transformers(name: str) -> None:
    cfg = CONFIGS[name]
    weights = random_weights(cfg, seed=11)
    ids = ids_for(cfg, 3)
    theirs = hf_attention_trace(hf_model(weights, cfg), ids, arch_of(cfg))
    ours = forward(weights, cfg, ids, keep=True).attention
    assert len(ours) == len(theirs) == cfg.n_layer
    for i, (mine, their) in enumerate(zip(ours, theirs, strict=True)):
        assert mine.k.shape == (cfg.n_kv_head, SEQ, cfg.d_head)  # n_kv_head heads, not n_head
        for key in ("q", "k", "q_rotated", "k_rotated", "weights"):
            np.testing.assert_allclose(
                getattr(mine, key), their[key], rtol=0, atol=1e-13, err_msg=f"layer {i} {key}"
            )
        # The rotation turns each pair and keeps its length.
        pairs = lambda x: np.hypot(x[..., : cfg.d_head // 2], x[..., cfg.d_head // 2 :])  # noqa: E731
        np.testing.assert_allclose(pairs(mine.q_rotated), pairs(mine.q), rtol=1e-13)
        assert np.abs(mine.q_rotated[:, 1:] - mine.q[:, 1:]).max() > 1e-3  # positions > 0 turn
        np.testing.assert_array_equal(mine.q_rotated[:, 0], mine.q[:, 0])  # position 0 does not


def test_float32_matches_transformers_float32() -> None:
    """Both in float32, transformers unmodified: equal to float32's precision."""
    cfg = CONFIGS["gqa-theta"]
    weights = random_weights(cfg, seed=5, dtype=np.float32)
    ids = ids_for(cfg, 4)
    model = hf_model(weights, cfg, dtype=torch.float32)
    theirs = hf_logits(model, ids, precise=False)
    ours = forward(weights, cfg, ids, dtype=np.float32).logits
    assert ours.dtype == np.float32
    MEASURED["gqa-theta float32 vs float32"] = float(np.abs(ours - theirs).max())
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=2e-4)


def test_transformers_float32_casts_are_what_float64_inside_removes() -> None:
    """transformers' float64 model unmodified differs from ours by float32 rounding (~1e-6), and
    by ~1e-15 with float64_inside: the helper removes the casts and nothing else."""
    cfg = CONFIGS["gqa-theta"]
    weights = random_weights(cfg, seed=6)
    ids = ids_for(cfg, 5)
    model = hf_model(weights, cfg)
    ours = forward(weights, cfg, ids).logits
    as_shipped = np.abs(hf_logits(model, ids, precise=False) - ours).max()
    MEASURED["gqa-theta vs transformers float64 as shipped"] = float(as_shipped)
    assert 1e-9 < as_shipped < 1e-4
    assert np.abs(hf_logits(model, ids) - ours).max() < ATOL


# -- cached decoding --------------------------------------------------------------------------------
def hf_decode(model, chunks: list[np.ndarray]) -> tuple[list[np.ndarray], DynamicCache]:
    """transformers' logits of each chunk, reading the cache the chunks before it left."""
    cache = DynamicCache(config=model.config)
    out = []
    with float64_inside(), torch.no_grad():
        for chunk in chunks:
            result = model(torch.as_tensor(chunk)[None, :], cache=cache, use_cache=True)
            cache = result.cache
            out.append(result.logits[0].numpy())
    return out, cache


@pytest.mark.parametrize("name", ["gqa-theta", "mistral-window", "mqa", "bias-tied"])
def test_cached_decoding_equals_transformers_cache_and_the_full_forward(name: str) -> None:
    cfg = CONFIGS[name]
    weights = random_weights(cfg, seed=21)
    ids = ids_for(cfg, 6)
    # A prefill of 6, four one-token steps, a step of 5 tokens, then two one-token steps: the
    # window of 5 (mistral-window) is crossed inside the prefix, a one-token and the 5-token step.
    sizes = (6, 1, 1, 1, 1, 5, 1, 1)
    bounds = np.cumsum((0, *sizes))
    chunks = [ids[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    theirs, hf_cache = hf_decode(hf_model(weights, cfg), chunks)

    cache = None
    ours = []
    for chunk in chunks:
        step = decode_step(weights, cfg, chunk, cache)
        np.testing.assert_array_equal(step.positions, np.arange(step.cache.seen)[-len(chunk) :])
        cache = step.cache
        ours.append(step.logits)
    assert cache is not None and cache.seen == bounds[-1]

    full = forward(weights, cfg, ids[: bounds[-1]]).logits
    for i, (mine, their) in enumerate(zip(ours, theirs, strict=True)):
        np.testing.assert_allclose(mine, their, rtol=0, atol=ATOL, err_msg=f"chunk {i}")
        np.testing.assert_allclose(mine, full[bounds[i] : bounds[i + 1]], rtol=0, atol=ATOL)
    MEASURED[f"{name} cached decoding"] = max(
        float(np.abs(m - t).max()) for m, t in zip(ours, theirs, strict=True)
    )
    # transformers' cache holds the same rotated keys and values, and as many: a window's layers
    # keep only their last W − 1 positions, in both; the site's count is what they hold.
    for layer in range(cfg.n_layer):
        keys = hf_cache.layers[layer].keys[0].numpy()  # [h_kv, kept, dh]
        values = hf_cache.layers[layer].values[0].numpy()
        assert cache.layers[layer].shape == (2, *keys.shape)
        np.testing.assert_allclose(cache.layers[layer][0], keys, rtol=0, atol=1e-13)
        np.testing.assert_allclose(cache.layers[layer][1], values, rtol=0, atol=1e-13)
    held = {r.key: r.value for r in decode_costs.kv_cache_rows(cfg, bounds[-1])}
    assert held["context.values"] == cache.values


def bytes_per_token(cfg: ModelConfig, dtype: np.dtype | type = np.float32) -> int:
    """What one more position adds to the cache (before any window is full): a key and a value
    per layer and kv head."""
    return cfg.n_layer * 2 * cfg.n_kv_head * cfg.d_head * np.dtype(dtype).itemsize


def test_cache_bytes_per_token_follow_n_kv_head() -> None:
    """A step's cache grows by bytes_per_token per token; GQA's is n_head / n_kv_head smaller."""
    mha, gqa = CONFIGS["mha"], llama("gqa", n_kv_head=1)
    for cfg in (mha, gqa):
        weights = random_weights(cfg, seed=1, dtype=np.float32)
        first = decode_step(weights, cfg, ids_for(cfg, 7, 4), dtype=np.float32)
        second = decode_step(weights, cfg, ids_for(cfg, 8, 3), first.cache, dtype=np.float32)
        grown = second.cache.nbytes - first.cache.nbytes
        assert grown == 3 * bytes_per_token(cfg, np.float32)
    assert bytes_per_token(mha) == 4 * bytes_per_token(gqa)


@pytest.mark.parametrize("name", ["gqa-theta", "bias-tied"])
def test_a_bf16_checkpoint_saved_by_transformers_loads_exactly(name: str, tmp_path) -> None:
    """save_pretrained writes a BF16 model.safetensors as the hub's Llama and Mistral files are;
    the engine's own reader (which needs no torch) gives every tensor torch's exact float32
    values, and the engine's logits from it equal transformers' from the same BF16 weights
    (widened to float32 on both sides)."""
    from generator.engine import load_safetensors

    cfg = CONFIGS[name]
    model = hf_model(random_weights(cfg, seed=11, dtype=np.float32), cfg, dtype=torch.float32)
    model.to(torch.bfloat16).save_pretrained(tmp_path)  # model.safetensors, tensors in BF16
    loaded = load_safetensors(tmp_path / "model.safetensors", cfg)
    state = model.state_dict()
    assert set(loaded) == set(FAMILIES["llama"].weight_shapes(cfg))
    for tensor_name, array in loaded.items():
        assert array.dtype == np.float32, tensor_name
        expected = state[tensor_name].float().numpy()
        np.testing.assert_array_equal(array, expected, err_msg=tensor_name)
    ids = ids_for(cfg, 6)
    ours = forward(loaded, cfg, ids, dtype=np.float32).logits
    # A fresh float32 model holding the widened weights (model.float() would keep RoPE's
    # inv_freq buffer as rounded to BF16 by model.to(torch.bfloat16)).
    theirs = hf_logits(hf_model(loaded, cfg, dtype=torch.float32), ids, precise=False)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=2e-4)
