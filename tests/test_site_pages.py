"""Every component page, as built: reachable from the map, numbers equal to transformers' own
counts for every size, excerpts equal to the pinned lock, and no number typed into docs/."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import soupsieve
import yaml
from bs4 import BeautifulSoup

from generator.settings import Settings
from generator.sources.lock import load_lock
from generator.sources.resolve import resolve_all
from tests.site_helpers import ROOT, page_address

SIZES = {
    "GPT-2 small": "gpt2",
    "GPT-2 medium": "gpt2-medium",
    "GPT-2 large": "gpt2-large",
    "GPT-2 XL": "gpt2-xl",
}


def nav_pages() -> list[str]:
    """Every page of the site: the docs paths listed in mkdocs.yml's nav, then those it keeps out
    of the nav on purpose (`not_in_nav`, one path a line), which readers reach by links."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)
    nav = config["nav"]
    found: list[str] = []

    def walk(item: object) -> None:
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, list):
            for child in item:
                walk(child)
        elif isinstance(item, dict):
            for child in item.values():
                walk(child)

    walk(nav)
    for line in (config.get("not_in_nav") or "").splitlines():
        path = line.strip().removeprefix("/")
        if path:
            assert path.endswith(".md") and "*" not in path, f"not_in_nav: {line!r} is not a page"
            found.append(path)
    return found


def built_html(site: Path, docs_path: str) -> Path:
    return site / page_address(docs_path) / "index.html"


def soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def internal_links(site: Path, page: Path) -> set[Path]:
    """Built pages this page links to (inside article and the map), as files."""
    base = "/" + str(page.relative_to(site)).replace("\\", "/")
    targets = set()
    for a in soup(page).select("article a[href], .itm-map a[href]"):
        href = a["href"]
        if urlsplit(href).scheme or href.startswith("#"):
            continue
        path = urlsplit(urljoin(base, href)).path
        target = site / path.lstrip("/")
        if target.is_dir() or path.endswith("/"):
            target = target / "index.html"
        if target.suffix == ".html":
            targets.add(target)
    return targets


def test_every_nav_page_is_reachable_from_the_map(built_site: Path) -> None:
    home = built_site / "index.html"
    seen, frontier = {home}, [home]
    while frontier:
        page = frontier.pop()
        for target in internal_links(built_site, page):
            if target not in seen and target.exists():
                seen.add(target)
                frontier.append(target)
    missing = [p for p in nav_pages() if built_html(built_site, p) not in seen]
    assert missing == []


def test_no_two_pages_share_a_title(built_site: Path) -> None:
    """Each family has a "The whole model" and a "Token embedding": a browser tab, a bookmark or a
    search engine's result shows only the <title>, so a second family's pages name it there."""
    titles: dict[str, list[str]] = {}
    for page in nav_pages():
        tag = soup(built_html(built_site, page)).title
        assert tag is not None and tag.string, f"{page} has no <title>"
        titles.setdefault(tag.string.strip(), []).append(page)
    assert {title: pages for title, pages in titles.items() if len(pages) > 1} == {}
    assert "The whole model · Llama 2 and Mistral - Inside the Model" in titles
    # and so do the site's own search results: each page's entry (its headings' may repeat)
    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    searched: dict[str, list[str]] = {}
    for doc in index["docs"]:
        if "#" not in doc["location"]:
            searched.setdefault(doc["title"], []).append(doc["location"])
    assert {title: pages for title, pages in searched.items() if len(pages) > 1} == {}
    assert searched["The whole model · Llama 2 and Mistral"] == ["llama/model/"]


