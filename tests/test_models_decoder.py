"""One decoder for every family: GPT-2 read from its spec equals transformers' GPT2LMHeadModel
and GPT-2's traced engine (the pages' own), and a family added as data alone (a Qwen2-like spec:
biases on q, k and v only, a sliding window on some layers) is counted and run right, against
transformers' Qwen2ForCausalLM, with no shared code touched.
"""

from __future__ import annotations

import dataclasses

import msgspec
import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch  # noqa: E402
from transformers import Qwen2Config, Qwen2ForCausalLM  # noqa: E402

from generator import accounting  # noqa: E402
from generator.config import CONFIGS  # noqa: E402
from generator.engine.model import forward as traced_forward  # noqa: E402
from generator.errors import InputError  # noqa: E402
from generator.models import FAMILIES  # noqa: E402
from generator.models.config import ModelConfig  # noqa: E402
from generator.models.decode import decode_step  # noqa: E402
from generator.models.decoder import forward  # noqa: E402
from generator.models.family import Family  # noqa: E402
from generator.models.names import TensorNames  # noqa: E402
from generator.models.weights import random_weights  # noqa: E402
from tests.engine_helpers import hf_model as gpt2_model  # noqa: E402
from tests.llama_helpers import float64_inside  # noqa: E402

pytestmark = pytest.mark.slow
ATOL = 1e-12

# -- GPT-2, read from its spec ---------------------------------------------------------------------
SMALL_GPT2 = dataclasses.replace(CONFIGS["gpt2"], n_layer=2, n_head=4, d_model=32, n_ctx=16)


@pytest.mark.parametrize("bias", [True, False])
def test_gpt2_from_its_spec_equals_transformers_and_the_traced_engine(bias: bool) -> None:
    cfg = dataclasses.replace(SMALL_GPT2, bias=bias)
    weights = random_weights(cfg, seed=3)
    ids = np.array([1, 7, 3, 9, 2, 11, 5])
    ours = forward(weights, cfg, ids).logits
    model = gpt2_model(weights, cfg)
    with torch.no_grad():
        theirs = model(torch.as_tensor(ids)[None, :]).logits[0].numpy()
    assert np.abs(ours - theirs).max() < ATOL
    assert np.abs(ours - traced_forward(weights, cfg, ids).logits).max() < ATOL


def test_gpt2_cached_decoding_equals_the_whole_sequence() -> None:
    cfg = SMALL_GPT2
    weights = random_weights(cfg, seed=4)
    ids = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    whole = forward(weights, cfg, ids).logits
    first = decode_step(weights, cfg, ids[:5])
    second = decode_step(weights, cfg, ids[5:], first.cache)
    np.testing.assert_allclose(np.concatenate([first.logits, second.logits]), whole, atol=ATOL)
    assert second.cache.seen == 8
    assert [layer.shape for layer in second.cache.layers] == [(2, cfg.n_head, 8, cfg.d_head)] * 2


# -- a family that is data only ------------------------------------------------------------------
QWEN_NAMES = TensorNames(
    embed="model.embed_tokens.weight",
    layer="model.layers.{i}.",
    norm1="input_layernorm",
    norm2="post_attention_layernorm",
    final_norm="model.norm",
)
QWEN_WORDS = msgspec.structs.replace(FAMILIES["llama"].words, layers=("layers", "Qwen2 layers"))


def qwen(name: str, **fields) -> ModelConfig:
    """A Qwen2-like size: Llama's parts, biases on q, k, v only, sliding layers past the first."""
    settings = dict(
        name=name, label=name, family="qwenish", names=QWEN_NAMES, n_layer=3, n_head=4,
        n_kv_head=2, d_model=32, d_mlp=48, n_ctx=32, vocab_size=61, norm="rmsnorm", mlp="swiglu",
        positions="rope", rope_theta=1e6, bias=False, qkv_bias=True, tied_embeddings=False,
        sliding_window=4, layer_types=("full", "sliding", "sliding"), norm_eps=1e-6,
    )  # fmt: skip
    settings.update(fields)
    return ModelConfig(**settings)  # type: ignore[arg-type]


SIZES = {
    cfg.name: cfg
    for cfg in (
        qwen("qwenish-a"),
        qwen("qwenish-b", n_kv_head=4, tied_embeddings=True, layer_types=("sliding",) * 3),
        qwen("qwenish-c", n_head=8, n_kv_head=1, d_model=64, sliding_window=2),
        qwen("qwenish-d", sliding_window=None, layer_types=None),
    )
}


