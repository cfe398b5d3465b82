"""The shared numpy ops against the torch / transformers functions they stand for, one by one
(the whole-model tests would say that something differs; these say which op)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow  # imports torch / transformers

import transformers.models.llama.modeling_llama as modeling_llama  # noqa: E402
from transformers import LlamaConfig  # noqa: E402
from transformers.masking_utils import causal_mask_function, sliding_window_overlay  # noqa: E402

from generator.models import ops  # noqa: E402
from tests.llama_helpers import float64_inside  # noqa: E402

RNG = np.random.default_rng(0)


def t(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_layer_norm_is_torch_layer_norm_traced_or_not(dtype) -> None:
    x = (RNG.standard_normal((9, 48)) * 3 + 2).astype(dtype)
    gain, shift = (1 + 0.1 * RNG.standard_normal((2, 48))).astype(dtype)
    theirs = torch.nn.functional.layer_norm(t(x), (48,), t(gain), t(shift), 1e-5).numpy()
    ours, trace = ops.layer_norm(x, gain, shift, 1e-5)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-14 if dtype == np.float64 else 1e-5)
    np.testing.assert_allclose(trace["mean"], x.mean(-1), rtol=1e-6)
    np.testing.assert_allclose(trace["normalized"] * gain + shift, ours, rtol=0, atol=1e-5)
    # without its trace it normalizes in place of its centred copy: the same bits, x untouched
    before = x.copy()
    bare, no_trace = ops.layer_norm(x, gain, shift, 1e-5, trace=False)
    assert no_trace == {} and bare.dtype == ours.dtype and bare.tobytes() == ours.tobytes()
    assert x.tobytes() == before.tobytes()
    # γ and β in a wider dtype widen the output, traced or not, as `normalized * γ + β` would
    wide, _ = ops.layer_norm(x.astype(np.float32), gain.astype(np.float64), shift, 1e-5, False)
    assert wide.dtype == np.float64


def test_rms_norm_is_llama_rms_norm() -> None:
    x, gain = RNG.standard_normal((7, 16)) * 3, 1 + 0.1 * RNG.standard_normal(16)
    norm = modeling_llama.LlamaRMSNorm(16, eps=1e-5).double()
    norm.weight.data = t(gain)
    with float64_inside(), torch.no_grad():
        theirs = norm(t(x)).numpy()
    ours, trace = ops.rms_norm(x, gain, 1e-5)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-14)
    np.testing.assert_allclose(trace["mean_square"], (x * x).mean(-1))


def test_silu_and_swiglu() -> None:
    x = np.concatenate([RNG.standard_normal(1000) * 10, [-800.0, -50.0, 0.0, 50.0, 800.0]])
    np.testing.assert_allclose(
        ops.silu(x), torch.nn.functional.silu(t(x)).numpy(), rtol=1e-15, atol=0
    )
    up = RNG.standard_normal(x.shape)
    np.testing.assert_allclose(
        ops.swiglu(x, up), (torch.nn.functional.silu(t(x)) * t(up)).numpy(), rtol=1e-15, atol=0
    )


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_gelu_in_slabs_is_the_one_line_formula_to_the_bit(dtype) -> None:
    """gelu() works in place a cache-sized slab at a time: the same bytes as the formula in one
    expression, at every scale up to the largest float (where x · (1 + tanh) would overflow),
    over more than one slab and on a strided view."""
    big = np.finfo(dtype).max
    x = np.concatenate(
        [np.random.default_rng(0).standard_normal(ops.CHUNK + 7) * 4, [big, -big, big / 1.5, 0.0]]
    ).astype(dtype)
    for view in (x, x[::3]):
        one_line = 0.5 * view * (1.0 + np.tanh(np.sqrt(2.0 / np.pi).astype(dtype) * (
            view + 0.044715 * (view * view * view))))  # fmt: skip
        with np.errstate(over="ignore", invalid="ignore"):
            np.testing.assert_array_equal(ops.gelu(view), one_line)


def test_gelu_is_gelu_new() -> None:
    from transformers.activations import NewGELUActivation

    x = RNG.standard_normal(1000) * 5
    np.testing.assert_allclose(ops.gelu(x), NewGELUActivation()(t(x)).numpy(), rtol=0, atol=1e-15)


@pytest.mark.parametrize(("d_head", "theta"), [(8, 10000.0), (16, 500000.0), (4, 7.5)])
def test_rotary_is_llama_rotary_embedding(d_head: int, theta: float) -> None:
    config = LlamaConfig(
        hidden_size=2 * d_head, num_attention_heads=2, head_dim=d_head,
        rope_parameters={"rope_type": "default", "rope_theta": theta},
    )  # fmt: skip
    positions = np.array([0, 1, 2, 5, 17, 100, 4095])
    with float64_inside():
        rotary = modeling_llama.LlamaRotaryEmbedding(config).double()
        with torch.no_grad():
            cos, sin = rotary(torch.zeros(1, dtype=torch.float64), t(positions)[None])
    ours_cos, ours_sin = ops.rope_cos_sin(positions, d_head, theta)
    np.testing.assert_allclose(ours_cos, cos[0].numpy(), rtol=0, atol=1e-15)
    np.testing.assert_allclose(ours_sin, sin[0].numpy(), rtol=0, atol=1e-15)
    q, k = RNG.standard_normal((2, 3, len(positions), d_head))
    q_theirs, k_theirs = modeling_llama.apply_rotary_pos_emb(t(q)[None], t(k)[None], cos, sin)
    np.testing.assert_allclose(
        ops.apply_rotary(q, ours_cos, ours_sin), q_theirs[0].numpy(), atol=1e-15
    )
    np.testing.assert_allclose(
        ops.apply_rotary(k, ours_cos, ours_sin), k_theirs[0].numpy(), atol=1e-15
    )
    np.testing.assert_array_equal(ops.rotate_half(q), modeling_llama.rotate_half(t(q)).numpy())


@pytest.mark.parametrize("n_rep", [1, 2, 4])
def test_repeat_kv_is_transformers(n_rep: int) -> None:
    kv = RNG.standard_normal((3, 5, 4))
    theirs = modeling_llama.repeat_kv(t(kv)[None], n_rep)[0].numpy()
    np.testing.assert_array_equal(ops.repeat_kv(kv, n_rep), theirs)


@pytest.mark.parametrize("window", [None, 1, 3, 100])
@pytest.mark.parametrize(("nd", "ns"), [(6, 6), (1, 9), (3, 9)])
def test_causal_mask_is_transformers_mask_functions(window, nd: int, ns: int) -> None:
    """Row i is position ns − nd + i; transformers' mask functions take (batch, head, q, kv)."""
    theirs = np.zeros((nd, ns), dtype=bool)
    for i in range(nd):
        for j in range(ns):
            q = ns - nd + i
            visible = causal_mask_function(0, 0, q, j)
            if window is not None:
                visible = visible and sliding_window_overlay(window)(0, 0, q, j)
            theirs[i, j] = bool(visible)
    np.testing.assert_array_equal(ops.causal_mask(nd, ns, window), theirs)


