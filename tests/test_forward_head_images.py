"""The forward-pass page's head pictures at any prompt length: up to head_images.LABELLED_MAX
positions the thumbnail and the labelled view are what they always were, byte for byte; beyond,
a pooled thumbnail that keeps a line one cell wide, and a pixel view that holds every cell as one
palette pixel in the labelled view's colour steps, with labels at intervals and its text
alternative."""

from __future__ import annotations

import base64
import io
import struct
import xml.etree.ElementTree as ET

import numpy as np
from PIL import Image

from generator.engine.layers import softmax
from generator.forward.head_images import (
    LABELLED_MAX,
    LEVELS,
    MASKED,
    RAMP,
    TICK_PX,
    VIEW_SIDE,
    attention_png,
    attention_svg,
    attention_view,
    hex_colour,
    level_colour,
    levels,
    pixel_view,
    pool_factor,
    thumbnail_png,
    thumbnail_side,
    view_ticks,
)

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<img/src=x/onerror="alert(1)">'


def causal_pattern(T: int, seed: int = 0) -> np.ndarray:
    """A head's attention [T, T]: softmax of random scores over j <= i, zero above."""
    scores = np.random.default_rng(seed).normal(size=(T, T)) * 3
    scores[np.triu(np.ones((T, T), dtype=bool), k=1)] = -np.inf
    return softmax(scores)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_up_to_labelled_max_positions_the_pictures_are_as_they_always_were():
    pattern = causal_pattern(LABELLED_MAX)
    tokens = [f"t{i}" for i in range(LABELLED_MAX)]
    assert pool_factor(LABELLED_MAX) == 1 and thumbnail_side(LABELLED_MAX) == LABELLED_MAX
    assert thumbnail_png(pattern) == attention_png(pattern)
    assert attention_view(pattern, tokens, "t") == attention_svg(pattern, tokens, "t")
    longer = causal_pattern(LABELLED_MAX + 1)
    view = attention_view(longer, [*tokens, "t"], "t")
    assert view == pixel_view(longer, [*tokens, "t"], "t") and b"data:image/png;base64," in view
    assert png_size(thumbnail_png(longer)) == (thumbnail_side(LABELLED_MAX + 1),) * 2


def test_a_pooled_thumbnail_keeps_a_line_one_cell_wide_at_full_darkness():
    """A previous-token head (all weight one cell left of the diagonal) over 300 positions: each
    thumbnail pixel covers 3 × 3 cells; the diagonal pixels hold a weight of 1, so they are the
    ramp's darkest colour, as every line cell is at full size (an average would make them a
    third as heavy); pixels wholly above the diagonal are grey, those away from it white."""
    T = 300
    pattern = np.zeros((T, T))
    pattern[0, 0] = 1.0
    pattern[np.arange(1, T), np.arange(T - 1)] = 1.0
    b, n = pool_factor(T), thumbnail_side(T)
    assert (b, n) == (3, 100)
    pixels = np.asarray(Image.open(io.BytesIO(thumbnail_png(pattern))).convert("RGB"))
    assert pixels.shape == (n, n, 3)
    darkest, white = tuple(int(c) for c in RAMP[-1]), (255, 255, 255)
    for r in range(n):
        assert tuple(pixels[r, r]) == darkest, r
        assert all(tuple(pixels[r, c]) == MASKED for c in range(r + 1, n)), r
        assert all(tuple(pixels[r, c]) == white for c in range(r - 1)), r


def test_a_pixel_view_holds_every_cell_as_one_palette_pixel_with_labels_at_intervals():
    T = 1024
    pattern = causal_pattern(T, seed=1)
    tokens = [HOSTILE] + [f"␣w{i % 37}" for i in range(1, T)]
    data = pixel_view(pattern, tokens, "GPT-2 small: block 5, head 1")
    assert len(data) < 300_000, len(data)  # labelled, this view would be ~22 MB
    assert b"<img/src=x" not in data and b"&lt;img/src=x" in data
    svg = ET.fromstring(data)
    assert svg.get("role") == "img"
    assert svg.find(f"{SVG}title").text == "GPT-2 small: block 5, head 1"
    assert "one square per query" in svg.find(f"{SVG}desc").text

    image = svg.find(f"{SVG}image")
    uri = image.get("href")
    assert uri.startswith("data:image/png;base64,")
    png = Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
    assert png.mode == "P" and png.size == (T, T)
    expected = levels(pattern)
    expected[np.triu(np.ones((T, T), dtype=bool), k=1)] = LEVELS
    np.testing.assert_array_equal(np.asarray(png), expected)
    palette = np.array(png.getpalette()[: 3 * (LEVELS + 1)]).reshape(-1, 3)
    # The same colour steps as the labelled view's paths, and its grey for hidden cells.
    assert [hex_colour(rgb) for rgb in palette[:LEVELS]] == [
        hex_colour(level_colour(step)) for step in range(LEVELS)
    ]
    assert tuple(palette[LEVELS]) == MASKED

    scale, every = view_ticks(T)
    assert (scale, every) == (1, 32) and every * scale >= TICK_PX > every // 2 * scale
    assert float(image.get("width")) == T * scale
    labels = [t.text for t in svg.iter(f"{SVG}text")][2:]  # after the title and the subtitle
    marked = list(range(0, T, every))
    assert len(labels) == 2 * len(marked)  # down the left and along the top
    assert [label.split(" ", 1)[0] for label in labels[::2]] == [str(p) for p in marked]
    assert labels[2] == "32 ␣w32" and labels[0].endswith("…")  # long tokens are cut


def test_pixel_views_draw_whole_px_per_cell_at_about_the_same_width_for_any_length():
    assert view_ticks(129) == (7, 8)  # 129 cells at 7 px: 903 px
    assert view_ticks(300) == (3, 16)
    assert view_ticks(1024) == (1, 32)
    for T in range(LABELLED_MAX + 1, 1025):
        scale, every = view_ticks(T)
        assert VIEW_SIDE / 2 < scale * T <= VIEW_SIDE, T
        assert every * scale >= TICK_PX > every // 2 * scale, T  # the closest labels can be


def test_a_prompt_with_control_characters_gives_views_that_parse_and_show_them():
    """A prompt pasted from a terminal or a document (a form feed, an escape, a tab, a bidi
    override) makes tokens of those characters. XML forbids most C0 controls, so a label with one
    left the whole view unreadable (the browser shows a broken image); a tab reached the page as
    Markdown's spaces, a blank chip. The page shows them as the rest of the site does (␌ ␛ ␉)."""
    from generator.forward.render import show

    odd = ["\x0c", "\x1b[31m", "\t", " \u202ex", "a\x00b", "\x7f"]
    assert [show(t) for t in odd] == ["␌", "␛[31m", "␉", "␣⟨U+202E⟩x", "a␀b", "␡"]
    for T in (LABELLED_MAX, LABELLED_MAX + 1):  # the labelled view and the pixel view
        every = view_ticks(T)[1] if T > LABELLED_MAX else 1
        tokens = [f"t{i}" for i in range(T)]
        for k, token in enumerate(odd):
            tokens[k * every] = token  # each on a labelled position
        svg = ET.fromstring(attention_view(causal_pattern(T), [show(t) for t in tokens], "t"))
        labels = " ".join(t.text or "" for t in svg.iter(f"{SVG}text"))
        assert all(show(token) in labels for token in odd), labels
