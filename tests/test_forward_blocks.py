"""The forward-pass page's blocks: token text reaches every block as text, never markup, and a
site's custom_dir/itm/admonition.html restyles the page's source note (the shared macro)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from generator import blocks
from generator.forward import current, render, residual
from generator.forward.blocks import SourceNote
from generator.forward.head_images import attention_svg
from generator.settings import Settings
from tests.site_helpers import ROOT

HOSTILE = '<img/src=x/onerror="alert(1)">'  # no space: the page shows spaces as ␣


def test_hostile_token_text_reaches_every_block_escaped() -> None:
    fp = current(Settings.load(ROOT, env={}))
    fp = dataclasses.replace(
        fp,
        tokens=[HOSTILE + t for t in fp.tokens],
        predicted=[HOSTILE + t for t in fp.predicted],
        top_next=[(HOSTILE + t, p) for t, p in fp.top_next],
    )
    shown = {
        "tokens": blocks.render(render.tokens_block(fp)),
        "residual": blocks.render(residual.residual_block(fp)),
        "predictions": blocks.render(render.predictions_block(fp)),
        "removals": blocks.render(render.removal_block(fp)),  # the last token
        "svg": attention_svg(fp.attention(0, 0), fp.tokens, "t").decode(),
    }
    for name, html in shown.items():
        assert "<img/src=x" not in html and "&lt;img/src=x" in html, name


def test_a_site_override_of_the_admonition_macro_restyles_the_source_note(tmp_path: Path) -> None:
    note = SourceNote(model="stand-in", weights_file="w.safetensors", sha256="0" * 64, n_head=1)
    default = blocks.render(note)
    assert default.startswith(
        '<div class="admonition warning itm-source" data-source="stand-in">\n'
        '<p class="admonition-title">Showing a stand-in, not GPT-2</p>\n<p>'
    )
    (tmp_path / "itm").mkdir()
    (tmp_path / "itm" / "admonition.html").write_text(
        '{% macro admonition(kind, title, classes="", attrs={}) %}'
        "<aside data-kind={{ kind }}><b>{{ title }}</b>{{ caller() }}</aside>{% endmacro %}"
    )
    mine = blocks.render(note, tmp_path)
    assert mine.startswith("<aside data-kind=warning><b>Showing a stand-in, not GPT-2</b><p>")
    assert "admonition" not in mine and "GPT-2's weights are not on the machine" in mine


def test_the_page_describes_its_own_prompt_only() -> None:
    """'A phrase and then the start of the same phrase again' is true of the page's own prompt;
    a build given another (ITM_FORWARD_PROMPT) must not say it of that one."""
    own = current(Settings.load(ROOT, env={}))
    other_prompt = "The cat sat on the mat near the river bank."
    other = current(Settings.load(ROOT, env={"ITM_FORWARD_PROMPT": other_prompt}))
    claim = "the start of the same phrase again"
    assert claim in blocks.render(render.tokens_block(own))
    assert other.prompt == other_prompt and claim not in blocks.render(render.tokens_block(other))