def test_every_internal_link_and_anchor_resolves(built_site: Path) -> None:
    """All hrefs in the built pages (raw HTML included, which MkDocs does not validate)."""
    ids: dict[Path, set[str]] = {}
    broken = []
    for page in built_site.rglob("*.html"):
        base = "/" + str(page.relative_to(built_site))
        for a in soup(page).select("a[href]"):
            parts = urlsplit(urljoin(base, a["href"]))
            if parts.scheme or parts.netloc:
                continue
            target = built_site / parts.path.lstrip("/")
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(built_site)} -> {a['href']}")
                continue
            if parts.fragment and target.suffix == ".html":
                if target not in ids:
                    ids[target] = {el["id"] for el in soup(target).select("[id]")}
                if parts.fragment not in ids[target]:
                    broken.append(f"{page.relative_to(built_site)} -> {a['href']} (no anchor)")
    assert broken == []


# -- numbers against transformers ------------------------------------------------------------


@pytest.fixture(scope="module")
def hf_models() -> dict[str, object]:
    """Transformers GPT-2 models of all four sizes on the meta device (no memory, no download)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from generator.config import CONFIGS

    models = {}
    for name in SIZES.values():
        cfg = CONFIGS[name]
        hf_config = transformers.GPT2Config(
            n_layer=cfg.n_layer,
            n_head=cfg.n_head,
            n_embd=cfg.d_model,
            n_positions=cfg.n_ctx,
            vocab_size=cfg.vocab_size,
        )
        with torch.device("meta"):
            models[name] = transformers.GPT2LMHeadModel(hf_config)
    return models


def numel(module) -> int:
    return sum(p.numel() for p in module.parameters())


def expected_counts(model) -> dict[str, tuple[int, int]]:
    """component page -> (per-instance parameters, instances) from the transformers modules."""
    t = model.transformer
    block = t.h[0]
    n_layer = len(t.h)
    return {
        "components/token-embedding": (numel(t.wte), 1),
        "components/position-embedding": (numel(t.wpe), 1),
        "components/layernorm": (numel(block.ln_1), 2 * n_layer),  # ln_1 and ln_2 per block
        "components/attention": (numel(block.attn), n_layer),
        "components/mlp": (numel(block.mlp), n_layer),
        "components/block": (numel(block), n_layer),
        "components/final-layernorm": (numel(t.ln_f), 1),
        "components/model": (numel(model), 1),  # parameters() counts the tied lm_head once
    }


def tab_blocks(container) -> dict[str, object]:
    """{tab label: its content block} for one Material tabbed set."""
    labels = [label.get_text().strip() for label in container.select(".tabbed-labels > label")]
    blocks = container.select(":scope > .tabbed-content > .tabbed-block")
    return dict(zip(labels, blocks, strict=True))


def number(text: str) -> int:
    return int(text.replace(",", "").strip())


def test_page_numbers_equal_transformers_numel_for_every_size(built_site: Path, hf_models) -> None:
    for name_label, name in SIZES.items():
        for page, (per, count) in expected_counts(hf_models[name]).items():
            html = soup(built_site / page / "index.html")
            shapes = tab_blocks(html.select_one(".itm-shapes .tabbed-set"))[name_label]
            shown = number(shapes.select_one('[data-q="params.per_instance"]').get_text())
            assert shown == per, (page, name)
            total = shapes.select_one('[data-q="params.total"], [data-q="params.page_total"]')
            assert (number(total.get_text()) if total else per) == per * count, (page, name)
            table_set = html.find("h2", id="parameters").find_next("div", class_="tabbed-set")
            table = tab_blocks(table_set)[name_label]
            assert number(table.select_one('[data-q="params.table_total"]').get_text()) == per


def test_whole_model_numbers_for_every_size(built_site: Path, hf_models) -> None:
    transformers = pytest.importorskip("transformers")
    html = soup(built_site / "components/model/index.html")
    numbers = tab_blocks(html.find("h2", id="numbers").find_next("div", class_="tabbed-set"))
    for label, name in SIZES.items():
        model = hf_models[name]
        untied_config = transformers.GPT2Config(
            **{**model.config.to_dict(), "tie_word_embeddings": False}
        )
        import torch

        with torch.device("meta"):
            untied = transformers.GPT2LMHeadModel(untied_config)
        block = numbers[label]
        assert number(block.select_one('[data-q="params.model"]').get_text()) == numel(model)
        assert number(block.select_one('[data-q="params.untied"]').get_text()) == numel(untied)
        embedding = numel(model.transformer.wte) + numel(model.transformer.wpe)
        assert number(block.select_one('[data-q="params.embedding"]').get_text()) == embedding


def test_unembedding_page_says_tied_and_adds_no_parameters(built_site: Path, hf_models) -> None:
    """Zero parameters, and the table the page promises: what an untied output matrix (an
    untied lm_head of transformers) would cost, for each size."""
    transformers = pytest.importorskip("transformers")
    import torch

    html = soup(built_site / "components/unembedding/index.html")
    shapes = html.select_one(".itm-shapes .tabbed-block")
    assert number(shapes.select_one('[data-q="params.per_instance"]').get_text()) == 0
    assert "ties the unembedding to the token embedding" in html.get_text()
    table_set = html.find("h2", id="parameters").find_next("div", class_="tabbed-set")
    for label, name in SIZES.items():
        config = hf_models[name].config.to_dict()
        with torch.device("meta"):
            untied = transformers.GPT2LMHeadModel(
                transformers.GPT2Config(**{**config, "tie_word_embeddings": False})
            )
        block = tab_blocks(table_set)[label]
        assert block.find("table") is not None, f"{label}: no table of the untied cost"
        cost = block.select_one('[data-q="params.untied"]')
        assert cost is not None and number(cost.get_text()) == numel(untied.lm_head), name


def test_the_sources_heading_counts_the_evidence_cards(built_site: Path) -> None:
    """As in the seed's "Sources 2": the count beside the heading is the cards below it."""
    pages = sorted((built_site / "components").glob("*/index.html"))
    pages += sorted(  # the family's component pages (its walkthrough is not one)
        p
        for p in (built_site / "llama").glob("*/index.html")
        if "\ncomponent:" in (ROOT / "docs" / "llama" / f"{p.parent.name}.md").read_text()
    )
    assert len(pages) >= 10
    for page in pages:
        html = soup(page)
        heading = html.find("h2", id="sources")
        assert heading is not None, page
        count = heading.select_one(".itm-count")
        assert count is not None, page
        cards = html.select(".itm-evidence")
        assert count.get_text(" ", strip=True).split()[0] == str(len(cards)), page


