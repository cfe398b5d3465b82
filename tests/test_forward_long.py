"""The forward-pass page on a long prompt (over head_images.LABELLED_MAX tokens): pooled
thumbnails and pixel views for every head (drawn from float32 copies of the patterns, kept once the
heads are scored in float64), the residual norms summarised with every value in a
CSV file, the token list and the per-position guesses in boxes that scroll; and on the same model
with a prompt of LABELLED_MAX tokens, every position as always. A tiny GPT-2-shaped checkpoint
with a 512-token context stands in for GPT-2 (the 1,024-token build at full size is measured by
bench/bench_gpt2_full.py --prompt-tokens 1024, not here). The slow tests build the whole site
with a prompt that fills the tiny model's context: twice to the same bytes, its page linking its
summaries, the generation page saying there is no room to continue, and the viewer drawing a
pixel view in Chromium."""

from __future__ import annotations

import csv
import dataclasses
import io
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bs4 import BeautifulSoup

from generator import blocks, config
from generator.checkpoints import PINS_FILE
from generator.engine import forward
from generator.forward import current, feature, head_blocks, render
from generator.forward.analysis import score_heads
from generator.forward.head_images import LABELLED_MAX, MASKED, thumbnail_side, view_ticks
from generator.forward.residual import RESIDUAL_CSV, residual_block
from generator.inputs import BuildInputs
from generator.settings import Settings
from tests.axe_helpers import run_axe, serious
from tests.forward_helpers import TINY_LONG, block_network, pins_toml, write_tiny_checkpoint
from tests.full_size import prompt_of
from tests.site_helpers import ROOT, build_env, patched_mkdocs, serve, tree_digest


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def tiny_long(tmp_path, monkeypatch):
    """A project whose pins name a tiny checkpoint with a 512-token context, and its settings."""
    block_network(monkeypatch)
    monkeypatch.setitem(config.CONFIGS, "tiny", TINY_LONG)
    folder = tmp_path / "weights"
    paths = write_tiny_checkpoint(folder, seed=5, cfg=TINY_LONG)
    root = tmp_path / "project"
    (root / PINS_FILE).parent.mkdir(parents=True)
    (root / PINS_FILE).write_text(pins_toml(paths), encoding="utf-8")

    def settings(n_tokens: int) -> Settings:
        env = {
            "ITM_GPT2_WEIGHTS": str(folder),
            "HF_HUB_CACHE": str(tmp_path / "hub"),
            "ITM_CACHE_DIR": str(tmp_path / "cache"),
            "ITM_FORWARD_PROMPT": prompt_of(folder, n_tokens),
        }
        return Settings.load(root, env=env)

    return settings


def test_a_long_prompt_gives_pooled_thumbnails_pixel_views_and_summary_blocks(tiny_long):
    settings = tiny_long(300)
    fp = current(settings)
    T = len(fp.tokens)
    assert T == 300 and render.summarised(fp)
    # Scores are measured in float64 before the patterns are kept in float32 for drawing.
    ours = forward(_float64_weights(settings), TINY_LONG, fp.token_ids, keep="patterns")
    assert fp.heads == score_heads([b.attention["weights"] for b in ours.blocks], fp.token_ids)
    assert fp.attention(0, 0).dtype == np.float32
    np.testing.assert_allclose(
        fp.attention(1, 1), ours.blocks[1].attention["weights"][1], rtol=1e-6, atol=1e-7
    )

    files = feature.files(BuildInputs(settings, excerpts={}))
    thumbs = [v for k, v in files.items() if k.startswith("forward/heads/") and k.endswith(".png")]
    views = [v for k, v in files.items() if k.startswith("forward/heads/") and k.endswith(".svg")]
    assert len(thumbs) == len(views) == TINY_LONG.n_layer * TINY_LONG.n_head
    assert {png_size(t) for t in thumbs} == {(thumbnail_side(T),) * 2}
    assert all(b"data:image/png;base64," in v and v.count(b"<path") == 1 for v in views)
    rows = list(csv.reader(io.StringIO(files[RESIDUAL_CSV].decode())))
    assert rows[0][:3] == ["position", "token", "embedding"] and len(rows) == T + 1
    np.testing.assert_allclose(
        [[float(v) for v in row[2:]] for row in rows[1:]], fp.residual_norms.T, atol=5e-5
    )

    link = {RESIDUAL_CSV: "../forward/residual-norms.csv"}.get
    residual = BeautifulSoup(blocks.render(residual_block(fp, link)), "html.parser")
    assert [th.get_text() for th in residual.select("thead th")][2:] == [
        "smallest",
        "median",
        "largest",
    ]
    assert len(residual.select("tbody tr")) == TINY_LONG.n_layer + 1
    last = residual.select("tbody tr")[-1].select("td")
    high = int(np.argmax(fp.residual_norms[-1, 1:])) + 1
    assert last[3]["title"].endswith(f"(position {high}): {fp.residual_norms[-1, high]:.2f}")
    assert residual.select_one("caption a")["href"] == "../forward/residual-norms.csv"
    assert "over the other 299 positions" in residual.get_text()

    tokens = BeautifulSoup(blocks.render(render.tokens_block(fp)), "html.parser")
    assert len(tokens.select(".itm-scroll--tall[role=region][tabindex='0'] li.itm-token")) == T
    predictions = blocks.render(render.predictions_block(fp))
    assert 'class="itm-scroll itm-scroll--tall"' in predictions
    gallery = blocks.render(head_blocks.gallery_block(fp, lambda path: path))
    assert f'width="{thumbnail_side(T)}"' in gallery
    assert "covers 3 × 3 cells" in gallery and "marked every 16 positions" in gallery


