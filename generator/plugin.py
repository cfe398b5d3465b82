"""The MkDocs plugin `inside-the-model`: run the generator inside `mkdocs build` / `mkdocs serve`.

Enabled in mkdocs.yml under `plugins: - inside-the-model` (entry point in pyproject.toml, which
also keeps its old name `itm`); ProperDocs loads the same entry point. The plugin only adapts MkDocs events to the generator:

- on_config: settings (plugin options, environment overrides); for `build`, the checkout's lock
  and a staging folder to build into (a site_dir that would replace what the build reads stops
  it here, before anything is written); then pins, excerpts and assets (a bad pin stops the
  build here, before any output).
- on_files: add generated files (KaTeX, LaTeX tables, figures) as virtual files; never into docs/.
- on_page_markdown: fill each page's {{ macro() }} calls.
- on_shutdown: publish the staging folder as site/ only when the whole build (strict checks
  included) ran to the end, so a failed or interrupted build leaves the previous site/ as it was.
  generator.publish holds the checkout's build lock and swaps site/ in atomically.
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

from generator.last_resort import guard_events

PAGE_ASSETS = ("page_css", "page_js")  # front matter: per-page stylesheets and scripts
GLOSSARY = "glossary.md"  # the Notation page: terms link to their definitions there
MAX_SOURCE_BYTES = 64 * 1024 * 1024  # one page or asset of docs/ or the theme: 20 KB today
FALLBACK_EPOCH = "315532800"  # 1980-01-01, the earliest date a zip file can hold
# Errors of the machine, not of the code, that may stop MkDocs' own writes: a clear message, no
# traceback (a full disk or quota, a read-only or forbidden folder, a failing disk).
ENVIRONMENT_ERRORS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}
)


class ItmConfig(base.Config):
    """Options under `plugins: - inside-the-model:`; each is overridden by its ITM_* variable."""

    enabled = c.Type(bool, default=True)
    cache_dir = c.Optional(c.Type(str))  # relative to mkdocs.yml; default .cache
    offline = c.Type(bool, default=False)
    git_dirs = c.Type(dict, default={})  # "owner/name": path of a local clone
    pypi_simple = c.Optional(c.Type(str))
    github_raw = c.Optional(c.Type(str))
    gpt2_weights = c.Optional(c.Type(str))
    download_weights = c.Type(bool, default=False)
    forward_prompt = c.Optional(c.Type(str))
    download_deadline = c.Optional(c.Type((int, float)))  # seconds; default 60
    draw_timeout = c.Optional(c.Type((int, float)))  # seconds; default 60


def _check_theme_files(custom_dir: str | None) -> None:
    """Every file of the theme's custom_dir a regular file of a bounded size, its templates
    UTF-8 (MkDocs' Jinja reads them whole): a FIFO, /dev/zero, a huge or a binary main.html hung
    the build, filled its memory or stopped it with a traceback."""
    from generator.checked_io import check_input, read_text_input

    if not custom_dir:
        return
    fix = "restore it from git (or remove it), then build again"
    for path in sorted(Path(custom_dir).rglob("*")):
        if path.is_dir() and not path.is_symlink():
            continue
        if path.suffix == ".html":
            read_text_input(path, max_bytes=MAX_SOURCE_BYTES, fix=fix)
        else:
            check_input(path, max_bytes=MAX_SOURCE_BYTES, fix=fix)


def _own_source(file: File, config: MkDocsConfig) -> Path | None:
    """The source of a file of the site's own docs/ (None: the theme's, or generated)."""
    own = file.abs_src_path and file.src_dir == config.docs_dir and not file.generated_by
    return Path(file.abs_src_path) if own and file.abs_src_path else None


def _local_extras(config: MkDocsConfig) -> list[str]:
    """extra_css and extra_javascript paths that name files of docs/ (not URLs)."""
    paths = [
        str(getattr(item, "path", item)) for item in (*config.extra_css, *config.extra_javascript)
    ]
    return [p for p in paths if "://" not in p and not p.startswith("//")]


def _project_root(config: MkDocsConfig) -> Path:
    return Path(config.config_file_path).resolve().parent


def _source_date_epoch(root: Path) -> str:
    """The commit time of HEAD (sitemap dates, gzip stamps), or a fixed epoch outside git."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "log", "-1", "--format=%ct"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        )
        return out.stdout.strip() or FALLBACK_EPOCH
    except (OSError, subprocess.SubprocessError):
        return FALLBACK_EPOCH


