"""Browser assets served from the site's own origin (KaTeX), fetched from the npm registry.

Pinned in sources/web-assets.toml by URL and sha256; the verified tarball is cached by its hash.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec

from generator.data_file import convert, one_of, read_data
from generator.errors import InputError
from generator.store import Store, sha256_hex

if TYPE_CHECKING:
    from generator.sources.fetch import NetSettings

ASSETS_FILE = "sources/web-assets.toml"
PACKAGES = ("katex",)  # the [package] tables the build uses: it typesets every page's math


Text = Annotated[str, msgspec.Meta(min_length=1)]


class PackageTable(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One [package] table of sources/web-assets.toml."""

    version: Text
    url: Text
    sha256: Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]  # of the tarball
    license: Text
    files: Annotated[tuple[Text, ...], msgspec.Meta(min_length=1)]  # globs under package/dist/


@dataclass(frozen=True)
class PackagePin:
    name: str
    version: str
    url: str
    sha256: str
    license: str
    files: tuple[str, ...]  # globs relative to package/dist/


def load_asset_pins(root: Path) -> dict[str, PackagePin]:
    """Every [package] table of sources/web-assets.toml, checked against PackageTable; a
    top-level key that is not one of PACKAGES is refused, naming it."""
    fix = (
        "give version, url, sha256 and license as strings and files as a list of globs (see the"
        " katex entry), or restore it from git"
    )
    path = root / ASSETS_FILE
    tables = read_data(path, dict[str, object], fix=fix, name=ASSETS_FILE, max_bytes=1 << 20)
    for name in tables:  # a misspelt [katex] is no badly written package
        one_of([name], PACKAGES, what="a package the site uses", path=Path(ASSETS_FILE), entry=name)
    pins = {
        name: PackagePin(name, **msgspec.structs.asdict(table))
        for name, value in tables.items()
        for table in [convert(value, PackageTable, file=ASSETS_FILE, fix=fix, entry=name)]
    }
    if "katex" not in pins:  # the build typesets every page's math with it
        raise InputError(
            "it has no [katex] table",
            file=ASSETS_FILE,
            entry="katex",
            fix="restore the [katex] table from git (version, url, sha256, license, files)",
        )
    return pins


def fetch_verified(
    pin: PackagePin, cache_dir: Path, *, offline: bool, net: NetSettings | None = None
) -> bytes:
    """The pinned tarball, from the content-addressed cache or the registry, checked by sha256."""
    from generator.sources.fetch import FetchError, Http  # the network, only when not cached

    cache = Store(cache_dir)
    cached = cache.get(pin.sha256)
    if cached is not None:
        return cached
    if offline:
        raise InputError(
            f"{pin.url} is not cached and the network is off (ITM_OFFLINE)",
            file=ASSETS_FILE,
            entry=pin.name,
            fix="build once with the npm registry reachable, or unset ITM_OFFLINE",
        )
    try:
        data = Http(net).get(pin.url)
    except FetchError as error:
        raise InputError(
            f"cannot fetch {pin.url}: {error.reason}",
            file=ASSETS_FILE,
            entry=pin.name,
            fix="check that the npm registry (registry.npmjs.org) is reachable",
        ) from None
    if sha256_hex(data) != pin.sha256:
        raise InputError(
            f"{pin.url} has sha256 {sha256_hex(data)}, the pin says {pin.sha256}",
            file=ASSETS_FILE,
            entry=pin.name,
            fix="the tarball changed in transit or upstream: check the URL, then update the pin",
        )
    cache.put(data)
    return data


def package_files(
    pin: PackagePin, cache_dir: Path, *, offline: bool = False, net: NetSettings | None = None
) -> dict[str, bytes]:
    """The pinned files of an npm package: {path relative to dist/: bytes}, sorted by path."""
    import io
    import tarfile

    tarball = fetch_verified(pin, cache_dir, offline=offline, net=net)
    found: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        for member in archive.getmembers():
            if not member.isfile() or not member.name.startswith("package/dist/"):
                continue
            relative = member.name.removeprefix("package/dist/")
            if any(fnmatch.fnmatchcase(relative, pattern) for pattern in pin.files):
                extracted = archive.extractfile(member)
                assert extracted is not None
                found[relative] = extracted.read()
    for pattern in pin.files:
        if not any(fnmatch.fnmatchcase(path, pattern) for path in found):
            raise InputError(
                f"{pattern!r} matches nothing in {pin.url}",
                file=ASSETS_FILE,
                entry=pin.name,
                fix="list files that exist under package/dist/ in that tarball",
            )
    return dict(sorted(found.items()))