def test_causal_attention_is_eager_attention_forward() -> None:
    """GQA (8 query heads, 2 kv heads) over a cache, against transformers' eager attention."""
    h, h_kv, nd, ns, dh = 8, 2, 3, 7, 4
    q = RNG.standard_normal((h, nd, dh))
    k, v = RNG.standard_normal((2, h_kv, ns, dh))

    class Module(torch.nn.Module):
        num_key_value_groups = h // h_kv

    mask = torch.zeros(nd, ns, dtype=torch.float64)
    mask[~t(ops.causal_mask(nd, ns))] = torch.finfo(
        torch.float64
    ).min  # transformers' additive mask
    with float64_inside():
        out, weights = modeling_llama.eager_attention_forward(
            Module().eval(), t(q)[None], t(k)[None], t(v)[None], mask[None, None], scaling=dh**-0.5
        )
    heads, scores, ours = ops.causal_attention(q, k, v)
    np.testing.assert_allclose(ours, weights[0].numpy(), rtol=0, atol=1e-15)
    np.testing.assert_allclose(heads, out[0].transpose(0, 1).numpy(), rtol=0, atol=1e-14)
    assert np.isneginf(scores[~np.broadcast_to(ops.causal_mask(nd, ns), scores.shape)]).all()


@pytest.mark.parametrize(
    ("h", "h_kv", "nd", "ns", "window", "rows"),
    [
        (4, 4, 300, 300, None, 64),  # many tiles, the last one short
        (4, 2, 5, 300, None, 128),  # decoding: a few new rows over a long cache
        (8, 2, 300, 300, 50, 64),  # a window narrower than a tile
        (4, 1, 260, 400, 17, 32),  # window and cache
        (2, 2, 300, 300, 1, 64),  # each row sees itself only
        (2, 2, 1, 1, None, 128),
    ],
)
def test_attention_by_tiles_is_causal_attention(h, h_kv, nd, ns, window, rows) -> None:
    """Tiles of rows over only the keys they may see give causal_attention's heads (and hence
    transformers' eager attention's, above) to float64 rounding, window and GQA included."""
    rng = np.random.default_rng(nd + ns)
    q = rng.standard_normal((h, nd, 16))
    k, v = rng.standard_normal((2, h_kv, ns, 16))
    full, _, _ = ops.causal_attention(q, k, v, window)
    tiled = ops.causal_attention_by_tiles(q, k, v, window, rows=rows)
    np.testing.assert_allclose(tiled, full, rtol=1e-13, atol=1e-13)
