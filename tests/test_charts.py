"""Figures: byte-identical when rendered twice, built from the accounting, and the crossover
where attention's T×T work passes its projections matches the algebra."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.charts import attention_crossover, figure_files, params_figure, render_all
from generator.config import CONFIGS, SIZES

pytestmark = pytest.mark.slow


def test_rendering_twice_gives_identical_svg() -> None:
    cfg = CONFIGS["gpt2"]
    first, second = params_figure(cfg), params_figure(cfg)
    assert first == second
    assert b"<dc:date>" not in first  # no timestamp in the metadata


@pytest.mark.parametrize("name", SIZES)
def test_crossover_is_where_the_grid_outgrows_the_projections(name: str) -> None:
    # Per token and block: Q, K, V and output projections are 2·d·3d + 2·d·d = 8·d²;
    # scores and weighted sum over T keys are 2·T·d each (all heads), 4·T·d together.
    # 4·T·d > 8·d² first holds at T = 2·d + 1.
    d = CONFIGS[name].d_model
    assert attention_crossover(CONFIGS[name]) == 2 * d + 1


def test_params_figure_states_the_model_total_from_transformers() -> None:
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    with torch.device("meta"):
        model = transformers.GPT2LMHeadModel(transformers.GPT2Config())
    total = sum(p.numel() for p in model.parameters())
    svg = params_figure(CONFIGS["gpt2"]).decode()
    assert f"{total:,} parameters" in svg


def test_cached_figures_equal_fresh_ones_and_a_corrupt_cache_is_rebuilt(tmp_path: Path) -> None:
    fresh = render_all()
    assert figure_files(tmp_path) == fresh  # renders and caches
    blob = next((tmp_path / "sha256").rglob("*"), None)
    while blob is not None and blob.is_dir():
        blob = next(blob.iterdir())
    blob.write_bytes(b"corrupt")
    assert figure_files(tmp_path) == fresh  # the corrupt blob is detected, figures re-rendered
    assert all(re.match(rb"<\?xml", data) for data in fresh.values())


@pytest.mark.parametrize("name", ("gpt2", "gpt2-xl"))
def test_decode_figure_states_the_counted_crossover_and_ratio(name: str) -> None:
    from generator import accounting as acc
    from generator.charts import decode_flops_figure

    cfg = CONFIGS[name]
    svg = decode_flops_figure(cfg)
    assert svg == decode_flops_figure(cfg)
    text = svg.decode()
    # the crossover is checked against FlopCounterMode in test_accounting_generation
    assert f"at t = {acc.cache_crossover(cfg):,}" in text
    ratio = acc.decode_flops(cfg, 1024, cached=False) / acc.decode_flops(cfg, 1024, cached=True)
    assert f"no cache costs {ratio:,.0f}× more" in text
