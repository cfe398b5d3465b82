"""What both walkthrough pages (attention: feature.py, rotary: rotary_feature.py) build alike:
links, the size bar, each step with its scales and grids, the toy's note and the code panel."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from markupsafe import Markup

from generator.config import ModelConfig
from generator.render.numbers import fmt_int
from generator.walkthrough import grids
from generator.walkthrough.blocks import Bar, Dim, Note, PerModel, Scale, Step
from generator.walkthrough.code import EngineExcerpt, code_panel
from generator.walkthrough.gpt2_scale import Figure

if TYPE_CHECKING:
    from generator.walkthrough.rotary import RotaryToy
    from generator.walkthrough.toy import Toy
    from generator.walkthrough.trained import TrainedHead

HEAD = 0  # the toy's head the grids show until the reader picks another
FigureMaker = Callable[[ModelConfig, int, ModelConfig], dict[str, Figure]]
Size = tuple[str, str, Callable[[ModelConfig], int]]  # (name, subscript, a model's value)


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

    def _bar(
        self, sizes: tuple[Size, ...], label: str, trained: TrainedHead | None, family: str
    ) -> Bar:
        """The size picker (`label`: the trained head's option), and the toy's tokens and
        `sizes` beside each of `family`'s sizes' and the trained head's model's (when given)."""
        up_to = self._labelled(lambda c: f"up to {fmt_int(c.n_ctx)}")
        shown = fmt_int(len(trained.tokens)) if trained else ""
        tokens = Dim("tokens", "", fmt_int(self.toy.n_tokens), up_to, trained=shown)
        return Bar(
            models=tuple((cfg.name, cfg.label) for cfg in self.models),
            trained=label,
            default=self.beside_toy,
            n_head=self.toy.cfg.n_head,
            dims=(tokens, *(self._dim(*size, trained) for size in sizes)),
            family=family,
        )

    def _dim(
        self, name: str, sub: str, value: Callable[[ModelConfig], int], trained: TrainedHead | None
    ) -> Dim:
        theirs = self._labelled(lambda c: fmt_int(value(c)))
        head = fmt_int(value(trained.cfg)) if trained else ""
        return Dim(name, sub, fmt_int(value(self.toy.cfg)), theirs, trained=head)

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

    def _step(self, index: int, step, data: dict, text: str, engine_file: str, **more: Any) -> Step:
        """Step `index` (from 1) of the widget's `data`: `text` (Markdown with TeX, ours), its
        scales, grids and lines in `engine_file`; more: Step's optional parts."""
        first, last = data["steps"][index - 1]["lines"]
        return Step(
            index=index,
            key=step.key,
            title=step.title,
            text=Markup(text),
            formula=Markup(step.formula),
            scales=self._scales(step.key),
            grids=tuple(grids.grid(data, key, HEAD) for key in step.matrices),
            code_id=data["code_block"],
            first=first,
            last=last,
            engine_file=engine_file,
            **more,
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
