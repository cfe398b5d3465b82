"""Figures: byte-identical when rendered twice, built from the accounting, and the crossover
where attention's T×T work passes its projections matches the algebra."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.charts import (
    attention_crossover,
    cached_files,
    figure_files,
    params_figure,
    render_all,
)
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
    entry = next(p for p in (tmp_path / "figure").rglob("*") if p.is_file())
    entry.write_bytes(entry.read_bytes().replace(b"<svg", b"<SVG", 1))
    assert figure_files(tmp_path) == fresh  # the corrupt entry is detected, figures re-rendered
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


def _cache_files(tmp_path: Path, calls: list[int]) -> dict[str, bytes]:
    def render() -> dict[str, bytes]:
        calls.append(1)
        return {"figures/a-small.svg": b"<svg>small</svg>", "figures/a-xl.svg": b"<svg>xl</svg>"}

    return cached_files(tmp_path, "ab" * 32, render)


def test_swapped_figure_entries_are_never_served_for_the_other_path(tmp_path: Path) -> None:
    """Issue 11: swapping two cached figures put GPT-2 XL's figure in the small tab."""
    calls: list[int] = []
    first = _cache_files(tmp_path, calls)
    small, xl = (p for p in (tmp_path / "figure").rglob("*") if p.is_file())
    a, b = small.read_bytes(), xl.read_bytes()
    small.write_bytes(b)
    xl.write_bytes(a)
    assert _cache_files(tmp_path, calls) == first and len(calls) == 2  # rebuilt, right files


@pytest.mark.parametrize("garbage", [b"", b"{not json", b"\x00\xff" * 40, b'[1, {"a": 2}]'])
def test_a_garbage_index_is_discarded_and_rebuilt(tmp_path: Path, garbage: bytes, caplog) -> None:
    calls: list[int] = []
    first = _cache_files(tmp_path, calls)
    (index,) = (p for p in (tmp_path / "figures").rglob("*") if p.is_file())
    index.write_bytes(garbage)
    assert _cache_files(tmp_path, calls) == first and len(calls) == 2
    assert any("discarded" in r.getMessage() for r in caplog.records)
    assert _cache_files(tmp_path, calls) == first and len(calls) == 2  # and cached again


@pytest.mark.parametrize("name", ["flops-context", "decode-flops"])
def test_every_label_is_plain_text_inside_the_figure(name: str) -> None:
    """Axis labels are written out (token counts with separators, FLOPs as powers of ten) as
    text a reader can select, and no text is drawn off the canvas (the context figure's
    crossover note once sat 70,000 px below it, invisible)."""
    import xml.etree.ElementTree as ET

    from generator.charts import figure_path

    cfg = CONFIGS["gpt2"]
    svg = ET.fromstring(render_all()[figure_path(name, cfg)])
    width, height = (float(svg.get(side, "0").removesuffix("pt")) for side in ("width", "height"))
    texts = {}
    for text in svg.iter("{http://www.w3.org/2000/svg}text"):
        x, y = float(text.get("x", "0")), float(text.get("y", "0"))
        texts["".join(text.itertext()).strip()] = (x, y)
        assert 0 <= x <= width and 0 <= y <= height, ("".join(text.itertext()), x, y)
    assert "1,024" in texts and "10⁶" in texts, sorted(texts)
    assert not any("$" in t or "mathdefault" in t for t in texts)


def test_figures_drawn_in_worker_processes_are_the_same_bytes() -> None:
    """render_all shares the figures with `python -m generator.charts` workers on a machine
    with more than one core; what they draw must equal what one process draws."""
    assert render_all(workers=3) == render_all(workers=1)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", ["params", "flops-context", "decode-flops"])
def test_nothing_is_drawn_past_the_canvas(name: str, size: str, monkeypatch) -> None:
    """Every drawn artist (titles and labels measured as matplotlib lays them out) fits the
    figure: the parameter chart's title, centred over axes pushed right by their labels, once ran
    ~0.4 in past the right edge and was cut off."""
    from generator import charts

    boxes = []
    draw_svg = charts.svg_bytes

    def measured(fig):
        fig.canvas.draw()
        boxes.append((fig.get_tightbbox(fig.canvas.get_renderer()), *fig.get_size_inches()))
        return draw_svg(fig)

    monkeypatch.setattr(charts, "svg_bytes", measured)
    charts.render_one((name, size))
    ((box, width, height),) = boxes
    assert box.x0 >= 0 and box.y0 >= 0, box
    assert box.x1 <= width and box.y1 <= height, (box, width, height)