# -- excerpts against the lock ---------------------------------------------------------------


def test_every_code_block_is_a_pinned_excerpt(built_site: Path) -> None:
    """Each numbered block on a component page is one run of a lock excerpt, text and numbers."""
    from generator.render.code import fence_id

    excerpts = resolve_all(
        load_lock(ROOT / "sources" / "lock.toml"), cache_dir=ROOT / ".cache", offline=True
    )
    runs = {}
    for excerpt in excerpts.values():
        for first, text in excerpt.blocks:
            runs[fence_id("X", excerpt.id, first).removeprefix("X-")] = text.split("\n")[:-1]
    checked = 0
    for page in (built_site / "components").rglob("index.html"):
        for block in soup(page).select("div.highlight[id]"):
            matches = [key for key in runs if block["id"].endswith(f"-{key}")]
            assert matches, f"{page}: {block['id']} is not a pinned excerpt"
            rest = max(matches, key=len)
            code = block.select_one("td.code").get_text().rstrip("\n").split("\n")
            assert code == runs[rest][: len(code)], block["id"]
            assert all(not line.strip() for line in runs[rest][len(code) :]), block["id"]
            first = int(rest.rsplit("-", 1)[1])
            numbers = [int(n.get_text()) for n in block.select("td.linenos span.normal")]
            # Every line of the run has its number, a blank last line too (one was dropped:
            # a tab labelled 160–168 showed 160–167).
            assert numbers == list(range(first, first + len(runs[rest]))), block["id"]
            checked += 1
    assert checked > 20