KATEX_RUN = "katex.min.js"  # typesets every page's math during the build (not shipped)
KATEX_CSS = "katex.min.css"  # every page links it (mkdocs.yml extra_css)
FONT_SOURCES = re.compile(r"src:([^;}]*)")  # an @font-face's list of url(...) format(...)
FONT_URL = re.compile(r"url\(([^)]*)\)(?:\s*format\([^)]*\))?")


def katex_files(
    pin: PackagePin, cache_dir: Path, *, offline: bool = False, net: NetSettings | None = None
) -> tuple[bytes, dict[str, bytes]]:
    """KaTeX's bundle (run at build time) and the files the site serves under assets/katex/: the
    stylesheet and the fonts it names. A pin whose `files` leave out the bundle, the stylesheet or
    every format of a font is refused, so no page links a file the site lacks; the stylesheet is
    served naming only the font files shipped (its other formats are fallbacks no browser with
    woff2 requests)."""
    files = package_files(pin, cache_dir, offline=offline, net=net)
    for needed in (KATEX_RUN, KATEX_CSS):
        if needed not in files:
            raise InputError(
                f"files = {list(pin.files)} leaves out {needed}, which the site needs",
                file=ASSETS_FILE,
                entry=pin.name,
                fix=f'list {needed!r} in files (with "fonts/*.woff2" for its fonts)',
            )

    def shipped_sources(sources: re.Match[str]) -> str:
        found = list(FONT_URL.finditer(sources[1]))
        kept = [url[0] for url in found if url[1].strip("'\"") in files]
        if found and not kept:
            raise InputError(
                f"{KATEX_CSS} needs one of {', '.join(u[1] for u in found)}; files ="
                f" {list(pin.files)} copies none of them",
                file=ASSETS_FILE,
                entry=pin.name,
                fix='list "fonts/*.woff2" in files',
            )
        return "src:" + ",".join(kept)

    css = FONT_SOURCES.sub(shipped_sources, files[KATEX_CSS].decode("utf-8"))
    served = {path: data for path, data in files.items() if path != KATEX_RUN}
    served[KATEX_CSS] = css.encode("utf-8")
    return files[KATEX_RUN], {f"assets/katex/{path}": data for path, data in served.items()}


MINIFIED = (".js", ".css")  # the site's own scripts and stylesheets (docs/): shipped minified


def minified(text: str, name: str) -> str:
    """A script or stylesheet of the site's own without its comments and spaces (rjsmin,
    rcssmin): 7 of the walkthrough's 57 KiB gzipped. mkdocs-minify-plugin would rename each
    file to .min.js and rewrite only extra_javascript's and extra_css' links, which breaks a
    page's own (front matter page_js, page_css)."""
    if name.endswith(".js"):
        import rjsmin

        return str(rjsmin.jsmin(text))
    import rcssmin

    return str(rcssmin.cssmin(text))


LUNR = "assets/javascripts/lunr/"  # Material's search-language scripts


def search_language_files(langs: list[str]) -> set[str]:
    """The lunr scripts Material's search worker imports for these languages (its own rule:
    none for English alone; a language script per other language, the stemmer support with
    them, lunr.multi for several, a word splitter for Japanese, Hindi and Thai)."""
    wanted = {f"{LUNR}min/lunr.{lang}.min.js" for lang in langs if lang != "en"}
    wanted |= {f"{LUNR}tinyseg.js" for lang in langs if lang == "ja"}
    wanted |= {f"{LUNR}wordcut.js" for lang in langs if lang in ("hi", "th")}
    if len(langs) > 1:
        wanted.add(f"{LUNR}min/lunr.multi.min.js")
    if wanted:
        wanted.add(f"{LUNR}min/lunr.stemmer.support.min.js")
    return wanted


def unread_theme_files(paths: list[str], search_langs: list[str]) -> list[str]:
    """Theme files no reader's browser requests, so the site does not ship them: source maps
    (only a developer's tools ask for them) and search-language scripts for other languages."""
    wanted = search_language_files(search_langs)
    return [
        path
        for path in paths
        if path.endswith(".map") or (path.startswith(LUNR) and path not in wanted)
    ]
