"""Page weight and time to interactive of every page, in detail for the walkthrough and the
attention component page (a report, not a test).

    .venv/bin/python bench/bench_pages.py [--runs 5]
    .venv/bin/python bench/bench_pages.py --site before=DIR --site after=DIR --port 8765
        (sites already built for http://127.0.0.1:PORT/, measured one after the other, one run)

1. Builds the site into a temporary directory with `mkdocs build`, for the address it is then
   served at (SITE_URL: Material's instant navigation follows only links in sitemap.xml).
2. Page weight: the page's HTML plus every page-specific file it requests (its own JS, CSS,
   JSON, SVG), raw and gzip -9, read from the built site. Files every page shares (Material's
   bundle, KaTeX and its fonts, site.css/site.js, the search index) are listed separately.
3. Time to interactive in headless Chromium, each run in a fresh browser context (cold cache):
   - walkthrough: navigation start to the widget being ready (its JSON fetched, grids drawn);
   - component page: navigation start to KaTeX having typeset every formula;
   and, for the walkthrough, the same after instant navigation from the home page (click to ready).
   Reported as the median and the range over the runs, with DOMContentLoaded for reference.
4. Every page of the site (each index.html), loaded cold: what it transfers (its own files and
   the shared ones, gzip -9) and when its last formula is typeset, one row each.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.site_helpers import (  # noqa: E402
    CHROMIUM_FLAGS,
    build_env,
    chromium_path,
    free_port,
    serve,
)

PAGES = {
    "walkthrough/attention/": "walkthrough",
    "components/attention/": "component",
}
SHARED = (
    "/assets/javascripts/",
    "/assets/stylesheets/",
    "/assets/images/",
    "/assets/katex/",
    "/assets/site.",
    "/search/",
    "/sitemap.xml",
)
READY = {
    # performance.now() when the page is usable, polled by wait_for_function
    "walkthrough": "(() => { const r = document.querySelector('.itm-wt'); "
    "return r && r.dataset.wtReady === 'ready' ? Number(r.dataset.wtReadyAt) : null; })()",
    "component": "(() => { const m = document.querySelectorAll('.arithmatex'); "
    "return m.length && Array.from(m).every(e => e.dataset.typeset) ? performance.now() : null; })()",
}
MATH = READY["component"]  # every formula typeset (at build time, or by a script on load)
# Any page: its formulas typeset and the fonts they are drawn in loaded (math typeset at build
# time is in the HTML; KaTeX's fonts are what a reader still waits for). [time, formulas]
MATH_DRAWN = (
    "(() => { const m = document.querySelectorAll('.arithmatex'); "
    "return Array.from(m).every(e => e.dataset.typeset) && document.fonts.status === 'loaded'"
    " ? [performance.now(), m.length] : null; })()"
)


def build(site_dir: Path, site_url: str) -> None:
    mkdocs = Path(sys.executable).with_name("mkdocs")
    subprocess.run(
        [str(mkdocs), "build", "--quiet", "--site-dir", str(site_dir)],
        cwd=ROOT,
        env=build_env(SITE_URL=site_url),
        check=True,
    )


def gz(data: bytes) -> int:
    return len(gzip.compress(data, compresslevel=9, mtime=0))


def local_file(site: Path, url: str) -> Path | None:
    path = urlsplit(url).path
    target = site / path.lstrip("/")
    if path.endswith("/"):
        target = target / "index.html"
    return target if target.is_file() else None


def weigh(site: Path, requests: list[str]) -> tuple[list[tuple[str, int, int]], list[tuple]]:
    """(page-specific files, shared files) as (site path, raw bytes, gzip bytes), deduplicated."""
    own, shared, seen = [], [], set()
    for url in requests:
        target = local_file(site, url)
        if target is None or target in seen:
            continue
        seen.add(target)
        data = target.read_bytes()
        row = (str(target.relative_to(site)), len(data), gz(data))
        (shared if any(part in "/" + row[0] for part in SHARED) else own).append(row)
    return own, shared


def kb(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


def measure(browser, url: str, kind: str) -> dict:
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url, wait_until="load")
    ready = page.wait_for_function(READY[kind], timeout=30_000).json_value()
    math = page.wait_for_function(MATH, timeout=30_000).json_value()
    dcl = page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd")
    page.wait_for_load_state("networkidle")
    context.close()
    return {"ready": ready, "math": math, "dcl": dcl, "requests": requests}


def measure_instant(browser, home: str) -> tuple[float, bool]:
    """Milliseconds (wall clock) from clicking the nav link on the home page to the widget being
    ready, and whether the click was an instant navigation (no new document)."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(home, wait_until="networkidle")
    page.evaluate("window.benchSameDocument = true")
    start = time.perf_counter()
    page.click('nav a.md-nav__link[href$="walkthrough/attention/"]')
    page.wait_for_function(READY["walkthrough"], timeout=30_000)
    elapsed = (time.perf_counter() - start) * 1000
    instant = page.evaluate("window.benchSameDocument === true")
    context.close()
    return elapsed, instant


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} ms (range {min(values):.0f}–{max(values):.0f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--site", action="append", default=[], help="LABEL=DIR, a built site")
    parser.add_argument("--port", type=int, default=0, help="the port the --site builds are for")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    if args.site:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_FLAGS
            )
            for item in args.site:
                label, directory = item.split("=", 1)
                site = Path(directory)
                size = sum(f.stat().st_size for f in site.rglob("*") if f.is_file())
                print(f"\n######## {label}: {site} ({size / 1e6:.2f} MB)")
                with serve(site, args.port) as base:
                    report(browser, site, base, args.runs)
            browser.close()
        return 0
    port = free_port()
    with tempfile.TemporaryDirectory() as scratch:
        site = Path(scratch) / "site"
        print(f"building the site into {site} ...")
        build(site, f"http://127.0.0.1:{port}/")
        with serve(site, port) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_FLAGS
            )
            report(browser, site, base, args.runs)
            browser.close()
    return 0