def test_every_quote_links_its_evidence_and_sources_names_every_page_that_quotes_it(
    built_site: Path,
) -> None:
    """Wherever code is quoted (component pages, the walkthrough, generation), its caption links
    to its entry on the Sources page; and that entry's "Cited on" names exactly the pages whose
    HTML links to it, read from the built pages themselves."""
    sources = built_site / "sources" / "index.html"
    linked_from: dict[str, set[str]] = {}
    captions = 0
    for page in sorted(built_site.rglob("index.html")):
        if page == sources:
            continue
        base = "/" + str(page.relative_to(built_site))
        html = soup(page)
        for caption in html.select(".itm-code-caption"):
            evidence = [a for a in caption.select("a[href]") if "#ex-" in a["href"]]
            assert len(evidence) == 1, f"{base}: {caption.get_text()}"
            captions += 1
        for a in html.select("article a[href]"):
            parts = urlsplit(urljoin(base, a["href"]))
            if parts.path == "/sources/" and parts.fragment.startswith("ex-"):
                linked_from.setdefault(parts.fragment, set()).add(base)
    assert captions > 30
    cited_on: dict[str, set[str]] = {}
    for heading in soup(sources).select("h3[id^=ex-]"):
        item = next(
            li for li in heading.find_all_next("li") if li.get_text().startswith("Cited on:")
        )
        cited_on[heading["id"]] = {
            urljoin("/sources/index.html", a["href"]) + "index.html" for a in item.select("a")
        }
    assert set(linked_from) <= set(cited_on)
    for anchor, pages in cited_on.items():
        assert pages == linked_from.get(anchor, set()), anchor


# -- no typed numbers --------------------------------------------------------------------------


def computed_numbers() -> set[int]:
    """Every integer the engine and accounting can produce for the four sizes (≥ 10)."""
    from generator import accounting, scaling
    from generator.config import CONFIGS

    values: set[int] = set()
    for name in SIZES.values():
        cfg = CONFIGS[name]
        values |= {
            cfg.n_layer,
            cfg.n_head,
            cfg.d_model,
            cfg.n_ctx,
            cfg.vocab_size,
            cfg.d_head,
            cfg.d_mlp,
        }
        for component in accounting.COMPONENTS:
            rows = accounting.param_rows(cfg, component) + accounting.flop_rows(cfg, component)
            for row in rows:
                values.add(row.value)
                values |= {factor for term in row.terms for factor in term}
            values.add(accounting.params_total(cfg, component))
        values |= {v for v in scaling.model_summary(cfg).values() if isinstance(v, int)}
    return {v for v in values if v >= 10}


def test_docs_type_no_number_the_engine_computes() -> None:
    computed = computed_numbers()
    offenders = []
    for page in (ROOT / "docs").rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        text = re.sub(r"```.*?```", "", text, flags=re.S)  # fenced code is not prose
        text = re.sub(r"\{\{.*?\}\}", "", text, flags=re.S)  # macro calls are where numbers go
        for match in re.finditer(r"(?<![\w.])\d[\d,]*(?![\w])", text):
            value = int(match.group().replace(",", "").rstrip(",") or 0)
            if value in computed:
                offenders.append(f"{page.relative_to(ROOT)}: {match.group()}")
    assert offenders == []


def test_walkthrough_links_the_forward_pass_strongest_trained_heads(built_site: Path) -> None:
    """Seed 000 promises the real heads: the softmax step links the forward-pass page's
    strongest head of each kind, recomputed here from the forward pass's own attention."""
    from generator.forward import current
    from generator.forward.analysis import previous_token_score

    run = current(Settings.load(ROOT))
    blocks = run.trace.blocks
    heads = [
        (b, h) for b in range(len(blocks)) for h in range(blocks[b].attention["weights"].shape[0])
    ]
    layer, head = max(heads, key=lambda bh: previous_token_score(run.attention(*bh)))
    html = soup(built_site / "walkthrough/attention/index.html")
    links = [a["href"] for a in html.select("p.itm-wt__real a")]
    assert any(href.endswith(f"forward-pass/#head-{layer}-{head}") for href in links)


