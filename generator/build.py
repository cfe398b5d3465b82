"""The build core: a site's generated files and filled pages from its settings, with no MkDocs.

    build = SiteBuild.start(settings)       # fingerprint; on a miss, load and check every input
    made = build.files()                     # generated files (KaTeX, LaTeX tables, features')
    build.late_paths()                       # figures being drawn in workers meanwhile
    filled = build.fill(page)                # a page's {{ macro() }} calls filled (or replayed)
    build.figures()                          # the figures' bytes, once they are needed
    build.record()                           # remember it all under the fingerprint
    build.cancel()                           # on failure: stop the workers

The MkDocs plugin (generator/plugin.py) adapts these calls to its events; `itm expand`
(generator/expand.py) calls them directly to write the expanded docs tree that plain MkDocs,
ProperDocs or another engine builds. Either way a page's markdown is filled from the same memo
(generator/memo.py), and a bad input stops `start()` before anything is written.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from generator.digests import code_fingerprint
from generator.drawing import Drawing, Figure
from generator.errors import InputError
from generator.inputs import LOCK_FILE, BuildInputs
from generator.log import log
from generator.memo import BuildMemo, FilledPage, MadeFiles, fingerprint
from generator.settings import Settings

if TYPE_CHECKING:
    from generator.sources.excerpt import Excerpt

UrlFor = Callable[[str], "str | None"]  # a docs path -> its address relative to the page


@dataclass(frozen=True)
class PageSource:
    """One docs page as the generator reads it; InputError when a front matter key the
    generator (or the theme's main.html) reads holds a value of the wrong kind."""

    src_uri: str  # "components/attention.md"
    markdown: str  # without its front matter
    meta: Mapping[Any, Any]  # its front matter (YAML keys need not be strings)
    url_for: UrlFor  # addresses of other docs files, relative to this page

    def __post_init__(self) -> None:
        check_front_matter(self.meta, page=f"docs/{self.src_uri}")


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _is_paths(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(path, str) for path in value)


def _is_depth(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


# The front matter keys read here and in overrides/main.html: a test of the value, what it must
# be, and an example. `component: [x]` or `page_css: 5` stopped the build with a TypeError.
FRONT_MATTER: dict[str, tuple[Callable[[object], bool], str, str]] = {
    "family": (_is_text, "a family's name", "llama"),
    "component": (_is_text, "a component's key", "attention"),
    "page_css": (_is_paths, "a list of docs paths", "[assets/walkthrough.css]"),
    "page_js": (_is_paths, "a list of docs paths", "[assets/walkthrough.js]"),
    "toc_depth": (_is_depth, "a whole number from 1", "2"),
    "family_section": (_is_text, "a nav section's title", "Llama 2 and Mistral"),
}


def check_front_matter(meta: Mapping[Any, Any], *, page: str) -> None:
    """An InputError naming the page and the key when a key of FRONT_MATTER has a value of
    another kind."""
    for key, (fits, what, example) in FRONT_MATTER.items():
        if key in meta and not fits(meta[key]):
            raise InputError(
                f"front matter {key}: {reprlib.repr(meta[key])} is not {what}",
                file=page,
                entry=key,
                fix=f"write `{key}: {example}`",
            )


def family_section(meta: Mapping[Any, Any], section: str | None) -> str | None:
    """The nav section a page's <title> names after its own (front matter `family_section`, set
    by each adapter and read by overrides/main.html, so no engine's template needs the page's
    parent): a page of a family other than GPT-2's (front matter `family`). "The whole model" is
    a page of each family; a tab or a bookmark must tell them apart. The template leaves out a
    section the title already names."""
    return section if meta.get("family") else None


@dataclass
class SiteBuild:
    """One build's generator state: what the memo replays and what this build makes."""

    settings: Settings
    memo: BuildMemo
    made: MadeFiles | None  # the generated files, once known (replayed or made)
    site: BuildInputs | None = None  # loaded only when something is not memoized
    drawings: list[Drawing] = field(default_factory=list)  # figures drawn by workers
    drawn: list[Drawing] = field(default_factory=list)  # finished, to keep at the end
    to_record: list[tuple[str, FilledPage]] = field(default_factory=list)
    links: str | None = None  # links_digest of the build's files, set by the first page

    @classmethod
    def start(cls, settings: Settings) -> SiteBuild:
        """Fingerprint the inputs; on a miss start drawing the charts and load every input now,
        so a bad pin stops the build before any output (InputError)."""
        memo = BuildMemo.open(settings)
        build = cls(settings=settings, memo=memo, made=memo.files())
        if build.made is None:
            from generator.charts import chart_figures

            # drawn during the fetches; its workers then draw the features' figures (files())
            build.drawings.append(build._drawing(chart_figures()))
            try:
                build.inputs()
            except BaseException:
                build.cancel()  # a bad pin: no worker draws on for a build that stopped
                raise
        return build

    def _drawing(self, figures: list[Figure]) -> Drawing:
        cache, stall = self.settings.cache_dir, self.settings.draw_timeout
        return Drawing(figures, cache, stall=stall)

    def inputs(self) -> BuildInputs:
        """The build's checked inputs, loaded on first need."""
        if self.site is None:
            self.site = BuildInputs.load(self.settings, check_families)
        return self.site

    def files(self) -> MadeFiles:
        """Every generated file but the figures being drawn (late_paths): replayed from the memo,
        or made now (and the features' figures started). If making them fails, the workers are
        stopped: nothing will ask for their figures."""
        if self.made is None:
            try:
                self.made = self._make_files()
            except BaseException:
                self.cancel()
                raise
        return self.made

    def _make_files(self) -> MadeFiles:
        from generator.features import load_features
        from generator.pages import latex_tables

        site = self.inputs()
        generated = {**site.generated, **latex_tables()}
        figures: list[Figure] = []
        for feature in load_features():
            if hasattr(feature, "files"):
                generated.update(feature.files(site))
            if hasattr(feature, "figures"):
                figures += feature.figures(site)
        if self.drawings:  # the charts' workers, matplotlib imported: no other will start
            self.drawings[0].add(figures)
        else:
            self.drawings.append(self._drawing(figures))
        return MadeFiles(files=generated, katex_js=site.katex_js)

    def late_paths(self) -> list[str]:
        """Site paths of the figures still being drawn (their bytes come from `figures()`)."""
        return [path for drawing in self.drawings for path in drawing.paths]

    def figures(self) -> dict[str, bytes]:
        """The drawn figures by site path (waits for the workers); the memo's files include them
        from now on. DrawingError (an InputError) when a figure cannot be drawn."""
        drawn: dict[str, bytes] = {}
        for drawing in self.drawings:
            drawn.update(drawing.files(keep=False))  # kept at the end, as the memo is (record)
        self.drawn, self.drawings = self.drawings, []
        made = self.files()
        self.made = MadeFiles(files={**made.files, **drawn}, katex_js=made.katex_js)
        return drawn

    def fill(self, page: PageSource, all_files: list[tuple[str, str]]) -> FilledPage:
        """The page with its {{ macro() }} calls filled: replayed from the memo when its text,
        front matter and every file's address are unchanged, else rendered (and recorded at the
        end). `all_files`: (docs path, address) of every file a page may link."""
        from generator.memo import links_digest

        if self.links is None:  # every page may link any file: their addresses are an input
            self.links = links_digest(all_files)
        key = self.memo.page_key(page.src_uri, page.markdown, page.meta, self.links)
        filled = self.memo.page(key)
        if filled is not None:
            return filled
        from generator.pages import PageMacros, render_page
        from generator.pages.sandbox import page_error

        macros = PageMacros(
            self.inputs(), src_path=page.src_uri, meta=dict(page.meta), url_for=page.url_for
        )
        try:
            rendered = render_page(page.markdown, macros)
        except InputError:
            raise
        except Exception as error:  # a Jinja syntax, name or sandbox error in the page
            raise page_error(error, f"docs/{page.src_uri}") from error
        rendered = self.check_claims(rendered, f"docs/{page.src_uri}")
        # A block may say what the page shows (the forward pass): its meta description.
        filled = FilledPage(rendered, macros.meta.get("description"))
        self.to_record.append((key, filled))
        return filled

    def check_claims(self, markdown: str, page: str) -> str:
        """The filled page with its `/// claim | ID` blocks checked against the lock's approvals
        and their own lines left blank (generator/sources/claims.py)."""
        from generator.sources.claims import NAME, expand_claims

        if NAME not in markdown or "///" not in markdown:
            return markdown

        def error(entry: str, problem: str, fix: str) -> InputError:
            return InputError(problem, file=page, entry=entry, fix=fix)

        lines = markdown.split("\n")
        return "\n".join(expand_claims(lines, self.inputs().excerpts, error))

    def record(self) -> bool:
        """Record what this build made (filled pages, generated files, figures) under the
        fingerprint taken at the start, unless an input changed while it ran (an edit saved under
        `serve`, a `git checkout`): code, templates and pins are read after the fingerprint, so
        the results may come from other inputs than it describes, and a later build of exactly
        those inputs would replay them. False when everything was replayed: then the build put
        nothing new in the store."""
        drawn, self.drawn = self.drawn, []
        pages, self.to_record = self.to_record, []
        if not (drawn or pages):
            return False  # everything was replayed
        code_fingerprint.cache_clear()  # kept for the build, but the code may have changed since
        try:
            unchanged = fingerprint(self.settings) == self.memo.fingerprint
        except InputError:  # e.g. GPT-2's files went away mid-build
            unchanged = False
        if not unchanged:
            log.info("Inside the Model: inputs changed during the build; nothing is memoized")
            return True
        for drawing in drawn:
            drawing.keep()
        if drawn and self.made is not None:
            self.memo.record_files(self.made)
        for key, filled in pages:
            self.memo.record_page(key, filled)
        return True

    def cancel(self) -> None:
        """Stop the workers (the build failed or was interrupted)."""
        for drawing in self.drawings:
            drawing.cancel()
        self.drawings = []


def check_families(excerpts: dict[str, Excerpt]) -> None:
    """The model families against the pinned code they cite: the sizes a family reads from pinned
    lines must match them, and each Source of its registry must be a claim the lock approved
    (InputError naming the size or the claim)."""
    from generator.models import FAMILIES

    texts = {excerpt_id: excerpt.text for excerpt_id, excerpt in excerpts.items()}
    for family in FAMILIES.values():
        if family.check_pinned is not None:
            family.check_pinned(texts, file=LOCK_FILE)
    check_registry_claims(excerpts)


def check_registry_claims(excerpts: dict[str, Excerpt]) -> None:
    """Each Source of every family's registry is a claim about its excerpt: InputError naming
    the claim and `itm claim approve` unless the lock approved it against the text as pinned."""
    from generator.errors import InputError
    from generator.models import FAMILIES
    from generator.sources.claims import claim_problem

    for family in FAMILIES.values():
        for claim_id, source in family.claims.items():
            problem = claim_problem(claim_id, source.excerpt, excerpts)
            if problem is not None:
                raise InputError(
                    f"{problem[0]}: {source.claim!r}",
                    file=family.file,
                    entry=claim_id,
                    fix=problem[1],
                )
