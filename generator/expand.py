"""`itm expand OUT`: the expanded docs tree, which plain MkDocs, ProperDocs, Zensical or another
engine builds without this project's plugin (tests/test_expand.py builds it with all three).

The generator's work comes from the build core (generator/build.py), exactly as in a plugin
build: every page with its {{ macro() }} calls filled, and every generated file (KaTeX's
stylesheet and fonts, LaTeX tables, charts, the walkthrough's and forward pass's data) written
beside the pages. OUT gets:

    OUT/docs/       the filled pages (front matter kept), the generated files, the other docs files
    OUT/overrides/  the theme's custom_dir, copied (per-page assets)
    OUT/mkdocs.yml  mkdocs.yml without the generator's plugin, with its options resolved

What the plugin does at the HTML stage is not in the tree, so a plain build differs from the
site in these, and only these: math is typeset in the reader's browser by the pinned KaTeX
(assets/katex/render.js) instead of at build time; the search index does not add the bare
digits of a separated number; code line numbers stay in the Tab order; the Sources page's table
of contents is not shortened; and the build is not published atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from generator.errors import InputError
from generator.expand_config import load_site_config
from generator.expand_out import claimed, out_error
from generator.settings import Settings

PLUGIN_NAMES = ("inside-the-model", "itm")  # the generator's plugin (and its old name)
FRONT_MATTER = re.compile(r"\A(---\s*\n.*?\n(?:---|\.\.\.)\s*\n)", re.DOTALL)
RENDER_JS = "assets/katex/render.js"
KATEX_JS = "assets/katex/katex.min.js"

# Typesets each arithmatex element with the pinned KaTeX, as the build does (same trust and
# strictness), after every page load under Material's instant navigation.
RENDER_SCRIPT = """// Math typeset in the browser by the pinned KaTeX (the plugin does it at build time).
(function () {
  var options = %s;
  function typeset() {
    document.querySelectorAll(".arithmatex").forEach(function (element) {
      var text = element.textContent.trim();
      var display = element.tagName === "DIV";
      var tex = text.slice(2, -2);  // without \\( \\) or \\[ \\]
      katex.render(tex, element, Object.assign({displayMode: display,
        trust: function (c) { return c.command === "\\\\htmlData"; },
        strict: function (code) { return code === "htmlExtension" ? "ignore" : "error"; }
      }, options));
    });
  }
  if (window.document$) { window.document$.subscribe(typeset); } else { typeset(); }
})();
"""


def expand(config_file: Path, out: Path) -> list[str]:
    """Write the expanded tree of the site described by `config_file` into `out` (which must not
    exist, or be empty, and must not be, hold or lie inside what the build reads); returns the
    pages written."""
    from mkdocs.structure.files import File

    from generator.build import SiteBuild
    from generator.publish import project_inputs
    from generator.render.katex import OPTIONS

    config = load_site_config(config_file)
    named = [name for name in PLUGIN_NAMES if name in config.plugins]
    if not named:  # a site of its own (pinned-excerpts alone): no macros, no generated files
        raise InputError(
            f"the site does not use the {PLUGIN_NAMES[0]} plugin: there is nothing to expand",
            file=str(config_file),
            entry="plugins",
            fix="plain MkDocs builds this site as it is; itm expand is for a site whose "
            f"plugins list {PLUGIN_NAMES[0]}",
        )
    root = config_file.resolve().parent
    docs = Path(config.docs_dir)
    options = dict(config.plugins[named[0]].config)
    settings = Settings.load(root, {**options, "custom_dir": config.theme.custom_dir})
    with claimed(out, project_inputs(config, *settings.inputs)):
        build = SiteBuild.start(settings)
        made = build.files()  # on a failure it stops the charts' worker itself
        generated = {**made.files, **build.figures()}
        generated[KATEX_JS] = made.katex_js  # the browser typesets the math here
        generated[RENDER_JS] = (RENDER_SCRIPT % json.dumps(OPTIONS)).encode()

        sources = sorted(_docs_files(docs))
        paths = sources + [path for path in generated if path not in sources]
        files = [File(p, str(docs), config.site_dir, config.use_directory_urls) for p in paths]
        by_path = {f.src_uri: f for f in files}
        try:
            pages = _write_tree(out, config_file, config, docs, sources, generated, by_path, build)
        except OSError as error:  # a full disk, a read-only OUT, `ulimit -f`
            raise out_error(error, out, "write the expanded tree") from None
    return pages


def _write_tree(
    tree: Path,
    config_file: Path,
    config: Any,
    docs: Path,
    sources: list[str],
    generated: dict[str, bytes],
    by_path: dict[str, Any],
    build: Any,
) -> list[str]:
    """The expanded tree in `tree`: docs/ with every page filled, the generated files beside
    them, the theme's overrides and a plain mkdocs.yml."""
    from mkdocs.utils import get_relative_url

    from generator.build import PageSource, family_section

    addresses = [(f.src_uri, f.url) for f in by_path.values()]
    sections = _nav_sections(config, by_path)
    target = tree / "docs"
    pages = []
    for path in sources:
        source_file = docs / path
        if not path.endswith(".md"):
            _write(target / path, source_file.read_bytes())
            continue
        text = source_file.read_text(encoding="utf-8")
        front = FRONT_MATTER.match(text)
        head = front[1] if front else ""
        from mkdocs.utils.meta import get_data

        markdown, meta = get_data(text)
        page_url = by_path[path].url

        def url_for(docs_path: str, page_url: str = page_url) -> str | None:
            found = by_path.get(docs_path)
            return get_relative_url(found.url, page_url) if found else None

        filled = build.fill(PageSource(path, markdown, meta, url_for), addresses)
        if filled.description is not None and "description" not in meta:
            head = _with_meta(head, "description", filled.description)
        section = family_section(meta, sections.get(path))
        if section:  # what the plugin sets from MkDocs' page.parent, which Zensical lacks
            head = _with_meta(head, "family_section", section)
        _write(target / path, (head + filled.markdown).encode("utf-8"))
        pages.append(path)
    for path, data in generated.items():
        _write(target / path, data)
    build.record()
    if config.theme.custom_dir:
        shutil.copytree(config.theme.custom_dir, tree / "overrides")
    _write(tree / "mkdocs.yml", _plain_config(config_file, config).encode("utf-8"))
    return pages


