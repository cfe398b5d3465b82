"""Macros of the "What changed" page: GPT-2 against the Llama family (pages/compare.py), the chain
of changes after Mistral (pages/chain.py), and every family side by side."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from generator.models import get_family
from generator.pages.blocks import ChangeWhy
from generator.pages.context import PageContext, size_tabs
from generator.render import code as code_render
from generator.render.numbers import fmt_int

if TYPE_CHECKING:
    from generator.models.llama.changes import Change
    from generator.pages.chain import Step


class ChangeMacros(PageContext):
    """{{ what_changed() }}, {{ change_chain() }}, {{ families_side_by_side() }}."""

    def what_changed(self) -> str:
        """Each difference between GPT-2 and the Llama family: what it is, why the field made it
        (with the papers), its cost at each Llama size against a GPT-2 of the same shape, and the
        pinned code of both sides."""
        from generator.pages.compare import CHANGES, cost_table

        return "\n".join(
            self._change_section(
                change,
                size_tabs(functools.partial(cost_table, change), "llama", change.only_with),
                (("gpt2", (change.gpt2,)), ("llama", change.llama)),
                ("llama", change.page),
            )
            for change in CHANGES
        )

    def change_chain(self) -> str:
        """What changed after Mistral, one step per family that made it (generator/pages/chain.py):
        the same sections as what_changed(), each measured against the family's own size without
        the change."""
        from generator.pages.chain import step_table, steps

        return "\n".join(
            self._change_section(
                step,
                size_tabs(functools.partial(step_table, step), step.family),
                (("before", step.before_code), ("after", step.after_code)),
                (step.family, step.page),
            )
            for step in steps()
        )

    def _change_section(
        self,
        change: Change | Step,
        costs: str,
        sides: tuple[tuple[str, tuple[str, ...]], ...],
        page: tuple[str, str],
    ) -> str:
        """One change: its heading, words, why, cost tabs, and the code of both sides."""
        key, why = change.key, ChangeWhy(why=change.why, cite=change.cite)
        code = [
            code_render.code_tabs(
                [self._excerpt(excerpt) for excerpt in excerpts],
                prefix=f"change-{key}-{side}",
                sources=self.url_for("sources.md"),
                render=self.render_block,
            )
            for side, excerpts in sides
        ]
        more = f"[{self.by_key_in(*page)}]({self._doc(page[1])})"
        return (
            f"## {change.title} {{ #{key} }}\n\n{change.text} More on {more}.\n\n"
            f'{self.render_block(why)}\n\n<div class="itm-costs" markdown>\n\n{costs}\n\n</div>\n'
            f'<div class="grid" markdown>\n\n<div markdown>\n\n{code[0]}\n\n</div>\n\n'
            f"<div markdown>\n\n{code[1]}\n\n</div>\n\n</div>\n"
        )

    def families_side_by_side(self) -> str:
        """Every family's first size in one table: total and active parameters, forward FLOPs per
        token and the KV cache (bfloat16) at one stated context."""
        from generator.pages.chain import side_by_side

        rows = side_by_side()
        lines = [
            "| Model | Parameters | Active per token | Forward FLOPs per token | KV cache per token"
            " (bytes) | KV cache, whole context (bytes) |",
            "| :-- | --: | --: | --: | --: | --: |",
        ]
        for cfg, v in rows:
            cells = " | ".join(
                f'<span data-q="side.{key}.{cfg.name}">{fmt_int(v[key])}</span>'
                for key in ("params", "active", "flops", "kv_token", "kv_context")
            )
            lines.append(f"| {cfg.label} | {cells} |")
        at = ", ".join(f"{cfg.label} at T = {fmt_int(v['context'])}" for cfg, v in rows)
        note = (
            f"\n\nFLOPs and the whole-context cache are each taken at a context of its own: {at}."
        )
        windowed = [cfg.label for cfg, _ in rows if cfg.sliding_window]
        if windowed:
            note += (
                " The cache per token is what a token adds while every window still fills; past"
                " its window a windowed layer's cache stops growing, so the whole-context column"
                f" holds less than T times it for {' and '.join(windowed)}."
            )
        return "\n".join(lines) + note + "\n"

    def by_key_in(self, family: str, page: str) -> str:
        """The title of `family`'s component whose page is `page`."""
        return next(c.title for c in get_family(family).registry if c.page == page)