def test_go_deeper_does_not_repeat_the_footers_previous_and_next(built_site: Path) -> None:
    """Material's footer links each component page to its neighbours in the nav (forward order);
    the page's own "Go deeper" list adds other places, not those two again."""
    from generator.models import FAMILIES
    from generator.models.component import pages_in_order

    order = [c.page for c in pages_in_order(FAMILIES["gpt2"].registry)]
    for index, docs_path in enumerate(order):
        page = soup(built_html(built_site, docs_path))
        heading = page.find(id="go-deeper")
        assert heading is not None, docs_path
        listed = {a["href"] for a in heading.find_next("ul").find_all("a")}
        footer = {a["href"] for a in page.select("a.md-footer__link")}
        neighbours = {order[i] for i in (index - 1, index + 1) if 0 <= i < len(order)}
        for neighbour in neighbours:
            href = "../" + neighbour.removeprefix("components/").removesuffix(".md") + "/"
            assert href in footer, (docs_path, href)  # the footer has it
            assert href not in listed, (docs_path, href)  # so Go deeper does not


# Words that would point a reader at this project's internal design documents.
INTERNAL_DOCS = re.compile(r"\bseeds?\b|seed page|\(00\d\)|\b00\d_[0-9a-f]{16}\b", re.IGNORECASE)


def test_no_page_names_internal_design_documents(built_site: Path) -> None:
    """A reader cannot check a document they cannot see: pages, search index and evidence levels
    speak only of evidence a reader can fetch (upstream files, registry copies, release windows)."""
    found = []
    for path in sorted([*built_site.rglob("*.html"), *built_site.rglob("search_index.json")]):
        text = path.read_text(encoding="utf-8")
        found += [
            f"{path.relative_to(built_site)}: …{text[max(0, m.start() - 60) : m.end() + 20]}…"
            for m in INTERNAL_DOCS.finditer(text)
        ]
    assert not found, "\n".join(found[:10])


def test_layernorm_page_totals_ln_1_and_ln_2_and_every_latex_table_is_linked(
    built_site: Path, hf_models
) -> None:
    """The LayerNorm page covers ln_1 and ln_2: its total across blocks is both, as transformers
    counts them; each generated LaTeX table (parameters and FLOPs) is linked from a page."""
    import torch

    html = soup(built_site / "components/layernorm/index.html")
    table_set = html.find("h2", id="parameters").find_next("div", class_="tabbed-set")
    header = tab_blocks(html.select_one(".itm-shapes .tabbed-set"))
    for label, name in SIZES.items():
        model = hf_models[name]
        t = model.transformer
        expected = sum(numel(block.ln_1) + numel(block.ln_2) for block in t.h)
        shown = tab_blocks(table_set)[label].select_one('[data-q="params.page_total"]')
        assert shown is not None and number(shown.get_text()) == expected, name
        # The header says the same: both LayerNorms of every block (it once said ln_1's only).
        top = header[label].select_one('[data-q="params.page_total"]')
        assert top is not None and number(top.get_text()) == expected, name
        # Every LayerNorm module of the model, ln_f included.
        norms = [m for m in model.modules() if isinstance(m, torch.nn.LayerNorm)]
        whole = html.select('[data-q="params.model_count"]')
        counts = {b.find_parent("p").get_text(" ", strip=True).split(":")[0]: b for b in whole}
        shown_all = counts[f"In the whole of {label}"]
        assert number(shown_all.get_text()) == sum(numel(m) for m in norms), name
        assert f"so {len(norms)} LayerNorms" in shown_all.find_parent("p").get_text(), name
    tables = {p.relative_to(built_site).as_posix() for p in built_site.glob("tables/*.tex")}
    assert any("-flops-" in t for t in tables)
    linked = set()
    for page in built_site.rglob("index.html"):
        for a in soup(page).select('a[href$=".tex"]'):
            target = (page.parent / a["href"]).resolve()
            linked.add(target.relative_to(built_site.resolve()).as_posix())
    assert tables - linked == set()


