"""The MkDocs plugin `pinned-excerpts`: quote pinned, verified upstream code in any site.

    plugins:
      - pinned-excerpts:                 # every option is optional
          lock: excerpts.lock.toml       # relative to mkdocs.yml (the default)

Events (each does one thing; resolution itself needs none of them: generator.sources.
resolve_excerpts takes a lock and settings, and the `itm` commands call it too):

- on_config: for `build`, first the site's build lock and a staging folder to build into
  (generator.publish: a site_dir that is, holds or lies inside what the build reads stops the
  build before anything is written); settings (options, then ITM_* variables:
  generator.settings), the lock, every excerpt resolved and verified (cache, local clone,
  GitHub, registry mirrors); then the Markdown extension that expands `/// excerpt | ID` blocks
  (generator.pinned_excerpts.markdown) and the extensions its cards need. A bad lock stops the
  build here, before any output.
- on_files: the cards' small stylesheet (unless `stylesheet: false`).
- on_page_markdown: tells the extension which page it converts, so an error names it.
- on_shutdown: the staging folder becomes site_dir only when the whole build ran to the end; a
  failed or interrupted build publishes nothing and leaves the previous site as it was.

Progress and errors go to the logger `mkdocs.plugins.pinned_excerpts`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from generator.last_resort import guard_events
from generator.pinned_excerpts.excerpts import DEFAULT_LOCK, load_excerpts, log
from generator.pinned_excerpts.markdown import PinnedExcerptsExtension
from generator.sources.locate import EXTENSION_NAMES, lock_path

STYLESHEET = "assets/stylesheets/pinned-excerpts.css"
# What the cards are made of: fences numbered from a line (superfences + highlight) and the
# omission marker's class (attr_list).
NEEDED_EXTENSIONS = ("attr_list", "pymdownx.highlight", "pymdownx.superfences")
# A site built by Inside the Model's own plugin is staged by it already.
STAGED_BY = ("inside-the-model", "itm")


class PinnedExcerptsConfig(base.Config):
    """Options under `plugins: - pinned-excerpts:`; each but `lock` and `stylesheet` is
    overridden by its ITM_* variable (README, "Settings")."""

    enabled = c.Type(bool, default=True)
    lock = c.Type(str, default=DEFAULT_LOCK)  # relative to mkdocs.yml
    cache_dir = c.Optional(c.Type(str))  # relative to mkdocs.yml; default .cache
    offline = c.Type(bool, default=False)  # cache and local clones only
    git_dirs = c.Type(dict, default={})  # "owner/name": path of a local clone
    pypi_simple = c.Optional(c.Type(str))  # PyPI's simple index, for registry mirrors
    github_raw = c.Optional(c.Type(str))  # the raw-file host for pinned GitHub files
    stylesheet = c.Type(bool, default=True)  # add the cards' stylesheet


def _has(extensions: list[Any], name: str) -> bool:
    return any(e in (name, f"markdown.extensions.{name}") for e in extensions if isinstance(e, str))


@guard_events("Pinned excerpts")  # a bug in an event: one line asking for a report
class PinnedExcerptsPlugin(BasePlugin[PinnedExcerptsConfig]):
    supports_multiple_instances = False

    def __init__(self) -> None:
        self.command: str | None = None
        self.extension: PinnedExcerptsExtension | None = None
        self.docs_prefix = "docs"  # docs_dir as errors name a page: "docs/index.md"
        self.publication: Any = None  # generator.publish.Publication while `build` runs
        self.built = self.failed = False

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.command = command

    @event_priority(90)  # early: the staging folder must be set before others read site_dir
    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        if self.publication is not None:  # `serve` rebuilds in one process: settle the last one
            self._publish()
        self.built = self.failed = False
        if not self.config.enabled:
            return config
        from generator.errors import InputError
        from generator.settings import Settings

        root = Path(config.config_file_path).resolve().parent
        options = {**self.config, "custom_dir": config.theme.custom_dir}
        try:
            lock = lock_path(root, self.config.lock)
            if self.command == "build" and not any(name in config.plugins for name in STAGED_BY):
                self._begin(config, lock, Settings.load(root, options).cache_dir)  # first
            excerpts, render, lock_file = load_excerpts(lock, root=root, options=options)
        except InputError as error:
            raise PluginError(f"Pinned excerpts: {error}") from None
        log.info("Pinned excerpts: %d excerpts of %s verified", len(excerpts), lock_file)
        self._take_over_listed_extension(config, root, lock)
        self.extension = PinnedExcerptsExtension(
            excerpts=excerpts, render=render, lock_file=lock_file, stylesheet=False
        )
        for name in NEEDED_EXTENSIONS:
            if not _has(config.markdown_extensions, name):
                config.markdown_extensions.append(name)
        config.markdown_extensions.append(self.extension)
        docs = Path(config.docs_dir).resolve()
        self.docs_prefix = docs.name if docs.parent == root else str(docs)
        if str(lock) not in config.watch:
            config.watch.append(str(lock))
        if self.config.stylesheet and STYLESHEET not in config.extra_css:
            config.extra_css.append(STYLESHEET)
        return config

    def _take_over_listed_extension(self, config: MkDocsConfig, root: Path, lock: Path) -> None:
        """The extension listed under markdown_extensions (for engines that ignore MkDocs
        plugins, as Zensical does) gives way to the plugin's own, once its lock is checked to be
        the plugin's; a site that does not list it is told what those engines would show."""
        listed = [e for e in config.markdown_extensions if e in EXTENSION_NAMES]
        for name in listed:
            given = (config.mdx_configs.pop(name, None) or {}).get("lock")
            if given is not None and lock_path(root, str(given)).resolve() != lock.resolve():
                from generator.errors import InputError

                clash = InputError(
                    f"the plugin's lock is {self.config.lock}, the Markdown extension's {given}:"
                    " MkDocs would quote one and Zensical the other",
                    file="mkdocs.yml",
                    entry=name,
                    fix="give both the same `lock`, or leave it out of one",
                )
                raise PluginError(f"Pinned excerpts: {clash}")
            config.markdown_extensions.remove(name)
        if not listed:
            log.info(
                "Pinned excerpts: engines that ignore MkDocs plugins (Zensical) would show the"
                " excerpt blocks as text; list `- pinned_excerpts` under markdown_extensions too"
            )

    def _begin(self, config: MkDocsConfig, lock: Path, cache: Path) -> None:
        """Take the site's build lock and build into a staging folder (on_shutdown publishes it,
        or drops it when the build failed); a site_dir that is, holds or lies inside what the
        build reads (the lock and the cache among it) is refused."""
        from generator.publish import Publication, project_inputs

        inputs = project_inputs(config, lock, cache)
        self.publication = Publication.begin(Path(config.site_dir), inputs=inputs, say=log.info)
        config.site_dir = str(self.publication.staging)

    def on_files(self, files: Files, *, config: MkDocsConfig) -> Files:
        if self.config.enabled and self.config.stylesheet:
            css = (Path(__file__).parent / "pinned-excerpts.css").read_bytes()
            files.append(File.generated(config, STYLESHEET, content=css))
        return files

    def on_page_markdown(
        self, markdown: str, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str:
        if self.extension is not None:
            self.extension.page = f"{self.docs_prefix}/{page.file.src_uri}"
        return markdown

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        self.built = True

    def on_build_error(self, *, error: Exception) -> None:
        self.failed = True

    @event_priority(-100)  # last: publish only after every other plugin has finished
    def on_shutdown(self) -> None:
        self._publish()

    def _publish(self) -> None:
        """Publish only a build that ran to the end (not one that failed or was interrupted)."""
        publication, self.publication = self.publication, None
        if publication is None:
            return
        raised = sys.exc_info()[0]  # on_shutdown runs in `finally`: what ended the build
        if self.built and not self.failed and raised is None:
            publication.commit()
        else:
            interrupted = raised is not None and not issubclass(raised, Exception)
            publication.abandon("build interrupted" if interrupted else "build failed")
