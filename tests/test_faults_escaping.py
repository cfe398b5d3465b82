"""Fault injection, hostile upstream text: whatever bytes an upstream file holds, the page shows
them as text (never markup), byte for byte, with separators a browser would swallow made visible.
The Markdown goes through the site's own extensions (mkdocs.yml), as in a build."""

from __future__ import annotations

import html
import re

import markdown
import pytest
import yaml

from generator import blocks
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
    from generator.pages import plain_excerpt

    block = blocks.render(plain_excerpt(excerpt))
    return f'<details class="quote"><summary>Excerpt</summary>{block}</details>\n'


@pytest.mark.parametrize("render", ["tabs", "card", "sources"])
def test_hostile_lines_are_text_exact_and_visible(render: str) -> None:
    excerpt = hostile_excerpt()
    source = {
        "tabs": lambda: code_tabs([excerpt], sources="../sources/", render=blocks.render),
        "card": lambda: blocks.render(evidence_card(excerpt, "claim <b>")),
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


def test_a_sites_code_tab_override_applies_and_still_gets_inert_text(tmp_path) -> None:
    """custom_dir/itm/code_tab.md replaces the Code tab's markup; the lock's text reaches even a
    careless override already inert (literal() is applied to the data, not left to templates)."""
    (tmp_path / "itm").mkdir()
    (tmp_path / "itm" / "code_tab.md").write_text(
        '=== "{{ label }}"\n\n    {{ license }} {{ path }}\n'
    )
    source = code_tabs(
        [hostile_excerpt()], sources=None, render=lambda b: blocks.render(b, tmp_path)
    )
    assert "itm-code-caption" not in source  # the override, not the generator's own template
    page = site_markdown().convert(source)
    assert "<b>" not in page and "<i>" not in page
    shown = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "MIT <b> src/evil<i>.py" in shown


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


@pytest.mark.slow
def test_a_hostile_upstream_in_a_real_git_repo_reaches_a_real_build_as_text(tmp_path) -> None:
    """The whole path, as a hostile upstream would take it: a file of HOSTILE_LINES committed to
    a local git repo, pinned in a copy of the project's lock, read through ITM_GIT_DIRS by a real
    `mkdocs build`, quoted in Code tabs (Pygments) and listed on the Sources page (plain text).
    No tag or attribute of its own reaches the HTML, and every shown line is the verified line
    with its marks made visible."""
    from bs4 import BeautifulSoup

    from tests.site_helpers import mkdocs_build
    from tests.sources_helpers import PATH, REPO, excerpt_table, make_upstream, repo_table
    from tests.test_build import project_copy

    text = "\n".join(HOSTILE_LINES) + "\n"
    commit = make_upstream(tmp_path / "evil", {PATH: text})
    project = project_copy(tmp_path)
    lock = project / "sources" / "lock.toml"
    pin = excerpt_table("toy.evil", text, lines=[[1, len(HOSTILE_LINES)]])
    lock.write_text(lock.read_text(encoding="utf-8") + "\n" + repo_table(commit) + pin)
    feature = project / "generator" / "generation" / "feature.py"
    source = feature.read_text(encoding="utf-8")
    quoted = 'HF_CODE = ("hf.gpt2-cache-update",)'
    assert quoted in source
    feature.write_text(source.replace(quoted, 'HF_CODE = ("hf.gpt2-cache-update", "toy.evil")'))

    site = project / "site"
    built = mkdocs_build(site, config_dir=project, ITM_GIT_DIRS=f"{REPO}={tmp_path / 'evil'}")
    assert built.returncode == 0, built.stdout + built.stderr
    expected = [visible(line) for line in HOSTILE_LINES]
    pages = {name: site / name / "index.html" for name in ("generation", "sources")}
    for name, page in pages.items():
        page_html = page.read_text(encoding="utf-8")
        assert "alert(" not in "".join(
            s.get_text() for s in BeautifulSoup(page_html, "html.parser")("script")
        )
        soup = BeautifulSoup(page_html, "html.parser")
        assert not soup.select("u[id^=a], img[src=x], [onclick], [onerror]"), name
    generation = BeautifulSoup(pages["generation"].read_text(encoding="utf-8"), "html.parser")
    block = generation.select_one("div.highlight[id*=toy-evil] td.code")
    assert block is not None
    assert block.get_text().rstrip("\n").split("\n") == expected
    sources = BeautifulSoup(pages["sources"].read_text(encoding="utf-8"), "html.parser")
    plain = sources.select_one("#ex-toy-evil").find_next("div", class_="itm-plain")
    assert plain.select_one("pre code").get_text().split("\n") == expected