def test_sources_cites_each_excerpt_by_its_software_heritage_id(built_site: Path) -> None:
    """An openai/gpt-2 excerpt (whose whole file the lock identifies) shows its SWHID, spelled out
    here from the lock, in its entry and in its plain, BibTeX and CSL-JSON citations; a
    transformers excerpt, whose file at the pin nobody read whole, says it has none yet."""
    import json

    lock = load_lock(ROOT / "sources" / "lock.toml")
    html = soup(built_site / "sources" / "index.html")
    for pin in lock.pins:
        heading = html.select_one(f"h3#ex-{''.join(c if c.isalnum() else '-' for c in pin.id)}")
        entry = []
        for sibling in heading.find_next_siblings():
            if sibling.name in ("h2", "h3"):
                break
            entry.append(sibling)
        item = next(
            li
            for part in entry
            for li in part.select("li")
            if li.get_text().startswith("Software Heritage id:")
        )
        file = lock.file_id(pin.repo, pin.path)
        if file is None:
            assert pin.repo == "huggingface/transformers", pin.id
            assert "not known yet" in item.get_text(), pin.id
            continue
        repo = lock.repos[pin.repo]
        first, last = pin.ranges[0][0], pin.ranges[-1][1]
        lines = f"{first}-{last}" if last != first else f"{first}"  # the standard's one line
        swhid = (
            f"swh:1:cnt:{file.sha1_git};origin={repo.url};anchor=swh:1:rev:{repo.commit}"
            f";path=/{pin.path};lines={lines}"
        )
        assert item.select_one("code").get_text() == swhid, pin.id
        plain, bibtex, csl = [pre.get_text() for part in entry for pre in part.select("pre")][-3:]
        assert plain.endswith(swhid) and f"swhid = {{{swhid}}}" in bibtex, pin.id
        (cited,) = json.loads(csl)
        assert cited["archive_location"] == swhid and cited["version"] == repo.commit, pin.id
        assert cited["note"] == f"excerpt sha256 {pin.sha256}", pin.id


def test_public_pages_speak_to_readers_not_to_maintainers(built_site: Path) -> None:
    """No page asks a reader to run a maintainer's command (itm verify …), set a build variable
    (ITM_…), open a path of the generator (generator/…) or the build's pins (sources/…toml),
    or read a lock id as link text (gpt2.attn); no evidence card or account of how an excerpt
    was checked lists registry package copies. What a reader can check is said in plain words."""
    lock = load_lock(ROOT / "sources" / "lock.toml")
    ids = {pin.id for pin in lock.pins}
    packages = {mirror.package for mirror in lock.mirrors}
    dev = re.compile(
        r"\bitm (verify|pin|bump|forward)\b|\bITM_[A-Z]|\bgenerator/|sources/\w+\.toml"
    )
    found = []
    for docs_path in nav_pages():
        html = soup(built_html(built_site, docs_path))
        article = html.find("article")
        for hidden in article.select(".itm-visually-hidden"):
            hidden.decompose()
        text = article.get_text(" ", strip=True)
        found += [f"{docs_path}: {m[0]!r}" for m in dev.finditer(text)]
        found += [
            f"{docs_path}: link text {a.get_text(strip=True)!r}"
            for a in article.find_all("a")
            if a.get_text(strip=True).strip("`") in ids
        ]
        found += [
            f"{docs_path}: heading {h.get_text(strip=True)!r}"
            for h in article.find_all(["h2", "h3"])
            if h.get_text(strip=True).removesuffix("¶").strip("`") in ids
        ]
        checked = article.select(".itm-evidence__status, .itm-code-caption, [id^='ev-']")
        checked += [li for li in article.select("li") if li.find(id=re.compile("^ev-"))]
        for element in checked:
            words = element.get_text(" ", strip=True)
            found += [
                f"{docs_path}: package {p} in {words[:60]!r}"
                for p in packages
                if re.search(rf"\b{re.escape(p)}(==| )\d", words)  # "gpt2-client 2.1.5"
            ]
        if docs_path != "sources.md":  # the one page about how excerpts are checked
            for card in article.select(".itm-evidence, .itm-code-caption, [id^='ev-']"):
                card.decompose()  # a card says exactly which releases were checked (issue 34)
            prose = article.get_text(" ", strip=True)
            found += [
                f"{docs_path}: registry copies in {m[0]!r}"
                for m in re.finditer(r".{0,40}\b(PyPI|a build without GitHub)\b.{0,40}", prose)
            ]  # the Generation page explained which PyPI copies had which lines
    assert found == [], "\n".join(found[:20])
    cards = soup(built_site / "components/attention/index.html").select(".itm-evidence__status")
    assert cards and all("open the pinned revision" in c.get_text() for c in cards)