FileStamp = tuple[str, str, int, int, int]  # folder, name, size, inode, mtime_ns
_IMPORTED: list[tuple[Path, tuple[FileStamp, ...]]] = []  # the generator package imported, stamped


def _code_signature(package: Path) -> tuple[FileStamp, ...]:
    """Every file of the package with its size, inode and modification time (an edit changes it)."""
    found: list[FileStamp] = []
    for current, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            info = os.stat(os.path.join(current, name))
            found.append((current, name, info.st_size, info.st_ino, info.st_mtime_ns))
    return tuple(found)


def _fresh_generator(root: Path) -> None:
    """Import the generator next to this mkdocs.yml, and re-import it on a `serve` rebuild after
    its code changed. The plugin module stays loaded; the modules it calls are dropped so edits
    show up (a plain build has not imported them yet, so this removes nothing but the package
    itself). With the code unchanged the modules stay, and what they remember of the last build's
    inputs is forgotten (generator.reset)."""
    own = root / "generator" / "__init__.py"
    if own.exists() and sys.path[0] != str(root):
        sys.path.insert(0, str(root))
    package = own.parent if own.exists() else Path(__file__).resolve().parent
    imported = (package, _code_signature(package))
    if [imported] == _IMPORTED and "generator" in sys.modules:
        import generator

        generator.reset()
        return
    for name in [m for m in sys.modules if m == "generator" or m.startswith("generator.")]:
        if name != __name__:
            del sys.modules[name]
    _IMPORTED[:] = [imported]


def _page_assets(page: Page, key: str) -> list[str]:
    """The docs paths a page's front matter `key` (page_css, page_js) names: a list of them.
    `page_css: 5` and `page_css: [5]` were TypeError tracebacks, and `page_css: a.css` linked
    each of its letters. Only types are named: a value may be a YAML alias bomb."""
    paths = page.meta.get(key, [])
    if isinstance(paths, list) and all(isinstance(path, str) for path in paths):
        return paths
    found = type(paths).__name__ if not isinstance(paths, list) else "a list holding other values"
    raise PluginError(
        f"Inside the Model: docs/{page.file.src_uri}: front matter {key} must be a list of docs"
        f" paths, not {found} (fix: {key}: [assets/name.{key.removeprefix('page_')}])"
    )


def _prune_toc(items: Any, depth: int) -> None:
    """Drop table-of-contents entries deeper than `depth` (the headings stay on the page)."""
    for item in items:
        if item.level >= depth:
            item.children = []
        else:
            _prune_toc(item.children, depth)


def _search_langs(config: MkDocsConfig) -> list[str]:
    """The languages the search plugin indexes (Material's default: the theme's language)."""
    for name, plugin in config.plugins.items():
        if name.endswith("search") and getattr(plugin, "config", None) is not None:
            lang = plugin.config.get("lang")
            if lang:
                return list(lang)
    return [config.theme.get("language") or "en"]


