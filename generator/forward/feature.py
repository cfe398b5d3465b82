"""The forward-pass page as a site feature: generated files and {{ forward_*() }} macros.

files(site): each head's attention as a PNG thumbnail and an SVG large view (labelled up to
  head_images.LABELLED_MAX positions, a pixel view beyond: see head_images), plus
  forward/heads.json (every head's scores, for other pages and scripts) and, for a prompt too
  long for the page to list every norm, forward/residual-norms.csv (all of them).
figures(site): the stand-in's training, drawn by matplotlib in a worker (none for GPT-2).
macros(page): the page's blocks, all rendered from one ForwardPass computed once per build.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path

from generator.checkpoints import PINS_FILE, CheckpointPin, checkpoint_pin
from generator.drawing import Figure
from generator.forward import PAGE, analysis, head_blocks, render, residual  # PAGE#head-5-1: a head
from generator.forward.head_images import attention_view, thumbnail_png
from generator.forward.pipeline import ForwardPass, StandinSource
from generator.forward.training_figure import training_figure
from generator.inputs import BuildInputs


def forward_pass(site: BuildInputs) -> ForwardPass:
    """The build's forward pass (computed once per site root and environment)."""
    from generator.forward import current

    return current(site.settings)


def _pin(site: BuildInputs) -> CheckpointPin:
    return checkpoint_pin(Path(site.root) / PINS_FILE, "gpt2")


def files(site: BuildInputs) -> dict[str, bytes]:
    fp = forward_pass(site)
    shown = [render.show(t) for t in fp.tokens]
    out: dict[str, bytes] = {}
    for h in fp.heads:
        pattern = fp.attention(h.layer, h.head)
        out[render.head_file(h.layer, h.head, "png")] = thumbnail_png(pattern)
        title = f"{fp.cfg.label}: block {h.layer}, head {h.head}"
        out[render.head_file(h.layer, h.head, "svg")] = attention_view(pattern, shown, title)
    out["forward/heads.json"] = heads_json(fp)
    if render.summarised(fp):
        out[residual.RESIDUAL_CSV] = residual.residual_csv(fp)
    return out


def figures(site: BuildInputs) -> list[Figure]:
    fp = forward_pass(site)
    if not isinstance(fp.source, StandinSource):
        return []
    return [training_figure(fp.source.standin.record["curve"], "The stand-in's training")]


def heads_json(fp: ForwardPass) -> bytes:
    data = {
        "source": fp.source.kind,
        "model": fp.cfg.label,
        "page": PAGE,
        "thresholds": analysis.THRESHOLDS,
        "chance": {k: _round(v) for k, v in fp.chance.items()},
        "heads": [
            {
                "layer": h.layer,
                "head": h.head,
                "anchor": h.anchor,
                "previous_token": _round(h.previous_token),
                "induction": _round(h.induction),
                "first_token": _round(h.first_token),
                "kinds": list(h.kinds),
            }
            for h in fp.heads
        ],
    }
    return (json.dumps(data, sort_keys=True, indent=1) + "\n").encode()


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def macros(page) -> dict[str, Callable[..., str]]:
    """{{ forward_*() }} blocks. Each computes nothing new: they all read the build's ForwardPass."""

    url = functools.partial(page.required_url, fix="generator/forward/feature.py files() writes it")

    def fp() -> ForwardPass:
        return forward_pass(page.site)

    def source() -> str:
        """The note on which model the page shows; the meta description says the same."""
        page.meta["description"] = render.description(fp())
        return page.render_block(render.source_note(fp(), _pin(page.site)))

    def training() -> str:
        """How the stand-in's heads formed (nothing for GPT-2's weights)."""
        block = render.training_block(fp(), url)
        return page.render_block(block) if block else ""

    return {
        "forward_source": source,
        "forward_tokens": lambda: page.render_block(render.tokens_block(fp())),
        "forward_residual": lambda: page.render_block(residual.residual_block(fp(), url)),
        "forward_found": lambda: page.render_block(head_blocks.found_block(fp())),
        "forward_gallery": lambda: page.render_block(head_blocks.gallery_block(fp(), url)),
        "forward_scores": lambda: page.render_block(head_blocks.scores_table(fp())),
        "forward_predictions": lambda: page.render_block(render.predictions_block(fp())),
        "forward_removals": lambda: page.render_block(render.removal_block(fp())),
        "forward_training": training,
        "forward_howto": lambda: page.render_block(render.howto_block(fp(), _pin(page.site))),
        "forward_promise": lambda: page.render_block(render.promise(fp())),
    }