def _float64_weights(settings: Settings):
    from generator.engine.layers import cast
    from generator.forward.pipeline import load_model

    return cast(load_model(settings)[3], np.float64)


def test_a_short_prompt_on_the_same_model_keeps_every_position(tiny_long):
    fp = current(tiny_long(LABELLED_MAX))
    T = len(fp.tokens)
    assert T == LABELLED_MAX and not render.summarised(fp)
    assert fp.attention(0, 0).dtype == np.float64
    files = feature.files(BuildInputs(tiny_long(LABELLED_MAX), excerpts={}))
    assert RESIDUAL_CSV not in files
    residual = BeautifulSoup(blocks.render(residual_block(fp)), "html.parser")
    assert len(residual.select("thead th")) == T + 1
    assert "itm-scroll--tall" not in blocks.render(render.tokens_block(fp))
    assert "covers" not in blocks.render(head_blocks.gallery_block(fp, lambda path: path))


# -- the whole site, built with a prompt that fills the context ----------------------------------
def tiny_build() -> str:
    """The build's code: mkdocs as every test build runs it, with the tiny model registered as
    "tiny" (what the pins file names) each time the generator imports its configs."""
    gpt2 = config.CONFIGS["gpt2"]
    changed = {
        f.name: getattr(TINY_LONG, f.name)
        for f in dataclasses.fields(TINY_LONG)
        if getattr(TINY_LONG, f.name) != getattr(gpt2, f.name)
    }
    register = (
        "import dataclasses\n"
        f"module.CONFIGS['tiny'] = dataclasses.replace(module.CONFIGS['gpt2'], **{changed!r})"
    )
    return patched_mkdocs({"generator.config": register})