@guard_events("Inside the Model")  # a bug in an event: one line asking for a report
class ItmPlugin(BasePlugin[ItmConfig]):
    supports_multiple_instances = False

    def __init__(self) -> None:
        self.command: str | None = None
        self.failed = False
        self.settings: Any = None  # generator.settings.Settings, once on_config has run
        self.build: Any = None  # generator.build.SiteBuild: the generator's side of this build
        self.late: dict[str, File] = {}  # site path -> its File, whose bytes a worker is drawing
        self.typesetting: list[tuple[Page, Any]] = []  # pages whose math V8 is typesetting
        self.built = False
        self.started = 0.0  # time.time() when this build began
        self.publication: Any = None  # generator.publish.Publication while `build` runs
        self.typesetter: Any = None  # generator.render.katex.Typesetter, from the first page
        self.drawings: dict[str, list[str]] = {}  # page -> its formulas' drawings, set aside
        self.family_sections: dict[str, str] = {}  # a second family's page address -> its section
        self.code: str | None = None  # digests.code_fingerprint(), from this build's first page

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.command = command

    @event_priority(100)  # first: the staging folder must be set before others read site_dir
    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        if self.publication is not None:  # `serve --clean` rebuilds in one process: settle the
            self._publish()  # last build first (a second lock on one file would wait forever)
        self.failed = self.built = False
        self.started = time.time()  # the cache keeps what the last builds since then used
        if not self.config.enabled:
            return config
        root = _project_root(config)
        os.environ.setdefault("SOURCE_DATE_EPOCH", _source_date_epoch(root))
        _fresh_generator(root)
        from generator.build import SiteBuild
        from generator.errors import InputError
        from generator.settings import Settings

        self.build = None
        self.late, self.typesetting, self.family_sections = {}, [], {}
        self.code = None
        try:
            options = {**self.config, "custom_dir": config.theme.custom_dir}
            self.settings = Settings.load(root, options)
            if self.command == "build":  # first: a site_dir that would replace an input stops
                self._begin(config)  # the build before anything is written
            self.build = SiteBuild.start(self.settings)  # a bad pin stops the build here
        except InputError as error:
            raise PluginError(f"Inside the Model: {error}") from None
        for watched in ("generator", "sources"):
            if str(root / watched) not in config.watch:
                config.watch.append(str(root / watched))
        return config

    def _begin(self, config: MkDocsConfig) -> None:
        """Take the checkout's build lock and build into a staging folder (on_shutdown
        publishes it, or drops it when the build failed)."""
        from generator.publish import Publication, project_inputs

        inputs = project_inputs(config, *self.settings.inputs)
        self.publication = Publication.begin(Path(config.site_dir), inputs=inputs)
        config.site_dir = str(self.publication.staging)

    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        if not self.config.enabled:
            return files
        from generator.assets import MINIFIED, minified, unread_theme_files
        from generator.checked_io import check_input, read_text_input
        from generator.errors import InputError

        try:  # MkDocs reads each page whole and copies each asset: a FIFO would hang it, a
            for file in files:  # symlink to /dev/zero fill the disk (27 GB in a minute)
                if file.abs_src_path and not file.generated_by:
                    fix = "make it a regular file (or remove it), then build again"
                    check_input(Path(file.abs_src_path), max_bytes=MAX_SOURCE_BYTES, fix=fix)
                if file.abs_src_path and file.is_documentation_page():  # decoded as UTF-8
                    fix = "save the page as UTF-8, then build again"
                    read_text_input(Path(file.abs_src_path), max_bytes=MAX_SOURCE_BYTES, fix=fix)
                elif (source := _own_source(file, config)) and file.url.endswith(MINIFIED):
                    fix = "save it as UTF-8, then build again"
                    text = read_text_input(source, max_bytes=MAX_SOURCE_BYTES, fix=fix)
                    file.content_string = minified(text, file.url)
            _check_theme_files(config.theme.custom_dir)
            made = self.build.files()
        except InputError as error:
            raise PluginError(f"Inside the Model: {error}") from None
        late = set(self.build.late_paths())
        for path in sorted({*made.files, *late}):
            if path in late:  # a worker is drawing it while pages are built: bytes in on_post_build
                self.late[path] = File.generated(config, path, content=b"")
                files.append(self.late[path])
            else:
                files.append(File.generated(config, path, content=made.files[path]))
        for path in unread_theme_files([f.src_uri for f in files], _search_langs(config)):
            files.remove(files.src_uris[path])
        for path in _local_extras(config):  # MkDocs links them whether or not they exist
            if files.get_file_from_path(path) is None:
                raise PluginError(
                    f"Inside the Model: mkdocs.yml: {path} (extra_css or extra_javascript) is not a"
                    " file in docs/ (fix: restore it, or remove it from mkdocs.yml)"
                )
        return files

    @event_priority(100)  # first: MkDocs copies the files and renders the pages after this event
    def on_env(self, env: Any, *, config: MkDocsConfig, files: Files) -> Any:
        """Every page's math typeset (the figures are still being drawn: see on_post_build)."""
        if not self.config.enabled:
            return env
        from generator.errors import InputError

        typesetting, self.typesetting = self.typesetting, []
        for page, typeset in typesetting:
            try:
                page.content = typeset.result()
            except InputError as error:
                raise PluginError(f"Inside the Model: {error}") from None
        return env

    @event_priority(100)  # first of Material's and MkDocs' own: they see the drawn figures
    def _figures_into_site(self, *, config: MkDocsConfig) -> None:
        """The figures the workers drew, written over their empty placeholders. No page reads a
        figure's bytes, so the workers draw on while MkDocs renders and writes every page (in a
        cold build, the pages' last seconds); a failure still stops the build before the site is
        published (on_shutdown). Until then a figure's file is empty: a plugin that reads one in
        on_post_page, or in an on_post_build of a priority above 100, would see no bytes."""
        if not self.config.enabled:
            return
        from generator.errors import InputError

        try:
            drawn = self.build.figures()
        except InputError as error:  # a figure no worker could draw
            raise PluginError(f"Inside the Model: {error}") from None
        for path, data in drawn.items():
            self.late[path].content_bytes = data
            self.late[path].copy_file()

    def _stop_drawing(self) -> None:
        if self.build is not None:
            self.build.cancel()

    @event_priority(50)  # early: other plugins see the page with its blocks filled in
    def on_page_markdown(
        self, markdown: str, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str:
        if not self.config.enabled:
            return markdown
        from generator.build import PageSource, family_section
        from generator.errors import InputError
        from generator.memo import FilledPage

        def url_for(docs_path: str) -> str | None:
            target = files.get_file_from_path(docs_path)
            return get_relative_url(target.url, page.file.url) if target else None

        try:
            source = PageSource(page.file.src_uri, markdown, dict(page.meta), url_for)
            for key in PAGE_ASSETS:  # overrides/main.html links these; a typo must not be a 404
                for path in _page_assets(page, key):
                    if files.get_file_from_path(path) is None:
                        raise PluginError(
                            f"Inside the Model: docs/{page.file.src_uri}: {key} names {path}, "
                            f"which is not in docs/ (fix: a docs path such as assets/site.css)"
                        )
            filled: FilledPage = self.build.fill(source, [(f.src_uri, f.url) for f in files])
        except InputError as error:  # a front matter value of the wrong kind, a bad block
            raise PluginError(f"Inside the Model: {error}") from None
        if filled.description is not None:
            page.meta["description"] = filled.description
        section = family_section(page.meta, page.parent.title if page.parent else None)
        if section:  # titled with its family
            page.meta["family_section"] = self.family_sections[page.url] = section
        return filled.markdown

    def on_post_page(self, output: str, *, page: Page, config: MkDocsConfig) -> str:
        """Each page links its page_css and page_js: overrides/main.html adds them, and a theme
        that lost it (missing, a folder, a FIFO: the theme's own main.html is used instead)
        published pages without their styles and scripts, with exit 0."""
        if not self.config.enabled:
            return output
        for key in PAGE_ASSETS:
            for path in _page_assets(page, key):
                if not re.search(rf'(href|src)="[^"]*{re.escape(path)}"', output):
                    raise PluginError(
                        f"Inside the Model: docs/{page.file.src_uri}: {key} names {path}, but"
                        " the page does not link it (fix: restore the theme's main.html from"
                        " git, overrides/main.html here, which adds these links)"
                    )
        return output

    # Last: a page not typeset yet gets its content replaced in on_env, which would drop what a
    # later plugin or hook changed in it, and only on builds where the page was not in the store.
    @event_priority(-100)
    def on_page_content(self, html: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        """Typeset the page's math with KaTeX at build time, so readers and search get finished
        formulas: from the store at once, else on the typesetter's thread while MkDocs converts
        the next pages (the page's content is replaced in on_env, before any page is written)."""
        if not self.config.enabled:
            return html
        from generator.errors import InputError
        from generator.pinned_excerpts.markdown import unrendered_block, unrendered_problem

        left = unrendered_block(html)  # this site quotes code with {{ code() }}: a block of
        if left is not None:  # the pinned-excerpts syntax would reach readers as text
            fix = (
                "quote code with {{ code(...) }}, whose pins are in sources/lock.toml; to show the"
                " syntax itself, put it in a code fence or inline code"
            )
            problem = unrendered_problem(left[0])[0]
            error = InputError(problem, file=f"docs/{page.file.src_uri}", entry=left[1], fix=fix)
            raise PluginError(f"Inside the Model: {error}")
        if self.typesetter is None:
            from generator.render.katex import Typesetter
            from generator.store import Store

            katex_js = self.build.files().katex_js
            self.typesetter = Typesetter(katex_js, Store(self.settings.cache_dir))
        depth = page.meta.get("toc_depth")  # e.g. the Sources page lists its repositories only
        if isinstance(depth, int) and page.toc is not None:
            _prune_toc(page.toc, depth)

        readable = self._readable(html, page, files)
        typeset = self.typesetter.page_later(readable, page=f"docs/{page.file.src_uri}")
        if typeset.done():
            try:
                done: str = typeset.result()
            except InputError as error:
                raise PluginError(f"Inside the Model: {error}") from None
            return done
        self.typesetting.append((page, typeset))
        return readable

    def _readable(self, html: str, page: Page, files: Files) -> str:
        """The page's HTML for keyboard and search readers, its terms linked at first use: from
        the store when the same code made it from the same HTML at the same address, its terms
        at the same addresses (a warm build spent a sixth of its own time here; a tampered entry
        is discarded by the store, which checks every entry it reads)."""
        from generator.digests import code_fingerprint
        from generator.render.page_html import for_readers, link_terms
        from generator.store import key_of

        if self.code is None:  # once a build: the generator's files hashed
            self.code = code_fingerprint()
        terms = self._terms(page, files)
        store = self.typesetter.store
        hrefs = [href for _, href in terms]
        key = key_of("readable-page", self.code, page.file.url, hrefs, html)
        cached = store.get_entry("readable_page", key) if store is not None else None
        if cached is not None:
            try:
                text: str = cached.decode("utf-8")
                return text
            except UnicodeDecodeError:
                store.discard(store.entry_path("readable_page", key), "it is not UTF-8")
        readable = link_terms(for_readers(html), terms)
        if store is not None:
            store.put_entry("readable_page", key, readable.encode("utf-8"))
        return readable

    @staticmethod
    def _terms(page: Page, files: Files) -> list[tuple[re.Pattern[str], str]]:
        """Each term of the Notation page with its address from `page` (none on that page)."""
        from generator.glossary import TERMS

        notation = files.get_file_from_path(GLOSSARY)
        if notation is None or page.file.src_uri == GLOSSARY:
            return []
        url = get_relative_url(notation.url, page.file.url)
        return [(re.compile(term.pattern), f"{url}#term-{term.anchor}") for term in TERMS]

    @event_priority(10)  # before Material's search plugin reads the page
    def _search_reads_text(
        self, context: Any, *, page: Page, config: MkDocsConfig, nav: Any
    ) -> Any:
        """Search indexes each formula by its MathML, not by KaTeX's drawing of it."""
        if self.config.enabled and page.content:
            from generator.render.drawings import set_drawings_aside

            page.content, self.drawings[page.file.src_uri] = set_drawings_aside(page.content)
        return context

    @event_priority(-10)  # after it: the page itself keeps the drawings
    def _readers_see_drawings(
        self, context: Any, *, page: Page, config: MkDocsConfig, nav: Any
    ) -> Any:
        drawings = self.drawings.pop(page.file.src_uri, None)
        if drawings and page.content:
            from generator.render.drawings import put_drawings_back

            page.content = put_drawings_back(page.content, drawings)
        return context

    on_page_context = CombinedEvent(_search_reads_text, _readers_see_drawings)

    def _close_typesetter(self) -> None:
        """End the JavaScript engine: a live one keeps the process from exiting."""
        if self.typesetter is not None:
            self.typesetter.close()
            self.typesetter = None

    @event_priority(-50)  # after the search plugin has written its index
    def _finish_build(self, *, config: MkDocsConfig) -> None:
        if not self.config.enabled:
            return
        typeset = self.typesetter is not None and self.typesetter.typeset > 0
        self._close_typesetter()
        # A build that replayed everything added nothing to prune; one whose pages came from the
        # memo but whose HTML changed (mkdocs.yml's Markdown options) stored each page typeset.
        if self.build.record() or typeset:
            self._prune_cache()
        index = Path(config.site_dir) / "search" / "search_index.json"
        if index.exists():
            import json

            from generator.render.page_html import family_titles, searchable_digits

            data = json.loads(index.read_text(encoding="utf-8"))
            data = searchable_digits(family_titles(data, self.family_sections))
            index.write_text(
                json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8"
            )
        from generator.render.katex_fonts import subset_site_fonts
        from generator.store import Store

        subset_site_fonts(Path(config.site_dir), Store(self.settings.cache_dir))
        self.built = True  # every page is written; the strict check comes next

    on_post_build = CombinedEvent(_figures_into_site, _finish_build)

    def _prune_cache(self) -> None:
        """Remove from the cache what none of the last builds used (generator/store.py)."""
        from generator.errors import InputError
        from generator.inputs import pinned_archives
        from generator.log import log
        from generator.store import Store

        try:
            keep = pinned_archives(self.settings)
        except InputError:  # a pin edited during the build: prune next time
            return
        freed = Store(self.settings.cache_dir).prune(self.started, keep=keep)
        if freed:
            log.info("Inside the Model: %s bytes of cache no recent build used removed", freed)

    def on_build_error(self, *, error: Exception) -> None:
        self._close_typesetter()
        self._stop_drawing()
        self.failed = True

    @event_priority(-100)  # last: publish only after every other plugin has finished
    def on_shutdown(self) -> None:
        self._publish()

    def _publish(self) -> None:
        """Publish only a build that ran to the end: not one that failed, was interrupted (Ctrl-C
        is not an Exception, so on_build_error never sees it) or aborted in strict mode."""
        self._close_typesetter()
        self._stop_drawing()
        publication, self.publication = self.publication, None
        if publication is None:
            return
        raised = sys.exc_info()[1]  # on_shutdown runs in `finally`: what ended the build
        interrupted = raised is not None and not isinstance(raised, Exception)  # Ctrl-C, exit
        if self.built and not self.failed and raised is None:
            from generator.errors import InputError

            try:
                publication.commit()
            except InputError as error:  # a full disk, no permission: the old site is intact
                raise PluginError(f"Inside the Model: {error}") from None
            return
        publication.abandon("build interrupted" if interrupted else "build failed")
        if isinstance(raised, OSError) and raised.errno in ENVIRONMENT_ERRORS:
            from generator.publish import failure  # MkDocs' own writes: a full disk, say

            clear = failure(raised, "write the new site", publication.final)
            raise PluginError(f"Inside the Model: {clear}") from None
