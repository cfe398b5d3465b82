"""What the site ships: only files a reader's browser loads, and a Sources page that stays small
while keeping every excerpt and citation (issue: page weight)."""

from __future__ import annotations

import html
import re
from pathlib import Path

from generator.render.cite import citation_key
from generator.sources.lock import load_lock
from generator.sources.resolve import resolve_all
from tests.site_helpers import ROOT

# bytes of HTML for /sources/: 78 excerpts take 229 KB (29.4 KB gzipped) without Software
# Heritage ids and CSL-JSON items, 312 KB (32.8 KB gzipped) with them (each id in its entry and in
# its plain, BibTeX and CSL-JSON citations); about 4 KB more for each excerpt pinned from here:
# 100 excerpts (the frontier families' 22 added) take 408 KB (44.7 KB gzipped)
SOURCES_BUDGET = 450_000


def test_no_source_maps_and_no_unused_search_languages(built_site: Path) -> None:
    maps = sorted(str(p.relative_to(built_site)) for p in built_site.rglob("*.map"))
    assert maps == []
    # The site's search language is English, for which Material's worker imports no lunr script.
    lunr = built_site / "assets" / "javascripts" / "lunr"
    assert not lunr.exists() or sorted(p.name for p in lunr.rglob("*") if p.is_file()) == []
    # Nothing the pages reference went missing with them.
    worker = next((built_site / "assets" / "javascripts" / "workers").glob("search.*.min.js"))
    assert worker.exists()


def test_search_language_rule_follows_materials_worker() -> None:
    """The files kept for a language are those Material's own worker imports for it."""
    from generator.assets import search_language_files

    assert search_language_files(["en"]) == set()
    de = search_language_files(["de"])
    assert {p.rsplit("/", 1)[1] for p in de} == {"lunr.de.min.js", "lunr.stemmer.support.min.js"}
    ja_en = {p.rsplit("/", 1)[1] for p in search_language_files(["en", "ja"])}
    assert ja_en == {
        "lunr.ja.min.js",
        "tinyseg.js",
        "lunr.multi.min.js",
        "lunr.stemmer.support.min.js",
    }


def test_sources_page_is_small_and_keeps_every_excerpt_and_citation(built_site: Path) -> None:
    page = built_site / "sources" / "index.html"
    text = page.read_text(encoding="utf-8")
    assert len(text.encode()) < SOURCES_BUDGET, f"{len(text.encode()):,} bytes"
    excerpts = resolve_all(
        load_lock(ROOT / "sources" / "lock.toml"), cache_dir=ROOT / ".cache", offline=True
    )
    plain = html.unescape(re.sub(r"<[^>]+>", "", text))
    for ex in excerpts.values():
        for first, code in ex.blocks:
            for offset, line in enumerate(code.split("\n")[:-1]):
                assert line in plain, f"{ex.id} line {first + offset} is missing"
        assert ex.sha256 in text, f"{ex.id}: no sha256"
        assert ex.permalink in html.unescape(text), f"{ex.id}: no permalink"
        assert "@misc{" in plain and f"-{ex.id.replace('.', '-')}," in plain, f"{ex.id}: BibTeX"
        assert f'"id": "{citation_key(ex)}"' in plain, f"{ex.id}: CSL-JSON"


def test_every_line_of_the_cost_plot_has_a_legend_entry() -> None:
    """The red dashed crossover line is named in the legend, like the three cost curves."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from generator import charts
    from generator.config import CONFIGS

    captured = []
    original = plt.Figure.savefig

    def keep(fig, *args, **kwargs):
        captured.append(fig)
        return original(fig, *args, **kwargs)

    plt.Figure.savefig = keep  # type: ignore[method-assign]
    try:
        charts.flops_context_figure(CONFIGS["gpt2"])
    finally:
        plt.Figure.savefig = original  # type: ignore[method-assign]
    (ax,) = captured[0].axes
    lines = [line for line in ax.get_lines() if line.get_linestyle() != "None"]
    named = {t.get_text() for t in ax.get_legend().get_texts()}
    assert len(named) == len(lines), (named, [line.get_label() for line in lines])
    assert named == {line.get_label() for line in lines}
    dashed = [line for line in lines if line.get_linestyle() == "--"]
    assert len(dashed) == 1 and "passes projections" in dashed[0].get_label()
