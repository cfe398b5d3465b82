"""Fault injection, hostile upstream text: whatever bytes an upstream file holds, the page shows
them as text (never markup), byte for byte, with separators a browser would swallow made visible.
The Markdown goes through the site's own extensions (mkdocs.yml), as in a build."""

from __future__ import annotations

import html
import re

import markdown
import pytest
import yaml

from generator.render.code import code_tabs, evidence_card, literal, visible
from generator.sources.excerpt import Excerpt, make_blocks
from generator.sources.lock import Repo
from tests.site_helpers import ROOT
from tests.sources_helpers import sha256

HOSTILE_LINES = [
    "\u2028<u id=a1>x</u>",
    "\x85<u id=a2>x</u>",
    "\x0b<u id=a3>x</u>",
    "\x0c<script>alert(1)</script>",
    "a = 1\r\x0c<u id=a4>x</u>",
    "mid\u2028line = '<b>'\x0cand\x0bmore",
    "```",
    "    ~~~ <img src=x onerror=alert(2)>",
    "{: onclick=alert(3) }",
    "x = 1  # \u202etxt.exe\u202c <i>",
    "\tindented = 1\t# a tab: Markdown would expand it to spaces",
    "nul\x00esc\x1b[31m del\x7f",
]


def site_markdown() -> markdown.Markdown:
    """A Markdown converter with the extensions and options mkdocs.yml gives the site."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda *_: None)
    Loader.add_multi_constructor("!", lambda *_: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)
    names, options = [], {}
    for item in config["markdown_extensions"]:
        name, opts = next(iter(item.items())) if isinstance(item, dict) else (item, None)
        names.append(name)
        if opts:
            options[name] = {k: v for k, v in opts.items() if v is not None}
    return markdown.Markdown(extensions=names, extension_configs=options)


def hostile_excerpt(evidence: str = "made <script>alert(4)</script> [x](javascript:alert(5))"):
    text = "".join(line + "\n" for line in HOSTILE_LINES)
    ranges = ((10, 9 + len(HOSTILE_LINES)),)
    repo = Repo("evil/upstream", "https://github.com/evil/upstream", "ab" * 20, "MIT <b>")
    return Excerpt(
        id="evil.x",
        repo=repo,
        path="src/evil<i>.py",
        symbol=None,
        ranges=ranges,
        blocks=make_blocks(text, ranges),
        text=text,
        sha256=sha256(text),
        evidence=evidence,
        evidence_level="upstream",
        resolved_from="cache",
    )


def shown_code(page: str) -> list[str]:
    """The text of each code line as a browser shows it (tags dropped, entities decoded)."""
    codes = re.findall(r"<code>(.*?)</code>", page, re.S)
    text = "".join(html.unescape(re.sub(r"<[^>]+>", "", code)) for code in codes)
    return text.split("\n")


def sources_page_excerpt(excerpt) -> str:
    """The Sources page's plain listing of an excerpt, as pages.sources_index embeds it."""
    from generator import blocks
    from generator.pages import plain_excerpt

    block = blocks.render(plain_excerpt(excerpt))
    return f'<details class="quote"><summary>Excerpt</summary>{block}</details>\n'


@pytest.mark.parametrize("render", ["tabs", "card", "sources"])
def test_hostile_lines_are_text_exact_and_visible(render: str) -> None:
    excerpt = hostile_excerpt()
    source = {
        "tabs": lambda: code_tabs([excerpt], sources="../sources/"),
        "card": lambda: evidence_card(excerpt, "claim <b>"),
        "sources": lambda: sources_page_excerpt(excerpt),
    }[render]()
    page = site_markdown().convert(source)
    for tag in ("<u", "<script", "<img", "<i>", "<b>", 'href="javascript'):
        assert tag not in page, tag
    assert not re.search(r"<[^>]*\sonclick=", page)
    lines = [line for line in shown_code(page) if line]
    # every upstream line is one shown line, equal to the verified text with marks made visible
    assert lines == [visible(line) for line in HOSTILE_LINES]
    assert "    ~~~" in lines[7] and "⟨U+2028⟩<u id=a1>" in lines[0]  # nothing padded or eaten
    assert lines[10] == "␉indented = 1␉# a tab: Markdown would expand it to spaces"
    assert lines[11] == "nul␀esc␛[31m del␡"


def test_visible_marks_every_character_a_page_would_not_show_as_is() -> None:
    """Tabs too: Python-Markdown expands them to spaces before fences are read, so a kept tab
    would reach the page as padding, not as the verified byte."""
    assert visible("a\tb\x00\x1b\x7f\u2028\x85\u200f\n") == "a␉b␀␛␡⟨U+2028⟩⟨U+0085⟩⟨U+200F⟩\n"


def test_literal_leaves_markdown_and_html_nothing_to_interpret() -> None:
    hostile = "#1 <script>x</script> [a](javascript:b) `c` {: onclick=d } *e*\nf\u2028g"
    page = site_markdown().convert(f"- How: {literal(hostile)}\n")
    assert "<script" not in page and "<a" not in page and "<code" not in page
    assert "<em" not in page and not re.search(r"<[^>]*\sonclick=", page)
    shown = html.unescape(re.sub(r"<[^>]+>", "", page)).strip()
    assert shown == "How: " + visible(hostile.replace("\n", " "))
