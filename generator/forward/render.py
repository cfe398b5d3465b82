"""The forward-pass page's HTML blocks, each rendered from a ForwardPass at build time.

Every block reads well without JavaScript: the gallery's cells link to each head's large view
(an SVG file); forward.js only opens that view in place and moves between heads.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import numpy as np

from generator.forward.ablation import repeat_positions
from generator.forward.analysis import KINDS, SHORT, THRESHOLDS, HeadScore, head_anchor, strongest
from generator.forward.blocks import (
    Howto,
    Predictions,
    RemovalRow,
    Removals,
    ScoreRow,
    ScoresTable,
    SourceNote,
    Tokens,
)
from generator.forward.checkpoints import PINS_FILE, WEIGHTS_FILE, CheckpointPin
from generator.forward.head_images import colour, hex_colour, text_colour
from generator.forward.literature import compare, verdict
from generator.forward.pipeline import PROMPT_ENV, ForwardPass, Gpt2Source, StandinSource
from generator.forward.training_figure import CURVES, first_reaching
from generator.forward.training_figure import FILE as TRAINING_FILE
from generator.render.numbers import fmt_int

KIND_TEXT = {
    "previous-token": "previous-token heads: each position looks at the one just before it",
    "induction": "induction heads: a repeated token looks at what followed its earlier copy",
    "first-token": "heads that rest on the first token when nothing else is worth attending to",
}
Url = Callable[[str], str]  # site path -> link relative to the page


def head_file(layer: int, head: int, ext: str) -> str:
    return f"forward/heads/{layer}-{head}.{ext}"


def show(token: str) -> str:
    """A token as the page prints it: spaces visible as ␣, newlines as ↵."""
    return token.replace(" ", "␣").replace("\n", "↵")


def fmt_score(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def fmt_prob(p: float) -> str:
    return f"{100 * p:.1f}%"


# -- which model ---------------------------------------------------------------------------------
def source_note(fp: ForwardPass, pin: CheckpointPin) -> SourceNote:
    """The note at the top of the page: GPT-2's pinned weights, or the stand-in and its training."""
    if isinstance(fp.source, Gpt2Source):
        return SourceNote(
            model=fp.cfg.label,
            weights_file=WEIGHTS_FILE,
            sha256=pin.files[WEIGHTS_FILE].sha256,
            repo=pin.repo,
            revision=pin.revision,
            origin=fp.source.checkpoint.origin,
        )
    standin, cfg = fp.source.standin, fp.cfg
    return SourceNote(
        model="stand-in",
        weights_file=standin.path.name,
        sha256=standin.sha256,
        n_layer=cfg.n_layer,
        n_head=cfg.n_head,
        d_model=cfg.d_model,
        vocab=fmt_int(cfg.vocab_size),
        steps=fmt_int(standin.record["steps"]),
        final_loss=standin.record["final_loss"],
    )


def description(fp: ForwardPass) -> str:
    """The page's meta description (search results, link previews): names the model shown."""
    where = (
        "GPT-2 small's own blocks (its pinned weights)"
        if isinstance(fp.source, Gpt2Source)
        else "a small trained stand-in of GPT-2's architecture (GPT-2's weights were not found "
        "when the site was built)"
    )
    return (
        f"A prompt through {where}, every attention head on view, computed by the site's numpy "
        "engine at build time."
    )


# -- tokens --------------------------------------------------------------------------------------
def tokens_block(fp: ForwardPass) -> Tokens:
    repeated = fp.repeated
    return Tokens(
        prompt=fp.prompt,
        tokens=tuple((show(token), i in repeated) for i, token in enumerate(fp.tokens)),
        n_repeat=len(repeated),
        first_repeat=min(repeated) if repeated else None,
        tokenizer=_tokenizer_name(fp),
    )


def _tokenizer_name(fp: ForwardPass) -> str:
    if fp.source.is_gpt2:
        return "GPT-2's byte-level BPE of the pinned revision"
    return "the stand-in's own word vocabulary (not GPT-2's)"


