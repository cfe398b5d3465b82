"""The stand-in's training, drawn: loss, and the best head's previous-token and induction scores on
fixed probe sequences, step by step (from the record training leaves in the cache).

The induction score typically sits near chance for a while and then jumps: the circuit forms
abruptly, and the loss drops with it. The figure marks the first probe at or above the page's
induction threshold.
"""

from __future__ import annotations

from generator import charts
from generator.chart_style import pyplot, svg_bytes
from generator.drawing import Figure
from generator.forward.analysis import THRESHOLDS
from generator.store import key_of

FILE = "forward/standin-training.svg"


CURVES = {"induction": "induction", "previous-token": "previous_token"}  # kind -> curve key


def first_reaching(curve: dict, kind: str) -> int | None:
    """The index of the first probe whose best `kind` score reaches the page's threshold."""
    for index, score in enumerate(curve[CURVES[kind]]):
        if score >= THRESHOLDS[kind]:
            return index
    return None


def training_svg(curve: dict, title: str) -> bytes:
    plt = pyplot()
    steps = curve["step"]
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(7.5, 4.6), sharex=True, layout="constrained", height_ratios=(1, 1.2)
    )
    top.plot(steps, curve["loss"], color="#455a64")
    top.set_ylabel("training loss")
    top.set_ylim(bottom=0)
    bottom.plot(steps, curve["induction"], color="#2e7d32", label="induction (best head)")
    bottom.plot(steps, curve["previous_token"], color="#e65100", label="previous-token (best head)")
    for kind, colour in (("induction", "#2e7d32"), ("previous-token", "#e65100")):
        bottom.axhline(THRESHOLDS[kind], color=colour, linestyle=":", linewidth=1)
    bottom.set_ylim(0, 1)
    bottom.set_ylabel("score on probe sequences")
    bottom.set_xlabel("training step")
    bottom.legend(frameon=False, fontsize=9, loc="upper left")
    index = first_reaching(curve, "induction")
    if index is not None:
        formed = steps[index]
        for ax in (top, bottom):
            ax.axvline(formed, color="#888", linestyle="--", linewidth=1)
        top.text(formed, top.get_ylim()[1], f" induction ≥ {THRESHOLDS['induction']} at step "
                 f"{formed:,}", va="top", color="#555", fontsize=8)  # fmt: skip
    top.set_title(title)
    svg = svg_bytes(fig)
    plt.close(fig)
    return svg


def training_figure(curve: dict, title: str) -> Figure:
    """The figure to draw (in a worker, generator.drawing), keyed by the curve, the title and
    everything the drawing reads (charts.inputs_key: the generator's code, THRESHOLDS included,
    and matplotlib's version), so a warm build does not import matplotlib."""
    return Figure(
        FILE,
        f"{__name__}:training_svg",
        (curve, title),
        key_of(charts.inputs_key(), curve, title, FILE),
    )
