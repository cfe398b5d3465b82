"""The walkthrough's grids as blocks: a token's text reaches every place of a grid escaped, and a
site's override of the token chip's template changes the chip inside every grid that nests it."""

from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup

from generator import blocks
from generator.walkthrough import grids
from generator.walkthrough.code import engine_excerpt
from generator.walkthrough.data import widget_data
from generator.walkthrough.toy import toy_attention
from tests.site_helpers import ROOT

HOSTILE = '<img src=x onerror="alert(1)">&amp;'


def hostile_data() -> dict:
    """The page's data with a first token that is markup."""
    engine = engine_excerpt(ROOT)
    data = widget_data(toy_attention(), engine.steps, engine.block_id)
    return {**data, "tokens": [HOSTILE, *data["tokens"][1:]]}


def test_a_token_reaches_a_grid_as_text_in_its_row_column_and_labels() -> None:
    data = hostile_data()
    # the weighted sum has a colour column; the weights have a column per (key) token
    html = "".join(blocks.render(grids.grid(data, key, 0)) for key in ("heads", "weights"))
    soup = BeautifulSoup(html, "html.parser")
    assert soup.find("img") is None and "<img" not in html
    heads, weights = soup.select("table.itm-wt-grid")
    assert heads.select_one('tbody tr[data-row="0"] .itm-wt-tok').get_text() == HOSTILE
    swatch = heads.select_one('tbody tr[data-row="0"] .itm-wt-blend [role="img"]')
    assert swatch["aria-label"] == f"colour blend of row {HOSTILE}"
    column = weights.select("thead th")[0]
    assert column.get_text() == HOSTILE and column["aria-label"] == f"key token {HOSTILE}"
    first = weights.select_one('tbody tr[data-row="0"] td')
    assert first["aria-label"].startswith(f"row {HOSTILE}, key token {HOSTILE}: ")


def test_an_override_of_the_token_chip_changes_it_inside_the_grid(tmp_path: Path) -> None:
    (tmp_path / "itm").mkdir()
    (tmp_path / "itm" / "walkthrough_token.html").write_text("<b class=mine>{{ text }}</b>")
    grid = grids.grid(hostile_data(), "q", 0)
    html = blocks.render(grid, tmp_path)
    assert (
        '<th scope="row"><b class=mine>&lt;img src=x onerror=&#34;alert(1)&#34;&gt;&amp;amp;</b>'
        in html
    )
    assert "itm-wt-tok" not in html and "itm-wt-tok" in blocks.render(grid)