# -- residual stream -------------------------------------------------------------------------------
def residual_block(fp: ForwardPass) -> str:
    norms = fp.residual_norms  # [n_layer + 1, T]
    logs = np.log(norms)
    low, high = float(logs.min()), float(logs.max())
    span = high - low or 1.0
    head = "".join(
        f'<th scope="col" title="position {i}">{html.escape(show(t))}</th>'
        for i, t in enumerate(fp.tokens)
    )
    rows = []
    for r, row in enumerate(norms):
        label = "embedding" if r == 0 else f"after block {r - 1}"
        cells = []
        for i, value in enumerate(row):
            rgb = colour(np.array(0.85 * (np.log(value) - low) / span))
            cells.append(
                f'<td style="background:{hex_colour(rgb)};color:{text_colour(rgb)}" '
                f'title="{label}, position {i}: {value:.2f}">{_short(value)}</td>'
            )
        rows.append(f'<tr><th scope="row">{label}</th>{"".join(cells)}</tr>')
    growth = norms[-1] / norms[0]
    median = float(np.median(growth[1:])) if len(growth) > 1 else float(growth[0])
    first = float(growth[0])
    return (
        '<div class="itm-residual" role="region" aria-label="Residual stream norms" tabindex="0">'
        '<table class="itm-residual__table">'
        f"<caption>‖x‖, the length of the residual-stream vector, at each position (columns) "
        f"entering block 0 and after each block (rows); colour on a log scale.</caption>"
        f'<thead><tr><th scope="col">stream</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>\n"
        f'<p class="itm-note">From the embedding to the last block the median position\'s vector '
        f"grows {median:.1f}×; the first position's grows {first:.1f}×.</p>\n"
    )


def _short(value: float) -> str:
    """A norm in at most four characters: 0.93, 12.4, 187, 3.1k."""
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


# -- heads -----------------------------------------------------------------------------------------
def found_block(fp: ForwardPass, url: Url) -> str:
    """The head types the scores point out, strongest heads first, with their scores."""
    items = []
    for kind in KINDS:
        chance = fp.chance[kind]
        if chance is None:
            items.append(f"<li>{KIND_TEXT[kind]}: the prompt repeats no token to test this.</li>")
            continue
        named = [h for h in strongest(fp.heads, kind, n=len(fp.heads)) if kind in h.kinds]
        links = ", ".join(_head_link(h, kind) for h in named[:6]) or "none reach the threshold"
        more = f" and {len(named) - 6} more" if len(named) > 6 else ""
        items.append(
            f'<li data-kind="{kind}"><strong>{KIND_TEXT[kind].split(":")[0]}</strong> '
            f'<span class="itm-kind-badge itm-kind-badge--{SHORT[kind]}">{SHORT[kind]}</span>'
            f"{KIND_TEXT[kind][len(KIND_TEXT[kind].split(':')[0]) :]}. "
            f"Score ≥ {THRESHOLDS[kind]:.2f} (even attention would score {chance:.2f}): "
            f"{links}{more}.</li>"
        )
    found = '<ul class="itm-found">\n' + "\n".join(items) + "\n</ul>\n"
    return found + literature_block(fp)


def literature_block(fp: ForwardPass) -> str:
    """For GPT-2's own weights: the heads published work names, next to this page's scores, and
    whether the page's classifier agrees (said here when it does not)."""
    if not isinstance(fp.source, Gpt2Source):
        return ""
    items = [
        f'<li data-head="{c.known.label}" data-agrees="{str(c.classified).lower()}">'
        f'<a href="#{head_anchor(c.known.layer, c.known.head)}">{c.known.label}</a>, a '
        f"{c.known.kind} head in {html.escape(c.known.source)}: {html.escape(verdict(c))}.</li>"
        for c in compare(fp.heads)
    ]
    return (
        "<p>Published interpretability work names some of GPT-2 small's heads (layer.head, both "
        "counted from 0 as here). This prompt's scores for them:</p>\n"
        '<ul class="itm-literature">\n' + "\n".join(items) + "\n</ul>\n"
    )


def _head_link(h: HeadScore, kind: str) -> str:
    return f'<a href="#{h.anchor}">{h.label}</a> ({fmt_score(h.score(kind))})'