# -- evidence says what was checked, never more ------------------------------------------------

# The releases a card names: "from 5.6.2 to 5.14.1", "release 5.14.1", "releases 5.13.0 and 5.14.1"
NAMED_WINDOW = re.compile(r"from (\d[\w.]*) to (\d[\w.]*)")
NAMED_EXCEPT = re.compile(r"except ((?:\d[\w.]*(?:, | and )?)+)")


def claimed_windows(words: str) -> tuple[set[tuple[str, str]], set[str]]:
    """(windows of releases, releases excepted) that a card's words say carry the lines."""
    excepted = {v for m in NAMED_EXCEPT.finditer(words) for v in re.findall(r"\d[\w.]*\w", m[1])}
    return set(NAMED_WINDOW.findall(words)), excepted


def check_evidence_words(pin, words: str, where: str) -> list[str]:
    """What is wrong with one card's account of how `pin` was checked: a release window other
    than (so possibly wider than) its lock entry's carried_by, an exception left out, or words
    that claim every release around the commit."""
    if re.search(r"around the pinned commit|every release of the package", words, re.I):
        return [f"{where}: {pin.id} claims every release around the commit: {words[:160]!r}"]
    windows, excepted = claimed_windows(words)
    if pin.evidence_level != "mirror-window":
        return [f"{where}: {pin.id} names releases: {words[:160]!r}"] if windows else []
    carried = pin.carried_by
    lock_windows = {w for w in carried.releases if w[0] != w[1]}
    if windows != lock_windows or excepted != set(carried.excepted):
        return [
            f"{where}: {pin.id} names releases {sorted(windows)} except {sorted(excepted)}; its"
            f" lock entry: {sorted(lock_windows)} except {sorted(carried.excepted)}"
        ]
    return []


def test_no_evidence_card_claims_a_release_window_wider_than_its_lock_entry(
    built_site: Path,
) -> None:
    """Every account of how an excerpt was checked that readers see (each page's "Direct
    evidence" cards; the Sources page's accounts, which every Code tab links to) names exactly
    the releases its lock entry's carried_by names, with its exceptions: never "every release
    around the pinned commit" where 5.15.0 changed the lines or only 2 releases carry them."""
    lock = load_lock(ROOT / "sources" / "lock.toml")
    by_anchor = {"ex-" + re.sub(r"[^A-Za-z0-9]", "-", pin.id): pin for pin in lock.pins}
    by_span: dict[tuple[str, str], list] = {}
    for pin in lock.pins:
        first, last = pin.ranges[0][0], pin.ranges[-1][1]
        anchor = f"L{first}" + (f"-L{last}" if last != first else "")
        by_span.setdefault((pin.path, anchor), []).append(pin)
    found: list[str] = []
    sources = soup(built_site / "sources" / "index.html")
    accounts = {span["id"]: span.find_parent("li").get_text(" ", strip=True)
                for span in sources.select("span[id^=ev-]")}  # fmt: skip
    for heading in sources.select("h3[id^=ex-]"):
        pin = by_anchor[heading["id"]]
        link = next(a for a in heading.find_all_next("a") if a["href"].startswith("#ev-"))
        found += check_evidence_words(pin, accounts[link["href"][1:]], "sources")
    cards = 0
    for page in sorted(built_site.rglob("index.html")):
        for card in soup(page).select(".itm-evidence"):
            permalink = card.select_one(".itm-evidence__pin a")["href"]
            path, anchor = permalink.split("/blob/", 1)[1].split("/", 1)[1].split("#")
            words = card.select_one(".itm-evidence__status").get_text(" ", strip=True)
            for pin in by_span[(path, anchor)]:
                found += check_evidence_words(pin, words, str(page.relative_to(built_site)))
            cards += 1
    assert len(by_anchor) == len(lock.pins) and cards > 30
    assert found == [], "\n".join(found[:20])


