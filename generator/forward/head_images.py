"""The forward-pass page's pictures: attention heatmaps as small PNGs and labelled SVGs.

Both are written byte for byte by this module (no matplotlib): a PNG is a zlib-compressed RGB
raster with fixed settings, an SVG is plain text, so two builds give identical bytes. Colour
encodes √weight (small weights stay visible next to a head's strongest ones); positions a query
may not see (j > i) are grey.
"""

from __future__ import annotations

import html
import struct
import zlib

import numpy as np

WHITE = np.array([255, 255, 255], dtype=np.float64)
RAMP = np.array([[255, 255, 255], [121, 134, 203], [26, 35, 126]], dtype=np.float64)  # indigo
MASKED = (236, 239, 241)
LEVELS = 16  # colour steps in the SVG views (one <path> per step)


def colour(weight: np.ndarray) -> np.ndarray:
    """RGB [..., 3] floats for attention weights in [0, 1], on a white→indigo ramp of √weight."""
    t = np.sqrt(np.clip(weight, 0.0, 1.0)) * (len(RAMP) - 1)
    low = np.minimum(t.astype(int), len(RAMP) - 2)
    frac = (t - low)[..., None]
    return RAMP[low] * (1 - frac) + RAMP[low + 1] * frac


def hex_colour(rgb) -> str:
    return "#" + "".join(f"{int(round(c)):02x}" for c in rgb)


def text_colour(rgb) -> str:
    """Black or white, whichever reads better on this background (WCAG relative luminance)."""
    channels = np.asarray(rgb, dtype=np.float64) / 255
    linear = np.where(channels <= 0.03928, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return "#000" if luminance > 0.179 else "#fff"


# -- PNG ------------------------------------------------------------------------------------------
def png(pixels: np.ndarray) -> bytes:
    """An 8-bit RGB PNG of pixels [H, W, 3] (uint8), with no timestamp or other metadata."""
    height, width, _ = pixels.shape
    rows = np.concatenate([np.zeros((height, 1), np.uint8), pixels.reshape(height, -1)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 9))
        + chunk(b"IEND", b"")
    )


def attention_png(pattern: np.ndarray) -> bytes:
    """One pixel per (query, key) cell of pattern [T, T]; the hidden upper triangle is grey."""
    T = pattern.shape[0]
    rgb = colour(pattern)
    hidden = np.triu(np.ones((T, T), dtype=bool), k=1)
    rgb[hidden] = MASKED
    return png(np.round(rgb).astype(np.uint8))


# -- SVG ------------------------------------------------------------------------------------------
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
    levels: dict[int, list[str]] = {}
    hidden: list[str] = []
    for i in range(T):
        for j in range(T):
            square = f"M{left + j * cell} {top + i * cell}h{cell}v{cell}h-{cell}z"
            if j > i:
                hidden.append(square)
            else:
                step = int(round(np.sqrt(np.clip(pattern[i, j], 0, 1)) * (LEVELS - 1)))
                levels.setdefault(step, []).append(square)
    out.append(f'<path fill="{hex_colour(MASKED)}" d="{"".join(hidden)}"/>')
    for step in sorted(levels):
        fill = hex_colour(colour(np.array((step / (LEVELS - 1)) ** 2)))
        out.append(f'<path fill="{fill}" d="{"".join(levels[step])}"/>')
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
