"""Every page of the site in one browser pass per setup (width, colour scheme, JavaScript on or
off), two pages at a time.

The whole-site checks (axe-core with every rule, console errors, off-site requests, KaTeX
errors, the dark scheme, a phone's width) each used to load every page on their own; most of
their time is the page load and axe's colour-contrast rule, which runs in the page's renderer
process. Here each page loads once per setup and two renderers work at once, on Playwright's
async API in a thread of its own (the session's sync browser keeps the main one).

    problems = sweep(site_url, pages, width=375, scheme="dark", args=chromium_args())
    problems = sweep(site_url, pages, width=375, scheme="dark", args=..., scripts=False)
    assert problems == []

JavaScript off is the page's own scripts refused by a Content-Security-Policy (`script-src
'none'`): the browser's switch for it would stop axe too, which the test injects and runs through
the DevTools protocol, where the policy does not reach. The page is then what such a reader gets:
the HTML and CSS alone (the site has no <noscript> nor `scripting` media query, the two things
that would tell the cases apart). Without scripts Material cannot follow a dark preference, so the
page must show its light scheme.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from tests.axe_helpers import AXE_RUN, axe_arguments, axe_source, violations
from tests.browser_helpers import SETTLED, off_site
from tests.site_helpers import chromium_path, page_address

AT_ONCE = 2  # pages checked at the same time: the machine's two cores


def sweep(
    site_url: str,
    pages: Sequence[str],
    *,
    width: int,
    scheme: str,
    args: list[str],
    scripts: bool = True,
) -> list[str]:
    """Every problem found on `pages` in this setup, one line each, in page order."""
    setup = Setup(width, scheme, scripts)
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        work = thread.submit(asyncio.run, _sweep(site_url, pages, setup, args))
        found = work.result()
    return [line for docs_path in pages for line in found[docs_path]]


@dataclass(frozen=True)
class Setup:
    width: int
    scheme: str  # the scheme the reader's system prefers: "light" or "dark"
    scripts: bool  # JavaScript on

    def __str__(self) -> str:
        return f"{self.width} {self.scheme}{'' if self.scripts else ' no-js'}"


NO_SCRIPTS = "script-src 'none'"
DESKTOP = 1000  # at this width and wider, every display formula fits its column
# the display formulas shown that scroll sideways (their first characters)
WIDE_MATH = """[...document.querySelectorAll('article div.arithmatex')]
  .filter(e => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
  .map(e => e.textContent.trim().slice(0, 40))"""


def reached(url: str, args: Sequence[str]) -> str:
    """`url` where Chromium reaches it: with the --host-resolver-rules MAP of its host applied
    (a site tested at its public address is served on 127.0.0.1). route.fetch() runs in
    Playwright's own process, which never sees Chromium's rules, and would fetch the public
    address: the live site, not the one under test."""
    parts = urlsplit(url)
    for arg in args:
        if arg.startswith("--host-resolver-rules=MAP "):
            _, host, target = arg.split("=", 1)[1].split()
            if parts.hostname == host:
                return urlunsplit(parts._replace(netloc=target))
    return url


async def refuse_scripts(route, args: Sequence[str]) -> None:
    """Serve a page with a policy that lets none of its scripts run."""
    if route.request.resource_type != "document":
        await route.continue_()
        return
    response = await route.fetch(url=reached(route.request.url, args))
    headers = {**response.headers, "content-security-policy": NO_SCRIPTS}
    await route.fulfill(response=response, headers=headers)


async def _sweep(
    site_url: str, pages: Sequence[str], setup: Setup, args: list[str]
) -> dict[str, list[str]]:
    from playwright.async_api import async_playwright

    axe = axe_source()
    slots = asyncio.Semaphore(AT_ONCE)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path(), args=args)
        height = 800 if setup.width > 500 else 740
        context = await browser.new_context(
            viewport={"width": setup.width, "height": height},
            color_scheme=setup.scheme,
            ignore_https_errors="--ignore-certificate-errors" in args,  # for route.fetch()
        )
        if not setup.scripts:
            await context.route("**/*", lambda route: refuse_scripts(route, args))

        async def one(docs_path: str) -> list[str]:
            async with slots:
                return [
                    f"{setup} {docs_path}: {line}"
                    for line in await check(context, site_url, docs_path, setup, axe)
                ]

        lines = await asyncio.gather(*(one(docs_path) for docs_path in pages))
        await browser.close()
    return dict(zip(pages, lines, strict=True))


async def check(context, site_url: str, docs_path: str, setup: Setup, axe: str):
    """One page's problems: errors in its console, requests off the site, KaTeX errors, the
    wrong colour scheme or no palette toggle, a phone page wider than the phone, a display
    formula wider than its column at a desktop's width, and every axe violation of any impact
    (experimental rules included)."""
    page = await context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on(
        "console", lambda m: m.type == "error" and not refused(m.text) and errors.append(m.text)
    )
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    await page.goto(site_url + page_address(docs_path), wait_until="networkidle")
    if setup.scripts:
        await page.wait_for_function(SETTLED)
    problems = [f"console {error}" for error in errors]
    problems += [f"off-site {url}" for url in off_site(requests, site_url)]
    if await page.locator(".katex-error").count():
        problems.append("KaTeX error")
    shown = await page.evaluate("document.body.getAttribute('data-md-color-scheme')")
    if shown != {"light": "default", "dark": "slate"}[setup.scheme if setup.scripts else "light"]:
        problems.append(f"colour scheme {shown}")
    if not await page.locator("form[data-md-component='palette'] label").count():
        problems.append("no palette toggle")
    wide = await page.evaluate("document.documentElement.scrollWidth")
    if wide > setup.width:
        problems.append(f"{wide}px wide at a {setup.width}px viewport")
    if setup.width >= DESKTOP:
        problems += [
            f"formula wider than its column: {tex}" for tex in await page.evaluate(WIDE_MATH)
        ]
    if setup.scripts:
        await page.add_script_tag(content=axe)
    else:
        await page.evaluate(axe)  # the page's policy refuses a script tag
    problems += violations(await page.evaluate(AXE_RUN, axe_arguments(None, None, True)))
    await page.close()
    return problems


def refused(console_text: str) -> bool:
    """Chromium's report of a script the policy refused (JavaScript off), not the page's error."""
    return "Content Security Policy" in console_text