def gallery_block(fp: ForwardPass, url: Url) -> str:
    """layers × heads thumbnails; each links to its large view. The viewer is filled by JS."""
    T = len(fp.tokens)
    rows = []
    by_layer: dict[int, list[HeadScore]] = {}
    for h in fp.heads:
        by_layer.setdefault(h.layer, []).append(h)
    header = "".join(
        f'<span class="itm-gallery__col">head {i}</span>' for i in range(fp.cfg.n_head)
    )
    for layer, heads in sorted(by_layer.items()):
        cells = []
        for h in heads:
            kinds = "".join(
                f'<abbr class="itm-kind-badge itm-kind-badge--{SHORT[k]}" title="{k}">{SHORT[k]}</abbr>'
                for k in h.kinds
            )
            described = (
                f"Block {h.layer}, head {h.head}. Previous-token {fmt_score(h.previous_token)}, "
                f"induction {fmt_score(h.induction)}, first-token {fmt_score(h.first_token)}"
                + (f"; {', '.join(h.kinds)}" if h.kinds else "")
            )
            cells.append(
                f'<a class="itm-head" id="{h.anchor}" href="{url(head_file(h.layer, h.head, "svg"))}" '
                f'data-head="{h.label}" data-prev="{fmt_score(h.previous_token)}" '
                f'data-induction="{fmt_score(h.induction)}" data-first="{fmt_score(h.first_token)}" '
                f'data-kinds="{" ".join(h.kinds)}" aria-label="{html.escape(described)}">'
                f'<img src="{url(head_file(h.layer, h.head, "png"))}" width="{T}" height="{T}" '
                f'alt="" loading="lazy" decoding="async">'
                f'<span class="itm-head__label">{h.label}</span>'
                f'<span class="itm-head__kinds">{kinds}</span></a>'
            )
        rows.append(
            f'<div class="itm-gallery__row" role="group" aria-label="Block {layer}">'
            f'<span class="itm-gallery__layer">block {layer}</span>{"".join(cells)}</div>'
        )
    return (
        f'<div class="itm-gallery" role="group" aria-label="{fp.cfg.n_layer} blocks × '
        f'{fp.cfg.n_head} heads; the arrow keys move between heads" '
        f'style="--itm-heads:{fp.cfg.n_head}" '
        f'data-layers="{fp.cfg.n_layer}" data-heads="{fp.cfg.n_head}">'
        f'<div class="itm-gallery__row itm-gallery__header" aria-hidden="true">'
        f'<span class="itm-gallery__layer"></span>{header}</div>'
        f"{''.join(rows)}</div>\n"
        '<div class="itm-head-view" hidden role="dialog" aria-modal="false" '
        'aria-labelledby="itm-head-view-title" tabindex="-1">'
        '<div class="itm-head-view__bar">'
        '<button type="button" class="itm-head-view__prev" aria-label="Previous head">‹</button>'
        '<h3 id="itm-head-view-title" class="itm-head-view__title"></h3>'
        '<button type="button" class="itm-head-view__next" aria-label="Next head">›</button>'
        '<button type="button" class="itm-head-view__close" aria-label="Close">×</button></div>'
        '<p class="itm-head-view__scores"></p>'
        # Full size in a sideways-scrolling region: shrunk to a phone's width, the token labels
        # (12 px in the SVG) would be unreadable.
        '<div class="itm-head-view__scroll" tabindex="0" role="region" '
        'aria-label="Attention pattern at full size (scrolls sideways)">'
        '<img class="itm-head-view__image" alt=""></div>'
        '<p class="itm-head-view__open"><a href="">Open this view on its own</a></p></div>\n'
        f'<p class="itm-note">Each small square is one head\'s attention on the prompt: row i is '
        f"where position i looks, column j the position it looks at; darker is more weight "
        f"(colour ∝ √weight); the grey triangle is the future, hidden by the causal mask. "
        f"Badges: {', '.join(f'{SHORT[k]} {k}' for k in KINDS)}. Select a head for its large "
        "view with the tokens on both axes.</p>\n"
    )


def scores_table(fp: ForwardPass) -> ScoresTable:
    """Every head's three scores, as a table (the gallery's numbers, readable without images)."""
    rows = tuple(
        ScoreRow(
            anchor=h.anchor,
            label=h.label,
            scores=(fmt_score(h.previous_token), fmt_score(h.induction), fmt_score(h.first_token)),
            kinds=", ".join(h.kinds) or "–",
        )
        for h in fp.heads
    )
    chance = fp.chance
    even = (chance["previous-token"], chance["induction"], chance["first-token"])
    return ScoresTable(
        chance=(fmt_score(even[0]), fmt_score(even[1]), fmt_score(even[2])), rows=rows
    )


