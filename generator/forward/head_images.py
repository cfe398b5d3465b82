"""The forward-pass page's pictures: each head's attention as a thumbnail and a large view.

Everything is written by this module (no matplotlib): a PNG by Pillow with fixed settings and no
metadata, an SVG as plain text, so two builds give identical bytes. Colour
encodes √weight (small weights stay visible next to a head's strongest ones); positions a query
may not see (j > i) are grey.

What a head's pattern [T, T] becomes depends on T, so that a 1,024-token prompt costs about what
a short one does per head instead of growing with T²:

- up to LABELLED_MAX positions (every prompt of a few dozen tokens), exactly as always: the
  thumbnail is one pixel per (query, key) cell (attention_png) and the large view a labelled SVG
  with a 16 px square per cell and every token on both axes (attention_svg);
- beyond it, the thumbnail is pooled to at most THUMBNAIL_MAX pixels a side, each pixel showing
  the largest weight of the cells it covers (thumbnail_png), and the large view is a "pixel
  view": an SVG holding a palette PNG with one pixel per cell in the labelled view's 16 colour
  steps, drawn at about VIEW_SIDE px, with the position and token marked at regular intervals
  (pixel_view). At 1,024 tokens that is ~10 KB per thumbnail and ~0.1 MB per view instead of a
  1 MB thumbnail and a 22 MB view with a million squares and 2,048 labels.

attention_view and thumbnail_png choose; the page's blocks read the same sizes from view_ticks,
pool_factor and thumbnail_side. Every view carries its text alternative (<title>, and for pixel
views a <desc> saying how to read it); the page gives each head's scores as text.
"""

from __future__ import annotations

import base64
import html
import io

import numpy as np
from PIL import Image

WHITE = np.array([255, 255, 255], dtype=np.float64)
RAMP = np.array([[255, 255, 255], [121, 134, 203], [26, 35, 126]], dtype=np.float64)  # indigo
MASKED = (236, 239, 241)
LEVELS = 16  # colour steps in the large views (one <path> per step in a labelled SVG)
LABELLED_MAX = 128  # positions up to which a large view labels every token, as it always has
THUMBNAIL_MAX = 128  # a thumbnail's side in pixels at most (the gallery shows it at ≤ 7rem)
VIEW_SIDE = 1024  # px a pixel view's square is drawn at, near enough (a whole number per cell)
TICK_PX = 32  # least distance between two axis labels of a pixel view, in px
TOKEN_CHARS = 12  # a pixel view's axis labels cut a token's text to this many characters


def colour(weight: np.ndarray) -> np.ndarray:
    """RGB [..., 3] floats for attention weights in [0, 1], on a white→indigo ramp of √weight."""
    t = np.sqrt(np.clip(weight, 0.0, 1.0)) * (len(RAMP) - 1)
    low = np.minimum(t.astype(int), len(RAMP) - 2)
    frac = (t - low)[..., None]
    return RAMP[low] * (1 - frac) + RAMP[low + 1] * frac


def level_colour(step: int) -> np.ndarray:
    """The RGB floats of colour step `step` of LEVELS (the weight (step / (LEVELS - 1))²)."""
    return colour(np.array((step / (LEVELS - 1)) ** 2))


def levels(pattern: np.ndarray) -> np.ndarray:
    """Each weight's colour step, 0 … LEVELS - 1: round(√weight · (LEVELS - 1)), half to even."""
    return np.round(np.sqrt(np.clip(pattern, 0.0, 1.0)) * (LEVELS - 1)).astype(np.uint8)


def hex_colour(rgb) -> str:
    return "#" + "".join(f"{int(round(c)):02x}" for c in rgb)


def text_colour(rgb) -> str:
    """Black or white, whichever reads better on this background (WCAG relative luminance)."""
    channels = np.asarray(rgb, dtype=np.float64) / 255
    linear = np.where(channels <= 0.03928, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return "#000" if luminance > 0.179 else "#fff"


# -- PNG ------------------------------------------------------------------------------------------
def _save_png(image: Image.Image, level: int) -> bytes:
    """The image as PNG at zlib `level`, with no timestamp or other metadata (Pillow adds none
    unless asked), so the same pixels give the same bytes."""
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=level)
    return out.getvalue()


def png(pixels: np.ndarray) -> bytes:
    """An 8-bit RGB PNG of pixels [H, W, 3] (uint8)."""
    return _save_png(Image.fromarray(np.ascontiguousarray(pixels, dtype=np.uint8), "RGB"), 9)


