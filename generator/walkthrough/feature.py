"""The attention walkthrough as a site feature (see generator/features.py).

files(site)   the widget's JSON: the engine's toy trace, and a trained head's (trained.py)
macros(page)  walkthrough_header(), walkthrough(), walkthrough_code() for docs/walkthrough/
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from markupsafe import Markup

from generator.config import CONFIGS, SIZES, ModelConfig
from generator.render.numbers import fmt_int
from generator.walkthrough import grids
from generator.walkthrough.blocks import (
    Header,
    HeadLink,
    RealHeads,
    TokenChip,
    TrainedNote,
    Walkthrough,
)
from generator.walkthrough.code import UPSTREAM, engine_excerpt
from generator.walkthrough.data import trained_data, widget_data, widget_json
from generator.walkthrough.gpt2_scale import step_figures
from generator.walkthrough.page import HEAD, Size, WalkthroughPage
from generator.walkthrough.steps import STEPS, check_steps, fill, text_fields
from generator.walkthrough.toy import Toy, toy_attention
from generator.walkthrough.trained import (
    PHRASE,
    SHOWN,
    TrainedHead,
    colours,
    trained_head,
    trained_words,
    word,
)

PAGE = "walkthrough/attention.md"
TITLE = "Walkthrough: attention"
CITES = UPSTREAM  # the pinned excerpts its Code panel quotes
DATA_PATH = "assets/walkthrough/attention.json"  # site path of the widget's data
TRAINED_PATH = "assets/walkthrough/trained.json"  # the trained head's, in the same shape
BESIDE_TOY = "gpt2"  # GPT-2 small: shown next to the toy until the reader picks another size
# The sizes the bar sets beside each GPT-2 size's and the trained head's model's, after tokens.
BAR_SIZES: tuple[Size, ...] = (
    ("d", "model", lambda c: c.d_model),
    ("d", "head", lambda c: c.d_head),
    ("heads", "", lambda c: c.n_head),
)


def gpt2_configs() -> tuple[ModelConfig, ...]:
    """Every GPT-2 size, in the order of the other pages' size tabs (the default first shown)."""
    return tuple(CONFIGS[name] for name in SIZES)


def build_data(site) -> dict:
    """The widget's data: the toy trace, the steps and their lines in the engine's file."""
    check_steps()
    engine = engine_excerpt(site.root)
    return widget_data(toy_attention(), engine.steps, engine.block_id)


def build_trained(site) -> dict:
    """The trained head's data, in the toy's shape."""
    engine = engine_excerpt(site.root)
    return trained_data(trained_head(site.settings), engine.steps, engine.block_id)


def files(site) -> dict[str, bytes]:
    return {
        DATA_PATH: widget_json(build_data(site)),
        TRAINED_PATH: widget_json(build_trained(site)),
    }


