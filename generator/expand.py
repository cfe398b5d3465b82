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
import errno
import fcntl
import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from generator.errors import InputError
from generator.settings import Settings

PLUGIN_NAMES = ("inside-the-model", "itm")  # the generator's plugin (and its old name)
FRONT_MATTER = re.compile(r"\A(---\s*\n.*?\n(?:---|\.\.\.)\s*\n)", re.DOTALL)
RENDER_JS = "assets/katex/render.js"
KATEX_JS = "assets/katex/katex.min.js"
TREE = ("docs", "overrides", "mkdocs.yml")  # what OUT holds, mkdocs.yml written last
UNFINISHED = ".itm-expand-unfinished"  # in OUT while a run writes its tree there
OLDER = ".itm-expand-partial-*"  # what older versions left in OUT (a tree being written)
MAX_CONFIG_BYTES = 1 << 20  # a mkdocs.yml or a file it INHERITs: 3 KB today

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

    config = _load_config(config_file)
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
    with _claimed(out, project_inputs(config, *settings.inputs)):
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
            raise _out_error(error, out, "write the expanded tree") from None
    return pages


def _load_config(config_file: Path) -> Any:
    """The MkDocs configuration, or an InputError saying why MkDocs cannot load it."""
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, ConfigurationError

    looping = _inherit_loop(config_file)
    if looping is not None:  # MkDocs would follow it until Python's recursion limit
        raise InputError(
            f"its INHERIT chain comes back to {looping}, so it never ends",
            file=str(config_file),
            entry="INHERIT",
            fix="make INHERIT name a parent file that does not itself inherit from this one",
        )
    try:
        return load_config(str(config_file))
    except (ConfigurationError, Abort) as error:  # Abort: MkDocs has logged each error above
        raise InputError(
            f"MkDocs cannot load it: {error}",
            file=str(config_file),
            fix="correct the configuration (`mkdocs build` shows the same error)",
        ) from None
    except RecursionError:  # YAML nested thousands deep
        raise InputError(
            "MkDocs cannot load it: it nests deeper than Python's recursion limit",
            file=str(config_file),
            fix="flatten the nesting of its YAML",
        ) from None


def _inherit_loop(config_file: Path) -> Path | None:
    """The file at which `config_file`'s INHERIT chain comes back on itself, or None (no loop, or
    a file MkDocs reports itself: missing, not YAML). Each file is read bounded: an INHERIT
    naming /dev/zero was read until memory ran out, a FIFO waited on for ever."""
    from mkdocs.utils.yaml import yaml_load

    seen: set[Path] = set()
    path, holder = config_file.resolve(), None
    while path not in seen:
        seen.add(path)
        if not path.exists():  # MkDocs says which inherited file is missing
            return None
        try:  # a str: yaml_load does not follow its INHERIT
            data = yaml_load(_config_text(path, holder))
        except InputError:
            raise
        except Exception:  # noqa: BLE001 - MkDocs reads it next and says what is wrong
            return None
        parent = data.get("INHERIT") if isinstance(data, dict) else None
        if not isinstance(parent, str):
            return None
        path, holder = (path.parent / parent).resolve(), path
    return path


def _config_text(path: Path, holder: Path | None) -> str:
    """The text of a configuration file (`holder`'s INHERIT, if given), read bounded."""
    from generator.checked_io import read_text_input

    try:
        return read_text_input(path, max_bytes=MAX_CONFIG_BYTES, fix="")
    except InputError as error:
        if holder is None:
            raise InputError(
                error.problem, file=str(path), fix="name a site's mkdocs.yml"
            ) from None
        raise InputError(
            f"its INHERIT names {path}: {error.problem}",
            file=str(holder),
            entry="INHERIT",
            fix="make INHERIT name the YAML file of a parent configuration",
        ) from None


@contextmanager
def _claimed(out: Path, inputs: list[Path]) -> Iterator[None]:
    """OUT made if need be and held for this run (_locked), the unfinished tree of a run that was
    killed there cleared, and refused unless then empty. The tree is written in OUT under a
    marker: a run that fails halfway clears what it wrote, and one killed halfway (the marker
    left) is cleared by the next, where OUT was refused as not empty for ever."""
    from generator.publish import overlap

    clash = overlap(out, inputs)
    if clash:
        raise InputError(
            f"the folder (symlinks followed) {clash}, which the build reads: the expanded tree"
            " would replace it",
            file=str(out),
            fix="name a new folder outside docs_dir, sources/, generator/, the cache and the"
            " theme's folders, and not holding mkdocs.yml",
        )
    folder = _locked(out)
    try:
        try:
            _clear_unfinished(out)
            if any(out.iterdir()):
                raise InputError(
                    "the folder is not empty", file=str(out), fix="name a new folder for the tree"
                )
            (out / UNFINISHED).touch()
        except OSError as error:
            raise _out_error(error, out, "write the expanded tree") from None
        try:
            yield
        except BaseException:
            _clear_unfinished(out)
            raise
        _remove(out / UNFINISHED)
    finally:
        os.close(folder)


def _locked(out: Path) -> int:
    """OUT, made if need be, opened and locked for this run: an flock, which closing the returned
    descriptor (or the process's end, a kill included) drops. A second run into OUT is refused:
    each cleared the other's tree as a leftover ("Directory not empty" tracebacks)."""
    try:
        if out.exists() and not out.is_dir():
            raise InputError(
                "not a folder", file=str(out), fix="name a new folder for the expanded tree"
            )
        out.mkdir(parents=True, exist_ok=True)
        folder = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        raise _out_error(error, out, "create the folder") from None
    try:
        fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(folder)
        if isinstance(error, BlockingIOError):
            raise InputError(
                "another `itm expand` is writing into this folder",
                file=str(out),
                fix="wait for it to finish, or name another folder",
            ) from None
        raise _out_error(error, out, "lock the folder") from None
    return folder


def _clear_unfinished(out: Path) -> None:
    """Remove the tree a run stopped halfway left in OUT (it holds the UNFINISHED marker; under
    the lock, no run is writing it). What cannot be removed stays: OUT is then "not empty"."""
    if (out / UNFINISHED).exists():
        for name in TREE:
            _remove(out / name)
        _remove(out / UNFINISHED)
    for older in out.glob(OLDER):
        _remove(older)


def _remove(path: Path) -> None:
    """Remove a file or a folder (a symlink, not what it points to), if it is there."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with suppress(OSError):
            path.unlink(missing_ok=True)


def _out_error(error: OSError, out: Path, doing: str) -> InputError:
    """A file system error met on OUT as an InputError naming OUT, what happened and the fix."""
    path = os.fsdecode(error.filename) if error.filename else str(out)
    at = "" if path == str(out) else f" at {path}"
    what = f"{error.strerror or error} ({errno.errorcode.get(error.errno or 0, 'error')})"
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        fix = f"free some space on the disk holding {out}, then run again"
    elif error.errno == errno.EFBIG:
        fix = "raise the limit on the size of a file this shell may write (`ulimit -f`)"
    elif error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        fix = "name a new folder in a place you may write"
    elif error.errno == errno.ENAMETOOLONG:
        fix = "name a folder whose every name is at most 255 bytes long"
    else:
        fix = f"check {path}, then run again"
    return InputError(f"cannot {doing}{at}: {what}", file=str(out), fix=fix)


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