def palette_png(indices: np.ndarray, palette: list[tuple[int, ...]]) -> bytes:
    """A palette PNG: indices [H, W] (uint8) into palette (at most 256 RGB colours).

    zlib level 6, not 9: on a 1,024 × 1,024 head view level 9 took 0.9 s for 8% fewer bytes
    (92 against 100 KB), level 6 0.04 s; 144 views made that two minutes of a build."""
    image = Image.fromarray(np.ascontiguousarray(indices, dtype=np.uint8), "P")
    image.putpalette([channel for rgb in palette for channel in rgb])
    return _save_png(image, 6)


def attention_png(pattern: np.ndarray) -> bytes:
    """One pixel per (query, key) cell of pattern [T, T]; the hidden upper triangle is grey."""
    T = pattern.shape[0]
    rgb = colour(pattern)
    hidden = np.triu(np.ones((T, T), dtype=bool), k=1)
    rgb[hidden] = MASKED
    return png(np.round(rgb).astype(np.uint8))


def pool_factor(T: int) -> int:
    """How many cells a side one thumbnail pixel covers: 1 up to THUMBNAIL_MAX positions."""
    return -(-T // THUMBNAIL_MAX)


def thumbnail_side(T: int) -> int:
    """A thumbnail's width and height in pixels for a T-position prompt."""
    return -(-T // pool_factor(T))


def thumbnail_png(pattern: np.ndarray) -> bytes:
    """The gallery's thumbnail of pattern [T, T]: attention_png's bytes up to THUMBNAIL_MAX
    positions; beyond, one pixel per b × b block of cells (b = pool_factor(T), the last block cut
    short), coloured by the block's largest weight, so that a line one cell wide (a previous-token
    diagonal, an induction stripe) stays as dark as it is at full size, where an average would
    dilute it b times. A pixel is grey only when every cell it covers is hidden."""
    T = pattern.shape[0]
    b = pool_factor(T)
    if b == 1:
        return attention_png(pattern)
    n = thumbnail_side(T)
    padded = np.zeros((n * b, n * b))  # weights are >= 0: padding never wins a maximum
    padded[:T, :T] = np.clip(pattern, 0.0, 1.0)  # hidden cells hold 0 (softmax of −∞)
    pooled = padded.reshape(n, b, n, b).max(axis=(1, 3))  # [n, n]
    rgb = colour(pooled)
    block = np.arange(n)
    last_query = np.minimum((block + 1) * b, T) - 1  # the last row pixel row r covers
    rgb[block[None, :] * b > last_query[:, None]] = MASKED  # its first key is after that row
    return png(np.round(rgb).astype(np.uint8))


# -- SVG ------------------------------------------------------------------------------------------
def attention_view(pattern: np.ndarray, tokens: list[str], title: str) -> bytes:
    """The head's large view: the labelled SVG up to LABELLED_MAX positions, else a pixel view."""
    if pattern.shape[0] <= LABELLED_MAX:
        return attention_svg(pattern, tokens, title)
    return pixel_view(pattern, tokens, title)


def attention_svg(pattern: np.ndarray, tokens: list[str], title: str, cell: int = 16) -> bytes:
    """A labelled heatmap of pattern [T, T]: queries down the left, keys along the top."""
    T = pattern.shape[0]
    char = 7.0  # width of one character of 12px monospace, near enough
    longest = max(len(t) for t in tokens)
    left = int(longest * char) + 34  # query labels and their position numbers
    top = int(longest * char * 0.72) + 40  # key labels at -45°, and the title
    size = cell * T
    width = left + size + int(longest * char * 0.72) + 8  # the last key labels lean right
    height = top + size + 8

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" font-family="monospace" font-size="12">',
        f"<title>{html.escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="4" y="16" font-size="14" font-weight="bold" font-family="sans-serif">'
        f"{html.escape(title)}</text>",
    ]
    # One path per colour step keeps a 30×30 view in a few kilobytes.
    squares: dict[int, list[str]] = {}
    hidden: list[str] = []
    for i in range(T):
        for j in range(T):
            square = f"M{left + j * cell} {top + i * cell}h{cell}v{cell}h-{cell}z"
            if j > i:
                hidden.append(square)
            else:
                step = int(round(np.sqrt(np.clip(pattern[i, j], 0, 1)) * (LEVELS - 1)))
                squares.setdefault(step, []).append(square)
    out.append(f'<path fill="{hex_colour(MASKED)}" d="{"".join(hidden)}"/>')
    for step in sorted(squares):
        out.append(f'<path fill="{hex_colour(level_colour(step))}" d="{"".join(squares[step])}"/>')
    for i, token in enumerate(tokens):
        y = top + i * cell + cell * 0.72
        out.append(
            f'<text x="{left - 4}" y="{y:.1f}" text-anchor="end">{html.escape(token)}</text>'
            f'<text x="4" y="{y:.1f}" fill="#666">{i}</text>'
        )
        x = left + i * cell + cell * 0.7
        out.append(
            f'<text transform="translate({x:.1f} {top - 4}) rotate(-45)">{html.escape(token)}</text>'
        )
    out.append("</svg>\n")
    return "\n".join(out).encode()


def view_ticks(T: int) -> tuple[int, int]:
    """(px per cell, positions between axis labels) of a T-position pixel view: cells a whole
    number of px, the square near VIEW_SIDE px (1 px per cell at 1,024 tokens); labels at the
    smallest power-of-two interval that puts them TICK_PX apart or more."""
    scale = max(1, VIEW_SIDE // T)
    every = 1
    while every * scale < TICK_PX:
        every *= 2
    return scale, every


def _cut(token: str) -> str:
    return token if len(token) <= TOKEN_CHARS else token[: TOKEN_CHARS - 1] + "…"


def pixel_view(pattern: np.ndarray, tokens: list[str], title: str) -> bytes:
    """A large view of pattern [T, T] for long prompts: the cells as one palette PNG (one pixel
    per query and key, the labelled view's LEVELS colour steps and grey for hidden cells),
    embedded as a data: URI so the SVG stays one self-contained file that an <img> can show;
    drawn scale px per cell with image-rendering pixelated, and every `every`-th position's number
    and token (cut to TOKEN_CHARS) on both axes, queries down the left, keys along the top."""
    T = pattern.shape[0]
    scale, every = view_ticks(T)
    index = levels(pattern)
    index[np.triu(np.ones((T, T), dtype=bool), k=1)] = LEVELS  # the palette's last entry
    palette = [tuple(int(round(c)) for c in level_colour(step)) for step in range(LEVELS)]
    image = palette_png(index, [*palette, MASKED])
    uri = "data:image/png;base64," + base64.b64encode(image).decode("ascii")

    marked = range(0, T, every)
    labels = [f"{p} {_cut(tokens[p])}" for p in marked]
    char = 7.0  # width of one character of 12px monospace, near enough
    longest = max(len(label) for label in labels)
    left = int(longest * char) + 12
    top = int(longest * char * 0.72) + 48  # key labels at -45°, the title and a line under it
    size = scale * T
    width = left + size + int(longest * char * 0.72) + 8
    height = top + size + 8
    desc = (
        f"{T:,} positions, one square per query (row, down the left) and key (column, along the "
        f"top); the position and its token are marked every {every} positions. Darker is more "
        f"weight, in {LEVELS} steps of √weight; grey is hidden by the causal mask."
    )
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" font-family="monospace" font-size="12">',
        f"<title>{html.escape(title)}</title>",
        f"<desc>{html.escape(desc)}</desc>",
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="4" y="16" font-size="14" font-weight="bold" font-family="sans-serif">'
        f"{html.escape(title)}</text>",
        f'<text x="4" y="32" fill="#666">{T:,} × {T:,}: one square per cell; labels every '
        f"{every} positions</text>",
        f'<image x="{left}" y="{top}" width="{size}" height="{size}" preserveAspectRatio="none" '
        f'style="image-rendering:pixelated" href="{uri}"/>',
    ]
    ticks = []
    for p, label in zip(marked, labels, strict=True):
        centre = (p + 0.5) * scale
        ticks.append(f"M{left - 4} {top + centre:.1f}h4M{left + centre:.1f} {top - 4}v4")
        out.append(
            f'<text x="{left - 6}" y="{top + centre + 4:.1f}" text-anchor="end">'
            f"{html.escape(label)}</text>"
        )
        out.append(
            f'<text transform="translate({left + centre + 3:.1f} {top - 6}) rotate(-45)">'
            f"{html.escape(label)}</text>"
        )
    out.append(f'<path stroke="#666" d="{"".join(ticks)}"/>')
    out.append("</svg>\n")
    return "\n".join(out).encode()