class WalkthroughMacros(WalkthroughPage):
    """The page's macros; `page` is generator.pages.PageMacros."""

    beside_toy = BESIDE_TOY

    def __init__(self, page) -> None:
        self.toy: Toy = toy_attention()
        super().__init__(page, self.toy, gpt2_configs(), step_figures)
        self.trained: TrainedHead = trained_head(page.site.settings)
        self.fields = self._fields()
        self.engine_file = engine_excerpt(page.site.root).path.rsplit("/", 1)[-1]

    def _real_heads(self) -> RealHeads:
        """The strongest head of each kind the forward-pass page found, if it reaches its kind's
        threshold."""
        from generator.forward import KINDS, PAGE, THRESHOLDS, current, strongest

        run = current(self.page.site.settings)
        found = []
        for kind in KINDS:
            best = strongest(run.heads, kind, 1)
            score = best[0].score(kind) if best else None
            if score is not None and score >= THRESHOLDS[kind]:
                head = best[0]
                found.append(HeadLink(head.anchor, kind, head.label, f"{score:.2f}"))
        return RealHeads(page=self._url(PAGE), found=tuple(found))

    # -- macros ------------------------------------------------------------------------------
    def header(self, title: str = "Attention", subtitle: str = "causal self-attention") -> str:
        """Kicker, title, and the "block 0 · head 0" line that follows the head selector."""
        t = self.trained
        return self.page.render_block(
            Header(
                title=title,
                subtitle=subtitle,
                block=self.toy.block,
                head=HEAD,
                trained=f"{t.model} · block {t.layer} · head {t.head}",
            )
        )

    def walkthrough(self) -> str:
        """Settings, dims, legend, the seven steps with their grids, and the row panel."""
        data = build_data(self.page.site)
        from generator.forward import PAGE as FORWARD

        forward_head = f"{self._url(FORWARD)}#{self.trained.anchor}"
        self.trained_text = trained_words(self.trained, forward_head)
        return self.page.render_block(
            Walkthrough(
                src=self._url(DATA_PATH),
                trained_src=self._url(TRAINED_PATH),
                # the trained head's option: which one, the title line and the note say
                bar=self._bar(BAR_SIZES, "trained head", self.trained, "GPT-2"),
                note=self._note(self.toy.block),
                trained_note=self._trained_note(forward_head),
                legend=grids.legend(),
                steps=tuple(
                    self._step(
                        index,
                        step,
                        data,
                        fill(step.text, self.fields, f"attention.steps[{index - 1}].text"),
                        self.engine_file,
                        real_heads=self._real_heads() if step.key == "softmax" else None,
                        trained=Markup(self.trained_text.get(step.key, "")),  # Markdown, ours
                    )
                    for index, step in enumerate(STEPS, start=1)
                ),
            )
        )

    def code(self) -> str:
        """The engine's attention() beside the pinned upstream excerpts."""
        titles = {step.key: step.title for step in STEPS}
        return self._code(engine_excerpt(self.page.site.root), UPSTREAM, titles)

    # -- parts -------------------------------------------------------------------------------
    def _fields(self) -> dict[str, str]:
        """The steps' [[placeholders]]; GPT-2's differ by size and are given for each."""
        each = {cfg.name: text_fields(self.toy.cfg, self.toy.n_tokens, cfg) for cfg in self.models}
        return {
            **{
                key: self.page.render_block(
                    self._per_model((name, fields[key]) for name, fields in each.items())
                )
                for key in each[BESIDE_TOY]
            },
            **trained_fields(self.trained),
        }

    def _trained_note(self, forward_head: str) -> TrainedNote:
        t = self.trained
        return TrainedNote(
            model=t.model,
            is_gpt2=t.is_gpt2,
            block=t.layer,
            head=t.head,
            label=t.label,
            named=t.named,
            phrase=PHRASE.strip(),
            n_tokens=fmt_int(len(t.tokens)),
            d_head=fmt_int(t.cfg.d_head),
            shown=min(SHOWN, t.cfg.d_head),
            forward=forward_head,
            tokens=tuple(
                TokenChip(text=word(token), colour=colour)
                for token, colour in zip(t.tokens, colours(t.tokens), strict=True)
            ),
        )


def trained_fields(head: TrainedHead) -> dict[str, str]:
    """The steps' [[t_…]] placeholders: what the trained head's words say of it."""
    n_head = head.cfg.n_head
    return {
        "t_heads": f"{fmt_int(n_head)} head{'s' if n_head != 1 else ''}",
        "t_dh": fmt_int(head.cfg.d_head),
        "t_model": head.model,
        "t_label": head.label,
        "t_tokens": fmt_int(len(head.tokens)),
    }


def macros(page) -> dict[str, Callable[..., str]]:
    get = functools.cache(lambda: WalkthroughMacros(page))  # built on first use, if at all

    return {
        "walkthrough_header": lambda *a, **k: get().header(*a, **k),
        "walkthrough": lambda: get().walkthrough(),
        "walkthrough_code": lambda: get().code(),
    }
