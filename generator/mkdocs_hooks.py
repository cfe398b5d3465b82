"""The thin MkDocs layer: run the generator inside `mkdocs build` / `mkdocs serve`.

- on_config: load pins, excerpts and assets (a bad pin stops the build here, before any output).
- on_files: add generated files (KaTeX, LaTeX tables) as virtual files; never write into docs/.
- on_page_markdown: fill each page's {{ macro() }} calls.
- `mkdocs build` writes into a staging directory that replaces site/ only when the whole build
  (strict checks included) succeeded, so a failed build leaves the previous site/ as it was.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.utils import get_relative_url

_PROJECT = str(Path(__file__).resolve().parent.parent)

STATE: dict = {"command": None, "failed": False, "site_dir": None, "staging": None, "site": None}


def _root(config) -> Path:
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
        return out.stdout.strip() or "315532800"
    except (OSError, subprocess.SubprocessError):
        return "315532800"


def on_startup(command: str, dirty: bool) -> None:
    STATE.update(command=command, failed=False)


def on_config(config):
    root = _root(config)
    os.environ.setdefault("SOURCE_DATE_EPOCH", _source_date_epoch(root))
    # Import the generator that sits next to this mkdocs.yml, even if another copy is installed
    # (MkDocs restores sys.path after loading a hook file, so this is done here, at call time).
    # `serve` loads this file afresh on every rebuild: drop the old generator modules so edits
    # show up (a plain build has not imported them yet, so this removes nothing).
    if sys.path[0] != _PROJECT:
        sys.path.insert(0, _PROJECT)
    for name in [m for m in sys.modules if m == "generator" or m.startswith("generator.")]:
        del sys.modules[name]
    from generator.errors import InputError
    from generator.site import Site

    try:
        STATE["site"] = Site.load(root)
    except InputError as error:
        raise PluginError(f"Inside the Model: {error}") from None
    for watched in ("generator", "sources"):
        if str(root / watched) not in config.watch:
            config.watch.append(str(root / watched))
    if STATE["command"] == "build":
        final = Path(config.site_dir)
        staging = final.with_name(f".{final.name}.staging")
        shutil.rmtree(staging, ignore_errors=True)
        STATE.update(site_dir=final, staging=staging)
        config.site_dir = str(staging)
    return config


def on_files(files: Files, config) -> Files:
    from generator.errors import InputError
    from generator.features import load_features
    from generator.figures import figure_files
    from generator.pages import latex_tables

    site = STATE["site"]
    generated = {**site.generated, **latex_tables(), **figure_files(site.cache_dir)}
    try:
        for feature in load_features():
            if hasattr(feature, "files"):
                generated.update(feature.files(site))
    except InputError as error:
        raise PluginError(f"Inside the Model: {error}") from None
    for path, content in sorted(generated.items()):
        files.append(File.generated(config, path, content=content))
    return files


def on_page_markdown(markdown: str, page, config, files: Files) -> str:
    from generator.errors import InputError
    from generator.pages import PageMacros, render_page

    def url_for(docs_path: str) -> str | None:
        target = files.get_file_from_path(docs_path)
        return get_relative_url(target.url, page.file.url) if target else None

    macros = PageMacros(STATE["site"], src_path=page.file.src_uri, meta=page.meta, url_for=url_for)
    try:
        return render_page(markdown, macros)
    except InputError as error:
        raise PluginError(f"Inside the Model: {error}") from None
    except Exception as error:  # a Jinja syntax or name error in a page
        raise PluginError(f"Inside the Model: docs/{page.file.src_uri}: {error}") from error


def on_build_error(error: Exception) -> None:
    STATE["failed"] = True


def on_shutdown() -> None:
    staging, final = STATE.get("staging"), STATE.get("site_dir")
    if STATE["command"] != "build" or staging is None or not staging.exists():
        return
    if STATE["failed"]:
        shutil.rmtree(staging, ignore_errors=True)
        print(f"Inside the Model: build failed; {final} was left as it was.", file=sys.stderr)
        return
    old = final.with_name(f".{final.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    staging.rename(final)
    shutil.rmtree(old, ignore_errors=True)