# -- predictions -----------------------------------------------------------------------------------
def predictions_block(fp: ForwardPass) -> Predictions:
    best = max(p for _, p in fp.top_next)
    top = tuple(
        (rank, show(token), f"{100 * p / best:.1f}", fmt_prob(p))
        for rank, (token, p) in enumerate(fp.top_next, start=1)
    )
    steps = tuple(
        (i, show(token), show(fp.predicted[i]), show(fp.tokens[i + 1]))
        for i, token in enumerate(fp.tokens[:-1])
    )
    repeated = sorted(fp.repeated)
    return Predictions(
        last=show(fp.tokens[-1]),
        top=top,
        steps=steps,
        hits=sum(fp.predicted[i] == fp.tokens[i + 1] for i in range(len(fp.tokens) - 1)),
        hits_repeat=sum(
            fp.predicted[i - 1] == fp.tokens[i]
            for i in repeated
            if i - 1 >= 0 and i - 1 in repeated
        ),
    )


# -- removing heads --------------------------------------------------------------------------------
def removal_block(fp: ForwardPass) -> Removals:
    """The prompt's predictions with each pointed-out head removed, next to the intact model's."""
    kinds = {(h.layer, h.head): h.kinds for h in fp.heads}
    rows = []
    for r in fp.removals:
        removed = (r.layer, r.head) if r.layer is not None and r.head is not None else None
        rows.append(
            RemovalRow(
                anchor=head_anchor(*removed) if removed else "",
                label=r.label,
                kinds=", ".join(kinds[removed]) if removed else "–",
                right=fmt_prob(r.repeat_prob),
                hits=r.repeat_hits,
                top=show(r.last_top),
                top_prob=fmt_prob(r.last_top_prob),
            )
        )
    return Removals(
        n_repeat=len(repeat_positions(fp.token_ids)),
        last=show(fp.tokens[-1]),
        rows=tuple(rows),
    )


# -- the stand-in's training -----------------------------------------------------------------------
def training_block(fp: ForwardPass, url: Url) -> str:
    """For the stand-in: how its heads formed during training (nothing for GPT-2's weights)."""
    if not isinstance(fp.source, StandinSource):
        return ""
    standin = fp.source.standin
    curve = standin.record["curve"]
    steps, induction = curve["step"], curve["induction"]

    def reached(kind: str) -> str:
        index = first_reaching(curve, kind)
        if index is None:
            return f"the {kind} score never reaches its threshold ({THRESHOLDS[kind]})"
        scores = curve[CURVES[kind]]
        text = (
            f"the {kind} score reaches its threshold ({THRESHOLDS[kind]}) at step "
            f"{fmt_int(steps[index])} with {scores[index]:.2f}"
        )
        if index > 0:  # the probe before, for contrast
            text += f" (it was {scores[index - 1]:.2f} at step {fmt_int(steps[index - 1])})"
        return text

    alt = (
        f"Training loss from {curve['loss'][0]:.2f} to {curve['loss'][-1]:.2f} over "
        f"{fmt_int(steps[-1])} steps; the best head's induction score goes from "
        f"{induction[0]:.2f} to {induction[-1]:.2f}; {reached('induction')}."
    )
    return (
        "## How the stand-in learned this\n\n"
        f"Every {fmt_int(standin.training.probe_every)} steps the training measured "
        "the heads on a fixed set of probe sequences (random words with a phrase repeated): "
        f"{reached('previous-token')}; {reached('induction')}. The figure shows the loss and "
        "both scores at every probe.\n\n"
        f'<figure class="itm-figure"><img src="{url(TRAINING_FILE)}" alt="{html.escape(alt)}" '
        'width="750" height="460" loading="lazy">'
        "<figcaption>Loss (top) and the best head's scores (bottom) during the stand-in's "
        "training; dotted lines are the page's thresholds.</figcaption></figure>\n"
    )


# -- how to get GPT-2's heads ------------------------------------------------------------------------
def howto_block(fp: ForwardPass, pin: CheckpointPin) -> Howto:
    return Howto(
        found=fp.source.where if fp.source.is_gpt2 else "",
        repo=pin.repo,
        revision=pin.revision,
        pins_file=PINS_FILE,
        files=tuple((f.name, fmt_int(f.size), f.sha256) for f in pin.files.values()),
        weights_variable=pin.env,
        weights_file=WEIGHTS_FILE,
        prompt_variable=PROMPT_ENV,
    )