@pytest.fixture(scope="module")
def long_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two builds of a project copy whose pins name the tiny checkpoint, with a 512-token prompt
    (the tiny model's whole context)."""
    scratch = tmp_path_factory.mktemp("long")
    paths = write_tiny_checkpoint(scratch / "weights", seed=5, cfg=TINY_LONG)
    project = scratch / "project"
    for name in ("docs", "sources", "overrides"):
        if (ROOT / name).exists():
            shutil.copytree(ROOT / name, project / name)
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    real = (ROOT / PINS_FILE).read_text(encoding="utf-8")
    standin = real[real.index("# The stand-in") :]  # the stand-in's pin, unchanged
    (project / PINS_FILE).write_text(pins_toml(paths) + "\n" + standin, encoding="utf-8")
    sites = []
    for n in (1, 2):  # each from a cache of its own, so both compute (the memo cannot see patches)
        site, cache = scratch / f"site{n}", scratch / f"cache{n}"
        shutil.copytree(ROOT / ".cache" / "sha256", cache / "sha256")  # fetched sources only
        out = subprocess.run(
            [sys.executable, "-c", tiny_build(), "build", "--site-dir", str(site)],
            cwd=project,
            env=build_env(
                ITM_GPT2_WEIGHTS=str(scratch / "weights"),
                HF_HUB_CACHE=str(scratch / "hub"),
                ITM_FORWARD_PROMPT=prompt_of(scratch / "weights", TINY_LONG.n_ctx),
                ITM_CACHE_DIR=str(cache),
            ),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert out.returncode == 0, out.stderr[-3000:]
        sites.append(site)
    return sites[0], sites[1]


@pytest.mark.slow
@pytest.mark.browser  # in the half whose browser tests share long_site: two builds, not four
def test_the_long_prompt_site_builds_twice_to_the_same_bytes(long_site):
    first, second = long_site
    assert tree_digest(first) == tree_digest(second)


@pytest.mark.slow
@pytest.mark.browser  # in the half whose browser tests share long_site: two builds, not four
def test_the_long_prompt_page_links_its_summaries_and_the_generation_page_says_it_is_full(
    long_site,
):
    site = long_site[0]
    html = (site / "forward-pass" / "index.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(html, "html.parser")
    assert len(soup.select("li.itm-token")) == TINY_LONG.n_ctx
    assert "512 tokens, <|endoftext|> first." in soup.get_text()
    csv_link = soup.select_one(".itm-residual caption a")["href"]
    assert (site / "forward-pass" / csv_link).resolve().read_bytes().startswith(b"position,")
    for cell in soup.select(".itm-gallery a.itm-head"):
        view = (site / "forward-pass" / cell["href"]).resolve().read_bytes()
        assert view.startswith(b"<svg") and b"data:image/png;base64," in view
        thumbnail = (site / "forward-pass" / cell.img["src"]).resolve().read_bytes()
        assert png_size(thumbnail) == (int(cell.img["width"]),) * 2 == (thumbnail_side(512),) * 2
    generation = (site / "generation" / "index.html").read_text(encoding="utf-8")
    assert "fill the model's whole context of 512 positions" in generation
    assert 'data-gen="continuation"' not in generation  # no empty table of steps


@pytest.mark.slow
@pytest.mark.browser
def test_the_viewer_draws_a_pixel_view(browser, long_site):
    """The view's cells are a PNG inside the SVG (a data: URI): Chromium must draw it when the
    SVG is an <img>, as the viewer shows it."""
    with serve(long_site[0]) as url:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "forward-pass/", wait_until="networkidle")
        page.locator("#head-1-1").click()
        page.wait_for_function(
            "() => { const i = document.querySelector('.itm-head-view__image');"
            " return i.complete && i.naturalWidth > 0; }"
        )
        # The image as the browser drew it, read back through a canvas: its pixels by colour.
        drawn = page.evaluate(
            """(grey) => {
              const img = document.querySelector('.itm-head-view__image');
              const canvas = document.createElement('canvas');
              canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
              const ctx = canvas.getContext('2d');
              ctx.drawImage(img, 0, 0);
              const d = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
              let hidden = 0, indigo = 0;
              for (let i = 0; i < d.length; i += 4) {
                const off = Math.abs(d[i] - grey[0]) + Math.abs(d[i + 1] - grey[1])
                  + Math.abs(d[i + 2] - grey[2]);
                if (off < 4) hidden++;
                else if (d[i + 2] - d[i] > 40) indigo++;
              }
              return {hidden, indigo};
            }""",
            list(MASKED),
        )
        scale = view_ticks(TINY_LONG.n_ctx)[0]
        cells = TINY_LONG.n_ctx * (TINY_LONG.n_ctx - 1) // 2  # hidden: j > i
        assert drawn["hidden"] == pytest.approx(cells * scale * scale, rel=0.02), drawn
        assert drawn["indigo"] > 1000, drawn  # the visible cells are drawn, not left blank
        assert errors == []
        context.close()


@pytest.mark.slow
@pytest.mark.browser
def test_the_long_prompt_page_passes_axe_with_its_summaries_and_scroll_boxes(browser, long_site):
    """What only a long prompt's page has (the CSV link in the residual table's caption, the
    scrolling token list and guesses, a pixel view open): no serious axe violation. The caption's
    link was told apart from the caption's grey by colour alone (link-in-text-block)."""
    with serve(long_site[0]) as url:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.goto(url + "forward-pass/", wait_until="networkidle")
        assert serious(run_axe(page, include="article")) == []
        page.locator("#head-1-1").click()
        page.wait_for_selector(".itm-head-view:not([hidden])")
        assert serious(run_axe(page, include="article")) == []
        context.close()