def every_page(site: Path) -> list[str]:
    """The site path of every page (each folder's index.html), the home page first."""
    pages = sorted(p.parent.relative_to(site).as_posix() for p in site.rglob("index.html"))
    return [("" if p == "." else p + "/") for p in pages]


def measure_math(browser, url: str) -> dict:
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url, wait_until="load")
    math, formulas = page.wait_for_function(MATH_DRAWN, timeout=30_000).json_value()
    dcl = page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd")
    page.wait_for_load_state("networkidle")
    context.close()
    return {"math": math, "formulas": formulas, "dcl": dcl, "requests": requests}


def report_every_page(browser, site: Path, base: str, runs: int) -> None:
    print(f"\n== every page, cold (medians of {runs}); math drawn: typeset and its fonts loaded")
    print(f"{'page':<34} {'own gzip':>10} {'transferred':>12} {'math drawn':>20} {'DCL':>8}")
    totals = []
    for path in every_page(site):
        results = [measure_math(browser, base + path) for _ in range(runs)]
        own, shared = weigh(site, results[0]["requests"])
        own_gz, all_gz = sum(r[2] for r in own), sum(r[2] for r in own + shared)
        totals.append(all_gz)
        formulas = results[0]["formulas"]
        math = f"{statistics.median(r['math'] for r in results):.0f} ms ({formulas})"
        shown = math if formulas else "no math"
        dcl = statistics.median(r["dcl"] for r in results)
        print(f"{path or '/':<34} {kb(own_gz):>10} {kb(all_gz):>12} {shown:>20} {dcl:>5.0f} ms")
    print(f"{len(totals)} pages; the heaviest transfers {kb(max(totals))} on a cold load")


def report(browser, site: Path, base: str, runs: int) -> None:
    report_every_page(browser, site, base, runs)
    shared_seen: dict[str, tuple] = {}
    for path, kind in PAGES.items():
        results = [measure(browser, base + path, kind) for _ in range(runs)]
        own, shared = weigh(site, results[0]["requests"])
        for row in shared:
            shared_seen[row[0]] = row
        print(f"\n== {path} ({kind})")
        print(f"{'page-specific file':<48} {'raw':>11} {'gzip -9':>11}")
        for name, raw, packed in own:
            print(f"{name:<48} {kb(raw):>11} {kb(packed):>11}")
        total_raw, total_gz = sum(r[1] for r in own), sum(r[2] for r in own)
        print(f"{'page weight (page-specific total)':<48} {kb(total_raw):>11} {kb(total_gz):>11}")
        total_gz = sum(r[2] for r in own + shared)
        print(f"transferred on a cold load (page + shared, gzip -9): {kb(total_gz)}")
        print(f"time to interactive: {spread([r['ready'] for r in results])}")
        print(f"all math typeset:    {spread([r['math'] for r in results])}")
        print(f"DOMContentLoaded:    {spread([r['dcl'] for r in results])}")
        if kind == "walkthrough":
            instant = [measure_instant(browser, base) for _ in range(runs)]
            same = sum(1 for _, was_instant in instant if was_instant)
            print(
                f"from the home page's nav link, click to ready: {spread([t for t, _ in instant])}"
                f" ({same} of {runs} clicks were instant navigations)"
            )
    print("\n== shared by every page (cached after the first page)")
    for name, raw, packed in sorted(shared_seen.values()):
        print(f"{name:<48} {kb(raw):>11} {kb(packed):>11}")
    total_raw = sum(r[1] for r in shared_seen.values())
    total_gz = sum(r[2] for r in shared_seen.values())
    print(f"{'shared total':<48} {kb(total_raw):>11} {kb(total_gz):>11}")


if __name__ == "__main__":
    raise SystemExit(main())
