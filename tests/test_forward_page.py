"""The built forward-pass page: it says which model it shows, its gallery has every head with a
stable anchor and a large view, its numbers are the engine's, and docs/ types none of them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from bs4 import BeautifulSoup

from generator.engine import forward
from generator.forward.standin import load_standin
from tests.site_helpers import ROOT

pytestmark = pytest.mark.slow
PAGE = "forward-pass/index.html"


@pytest.fixture(scope="module")
def soup(built_site: Path) -> BeautifulSoup:
    return BeautifulSoup((built_site / PAGE).read_text(encoding="utf-8"), "html.parser")


@pytest.fixture(scope="module")
def heads(built_site: Path) -> dict:
    return json.loads((built_site / "forward" / "heads.json").read_text(encoding="utf-8"))


def test_page_says_it_shows_the_stand_in(soup, heads):
    """No GPT-2 weights on CI machines: the page must say so, and how to get them."""
    note = soup.select_one(".itm-source")
    assert note["data-source"] == heads["source"] == "stand-in"
    assert "not GPT-2" in note.get_text()
    assert soup.select_one("#own-weights") is not None
    howto = soup.select_one("#own-weights").find_next("p").get_text()
    assert "did not have them" in howto and "README" in soup.get_text()


def test_the_home_page_promises_the_stand_in_it_shows(built_site: Path, heads) -> None:
    """The home page's way into the forward pass says what this build shows: the stand-in's
    heads, not "every head of a whole forward pass" of GPT-2."""
    home = BeautifulSoup((built_site / "index.html").read_text(encoding="utf-8"), "html.parser")
    link = home.select_one('.itm-home__ways a[href$="forward-pass/"]')
    assert link is not None
    item = link.find_parent("li").get_text(" ", strip=True)
    assert heads["source"] == "stand-in"
    assert f"the {len(heads['heads'])} heads of a small model trained for this site" in item
    assert "GPT-2's own heads when the site is built with its weights" in item
    assert "every head of a whole forward pass" not in item


def test_gallery_has_every_head_with_its_anchor_and_files(built_site, soup, heads):
    layers = {h["layer"] for h in heads["heads"]}
    per_layer = {h["head"] for h in heads["heads"]}
    cells = soup.select(".itm-gallery a.itm-head")
    assert len(cells) == len(layers) * len(per_layer) == len(heads["heads"])
    page_dir = (built_site / PAGE).parent
    for cell, h in zip(cells, heads["heads"], strict=True):
        assert cell["id"] == f"head-{h['layer']}-{h['head']}" == h["anchor"]
        svg = (page_dir / cell["href"]).resolve()
        png = (page_dir / cell.img["src"]).resolve()
        assert svg.read_bytes().startswith(b"<svg")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        # The name starts with what the reader sees, the label and its kinds' badges, in order
        # (axe: label-content-name-mismatch; it reads no words in parentheses).
        label = f"{h['layer']}.{h['head']}"
        assert cell.select_one(".itm-head__label").get_text() == label
        badges = "".join(f" {b.get_text()}" for b in cell.select(".itm-kind-badge"))
        seen = f"Head {label}{badges} (block {h['layer']}, head {h['head']}"
        assert cell["aria-label"].startswith(seen), (cell["aria-label"], seen)


def test_numbers_on_the_page_are_the_engines(soup):
    """Recompute from the cached stand-in with the engine: tokens, top prediction, norms."""
    standin = load_standin(ROOT)
    tokens = [li.select_one(".itm-token__text").get_text() for li in soup.select(".itm-token")]
    words = [t.replace("␣", " ") for t in tokens]
    ids = [standin.tokenizer.words.index(w.strip()) for w in words]
    trace = forward(standin.weights, standin.cfg, np.array(ids))
    top = int(np.argmax(trace.probs[-1]))
    first_row = soup.select(".itm-top tbody tr")[0].select("td")
    assert first_row[1].get_text().replace("␣", " ") == standin.tokenizer.token_text(top)
    assert first_row[2].get_text() == f"{100 * trace.probs[-1, top]:.1f}%"
    rows = soup.select(".itm-residual__table tbody tr")
    assert len(rows) == standin.cfg.n_layer + 1
    last = np.linalg.norm(trace.blocks[-1].resid_out, axis=-1)
    shown = [float(td["title"].rsplit(": ", 1)[1]) for td in rows[-1].select("td")]
    np.testing.assert_allclose(shown, last, atol=0.006)


def test_the_docs_page_types_no_numbers():
    text = (ROOT / "docs" / "forward-pass.md").read_text(encoding="utf-8")
    body = re.sub(r"\{\{.*?\}\}", "", text)  # macro calls
    body = body.replace("GPT-2", "GPT")  # the model's name is not a number
    assert re.findall(r"\d", body) == []


def test_found_heads_link_to_gallery_anchors(soup):
    ids = {a["id"] for a in soup.select("a.itm-head")}
    links = [a["href"] for a in soup.select(".itm-found a")]
    assert links, "the page points out no head"
    assert all(href.startswith("#") and href[1:] in ids for href in links)


def test_the_stand_ins_training_figure_is_there_with_its_numbers(built_site, soup):
    """The section exists for the stand-in; its figure is an SVG the page links, and the text
    gives the final induction score the record holds (not a typed number)."""
    curve = load_standin(ROOT).record["curve"]
    heading = soup.find(id="how-the-stand-in-learned-this")
    assert heading is not None
    img = heading.find_next("img")
    svg = (built_site / PAGE).parent / img["src"]
    assert svg.resolve().read_bytes().startswith(b"<?xml") and b"<svg" in svg.read_bytes()
    assert f"to {curve['induction'][-1]:.2f}" in img["alt"]
    assert f"over {curve['step'][-1]:,} steps" in img["alt"]


def test_meta_description_names_the_model_the_page_shows(soup, heads):
    """Search results and link previews must not promise GPT-2 while the page shows the stand-in."""
    description = soup.find("meta", attrs={"name": "description"})["content"]
    assert heads["source"] == "stand-in"
    assert "stand-in" in description and "GPT-2's blocks" not in description
