"""The pinned-excerpts plugin on a site of its own: the `/// excerpt | ID` syntax becomes a card
with upstream line numbers, elisions, the permalink, the evidence and the Software Heritage id;
bad input stops the build with the page or lock, the id and the fix, publishes nothing and never
hangs. Every build is a real `mkdocs build` in a child process (tests/pinned_helpers.py)."""

from __future__ import annotations

import hashlib
import os
import shutil
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from tests.pinned_helpers import HELPER, WIDGET, ToySite, build, make_toy_site
from tests.sources_helpers import PATH, REPO, TOY_V1, lines_text


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def cards(site: ToySite) -> list:
    soup = BeautifulSoup((site.site / "index.html").read_text(encoding="utf-8"), "html.parser")
    return soup.select("div.pinned-excerpt")


def numbered_lines(card) -> list[tuple[int, str]]:
    """(line number as shown, the line's code) of every run in a card, in order."""
    found = []
    for block in card.select("div.highlight"):
        numbers = [int(n) for n in block.select_one(".linenos").get_text().split()]
        code = block.select_one("td.code code").get_text().split("\n")
        found += list(zip(numbers, code, strict=False))
    return found


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> ToySite:
    site = make_toy_site(tmp_path_factory.mktemp("good"))
    done = build(site)
    assert done.returncode == 0, done.stderr
    return site


def test_the_plugin_and_the_extension_are_registered_under_their_names() -> None:
    from generator.pinned_excerpts.markdown import PinnedExcerptsExtension
    from generator.pinned_excerpts.plugin import PinnedExcerptsPlugin

    (plugin,) = [p for p in entry_points(group="mkdocs.plugins") if p.name == "pinned-excerpts"]
    assert plugin.load() is PinnedExcerptsPlugin
    (ext,) = [p for p in entry_points(group="markdown.extensions") if p.name == "pinned_excerpts"]
    assert ext.load() is PinnedExcerptsExtension


def test_a_card_shows_the_pinned_lines_with_their_upstream_numbers(good: ToySite) -> None:
    whole, part = cards(good)
    upstream = TOY_V1.split("\n")
    shown = numbered_lines(whole)
    assert [n for n, _ in shown] == list(range(WIDGET[0], WIDGET[1] + 1))
    assert all(code == upstream[n - 1] for n, code in shown), shown
    permalink = f"https://github.com/{REPO}/blob/{good.commit}/{PATH}#L{WIDGET[0]}-L{WIDGET[1]}"
    assert whole.select_one(".pinned-excerpt__source a")["href"] == permalink
    from generator.render.code import EVIDENCE_WORDS

    evidence = whole.select_one(".pinned-excerpt__evidence").get_text()
    name, sentence = EVIDENCE_WORDS["upstream"]  # the toy lock's level, in readers' words
    assert evidence == f"Evidence: {name}. {sentence}", evidence  # no commands, no backticks
    assert whole.select_one(".pinned-excerpt__swhid code").get_text() == good.swhid(*WIDGET)
    # a subset of the pinned lines: only those, numbered as upstream, the gap marked
    shown = numbered_lines(part)
    assert [n for n, _ in shown] == [19, 20, 21, 22, 23, 25, 26]
    assert all(code == upstream[n - 1] for n, code in shown), shown
    assert [p.get_text() for p in part.select(".pinned-excerpt__omitted")] == [
        "… line 24 omitted …"
    ]
    assert part.select_one(".pinned-excerpt__swhid code").get_text() == good.swhid(19, 26)
    assert part.select_one(".pinned-excerpt__source a")["href"].endswith("#L19-L26")


def test_a_card_cites_the_excerpt_with_its_swhid_in_every_format(good: ToySite) -> None:
    import json

    whole = cards(good)[0]
    texts = [pre.get_text() for pre in whole.select(".pinned-excerpt__cite pre")]
    plain, bibtex, csl = texts
    swhid = good.swhid(*WIDGET)
    assert swhid in plain and f"swhid = {{{swhid}}}" in bibtex
    (item,) = json.loads(csl)
    assert item["archive_location"] == swhid and item["version"] == good.commit
    assert item["note"].endswith(hashlib.sha256(lines_text(TOY_V1, WIDGET).encode()).hexdigest())


