"""The Llama family's rotary step as a site feature (see generator/features.py): the attention
walkthrough's widget, stepper and script, on the toy of rotary.py, with the Llama sizes beside it.

files(site)   the widget's JSON
macros(page)  rotary_header(), rotary_walkthrough(), rotary_code() for docs/llama/walkthrough.md
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

from generator.models import ops
from generator.models.llama.sizes import SIZES
from generator.render.code import fence_id
from generator.render.numbers import fmt_int
from generator.walkthrough import grids, rotary
from generator.walkthrough.blocks import (
    Header,
    ShiftDemo,
    Walkthrough,
)
from generator.walkthrough.code import EngineExcerpt, function_lines, source_lines
from generator.walkthrough.data import widget_json
from generator.walkthrough.page import HEAD, Size, WalkthroughPage
from generator.walkthrough.rotary import (
    BLOCK,
    RotaryToy,
    rotary_toy,
    step_figures,
    steps,
    widget_data,
)

PAGE = "llama/walkthrough.md"
TITLE = "Walkthrough: rotary positions"
# The pinned lines of transformers that compute the same: rates, angles, pairing, rotation.
CITES = ("llama.rope-inv-freq", "llama.rope-forward", "llama.rotate-half", "llama.apply-rope")
DATA_PATH = "assets/walkthrough/rotary.json"
BESIDE_TOY = "llama-2-7b"  # shown next to the toy until the reader picks another size
# The sizes the bar sets beside each Llama size's, after tokens.
BAR_SIZES: tuple[Size, ...] = (
    ("d", "head", lambda c: c.d_head),
    ("pairs", "", lambda c: c.d_head // 2),
    ("heads", "", lambda c: c.n_head),
    ("base", "", lambda c: round(c.rope_theta)),
)
# Each step's lines in ops.py: the functions that compute it.
STEP_CODE = {
    "pairs": (ops.rotate_half, ops.rotate_half),
    "angles": (ops.rope_inv_freq, ops.rope_cos_sin),
    "rotate": (ops.apply_rotary, ops.apply_rotary),
}


def ops_excerpt(root) -> EngineExcerpt:
    """ops.py's rotary functions, rope_inv_freq to apply_rotary, with each step's lines."""
    path, first, text = source_lines(root, ops.rope_inv_freq, ops.apply_rotary)
    lines = {
        key: (function_lines(start)[0], function_lines(end)[1])
        for key, (start, end) in STEP_CODE.items()
    }
    return EngineExcerpt(path, first, text, lines, fence_id("wt", "ops.rope", first))


def build_data(site) -> dict:
    code = ops_excerpt(site.root)
    return widget_data(rotary_toy(), code.steps, code.block_id)


def files(site) -> dict[str, bytes]:
    return {DATA_PATH: widget_json(build_data(site))}


class RotaryMacros(WalkthroughPage):
    """The page's macros; `page` is generator.pages.PageMacros."""

    beside_toy = BESIDE_TOY

    def __init__(self, page) -> None:
        self.toy: RotaryToy = rotary_toy()
        super().__init__(page, self.toy, tuple(SIZES.values()), step_figures)
        self.steps = steps(self.toy.cfg)

    # -- macros ------------------------------------------------------------------------------
    def header(self) -> str:
        return self.page.render_block(
            Header(
                title="Rotary positions",
                subtitle="RoPE on queries and keys",
                block=BLOCK,
                head=HEAD,
                trained="",
            )
        )

    def walkthrough(self) -> str:
        data = build_data(self.page.site)
        engine_file = ops_excerpt(self.page.site.root).path.rsplit("/", 1)[-1]
        return self.page.render_block(
            Walkthrough(
                src=self._url(DATA_PATH),
                trained_src=None,
                bar=self._bar(BAR_SIZES, "", None, "Llama"),
                note=self._note(BLOCK, after="input_layernorm"),
                trained_note=None,
                legend=dataclasses.replace(grids.legend(), masked=False),
                steps=tuple(
                    self._step(
                        index,
                        step,
                        data,
                        step.text,
                        engine_file,
                        demo=self._shift_demo() if step.key == "rotate" else None,
                    )
                    for index, step in enumerate(self.steps, start=1)
                ),
            )
        )

    def code(self) -> str:
        titles = {step.key: step.title for step in self.steps}
        return self._code(ops_excerpt(self.page.site.root), CITES, titles)

    # -- parts -------------------------------------------------------------------------------
    def _shift_demo(self) -> ShiftDemo:
        """The rotate step's numbers: the same gap, the same score (rotary.shifted_scores)."""
        base = rotary.shifted_scores(self.toy, HEAD)[0]
        rows = tuple(
            (
                fmt_int(row.t),
                fmt_int(row.s),
                fmt_int(row.s - row.t).replace("-", "−"),
                f"{row.score:.4f}".replace("-", "−"),
                row.s - row.t != base.s - base.t,
            )
            for row in rotary.shifted_scores(self.toy, HEAD)
        )
        return ShiftDemo(
            head=HEAD,
            query=self.toy.tokens[rotary.QUERY],
            key=self.toy.tokens[rotary.KEY],
            rows=rows,
        )


def macros(page) -> dict[str, Callable[..., str]]:
    get = functools.cache(lambda: RotaryMacros(page))  # built on first use, if at all

    return {
        "rotary_header": lambda: get().header(),
        "rotary_walkthrough": lambda: get().walkthrough(),
        "rotary_code": lambda: get().code(),
    }
