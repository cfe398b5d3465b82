"""The attention component page, built with the standard `mkdocs build`, against independent truth:
seed 003's printed excerpts and a transformers GPT2Attention's parameters."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from tests.site_helpers import ROOT, SEEDS, seed_code_sections

SEED_003 = SEEDS / "003_eae0eb8e5315b14b.txt"
PAGE = "components/attention/index.html"


def soup_of(site: Path, page: str = PAGE) -> BeautifulSoup:
    return BeautifulSoup((site / page).read_text(encoding="utf-8"), "html.parser")


def fence_lines(soup: BeautifulSoup, prefix: str) -> dict[int, list[str]]:
    """{first upstream line number: code lines} for every numbered fence whose id starts with prefix."""
    fences = {}
    for block in soup.select(f'div.highlight[id^="{prefix}-"]'):
        first = int(block["id"].rsplit("-", 1)[1])
        code = block.select_one("td.code") or block
        fences[first] = code.get_text().rstrip("\n").split("\n")
        numbers = [int(n.get_text()) for n in block.select("td.linenos span.normal")]
        if numbers:  # the line numbers shown are the upstream ones
            assert numbers == list(range(first, first + len(fences[first]))), block["id"]
    return fences


def test_code_tabs_equal_seed_excerpts_line_for_line(built_site: Path) -> None:
    if not SEED_003.exists():
        pytest.skip(f"seed 003 not found at {SEED_003} (../shared is absent)")
    seed = seed_code_sections(SEED_003.read_text(encoding="utf-8"))
    assert set(seed) == {"model.py 69–112", "modeling_gpt2.py 185–191", "modeling_gpt2.py 204–224"}
    fences = fence_lines(soup_of(built_site), "code")
    for label, seed_lines in seed.items():
        first = int(re.search(r"(\d+)–", label).group(1))
        assert first in fences, f"no code block starting at line {first} for {label}"
        assert fences[first] == seed_lines, f"{label} differs from seed 003"


def test_multi_range_excerpt_marks_the_omitted_lines(built_site: Path) -> None:
    soup = soup_of(built_site)
    markers = [p.get_text() for p in soup.select("p.itm-omitted")]
    assert "… lines 192–203 omitted …" in markers


def test_evidence_cards_link_pinned_revisions(built_site: Path) -> None:
    soup = soup_of(built_site)
    cards = soup.select("div.itm-evidence")
    assert len(cards) == 2
    links = [a["href"] for card in cards for a in card.select("p.itm-evidence__pin a")]
    assert (
        "https://github.com/openai/gpt-2/blob/9b63575ef42771a015060c964af2c3da4cf7c8ab/src/model.py#L69-L112"
        in links
    )
    assert any(
        href.startswith(
            "https://github.com/huggingface/transformers/blob/71c6f699ac9b3f8fc42a6a3e9dc59034c349a678/"
            "src/transformers/models/gpt2/modeling_gpt2.py#L185-L224"
        )
        for href in links
    )
    # Each card's expandable excerpt is the same pinned text as the Code tab.
    assert fence_lines(soup, "src") == fence_lines(soup, "code")


def test_call_site_is_model_py_line_126_tagged_learned(built_site: Path) -> None:
    soup = soup_of(built_site)
    call = soup.select_one("p.itm-callsite")
    assert call.select_one(".itm-tag").get_text() == "learned"
    assert "attn(norm(x, 'ln_1'), 'attn', nx, past=past, hparams=hparams)" in call.code.get_text()
    assert call.select_one("a")["href"].endswith("/src/model.py#L126")


def test_sections_follow_seed_003_order(built_site: Path) -> None:
    soup = soup_of(built_site)
    article = soup.select_one("article")
    order = [
        article.select_one(".itm-kicker"),
        article.select_one("h1"),
        article.select_one(".itm-callsite"),
        article.select_one(".itm-role"),
        article.select_one(".arithmatex"),
        article.select_one(".itm-shapes"),
        article.find("h2", id="parameters"),
        article.find("h2", id="code"),
        article.find("h2", id="sources"),
    ]
    assert all(order), [i for i, el in enumerate(order) if el is None]
    positions = [el.sourceline * 10_000 + el.sourcepos for el in order]
    assert positions == sorted(positions)
    assert order[1].get_text().strip().startswith("Masked multi-head self-attention")
    formula = order[4].get_text()
    assert r"\htmlData{light=attention}" in formula and r"\htmlData{light=ln1}" in formula


def _number(text: str) -> int:
    return int(text.replace(",", "").strip())


def test_parameter_figures_equal_transformers_gpt2_attention(built_site: Path) -> None:
    """GPT-2 small tab numbers against a GPT2Attention built from GPT2Config() (random init)."""
    transformers = pytest.importorskip("transformers")
    attention = transformers.models.gpt2.modeling_gpt2.GPT2Attention(transformers.GPT2Config())
    per_instance = sum(p.numel() for p in attention.parameters())
    n_layer = transformers.GPT2Config().n_layer
    by_module = {
        name: sum(p.numel() for p in module.parameters())
        for name, module in (("c_attn", attention.c_attn), ("c_proj", attention.c_proj))
    }

    soup = soup_of(built_site)
    shapes = soup.select_one(".itm-shapes .tabbed-block")  # first tab: GPT-2 small
    assert _number(shapes.select_one('[data-q="params.per_instance"]').get_text()) == per_instance
    assert (
        _number(shapes.select_one('[data-q="params.total"]').get_text()) == per_instance * n_layer
    )

    parameters = soup.find("h2", id="parameters").find_next("div", class_="tabbed-set")
    small = parameters.select_one(".tabbed-block")
    rows = [[td.get_text().strip() for td in tr.select("td")] for tr in small.select("tbody tr")]
    values = [_number(row[-1]) for row in rows]
    assert values[:-1] == [by_module["c_attn"], by_module["c_proj"]]
    assert values[-1] == per_instance
    tex = "{:,}".format
    across = f"{tex(per_instance)} \\times {n_layer} = {tex(per_instance * n_layer)}"
    assert across.replace(",", "{,}") in small.get_text()


def test_every_quoted_excerpt_is_cited_with_its_evidence_level(built_site: Path) -> None:
    """Each excerpt whose code the page shows (Code tabs, Where they differ) is listed under
    Go deeper's pinned sources, and its code caption names its evidence level."""
    from generator.sources.lock import load_lock

    pins = {pin.id: pin for pin in load_lock(ROOT / "sources" / "lock.toml").pins}
    html = BeautifulSoup(
        (built_site / "components/attention/index.html").read_text(encoding="utf-8"),
        "html.parser",
    )
    quoted = set()
    for block in html.select("div.highlight[id]"):
        if block["id"].startswith(("code-", "diff-")):
            quoted |= {
                i
                for i in pins
                if re.search(rf"-{re.escape(i.replace('.', '-'))}-\d+$", block["id"])
            }
    assert len(quoted) >= 4, quoted
    deeper = html.find(id="go-deeper").find_next("ul")
    cited = {a["href"].split("#ex-", 1)[1] for a in deeper.select("a[href*='sources/#ex-']")}
    assert {i for i in quoted if i.replace(".", "-") not in cited} == set()
    for caption in html.select(".itm-code-caption"):
        assert "evidence: " in caption.get_text(), caption.get_text()
