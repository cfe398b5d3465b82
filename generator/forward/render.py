"""The forward-pass page's blocks, each filled from a ForwardPass at build time (the residual
stream's in residual.py, the heads' in head_blocks.py).

Each function gathers one block's data (generator/forward/blocks.py); its template in
generator/templates/forward_*.html holds the markup. Every block reads well without JavaScript:
the gallery's cells link to each head's large view (an SVG file); forward.js only opens that
view in place and moves between heads.

A prompt longer than head_images.LABELLED_MAX positions is drawn and tabled in summary
(`summarised`), so that a 1,024-token page stays a page: pooled thumbnails and pixel views
(head_images), the residual norms at position 0 and as smallest/median/largest over the rest
with every value in forward/residual-norms.csv, and the token list and the per-position guesses
in boxes that scroll. Up to that length every block is what it always was, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable

from generator.checkpoints import WEIGHTS_FILE, CheckpointPin
from generator.forward.ablation import repeat_positions
from generator.forward.analysis import THRESHOLDS, head_anchor
from generator.forward.blocks import (
    Howto,
    Predictions,
    Probe,
    Promise,
    Reached,
    RemovalRow,
    Removals,
    SourceNote,
    Tokens,
    Training,
)
from generator.forward.head_images import LABELLED_MAX
from generator.forward.pipeline import DEFAULT_PROMPT, ForwardPass, Gpt2Source, StandinSource
from generator.forward.training_figure import CURVES, first_reaching
from generator.forward.training_figure import FILE as TRAINING_FILE
from generator.render.code import visible
from generator.render.numbers import fmt_int

Url = Callable[[str], str]  # site path -> link relative to the page


def summarised(fp: ForwardPass) -> bool:
    """Whether the prompt is too long to list position by position (over LABELLED_MAX tokens)."""
    return len(fp.tokens) > LABELLED_MAX


def head_file(layer: int, head: int, ext: str) -> str:
    return f"forward/heads/{layer}-{head}.{ext}"


def show(token: str) -> str:
    """A token as the page prints it: spaces visible as ␣, newlines as ↵, and every other
    character that would vanish, reorder its neighbours or break a view's SVG (a tab, which
    Markdown expands to spaces; a form feed or escape, which XML forbids; bidi marks) as the
    site's other text shows it (render.code.visible: ␉, ␌, ␛, ⟨U+202E⟩)."""
    return visible(token.replace(" ", "␣").replace("\n", "↵"))


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
            origin=found_where(fp.source.checkpoint.origin, pin),
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


def promise(fp: ForwardPass) -> Promise:
    """What the home page may say the forward-pass page shows (it shows the stand-in when the
    build found no GPT-2 weights, and must not be promised as GPT-2)."""
    model = fp.cfg.label if isinstance(fp.source, Gpt2Source) else ""
    return Promise(model=model, n_heads=fmt_int(len(fp.heads)))


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
        count=fmt_int(len(fp.tokens)),
        n_repeat=fmt_int(len(repeated)),
        first_repeat=min(repeated) if repeated else None,
        tokenizer=_tokenizer_name(fp),
        scroll=summarised(fp),
        page_prompt=fp.prompt == DEFAULT_PROMPT,
    )


def _tokenizer_name(fp: ForwardPass) -> str:
    if fp.source.is_gpt2:
        return "GPT-2's byte-level BPE of the pinned revision"
    return "the stand-in's own word vocabulary (not GPT-2's)"


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
    repeated = fp.repeated
    return Predictions(
        last=show(fp.tokens[-1]),
        top=top,
        steps=steps,
        guessed=fmt_int(len(steps)),
        hits=fmt_int(sum(fp.predicted[i] == fp.tokens[i + 1] for i in range(len(fp.tokens) - 1))),
        hits_repeat=fmt_int(
            sum(fp.predicted[i - 1] == fp.tokens[i] for i in repeated if i - 1 in repeated)
        ),
        scroll=summarised(fp),
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
                hits=fmt_int(r.repeat_hits),
                top=show(r.last_top),
                top_prob=fmt_prob(r.last_top_prob),
            )
        )
    return Removals(
        n_repeat=fmt_int(len(repeat_positions(fp.token_ids))),
        last=show(fp.tokens[-1]),
        rows=tuple(rows),
    )


# -- the stand-in's training -----------------------------------------------------------------------
FIGURE_SIZE = (750, 460)  # px the page shows the training figure at (drawn 7.5 × 4.6 in)


def training_block(fp: ForwardPass, url: Url) -> Training | None:
    """For the stand-in: how its heads formed during training (nothing for GPT-2's weights)."""
    if not isinstance(fp.source, StandinSource):
        return None
    standin = fp.source.standin
    curve = standin.record["curve"]
    steps, induction = curve["step"], curve["induction"]

    def reached(kind: str) -> Reached:
        index = first_reaching(curve, kind)
        scores = curve[CURVES[kind]]

        def probe(i: int) -> Probe:
            return Probe(step=fmt_int(steps[i]), score=f"{scores[i]:.2f}")

        return Reached(
            kind=kind,
            threshold=str(THRESHOLDS[kind]),
            at=None if index is None else probe(index),
            before=probe(index - 1) if index else None,
        )

    return Training(
        probe_every=fmt_int(standin.training.probe_every),
        previous_token=reached("previous-token"),
        induction=reached("induction"),
        figure=url(TRAINING_FILE),
        width=FIGURE_SIZE[0],
        height=FIGURE_SIZE[1],
        first_loss=f"{curve['loss'][0]:.2f}",
        last_loss=f"{curve['loss'][-1]:.2f}",
        last_step=fmt_int(steps[-1]),
        first_induction=f"{induction[0]:.2f}",
        last_induction=f"{induction[-1]:.2f}",
    )


# -- how to get GPT-2's heads ------------------------------------------------------------------------
def howto_block(fp: ForwardPass, pin: CheckpointPin) -> Howto:
    return Howto(
        found=found_where(fp.source.where, pin) if fp.source.is_gpt2 else "",
        repo=pin.repo,
        revision=pin.revision,
        files=tuple((f.name, fmt_int(f.size), f.sha256) for f in pin.files.values()),
    )


def found_where(origin: str, pin: CheckpointPin) -> str:
    """Where the build found GPT-2's files, for readers: a path given to the build (by the
    --weights flag or the pin's variable) is not named, a cache or a download is."""
    plain = {
        "the Hugging Face cache": "in the Hugging Face cache",
        "downloaded into the Hugging Face cache": "on the Hugging Face hub, downloaded by the build",
    }
    return plain.get(origin, "at a path given to the build")
