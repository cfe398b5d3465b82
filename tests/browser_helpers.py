"""Shared by the browser tests: open a page that records what went wrong and what it fetched,
and pick out the requests that left the site."""

from __future__ import annotations

from urllib.parse import urlsplit

# site.js typesets on Material's document$; on a loaded machine that can trail networkidle.
TYPESET = "[...document.querySelectorAll('.arithmatex')].every(el => el.dataset.typeset)"
# A walkthrough has drawn its first view (or kept the static page).
WIDGETS = "[...document.querySelectorAll('.itm-wt[data-src]')].every(w => /ready|failed/.test(w.dataset.wtReady))"
# The page's own scripts are done: formulas typeset, fonts in (they widen what scrolls, and
# site.js marks scrollers again then, and says so on the root element), walkthroughs drawn.
SETTLED = f"document.documentElement.dataset.itmReady === '1' && {TYPESET} && {WIDGETS}"


def recorded(context, url: str, *, wait: str | None = None, scripts: bool = True):
    """(page, record): a fresh page in `context` opened at url, every formula typeset (unless
    the context runs no scripts), then `wait` (a selector) attached if given. record holds
    console and page errors ("errors") and every request's URL ("requests")."""
    page = context.new_page()
    record: dict[str, list] = {"errors": [], "requests": []}
    page.on("console", lambda m: m.type == "error" and record["errors"].append(m.text))
    page.on("pageerror", lambda e: record["errors"].append(str(e)))
    page.on("request", lambda r: record["requests"].append(r.url))
    page.goto(url, wait_until="networkidle")
    if scripts:
        page.wait_for_function(TYPESET)
    if wait:
        page.wait_for_selector(wait, state="attached")
    return page, record


def open_page(browser, url: str):
    """recorded() in a browser context of its own."""
    return recorded(browser.new_context(), url)


def off_site(requests: list[str], site_url: str) -> list[str]:
    """The requests to any origin other than the site's own."""
    origin = urlsplit(site_url).netloc
    return [
        u
        for u in requests
        if urlsplit(u).scheme in ("http", "https", "ws", "wss") and urlsplit(u).netloc != origin
    ]
