"""Properties of the engine over random small configs (hypothesis): shapes, causality,
normalized attention and output distributions, and the step markers the walkthrough reads."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.config import ModelConfig
from generator.engine import STEPS, attention, forward, random_weights, step_lines
from generator.engine.model import Trace
from generator.errors import InputError


@st.composite
def configs(draw) -> ModelConfig:
    n_head = draw(st.integers(1, 4))
    return ModelConfig(
        name="random",
        label="random",
        n_layer=draw(st.integers(1, 3)),
        n_head=n_head,
        d_model=n_head * draw(st.integers(1, 6)),
        n_ctx=draw(st.integers(1, 12)),
        vocab_size=draw(st.integers(2, 40)),
        bias=draw(st.booleans()),
    )


@st.composite
def model_inputs(draw):
    cfg = draw(configs())
    T = draw(st.integers(1, cfg.n_ctx))
    ids = np.array(draw(st.lists(st.integers(0, cfg.vocab_size - 1), min_size=T, max_size=T)))
    seed = draw(st.integers(0, 2**16))
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    return cfg, ids, seed, dtype


def positions(trace: Trace, upto: int) -> list[tuple[str, np.ndarray]]:
    """Every traced array restricted to the positions < upto (the axis that indexes tokens)."""
    rows = [(f"embed.{k}", v[:upto]) for k, v in trace.embed.items()]
    for i, block in enumerate(trace.blocks):
        for key in ("resid_in", "ln1", "resid_mid", "ln2", "resid_out"):
            rows.append((f"{i}.{key}", getattr(block, key)[:upto]))
        for key, value in block.attention.items():
            if key in ("merged", "projected"):
                rows.append((f"{i}.{key}", value[:upto]))
            elif key in ("q", "scores", "scaled", "weights", "heads"):
                rows.append((f"{i}.{key}", value[:, :upto, : upto if key != "q" else None]))
            elif key == "masked":
                rows.append((f"{i}.{key}", value[:, :upto, :upto]))
            else:  # k, v: keys and values of the earlier positions
                rows.append((f"{i}.{key}", value[:, :upto]))
        rows += [(f"{i}.mlp.{k}", v[:upto]) for k, v in block.mlp.items()]
    rows += [("lnf", trace.lnf[:upto]), ("logits", trace.logits[:upto])]
    return rows


@settings(max_examples=60, deadline=None)
@given(model_inputs())
def test_shapes_and_dtypes(args):
    cfg, ids, seed, dtype = args
    T, d, h, dh, V = len(ids), cfg.d_model, cfg.n_head, cfg.d_head, cfg.vocab_size
    trace = forward(random_weights(cfg, seed), cfg, ids, dtype=dtype)
    assert {k: v.shape for k, v in trace.embed.items()} == {
        k: (T, d) for k in ("tok", "pos", "sum")
    }
    assert len(trace.blocks) == cfg.n_layer
    for block in trace.blocks:
        a = block.attention
        assert a["q"].shape == a["k"].shape == a["v"].shape == a["heads"].shape == (h, T, dh)
        for key in ("scores", "scaled", "masked", "weights"):
            assert a[key].shape == (h, T, T)
        assert a["merged"].shape == a["projected"].shape == (T, d)
        assert block.mlp["fc"].shape == block.mlp["gelu"].shape == (T, 4 * d)
        assert block.mlp["proj"].shape == block.resid_out.shape == (T, d)
        assert all(v.dtype == dtype for v in a.values())
    assert trace.logits.shape == trace.probs.shape == (T, V)
    assert trace.logits.dtype == trace.probs.dtype == dtype


@settings(max_examples=60, deadline=None)
@given(model_inputs(), st.data())
def test_changing_a_later_token_never_changes_an_earlier_output(args, data):
    cfg, ids, seed, dtype = args
    if len(ids) < 2:
        return
    t = data.draw(st.integers(1, len(ids) - 1), label="changed position")
    changed = ids.copy()
    changed[t] = (ids[t] + data.draw(st.integers(1, cfg.vocab_size - 1))) % cfg.vocab_size
    weights = random_weights(cfg, seed)
    before = positions(forward(weights, cfg, ids, dtype=dtype), t)
    after = positions(forward(weights, cfg, changed, dtype=dtype), t)
    for (name, old), (_, new) in zip(before, after, strict=True):
        np.testing.assert_array_equal(old, new, err_msg=name)
    # and the change is visible at position t itself (the test can see a difference)
    assert not np.array_equal(
        forward(weights, cfg, ids, dtype=dtype).embed["tok"][t],
        forward(weights, cfg, changed, dtype=dtype).embed["tok"][t],
    )


@settings(max_examples=60, deadline=None)
@given(model_inputs())
def test_attention_rows_and_output_distributions_sum_to_one(args):
    cfg, ids, seed, dtype = args
    trace = forward(random_weights(cfg, seed), cfg, ids, dtype=dtype)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    T = len(ids)
    above = np.triu(np.ones((T, T), dtype=bool), k=1)
    for block in trace.blocks:
        weights = block.attention["weights"]
        np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=tol)
        assert np.all(weights >= 0)
        assert np.all(weights[:, above] == 0)  # the mask: no weight on later positions
        assert np.all(np.isneginf(block.attention["masked"][:, above]))
        assert np.all(np.isfinite(block.attention["masked"][:, ~above]))
    np.testing.assert_allclose(trace.probs.sum(axis=-1), 1.0, atol=tol)
    assert np.all(trace.probs >= 0)


@settings(max_examples=60, deadline=None)
@given(model_inputs())
def test_keeping_less_computes_the_same_numbers(args):
    """keep="patterns" skips the trace's copies (the grid is overwritten in place) and gives
    bit-identical results; keep="none" runs attention by tiles of rows, equal to rounding."""
    cfg, ids, seed, dtype = args
    weights = random_weights(cfg, seed)
    full = forward(weights, cfg, ids, dtype=dtype)
    patterns = forward(weights, cfg, ids, dtype=dtype, keep="patterns")
    bare = forward(weights, cfg, ids, dtype=dtype, keep="none")
    np.testing.assert_array_equal(patterns.logits, full.logits)
    np.testing.assert_array_equal(patterns.probs, full.probs)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(bare.logits, full.logits, rtol=tol, atol=tol)
    np.testing.assert_allclose(bare.probs, full.probs, rtol=tol, atol=tol)
    assert bare.blocks == [] and bare.embed is None and bare.lnf is None
    assert len(patterns.blocks) == cfg.n_layer
    for ours, theirs in zip(patterns.blocks, full.blocks, strict=True):
        assert set(ours.attention) == {"weights"}  # one [h, T, T] per block, not four
        np.testing.assert_array_equal(ours.attention["weights"], theirs.attention["weights"])
        np.testing.assert_array_equal(ours.resid_in, theirs.resid_in)
        np.testing.assert_array_equal(ours.resid_out, theirs.resid_out)
        assert ours.ln1 is None and ours.mlp is None
    # the full trace's grids are four distinct arrays, each step's own values
    a = full.blocks[0].attention
    assert len({id(a[k]) for k in ("scores", "scaled", "masked", "weights")}) == 4
    np.testing.assert_allclose(a["scaled"], a["scores"] / np.sqrt(cfg.d_head))
    with pytest.raises(ValueError, match="keep"):
        forward(weights, cfg, ids, keep="some")


def test_attention_alone_is_causal_and_returns_its_projection():
    cfg = ModelConfig("t", "t", n_layer=1, n_head=2, d_model=8, n_ctx=6, vocab_size=5)
    w = {k.removeprefix("h.0.attn."): v for k, v in random_weights(cfg, 7).items() if ".attn." in k}
    x = np.random.default_rng(8).standard_normal((6, 8))
    out, trace = attention(x, w, cfg)
    np.testing.assert_array_equal(out, trace["projected"])
    y = x.copy()
    y[4:] += 1.0
    out_changed, _ = attention(y, w, cfg)
    np.testing.assert_array_equal(out[:4], out_changed[:4])
    assert not np.allclose(out[4:], out_changed[4:])


def test_step_markers_cover_the_seven_steps_in_order():
    lines = step_lines(attention)
    assert list(lines) == list(STEPS)
    source_lines, _ = inspect.getsourcelines(attention)
    path = inspect.getsourcefile(attention)
    with open(path, encoding="utf-8") as handle:
        file_lines = handle.read().splitlines()
    previous_last = 0
    for name, (first, last) in lines.items():
        assert first > previous_last and last >= first
        assert file_lines[first - 1].strip() == f"# step: {name}"
        assert file_lines[last - 1].strip(), name  # ends on code, not a blank line
        code = [line for line in file_lines[first:last] if not line.strip().startswith("#")]
        assert code, f"step {name} has no code"
        previous_last = last
    assert "return" not in "\n".join(file_lines[first - 1 : last])


def test_importing_the_engine_and_accounting_does_not_import_torch():
    code = (
        "import sys\n"
        "import generator.config, generator.engine, generator.accounting\n"
        "import generator.accounting_cli, generator.render.numbers\n"
        # the engine reads checkpoints with the safetensors package (a site dependency, no torch)
        "heavy = sorted(m for m in ('torch', 'transformers') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    root = Path(__file__).resolve().parent.parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=root,
        env=env,
    )
    assert result.stdout.strip() == ""


def test_bad_token_ids_are_input_errors():
    cfg = ModelConfig("t", "t", n_layer=1, n_head=1, d_model=2, n_ctx=4, vocab_size=3)
    weights = random_weights(cfg)
    for ids in ([], [0, 1, 2, 0, 1], [3], [-1], [[0, 1]]):
        with pytest.raises(InputError) as caught:
            forward(weights, cfg, np.array(ids, dtype=np.int64))
        assert caught.value.entry == "token_ids" and caught.value.fix