def test_the_page_keeps_fenced_examples_and_unique_ids(good: ToySite) -> None:
    html = (good.site / "index.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(html, "html.parser")
    assert "/// excerpt | not.an.excerpt" in soup.get_text()  # shown, not expanded
    ids = [tag["id"] for tag in soup.select("[id]")]
    assert len(ids) == len(set(ids))  # the same excerpt quoted twice: fence ids stay unique
    sheet = good.site / "assets" / "stylesheets" / "pinned-excerpts.css"
    assert sheet.is_file() and "pinned-excerpts.css" in html


def test_a_site_overrides_the_card_template(tmp_path: Path) -> None:
    site = make_toy_site(tmp_path, plugin="")
    text = (
        (site.root / "mkdocs.yml")
        .read_text()
        .replace("theme: mkdocs", "theme:\n  name: mkdocs\n  custom_dir: overrides")
    )
    (site.root / "mkdocs.yml").write_text(text)
    mine = site.root / "overrides" / "pinned_excerpts" / "pinned_excerpt.html"
    mine.parent.mkdir(parents=True)
    mine.write_text('<p class="mine">{{ repo }} {{ lines }}</p>\n{{ runs }}\n')
    done = build(site)
    assert done.returncode == 0, done.stderr
    soup = BeautifulSoup((site.site / "index.html").read_text(), "html.parser")
    assert [p.get_text() for p in soup.select("p.mine")] == [
        f"{REPO} lines 13–26",
        f"{REPO} lines 19–26",
    ]
    assert not soup.select("div.pinned-excerpt")


def test_a_card_works_wherever_a_fence_does(tmp_path: Path) -> None:
    """In an admonition and in a list item the card is whole: its HTML around its numbered
    code, not a paragraph holding raw tags (raw HTML blocks are not read inside containers)."""
    page = (
        '# T\n\n!!! note "Inside an admonition"\n\n    /// excerpt | toy.helper\n    ///\n\n'
        "- In a list item:\n\n    /// excerpt | toy.helper\n        lines: 10\n    ///\n"
    )
    site = make_toy_site(tmp_path, page=page)
    config = site.root / "mkdocs.yml"
    config.write_text(config.read_text() + "markdown_extensions:\n  - admonition\n")
    done = build(site)
    assert done.returncode == 0, done.stderr
    html = (site.site / "index.html").read_text(encoding="utf-8")
    assert "<p><div" not in html and 'markdown="' not in html
    boxed, listed = cards(site)
    assert "admonition" in boxed.parent["class"] and listed.parent.name == "li"
    assert [n for n, _ in numbered_lines(boxed)] == [9, 10]
    assert [n for n, _ in numbered_lines(listed)] == [10]
    assert boxed.select_one(".pinned-excerpt__swhid code").get_text() == site.swhid(9, 10)


QUOTED_PAGE = """\
# T

/// excerpt | toy.helper
///

> Quoted:
>
> /// excerpt | toy.helper
> ///
>
> After it, still quoted.

> > /// excerpt | toy.helper
> > ///

- A quote in a list item:

    > /// excerpt | toy.helper
    > ///

=== "A tab"

    /// excerpt | toy.helper
    ///

/// details | Details
/// excerpt | toy.helper
///
///

> ```text
> /// excerpt | not.an.excerpt
> ///
> ```
"""


def test_a_card_in_a_blockquote_a_tab_or_a_details_block_is_the_card_outside(
    tmp_path: Path,
) -> None:
    """`> /// excerpt | ID` was published as its raw text: the preprocessor read only lines
    outside blockquotes. Now a card in a quote (nested, or in a list item), a content tab or a
    details block is the card at the top level, and a quoted fence still shows the syntax."""
    site = make_toy_site(tmp_path, page=QUOTED_PAGE)
    config = site.root / "mkdocs.yml"
    extensions = ("pymdownx.tabbed", "pymdownx.blocks.details")
    config.write_text(config.read_text() + "markdown_extensions:\n  - " + "\n  - ".join(extensions))
    done = build(site)
    assert done.returncode == 0, done.stderr
    html = (site.site / "index.html").read_text(encoding="utf-8")
    assert "<p><div" not in html and "<p></div>" not in html
    found = cards(site)
    containers = [card.find_parent(["blockquote", "li", "details", "div"]) for card in found]
    assert [tag.name for tag in containers] == [
        "div",
        "blockquote",
        "blockquote",
        "blockquote",
        "div",
        "details",
    ]
    assert containers[2].parent.name == "blockquote" and containers[3].parent.name == "li"
    assert "tabbed-content" in containers[4]["class"]
    outside = found[0]
    for card in found[1:]:
        assert card.get_text() == outside.get_text()
        assert [t.name for t in card.descendants if t.name] == [
            t.name for t in outside.descendants if t.name
        ]
    quoted = [p.get_text().strip() for p in containers[1].find_all("p", recursive=False)]
    assert quoted == ["Quoted:", "After it, still quoted."]
    assert "/// excerpt | not.an.excerpt" in containers[-1].find_next("blockquote").get_text()


@pytest.mark.parametrize(
    "text",
    [
        "Write `/// excerpt | a.b` to quote a pin.",
        "```text\n/// excerpt | a.b\n///\n```",
        "> ~~~\n> /// excerpt | a.b\n> ///\n> ~~~",
        "- Syntax:\n\n    ```\n    /// excerpt | a.b\n    ///\n    ```",
        "<!--\n```\n/// excerpt | a.b\n```\n-->",
    ],
    ids=["inline-code", "fence", "quoted-fence", "fence-in-a-list", "comment"],
)
def test_the_syntax_shown_as_code_is_not_refused(text: str) -> None:
    """The last check refuses a block left as text, never one shown as code."""
    import markdown

    from generator.pinned_excerpts.markdown import PinnedExcerptsExtension

    extension = PinnedExcerptsExtension(excerpts={}, lock_file="excerpts.lock.toml")
    html = markdown.markdown(text, extensions=["pymdownx.superfences", extension])
    assert "/// excerpt | a.b" in html


def test_the_extension_alone_with_python_markdown(tmp_path: Path, monkeypatch) -> None:
    """Outside MkDocs: Python-Markdown with `lock=`, settings from the environment."""
    import markdown

    site = make_toy_site(tmp_path)
    monkeypatch.setenv("ITM_GIT_DIRS", f"{REPO}={site.upstream}")
    monkeypatch.setenv("ITM_OFFLINE", "1")
    monkeypatch.setenv("ITM_CACHE_DIR", str(tmp_path / "cache"))
    html = markdown.markdown(
        "/// excerpt | toy.helper\n///\n",
        extensions=["attr_list", "pymdownx.superfences", "pinned_excerpts"],
        extension_configs={"pinned_excerpts": {"lock": str(site.lock)}},
    )
    soup = BeautifulSoup(html, "html.parser")
    assert soup.select_one(".pinned-excerpt__swhid code").get_text() == site.swhid(*HELPER)
    assert "return x * SCALE" in soup.select_one("div.pinned-excerpt td.code").get_text()


# ---------------------------------------------------------------- bad input


def break_page(site: ToySite, block: str) -> None:
    site.page.write_text(f"# Toy\n\n{block}\n", encoding="utf-8")


def set_lock_option(site: ToySite, value: str) -> None:
    config = site.root / "mkdocs.yml"
    config.write_text(config.read_text() + f"      lock: {value}\n")


def flip(text: str, digest: str) -> str:
    assert digest in text
    return text.replace(digest, digest[:-1] + ("0" if digest[-1] != "0" else "1"))


def unknown_id(site: ToySite) -> tuple[str, ...]:
    break_page(site, "/// excerpt | toy.nope\n///")
    return ("docs/index.md", "'toy.nope'", "no excerpt with this id", "toy.widget")


def lines_outside(site: ToySite) -> tuple[str, ...]:
    break_page(site, "/// excerpt | toy.widget\n    lines: 10-14\n///")
    return ("docs/index.md", "'toy.widget'", "10–14 are not inside the pinned lines 13–26")


def lines_unreadable(site: ToySite) -> tuple[str, ...]:
    break_page(site, "/// excerpt | toy.widget\n    lines: the first few\n///")
    return ("docs/index.md", "'toy.widget'", "cannot read line range")


def unknown_option(site: ToySite) -> tuple[str, ...]:
    break_page(site, "/// excerpt | toy.widget\n    line: 14\n///")
    return ("docs/index.md", "'toy.widget'", "unknown option 'line'")


def never_closed(site: ToySite) -> tuple[str, ...]:
    break_page(site, "/// excerpt | toy.widget\n")
    return ("docs/index.md", "'toy.widget'", "never closed")


def quote_closed_outside(site: ToySite) -> tuple[str, ...]:
    break_page(site, "> /// excerpt | toy.widget\n///")
    return ("docs/index.md", "'toy.widget'", "never closed", "after the same quote markers")


def left_as_text(site: ToySite) -> tuple[str, ...]:
    """A line that only looks like a fence (inline code at a line's start) hid the block from
    the preprocessor: the page showed it as text. The page's HTML is checked last."""
    break_page(site, "```x``` is inline code.\n\n/// excerpt | toy.helper\n///\n")
    return ("docs/index.md", "'toy.helper'", "would be published as raw text", "code fence")


def misspelt_block(site: ToySite) -> tuple[str, ...]:
    """`/// Exerpt | ID` (and `/// Excerpt`, `/// Claim`) is no block: it was published as raw
    text with exit 0, and a misspelt claim was never checked."""
    break_page(site, "/// Exerpt | toy.helper\n///\n\n/// Claim | toy.helper\nWords.\n///\n")
    return ("docs/index.md", "'toy.helper'", "`/// Exerpt` is no block", "write `/// excerpt | ID`")


def lines_twice(site: ToySite) -> tuple[str, ...]:
    """YAML keeps the last of two keys without a word: a block with two `lines:` quoted other
    lines than its writer read first."""
    break_page(site, "/// excerpt | toy.helper\n    lines: 8\n    lines: 9\n///\n")
    return ("docs/index.md", "'toy.helper'", "the option 'lines' is given twice", "each once")


def lock_invalid(site: ToySite) -> tuple[str, ...]:
    site.lock.write_text(
        site.lock.read_text().replace('evidence_level = "upstream"', 'evidence_level = "sure"', 1)
    )
    return ("excerpts.lock.toml", "'toy.widget'", "unknown evidence_level 'sure'")


def lock_unresolvable(site: ToySite) -> tuple[str, ...]:
    shutil.rmtree(site.root / ".test-cache")  # what the first build verified is gone too
    config = site.root / "mkdocs.yml"
    clone = f"      git_dirs:\n        {REPO}: {site.upstream}\n"
    config.write_text(config.read_text().replace(clone, "      offline: true\n"))
    return ("excerpts.lock.toml", "'toy.widget'", "could not be resolved and verified")


def clone_gone(site: ToySite) -> tuple[str, ...]:
    """A clone the site names that is not there is refused, even when the cache could answer."""
    config = site.root / "mkdocs.yml"
    config.write_text(config.read_text().replace(str(site.upstream), str(site.root / "gone")))
    return ("git_dirs", str(site.root / "gone"), "does not exist", f"a clone of {REPO}")


def excerpt_hash_mismatch(site: ToySite) -> tuple[str, ...]:
    digest = hashlib.sha256(lines_text(TOY_V1, WIDGET).encode()).hexdigest()
    site.lock.write_text(flip(site.lock.read_text(), digest))
    return ("excerpts.lock.toml", "'toy.widget'", "hash mismatch")


def file_id_mismatch(site: ToySite) -> tuple[str, ...]:
    site.lock.write_text(flip(site.lock.read_text(), site.blob))
    return ("excerpts.lock.toml", "'toy.widget'", "hash mismatch", "git blob id")


def lock_is_a_directory(site: ToySite) -> tuple[str, ...]:
    set_lock_option(site, "docs")
    return ("docs", "cannot read the lock", "not a regular file")


def lock_is_a_fifo(site: ToySite) -> tuple[str, ...]:
    os.mkfifo(site.root / "pipe")  # no writer: an open() that waits would never return
    set_lock_option(site, "pipe")
    return ("pipe", "cannot read the lock", "not a regular file")


def lock_is_endless(site: ToySite) -> tuple[str, ...]:
    set_lock_option(site, "/dev/zero")
    return ("/dev/zero", "cannot read the lock", "not a regular file")


def lock_holds_a_nul_byte(site: ToySite) -> tuple[str, ...]:
    set_lock_option(site, '"excerpts\\0.lock.toml"')  # YAML's "\0": a ValueError in open()
    return ("entry 'lock'", "holds a NUL byte (character 8)")


def git_dirs_not_a_path(site: ToySite) -> tuple[str, ...]:
    config = site.root / "mkdocs.yml"  # a TypeError in Path(5), told as a bug report before
    config.write_text(config.read_text() + "      git_dirs: {toy/repo: 5}\n")
    return ("entry 'git_dirs'", "git_dirs names 5 as the clone of 'toy/repo'")


def lock_is_missing(site: ToySite) -> tuple[str, ...]:
    site.lock.unlink()
    return ("excerpts.lock.toml", "lock file not found", "itm pin")


def card_template(site: ToySite, data: bytes) -> None:
    """The site's own card template: <custom_dir>/pinned_excerpts/pinned_excerpt.html."""
    config = site.root / "mkdocs.yml"
    theme = "theme:\n  name: mkdocs\n  custom_dir: overrides"
    config.write_text(config.read_text().replace("theme: mkdocs", theme))
    mine = site.root / "overrides" / "pinned_excerpts" / "pinned_excerpt.html"
    mine.parent.mkdir(parents=True)
    mine.write_bytes(data)


def card_template_syntax(site: ToySite) -> tuple[str, ...]:
    card_template(site, b"<div>\n{% if repo %}\n{{ repo }\n")
    return ("pinned_excerpts/pinned_excerpt.html", "line 3", "unexpected '}'", "delete it")


def card_template_undefined(site: ToySite) -> tuple[str, ...]:
    card_template(site, b"<div>\n{{ repo }}\n{{ no_such_field }}\n{{ runs }}\n")
    return ("pinned_excerpt.html", "line 3", "'no_such_field' is undefined", "variables: repo")


def card_template_not_utf8(site: ToySite) -> tuple[str, ...]:
    card_template(site, b"<div>\n{{ repo }}\n\xff\n")
    return ("pinned_excerpt.html", "line 3", "not UTF-8 text (byte 0xFF)", "save the site's")


@pytest.mark.parametrize(
    "breaks",
    [
        unknown_id,
        lines_outside,
        lines_unreadable,
        unknown_option,
        never_closed,
        quote_closed_outside,
        left_as_text,
        misspelt_block,
        lines_twice,
        lock_invalid,
        lock_unresolvable,
        clone_gone,
        excerpt_hash_mismatch,
        file_id_mismatch,
        lock_is_a_directory,
        lock_is_a_fifo,
        lock_is_endless,
        lock_is_missing,
        lock_holds_a_nul_byte,
        git_dirs_not_a_path,
        card_template_syntax,
        card_template_undefined,
        card_template_not_utf8,
    ],
)
def test_bad_input_stops_the_build_and_keeps_the_previous_site(tmp_path: Path, breaks) -> None:
    site = make_toy_site(tmp_path)
    first = build(site)
    assert first.returncode == 0, first.stderr
    before = tree_digest(site.site)
    expected = breaks(site)
    done = build(site)  # a hang would fail here, at the safety timeout
    message = done.stdout + done.stderr
    assert done.returncode != 0, message
    for part in expected:
        assert part in message, (part, message)
    assert "fix:" in message and "Traceback" not in message, message
    assert tree_digest(site.site) == before  # nothing published: the previous site stands
    assert not list(site.root.glob(".site.staging*")), "a staging folder was left behind"


@pytest.mark.parametrize("target", ["docs", "pins", "overrides", ".test-cache", ".", ".."])
def test_a_site_symlink_into_what_the_build_reads_is_refused(tmp_path: Path, target: str) -> None:
    """`ln -s docs site && mkdocs build` exited 0 with docs/ become the built site; a site
    leading to the lock's folder, the theme's custom_dir, the cache, the folder of mkdocs.yml or
    a parent of it was swapped away the same way. Now the build stops first, writing nothing."""
    site = make_toy_site(tmp_path)
    (site.root / "pins").mkdir()
    site.lock.rename(site.root / "pins" / site.lock.name)
    set_lock_option(site, f"pins/{site.lock.name}")
    config = site.root / "mkdocs.yml"
    config.write_text(
        config.read_text().replace("theme: mkdocs", "theme: {name: mkdocs, custom_dir: overrides}")
    )
    for folder in ("overrides", ".test-cache"):
        (site.root / folder).mkdir()
        (site.root / folder / "kept.txt").write_text("kept\n")
    before = tree_digest(site.root)
    site.site.symlink_to(target)
    done = build(site)
    message = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in message, message
    assert f"{site.site}, entry 'site_dir': the site folder (symlinks followed)" in message
    assert "which the build reads" in message and "fix: set site_dir" in message
    site.site.unlink()
    assert tree_digest(site.root) == before  # nothing written, not even the cache or the lock
