"""The same `/// excerpt` pages on every engine: MkDocs and ProperDocs with the plugin, or with
the Markdown extension alone (the route of Zensical, which ignores MkDocs plugins; it is built
from an installed wheel in tests/test_example_site.py). A block the extension could not expand
is refused, never published as text.

Before, the extension listed alone needed MkDocs' plugin to have run (or `lock=` by hand), left
the cards unstyled, and resolved the lock again for every page; a block in a blockquote was
published as raw `/// excerpt | …` text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from generator.cli import main
from tests.pinned_helpers import HELPER, ToySite, make_toy_site
from tests.sources_helpers import REPO, TOY_V1, isolated_env, lines_text

ENGINES = {
    "mkdocs": [sys.executable, "-m", "mkdocs"],
    "properdocs": [str(Path(sys.executable).with_name("properdocs"))],
}


def extension_only(site: ToySite, extensions: str = "  - attr_list\n  - pymdownx.superfences\n"):
    """The site's mkdocs.yml with no plugin: the extension and the plugin's options under it."""
    (site.root / "mkdocs.yml").write_text(
        f"site_name: Toy\ntheme: mkdocs\nstrict: true\nmarkdown_extensions:\n{extensions}"
        f"  - pinned_excerpts:\n      git_dirs:\n        {REPO}: {site.upstream}\n",
        encoding="utf-8",
    )


def build_with(site: ToySite, engine: str) -> subprocess.CompletedProcess:
    """`ENGINE build` of the toy site in a child process: offline, a cache of its own.
    ProperDocs ships no `mkdocs` theme: the site uses Material there."""
    if engine == "properdocs":
        config = site.root / "mkdocs.yml"
        config.write_text(config.read_text().replace("theme: mkdocs\n", "theme: material\n"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ITM_")}
    env.update(
        ITM_OFFLINE="1",
        ITM_CACHE_DIR=str(site.root / ".test-cache"),
        SOURCE_DATE_EPOCH="1700000000",
        NO_MKDOCS_2_WARNING="1",
    )
    return subprocess.run(
        [*ENGINES[engine], "build", "-f", str(site.root / "mkdocs.yml")],
        cwd=site.root,  # the extension's lock is found from where the site is built
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def page(site: ToySite) -> BeautifulSoup:
    return BeautifulSoup((site.site / "index.html").read_text(encoding="utf-8"), "html.parser")


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_the_extension_alone_builds_the_cards_with_their_stylesheet(
    tmp_path: Path, engine: str
) -> None:
    site = make_toy_site(tmp_path)
    extension_only(site)
    done = build_with(site, engine)
    assert done.returncode == 0, done.stderr
    soup = page(site)
    cards = soup.select("div.pinned-excerpt")
    assert len(cards) == 2
    assert cards[1].select_one(".pinned-excerpt__swhid code").get_text() == site.swhid(19, 26)
    assert "return helper(x) + 1" in cards[1].select_one("td.code").get_text()
    styles = [s.get_text() for s in soup.select("style") if ".pinned-excerpt" in s.get_text()]
    assert len(styles) == 1 and ".pinned-excerpt__omitted" in styles[0]  # once a page
    assert not (site.site / "assets" / "stylesheets" / "pinned-excerpts.css").exists()


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_with_the_plugin_the_listed_extension_gives_way(tmp_path: Path, engine: str) -> None:
    """Both routes in one mkdocs.yml (as the example does): the plugin's extension expands each
    block once, and its stylesheet is a file, not repeated in each page."""
    site = make_toy_site(tmp_path)
    config = site.root / "mkdocs.yml"
    config.write_text(config.read_text() + "markdown_extensions:\n  - pinned_excerpts\n")
    done = build_with(site, engine)
    assert done.returncode == 0, done.stderr
    soup = page(site)
    assert len(soup.select("div.pinned-excerpt")) == 2
    assert not [s for s in soup.select("style") if ".pinned-excerpt" in s.get_text()]
    assert (site.site / "assets" / "stylesheets" / "pinned-excerpts.css").is_file()
    assert "Zensical" not in done.stderr  # the note is for sites that list no extension


def test_a_plugin_only_site_is_told_what_zensical_would_show(tmp_path, monkeypatch, capsys):
    """Zensical drops MkDocs plugins without a word: a site that enables only the plugin would
    publish its blocks as text there. The build and `itm verify` say so."""
    site = make_toy_site(tmp_path)
    done = build_with(site, "mkdocs")
    assert done.returncode == 0, done.stderr
    assert "list `- pinned_excerpts` under markdown_extensions too" in done.stderr
    monkeypatch.chdir(site.root)
    for name in ("ITM_OFFLINE", "ITM_GIT_DIRS", "ITM_GITHUB_RAW", "ITM_PYPI_SIMPLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ITM_CACHE_DIR", str(site.root / ".test-cache"))
    assert main(["verify", "--offline"]) == 0
    out = capsys.readouterr().out
    assert "note: mkdocs.yml enables the pinned-excerpts plugin only" in out
    assert "list `- pinned_excerpts` under markdown_extensions" in out


def test_the_plugins_and_the_extensions_locks_must_agree(tmp_path: Path) -> None:
    site = make_toy_site(tmp_path)
    config = site.root / "mkdocs.yml"
    config.write_text(
        config.read_text() + "markdown_extensions:\n  - pinned_excerpts:\n      lock: other.toml\n"
    )
    done = build_with(site, "mkdocs")
    assert done.returncode != 0
    assert "the plugin's lock is excerpts.lock.toml, the Markdown extension's other.toml" in (
        done.stderr
    )
    assert "fix: give both the same `lock`" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("route", ["plugin", "extension"])
def test_a_block_left_unexpanded_is_refused(tmp_path: Path, route: str) -> None:
    """A block something hid from the preprocessor (here a line of inline code that looks like
    a fence) was published as the raw text of the block; on either route it stops the build."""
    hidden = "# Toy\n\n```x``` is inline code.\n\n/// excerpt | toy.helper\n///\n"
    site = make_toy_site(tmp_path, page=hidden)
    if route == "extension":
        extension_only(site)
    done = build_with(site, "mkdocs")
    assert done.returncode != 0, done.stdout
    assert "docs/index.md" in done.stderr or route == "extension"
    assert "'toy.helper'" in done.stderr and "would be published as raw text" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (site.site / "index.html").exists()


@pytest.mark.parametrize("route", ["plugin", "extension"])
def test_a_block_in_a_blockquote_is_a_card_on_either_route(tmp_path: Path, route: str) -> None:
    quoted = "# Toy\n\n> Quoted:\n>\n> /// excerpt | toy.helper\n> ///\n"
    site = make_toy_site(tmp_path, page=quoted)
    if route == "extension":
        extension_only(site)
    done = build_with(site, "mkdocs")
    assert done.returncode == 0, done.stderr
    from bs4 import BeautifulSoup

    quote = BeautifulSoup((site.site / "index.html").read_text(), "html.parser").blockquote
    assert quote is not None and quote.select_one(".pinned-excerpt") is not None
    assert not any(p.get_text().startswith("///") for p in quote.find_all("p"))


def test_the_syntax_in_code_is_not_refused(tmp_path: Path) -> None:
    """A page may show the syntax in a fence or inline code: that is not a block left over."""
    shown = "# Toy\n\n```text\n/// excerpt | toy.helper\n///\n```\n\n`/// excerpt | in.code`\n"
    site = make_toy_site(tmp_path, page=shown)
    done = build_with(site, "mkdocs")
    assert done.returncode == 0, done.stderr
    assert "/// excerpt | in.code" in (site.site / "index.html").read_text()


@pytest.mark.usefixtures(isolated_env.__name__)
def test_the_extension_without_what_a_card_is_made_of_says_so(tmp_path: Path) -> None:
    import markdown
    from mkdocs.exceptions import PluginError

    site = make_toy_site(tmp_path)
    options = {"lock": str(site.lock), "git_dirs": {REPO: str(site.upstream)}, "offline": True}
    with pytest.raises(PluginError) as refused:
        markdown.markdown(
            "/// excerpt | toy.helper\n///\n",
            extensions=["pinned_excerpts"],
            extension_configs={"pinned_excerpts": options},
        )
    assert "needs the Markdown extensions pymdownx.superfences, attr_list" in str(refused.value)
    assert "fix: list them under markdown_extensions" in str(refused.value)
    html = markdown.markdown(
        "/// excerpt | toy.helper\n///\n",
        extensions=["attr_list", "pymdownx.superfences", "pinned_excerpts"],
        extension_configs={"pinned_excerpts": options},
    )
    assert lines_text(TOY_V1, HELPER).splitlines()[0] in BeautifulSoup(html, "html.parser").text


@pytest.mark.usefixtures(isolated_env.__name__)
def test_a_lock_is_resolved_once_for_every_page(tmp_path: Path, monkeypatch) -> None:
    """An engine that makes a Markdown instance per page (Zensical) resolved the lock again for
    each; the same lock text and settings now resolve once, and an edited lock again."""
    import markdown

    from generator.pinned_excerpts import markdown as extension

    site = make_toy_site(tmp_path)
    calls: list[str] = []
    real = extension.load_excerpts

    def counted(*args, **kwargs):
        calls.append(str(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(extension, "load_excerpts", counted)
    options = {"lock": str(site.lock), "git_dirs": {REPO: str(site.upstream)}, "offline": True}
    for _ in range(3):  # three pages
        markdown.markdown(
            "/// excerpt | toy.helper\n///\n",
            extensions=["attr_list", "pymdownx.superfences", "pinned_excerpts"],
            extension_configs={"pinned_excerpts": options},
        )
    assert calls == [str(site.lock)]
    site.lock.write_text(site.lock.read_text() + "\n# edited\n")
    markdown.markdown(
        "/// excerpt | toy.helper\n///\n",
        extensions=["attr_list", "pymdownx.superfences", "pinned_excerpts"],
        extension_configs={"pinned_excerpts": options},
    )
    assert len(calls) == 2
