"""What both walkthrough pages (attention: feature.py, rotary: rotary_feature.py) build alike:
links, the size picker's values, each step's scales, the toy's note and the code panel."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, ClassVar

from generator.config import ModelConfig
from generator.render.numbers import fmt_int
from generator.walkthrough import grids
from generator.walkthrough.blocks import Note, PerModel, Scale
from generator.walkthrough.code import EngineExcerpt, code_panel
from generator.walkthrough.gpt2_scale import Figure

if TYPE_CHECKING:
    from generator.walkthrough.rotary import RotaryToy
    from generator.walkthrough.toy import Toy

FigureMaker = Callable[[ModelConfig, int, ModelConfig], dict[str, Figure]]


class WalkthroughPage:
    """A walkthrough's macros on `page` (generator.pages.PageMacros): the toy, and each size of
    `models` (in the size tabs' order) with its step figures beside the toy's."""

    beside_toy: ClassVar[str]  # the size shown next to the toy until the reader picks another

    def __init__(
        self, page, toy: Toy | RotaryToy, models: tuple[ModelConfig, ...], figures: FigureMaker
    ) -> None:
        self.page = page
        self.toy = toy
        self.models = models
        self.figures = {cfg.name: figures(toy.cfg, toy.n_tokens, cfg) for cfg in models}

    def _url(self, docs_path: str) -> str:
        fix = "keep docs/assets/walkthrough.js and .css; the JSON comes from files()"
        return self.page.required_url(docs_path, fix=fix)

    def _per_model(self, values: Iterable[tuple[str, str]]) -> PerModel:
        """One element per size, each holding that size's value; walkthrough.js shows the
        reader's size. Without JavaScript, and for search, only beside_toy's is there."""
        return PerModel(values=tuple(values), default=self.beside_toy)

    def _labelled(self, value: Callable[[ModelConfig], str]) -> PerModel:
        """ "GPT-2 XL 1,600": value(cfg) after the size's label, for every size."""
        return self._per_model((cfg.name, f"{cfg.label} {value(cfg)}") for cfg in self.models)

    def _scales(self, step: str) -> tuple[Scale, ...]:
        """Step `step` at each size: its line, facts and picture beside the toy's."""
        return tuple(
            Scale(
                name=cfg.name,
                model=cfg.label,
                hidden=cfg.name != self.beside_toy,
                line=figure.gpt2_line,
                toy_line=figure.toy_line,
                facts=figure.facts,
                picture=grids.scale_picture(figure, cfg.label),
            )
            for cfg in self.models
            for figure in (self.figures[cfg.name][step],)
        )

    def _note(self, block: int, after: str = Note.after) -> Note:
        toy = self.toy.cfg
        return Note(
            n_tokens=fmt_int(self.toy.n_tokens),
            sentence=" ".join(self.toy.tokens),
            d_model=fmt_int(toy.d_model),
            n_head=fmt_int(toy.n_head),
            d_head=fmt_int(toy.d_head),
            block=block,
            after=after,
        )

    def _code(self, excerpt: EngineExcerpt, cites: Iterable[str], titles: dict[str, str]) -> str:
        """The code panel: `excerpt` (ours, with each step's lines) beside the pinned `cites`."""
        used_by = f"docs/{self.page.src_path}"
        upstream = [self.page.site.excerpt(excerpt_id, used_by=used_by) for excerpt_id in cites]
        sources = self.page.url_for("sources.md")
        render = self.page.render_block
        return render(code_panel(excerpt, upstream, titles, sources=sources, render=render))
