"""The attention variants of the frontier families against transformers, in float64:
YaRN's frequencies (gpt-oss, DeepSeek-V3), attention sinks with sliding windows (gpt-oss) and
multi-head latent attention with its latent cache (DeepSeek-V3).

Every comparison goes through `_close`, which asserts at most TOLERANCE and keeps the largest
error seen per kind in MEASURED (a script can run the tests and print it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow  # imports torch / transformers

import transformers.models.gpt_oss.modeling_gpt_oss as modeling_gpt_oss  # noqa: E402
from transformers.masking_utils import causal_mask_function, sliding_window_overlay  # noqa: E402

from generator.models import ops  # noqa: E402
from tests.llama_helpers import float64_inside  # noqa: E402

TOLERANCE = 1e-12
MEASURED: dict[str, float] = {}


def _close(ours: np.ndarray, theirs: Any, kind: str, relative: bool = False) -> None:
    """Assert |ours − theirs| <= TOLERANCE (relative to |theirs| if asked); note the largest."""
    theirs = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    assert np.shape(ours) == theirs.shape, (kind, np.shape(ours), theirs.shape)
    error = np.abs(np.asarray(ours) - theirs)
    if relative:
        error = error / np.abs(theirs)
    worst = float(error.max()) if error.size else 0.0
    MEASURED[kind] = max(MEASURED.get(kind, 0.0), worst)
    assert worst <= TOLERANCE, f"{kind}: max error {worst:.3g}"


def t(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x))


# -- attention sinks --------------------------------------------------------------------------------
def _additive_mask(nd: int, ns: int, window: int | None) -> torch.Tensor:
    """transformers' mask functions' verdicts as an additive [1, 1, nd, ns] mask."""
    mask = torch.zeros(nd, ns, dtype=torch.float64)
    for i in range(nd):
        for j in range(ns):
            q = ns - nd + i
            visible = causal_mask_function(0, 0, q, j)
            if window is not None:
                visible = visible and sliding_window_overlay(window)(0, 0, q, j)
            if not visible:
                mask[i, j] = torch.finfo(torch.float64).min
    return mask[None, None]


@pytest.mark.parametrize(
    ("h", "h_kv", "nd", "ns", "window", "sink_shift"),
    [
        (4, 4, 9, 9, None, 0.0),  # causal
        (4, 2, 12, 12, 4, 0.0),  # a window shorter than the sequence
        (8, 2, 3, 11, 5, 0.0),  # a cached prefix and a window
        (2, 1, 1, 20, 6, 0.0),  # one decoding step
        (4, 2, 7, 10, None, 6.0),  # sinks larger than every score: most weight goes nowhere
        (4, 2, 7, 10, 2, -30.0),  # sinks far below: almost plain softmax
    ],
)
def test_sinks_are_gpt_oss_eager_attention(h, h_kv, nd, ns, window, sink_shift) -> None:
    rng = np.random.default_rng(h * nd + ns)
    q = 2 * rng.standard_normal((h, nd, 8))
    k, v = rng.standard_normal((2, h_kv, ns, 8))
    sinks = rng.standard_normal(h) + sink_shift

    class Module(torch.nn.Module):
        num_key_value_groups = h // h_kv

    module = Module().eval()
    module.sinks = t(sinks)
    with float64_inside(), torch.no_grad():
        out, weights = modeling_gpt_oss.eager_attention_forward(
            module, t(q)[None], t(k)[None], t(v)[None], _additive_mask(nd, ns, window), 8**-0.5
        )
    heads, _, ours = ops.causal_attention(q, k, v, window, sinks=sinks)
    _close(ours, weights[0], "sinks: weights")
    _close(heads, out[0].transpose(0, 1), "sinks: heads")
    assert (ours.sum(-1) < 1).all()  # the sink took its share of every row
    tiled = ops.causal_attention_by_tiles(q, k, v, window, rows=4, sinks=sinks)
    _close(tiled, out[0].transpose(0, 1), "sinks: heads by tiles")


def test_sinks_of_minus_infinity_are_no_sinks() -> None:
    """A sink at −∞ takes no share: the tiles give exactly the bits of no sinks at all."""
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((3, 4, 40, 8))
    for window in (None, 7):
        plain = ops.causal_attention_by_tiles(q, k, v, window, rows=16)
        none = ops.causal_attention_by_tiles(q, k, v, window, rows=16, sinks=np.full(4, -np.inf))
        np.testing.assert_array_equal(none, plain)


@pytest.mark.parametrize(("window", "sinks"), [(None, False), (5, True)])
def test_tiles_take_values_of_another_width_and_a_scale(window, sinks) -> None:
    """MLA's absorbed form: one key head c + r wide, values c wide, its own scale; by tiles as
    in one grid (the tiles' heads were once shaped like the queries)."""
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((4, 50, 12)), rng.standard_normal((1, 60, 12))
    v = rng.standard_normal((1, 60, 5))
    head_sinks = rng.standard_normal(4) if sinks else None
    full, _, _ = ops.causal_attention(q, k, v, window, sinks=head_sinks, scale=0.3)
    tiled = ops.causal_attention_by_tiles(q, k, v, window, rows=16, sinks=head_sinks, scale=0.3)
    assert tiled.shape == (4, 50, 5)
    _close(tiled, full, "tiles: other value width, scale")