def _docs_files(docs: Path) -> list[str]:
    """Every file under docs/ (as MkDocs reads it: hidden files and folders left out)."""
    found = []
    for current, dirs, names in os.walk(docs):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if not name.startswith("."):
                found.append((Path(current) / name).relative_to(docs).as_posix())
    return found


def _nav_sections(config: Any, by_path: dict[str, Any]) -> dict[str, str]:
    """docs path -> the title of the nav section holding the page, as MkDocs builds the nav."""
    from mkdocs.structure.files import Files
    from mkdocs.structure.nav import get_navigation

    nav = get_navigation(Files(list(by_path.values())), config)
    return {page.file.src_uri: page.parent.title for page in nav.pages if page.parent}


def _with_meta(head: str, key: str, value: str) -> str:
    """Front matter with `key: value` added (a description a block gave, a family's section)."""
    line = f"{key}: {json.dumps(value, ensure_ascii=False)}\n"
    if not head:
        return f"---\n{line}---\n"
    first, _, rest = head.partition("\n")
    return f"{first}\n{line}{rest}"


def _plain_config(config_file: Path, config: Any) -> str:
    """mkdocs.yml for the expanded tree: the generator's plugin left out, the browser's KaTeX
    added, the paths made relative to the tree; values such as !ENV resolved now."""
    import yaml
    from mkdocs.utils.yaml import yaml_load

    with open(config_file, encoding="utf-8") as handle:
        data = yaml_load(handle)
    data["plugins"] = [p for p in data.get("plugins", []) if _plugin_name(p) not in PLUGIN_NAMES]
    data["docs_dir"] = "docs"
    data.pop("site_dir", None)
    if config.theme.custom_dir:
        data.setdefault("theme", {})["custom_dir"] = "overrides"
    data["extra_javascript"] = [*data.get("extra_javascript", []), KATEX_JS, RENDER_JS]
    header = (
        "# The expanded tree of this site (`itm expand`): builds with plain MkDocs + Material,\n"
        "# ProperDocs or Zensical.\n"
    )
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def _plugin_name(entry: Any) -> str:
    return next(iter(entry)) if isinstance(entry, dict) else str(entry)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "expand",
        help="write the expanded docs tree (filled pages, generated files) for plain MkDocs",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument("out", type=Path, help="a new folder for the tree")
    parser.add_argument(
        "-f", "--config-file", type=Path, default=Path("mkdocs.yml"), help="the site's mkdocs.yml"
    )
    parser.set_defaults(func=_command)


def _command(args: argparse.Namespace) -> int:
    if not args.config_file.is_file():
        raise InputError(
            "no such file", file=str(args.config_file), fix="run in the site's folder, or pass -f"
        )
    pages = expand(args.config_file, args.out)
    print(f"{len(pages)} pages and their generated files written to {args.out}")
    print(f"build them with: mkdocs build -f {args.out / 'mkdocs.yml'}")
    return 0
