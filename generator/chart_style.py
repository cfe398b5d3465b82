"""How the site's matplotlib charts are drawn, whatever they show: the wide and narrow layouts,
matplotlib's own defaults (never a machine's matplotlibrc), plain-text log axes, the crossover
line, and byte-stable SVG (a fixed hash salt, no date, text kept as text, transparent)."""

from __future__ import annotations

import dataclasses
import io
import math

from generator.render.numbers import fmt_int


@dataclasses.dataclass(frozen=True)
class Layout:
    """How big a chart is drawn and where its words go."""

    width: float  # inches (96 px each where it is shown at full size)
    line_height: float  # inches, of a line chart
    bar_height: float  # inches, of the parameters' bar chart
    small: float  # points: the smallest text (notes beside a line)
    title_chars: int  # a title longer than this wraps
    legend_below: bool  # legend under the axes rather than over the lines


WIDE = Layout(7.5, 3.8, 2.8, small=8, title_chars=90, legend_below=False)
NARROW = Layout(4.2, 5.0, 3.6, small=9, title_chars=42, legend_below=True)
PHONE_MAX = "44.9375em"  # Material's breakpoint below which a page shows the narrow charts


def title(text: str, layout: Layout) -> str:
    import textwrap

    return textwrap.fill(text, layout.title_chars)


def legend(ax, fig, layout: Layout, fontsize: float, **where) -> None:
    """Over the axes where the wide chart has room; under them on a narrow one."""
    if layout.legend_below:
        fig.legend(loc="outside lower center", frameon=False, fontsize=fontsize)
    else:
        ax.legend(frameon=False, fontsize=fontsize, **where)


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # matplotlib's own defaults, not a machine's matplotlibrc (MATPLOTLIBRC, MPLCONFIGDIR,
    # ~/.config/matplotlib, or the working directory, which is the project root for the
    # workers): the same figure on every machine.
    matplotlib.rcdefaults()
    plt.rcParams.update(
        {
            "svg.hashsalt": "inside-the-model",
            "svg.fonttype": "none",
            "font.size": 10,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    return plt


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def log_axes(ax, x_ticks: list[int]) -> None:
    """Log-log axes labelled in plain text: the token counts `x_ticks` written out, FLOPs as
    10⁶, 10⁹ … (matplotlib's default labels are mathtext, whose parser was most of a figure's
    time; plain text is also what a reader can select and search)."""
    from matplotlib.ticker import (
        FixedLocator,
        FuncFormatter,
        LogLocator,
        NullFormatter,
        NullLocator,
    )

    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(FixedLocator(x_ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: fmt_int(round(x))))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(power_of_ten))
    ax.yaxis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))  # 2× and 5× marks, not all eight
    ax.yaxis.set_minor_formatter(NullFormatter())


def power_of_ten(value: float, _position: int | None = None) -> str:
    """ "10⁹" for a power of ten (the major ticks of a log axis), "" otherwise."""
    exponent = round(math.log10(value)) if value > 0 else 0
    if value <= 0 or not math.isclose(value, 10.0**exponent, rel_tol=1e-9):
        return ""
    return "10" + str(exponent).translate(SUPERSCRIPT)


def svg_bytes(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None}, transparent=True)
    return buffer.getvalue()


def finished(fig) -> bytes:
    """The figure as SVG bytes; the figure is closed."""
    import matplotlib.pyplot as plt

    svg = svg_bytes(fig)
    plt.close(fig)
    return svg


def crossing(ax, x: float, **style):
    """A dashed vertical line at x, the crossover; stop_under() then shortens it."""
    return ax.axvline(x, color="#c62828", linestyle="--", linewidth=1, **style)


def stop_under(line, above) -> None:
    """End the vertical `line` under the text `above` (it ran through it). Call it once the
    title and legend are placed: the layout they settle decides where the text lands."""
    ax = line.axes
    # The layout engine's pass alone places the text as drawing would, without drawing every
    # artist once more. The layout then stays as this pass left it: savefig draws without laying
    # out again (a second pass moved the axes by under a pixel, for a third of a chart's CPU).
    engine = ax.figure.get_layout_engine()
    if engine is not None:
        engine.execute(ax.figure)
        ax.figure.set_layout_engine("none")
    box = above.get_window_extent().transformed(ax.transAxes.inverted())
    line.set_ydata([0.0, max(box.y0 - 0.02, 0.0)])