PROSE_SKIP = (
    "a:not(.itm-term), code, pre, h1, h2, h3, h4, h5, h6, button, label, caption, th, dt, summary, svg, "
    ".arithmatex, .katex, .itm-map, .itm-wt-grid, nav, figcaption, cite, abbr, kbd, select"
)


def prose_uses(article, pattern: re.Pattern[str]):
    """The text nodes of paragraphs and list items outside links, code, headings and math that
    use `pattern`, in page order."""
    for text in article.find_all(string=pattern):
        if text.find_parent(["p", "li", "dd"]) and not any(
            soupsieve.match(PROSE_SKIP, parent)
            for parent in [text.parent, *text.parent.parents]
            if parent.name not in (None, "[document]")
        ):
            yield text


def test_every_term_is_defined_in_notation_and_linked_where_a_page_first_uses_it(
    built_site: Path,
) -> None:
    """GEMM, matmul, SiLU, FLOP and the other words of the trade have a definition of their own on
    the Notation page (#term-…); on every other page the first use of each in prose links to it.
    A learner met them unexplained ("the prose leans on jargon")."""
    from generator.glossary import TERMS

    notation = soup(built_site / "glossary" / "index.html")
    for term in TERMS:
        heading = notation.select_one(f"h3#term-{term.anchor}")
        assert heading is not None, term.anchor
        definition = heading.find_next_sibling("p")
        assert definition is not None and len(definition.get_text().split()) >= 8, term.anchor
    linked = 0
    for docs_path in nav_pages():
        if docs_path == "glossary.md":
            continue
        article = soup(built_site / page_address(docs_path) / "index.html").select_one("article")
        for term in TERMS:
            pattern = re.compile(term.pattern)
            links = article.select(f'a.itm-term[href$="#term-{term.anchor}"]')
            uses = list(prose_uses(article, pattern))
            if not uses:
                assert not links, (docs_path, term.anchor)
                continue
            assert len(links) == 1, (docs_path, term.anchor, len(links))
            assert uses[0].parent is links[0], (docs_path, term.anchor, str(uses[0])[:80])
            href = links[0]["href"]
            assert urlsplit(href).path.rstrip("/").endswith("glossary"), href
            linked += 1
    assert linked > 20


def test_one_symbol_per_quantity_on_every_page(built_site: Path) -> None:
    """The MLP's hidden width is d_ff everywhere (pages said d_mlp too) and RoPE's base is b
    (pages wrote it θ, the letter of the rates θ_i it makes)."""
    for docs_path in nav_pages():
        article = soup(built_site / page_address(docs_path) / "index.html").select_one("article")
        for skipped in article.select("pre, code, .highlight, .itm-evidence details"):
            skipped.decompose()
        text = article.get_text(" ")
        assert "d_mlp" not in text, docs_path
        tex = " ".join(a.get_text() for a in article.select("annotation"))
        assert not re.search(r"\\theta\s*\^", tex), docs_path  # a base written θ
        assert "base θ" not in text and "θ = rope_theta" not in text, docs_path