@pytest.fixture
def qwenish(monkeypatch: pytest.MonkeyPatch) -> Family:
    family = dataclasses.replace(
        FAMILIES["llama"], name="qwenish", label="Qwen-ish", sizes=SIZES, words=QWEN_WORDS
    )
    monkeypatch.setitem(FAMILIES, "qwenish", family)
    return family


def qwen2_model(cfg: ModelConfig, weights: dict[str, np.ndarray]) -> Qwen2ForCausalLM:
    sliding = cfg.sliding_window is not None
    config = Qwen2Config(
        vocab_size=cfg.vocab_size, hidden_size=cfg.d_model, intermediate_size=cfg.d_mlp,
        num_hidden_layers=cfg.n_layer, num_attention_heads=cfg.n_head,
        num_key_value_heads=cfg.n_kv_head, max_position_embeddings=cfg.n_ctx,
        rms_norm_eps=cfg.norm_eps, rope_parameters={"rope_type": "default", "rope_theta": cfg.rope_theta},
        tie_word_embeddings=cfg.tied_embeddings, use_sliding_window=sliding,
        sliding_window=cfg.sliding_window if sliding else None,
        layer_types=[
            "sliding_attention" if cfg.window(i) else "full_attention" for i in range(cfg.n_layer)
        ],
        bos_token_id=None, eos_token_id=None, pad_token_id=None, attn_implementation="eager",
    )  # fmt: skip
    with float64_inside():
        model = Qwen2ForCausalLM(config).to(torch.float64).eval()
    state = {name: torch.tensor(value) for name, value in weights.items()}
    if cfg.tied_embeddings:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    model.load_state_dict(state, strict=True)
    return model


@pytest.mark.parametrize("name", list(SIZES))
def test_a_data_only_family_counts_every_parameter_transformers_has(qwenish, name) -> None:
    cfg = qwenish.sizes[name]
    with torch.device("meta"):
        model = Qwen2ForCausalLM(
            Qwen2Config(
                vocab_size=cfg.vocab_size,
                hidden_size=cfg.d_model,
                intermediate_size=cfg.d_mlp,
                num_hidden_layers=cfg.n_layer,
                num_attention_heads=cfg.n_head,
                num_key_value_heads=cfg.n_kv_head,
                tie_word_embeddings=cfg.tied_embeddings,
            )  # fmt: skip
        )
    assert accounting.params_total(cfg, "model") == sum(p.numel() for p in model.parameters())
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    if cfg.tied_embeddings:
        del shapes["lm_head.weight"]
    assert qwenish.weight_shapes(cfg) == shapes


@pytest.mark.parametrize("name", list(SIZES))
def test_a_data_only_family_runs_like_transformers(qwenish, name) -> None:
    cfg = qwenish.sizes[name]
    weights = random_weights(cfg, seed=sum(map(ord, name)))
    ids = np.random.default_rng(1).integers(0, cfg.vocab_size, 11)
    ours = qwenish.forward(weights, cfg, ids, np.float64)
    model = qwen2_model(cfg, weights)
    with float64_inside(), torch.no_grad():
        theirs = model(torch.as_tensor(ids)[None, :], use_cache=False).logits[0].numpy()
    assert np.abs(ours - theirs).max() < ATOL


def test_a_data_only_family_is_told_its_own_biases(qwenish) -> None:
    """The checkpoint check names the biases the spec has: q, k, v only, not "none"."""
    cfg = qwenish.sizes["qwenish-a"]
    weights = random_weights(cfg, seed=1)
    extra = {**weights, "model.layers.0.self_attn.o_proj.bias": np.zeros(cfg.d_model)}
    with pytest.raises(InputError) as caught:
        qwenish.check_weights(extra, cfg)
    assert "biases on q, k, v only" in (caught.value.fix or "")


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"layer_types": ("full", "sliding")}, "layer_types", "lists 2 layers"),
        ({"layer_types": ("full", "sliding", "local")}, "layer_types", "'local'"),
        ({"sliding_window": None}, "layer_types", "sliding_window is None"),
    ],
)
def test_an_inconsistent_window_list_is_refused(fields, field, words) -> None:
    with pytest.raises(InputError) as caught:
        qwen("bad", **fields)
    assert caught.value.entry == f"bad.{field}"
    assert words in caught.value.problem
