"""Build benchmark against the exact floor: bare MkDocs + Material building the same *expanded*
pages and generated files with this project's hooks and plugins off. One run, same machine; the
ratios are the figures.

    .venv/bin/python bench/bench_build.py [--repeat N] [--skip-cold] [--serve]

1. Expand: one real build with a recording plugin added last, which writes every page's final
   Markdown (front matter included) and every file, generated ones too, into a floor docs dir,
   its final HTML, the files the site ships and the final search index. The floor's one small hook
   ships the same files (the generator leaves out theme files no page loads) and replays each
   page's final HTML (math typeset at build time) and the search index as the generator left it.
2. Time the real build cold (each run from an empty cache: fetches, figures) and warm, and the
   floor build of the expanded docs, interleaved (cold, floor, warm, cold, …) so all three see
   the same load.
3. Check the floor's output is byte-identical to the real site, file by file.
4. --serve: `mkdocs serve`, edit a page → the edit is served, on a copy of the project and on the
   floor.
"""

from __future__ import annotations

import argparse
import filecmp
import gzip
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import print_table  # noqa: E402  (bench/report.py)

# Runs in a subprocess: one real build that records what MkDocs renders.
EXPAND = """
import sys
from pathlib import Path
import yaml
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.plugins import BasePlugin, event_priority

out = Path({out!r})

class Record(BasePlugin):
    @event_priority(-100)  # after every other plugin and hook
    def on_files(self, files, config):
        # the docs and generated files; the theme's stay the theme's
        self.ours = [
            f for f in files if f.src_dir is None or Path(f.src_dir) == Path(config.docs_dir)
        ]
        self.write_files()
        (out.parent / "files.txt").write_text("\\n".join(f.src_uri for f in files))
        return files

    def write_files(self, pages=True, site=None):  # pages: on_page_markdown writes them filled
        for f in self.ours if pages else [f for f in self.ours if not f.is_documentation_page()]:
            target = out / f.src_uri
            target.parent.mkdir(parents=True, exist_ok=True)
            # site: the bytes as shipped (KaTeX's fonts are cut in place after the pages)
            built = Path(site) / f.dest_uri if site else None
            target.write_bytes(built.read_bytes() if built else f.content_bytes)

    @event_priority(-100)
    def on_page_markdown(self, markdown, page, config, files):
        front = yaml.safe_dump(page.meta, allow_unicode=True, sort_keys=False) if page.meta else ""
        text = f"---\\n{{front}}---\\n\\n{{markdown}}" if front else markdown
        (out / page.file.src_uri).write_text(text, encoding="utf-8")
        return markdown

    @event_priority(-100)  # a cold build typesets math as late as on_env: record after it
    def on_page_context(self, context, page, config, nav):
        target = out.parent / "content" / (page.file.src_uri + ".html")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page.content, encoding="utf-8")
        target.with_suffix(".md").write_text(page.markdown, encoding="utf-8")
        return context

    @event_priority(-100)  # after the generator rewrote the search index
    def on_post_build(self, config):
        self.write_files(pages=False, site=config.site_dir)  # again: figures drawn, fonts cut
        index = Path(config.site_dir) / "search" / "search_index.json"
        if index.exists():
            (out.parent / "search_index.json").write_bytes(index.read_bytes())

config = load_config({config!r}, site_dir={site!r})
config.plugins["bench-record"] = Record()
config.plugins.on_startup(command="build", dirty=False)
try:
    build(config)
finally:
    config.plugins.on_shutdown()
"""


def env_for(cache: Path) -> dict[str, str]:
    env = {**os.environ, "ITM_CACHE_DIR": str(cache), "NO_MKDOCS_2_WARNING": "1"}
    # As on a reader's or maintainer's machine: Python keeps the bytecode it compiles. With
    # PYTHONDONTWRITEBYTECODE (set on some CI machines) every build compiled the generator's 180
    # modules again (0.3 s), while the floor's packages had theirs from pip: not the same work.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if "SOURCE_DATE_EPOCH" not in env:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%ct"], text=True, capture_output=True
        )
        env["SOURCE_DATE_EPOCH"] = out.stdout.strip() or "315532800"
    return env


CPU: dict[
    str, list[float]
] = {}  # CPU seconds of each kind of build (user + system, its workers too)


def build(config: Path, site: Path, env: dict[str, str], kind: str = "") -> float:
    """Wall seconds of one build; its CPU seconds go to CPU[kind] (the build process and every
    worker it waited for: a ratio of wall times from a loaded machine says little)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(
        [str(BIN / "mkdocs"), "build", "-q", "-f", str(config), "-d", str(site)],
        env=env,
        capture_output=True,
        text=True,
    )
    if result.returncode:
        raise SystemExit(f"mkdocs build -f {config} failed:\n{result.stderr}")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU.setdefault(kind, []).append(cpu)
    return wall


def project_plugins() -> set[str]:
    """This project's own MkDocs plugins (entry points in pyproject.toml): off in the floor."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(data.get("project", {}).get("entry-points", {}).get("mkdocs.plugins", {}))


# The floor's only hook: ship the files the site ships (the generator drops some of the theme's),
# and replay each page's final HTML (math typeset at build time, the same table-of-contents depth)
# and the search index as the site's build left them; the floor still converts every page's
# Markdown and indexes every page, reading the same text the site's search reads (formulas by
# their MathML: their drawings set aside, as the generator does, so the floor's search does not
# parse more HTML than the site's).
FLOOR_HOOK = """
from pathlib import Path
from mkdocs.plugins import CombinedEvent, event_priority
from generator.plugin import _prune_toc
from generator.render.drawings import put_drawings_back, set_drawings_aside
KEEP = set(Path({listing!r}).read_text().splitlines())
CONTENT = Path({content!r})
DRAWINGS = {{}}
@event_priority(10)
def _aside(context, page, config, nav):
    page.content, DRAWINGS[page.file.src_uri] = set_drawings_aside(page.content)
    return context
@event_priority(-10)
def _back(context, page, config, nav):
    page.content = put_drawings_back(page.content, DRAWINGS.pop(page.file.src_uri))
    return context
on_page_context = CombinedEvent(_aside, _back)
def on_files(files, config):
    for f in [f for f in files if f.src_uri not in KEEP]:
        files.remove(f)
    return files
def on_page_content(html, page, config, files):
    depth = page.meta.get("toc_depth")
    if isinstance(depth, int) and page.toc is not None:
        _prune_toc(page.toc, depth)
    recorded = CONTENT / (page.file.src_uri + ".html")
    if recorded.with_suffix(".md").read_text(encoding="utf-8").strip() != page.markdown.strip():
        return html  # edited since (the serve loop): MkDocs' own HTML
    return recorded.read_text(encoding="utf-8")
def on_post_build(config):
    index = CONTENT.parent / "search_index.json"
    if index.exists():
        (Path(config.site_dir) / "search" / "search_index.json").write_bytes(index.read_bytes())
"""


def floor_config(directory: Path, docs: Path) -> Path:
    """mkdocs.yml with this project's hooks and plugins off, reading the expanded docs."""
    from mkdocs.utils.yaml import yaml_load

    with open(ROOT / "mkdocs.yml", encoding="utf-8") as handle:
        parent = yaml_load(handle)
    hook = directory / "floor_hook.py"
    hook.write_text(
        FLOOR_HOOK.format(
            listing=str(docs.parent / "files.txt"), content=str(docs.parent / "content")
        )
    )
    lines = [f"INHERIT: {ROOT / 'mkdocs.yml'}", f"docs_dir: {docs}", f"hooks: [{hook}]"]
    lines.append("strict: false")
    custom_dir = parent.get("theme", {}).get("custom_dir")
    if custom_dir:  # relative paths would resolve against this file's folder
        lines.append(f"theme:\n  custom_dir: {ROOT / custom_dir}")
    if "plugins" in parent:
        ours = project_plugins()
        kept = [
            p for p in parent["plugins"] if (p if isinstance(p, str) else next(iter(p))) not in ours
        ]
        import yaml

        lines.append(yaml.safe_dump({"plugins": kept}, sort_keys=False).strip())
    path = directory / "mkdocs-floor.yml"
    path.write_text("\n".join(lines) + "\n")
    return path


def compare(real: Path, floor: Path) -> tuple[int, list[str]]:
    """(files identical, files that differ or exist on one side only)."""
    ours = {p.relative_to(real).as_posix() for p in real.rglob("*") if p.is_file()}
    theirs = {p.relative_to(floor).as_posix() for p in floor.rglob("*") if p.is_file()}
    same, differ = 0, sorted(ours ^ theirs)
    for name in sorted(ours & theirs):
        if filecmp.cmp(real / name, floor / name, shallow=False):
            same += 1
        else:
            differ.append(name)
    return same, differ


def copy_project(target: Path) -> Path:
    """The tracked files (as in the work tree) in a folder of their own, to edit while serving."""
    names = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, names):
        source = ROOT / name.decode()
        if source.is_file():
            (target / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name.decode())
    return target


def serve_loop(
    config: Path, page: Path, url: str, env: dict[str, str], repeat: int
) -> tuple[float, float]:
    """Median seconds from appending a marker to `page` to `url` serving it, and median seconds
    of the rebuilds themselves as `mkdocs serve` logs them (the loop adds the file watcher's
    polling, 0–0.5 s at random, which only many repeats average out)."""
    port = url.split(":")[2].split("/")[0]
    log_path = config.with_name(f"serve-{port}.log")
    log = open(log_path, "w")  # noqa: SIM115  (closed below)
    server = subprocess.Popen(
        [str(BIN / "mkdocs"), "serve", "-f", str(config), "-a", f"127.0.0.1:{port}"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    original = page.read_text(encoding="utf-8")
    try:
        fetch_until(url, b"</html>", timeout=600)
        times = []
        for i in range(repeat):
            marker = f"bench-marker-{i}-{time.time_ns()}"
            start = time.perf_counter()
            page.write_text(original + f"\n\n{marker}\n", encoding="utf-8")
            fetch_until(url, marker.encode(), timeout=300)
            times.append(time.perf_counter() - start)
            time.sleep(1.0)
        log.flush()
        built = re.findall(r"Documentation built in ([\d.]+) seconds", log_path.read_text())
        rebuilds = [float(seconds) for seconds in built[1:]]  # the first is the initial build
        return statistics.median(times), statistics.median(rebuilds)
    except SystemExit:
        log.flush()
        print(log_path.read_text()[-3000:], file=sys.stderr)
        raise
    finally:
        page.write_text(original, encoding="utf-8")
        server.terminate()
        server.wait(timeout=30)
        log.close()


def fetch_until(url: str, needle: bytes, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if needle in response.read():
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit(f"{url} never served {needle!r}")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="warm builds to time (and floor)")
    parser.add_argument("--skip-cold", action="store_true", help="warm the cache without timing")
    parser.add_argument(
        "--cold-repeat", type=int, default=3, help="cold builds to time (and floor)"
    )
    parser.add_argument("--serve", action="store_true", help="also time mkdocs serve's loop")
    parser.add_argument("--serve-repeat", type=int, default=9, help="edits timed in that loop")
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cache = tmp / "cache"
        env = env_for(cache)
        config = ROOT / "mkdocs.yml"
        # The expand step is a real build: it also fills `cache`, which the warm builds read.
        docs = tmp / "floor-docs"
        expand = EXPAND.format(out=str(docs), config=str(config), site=str(tmp / "expanded"))
        expanded = subprocess.run([sys.executable, "-c", expand], env=env, capture_output=True)
        if expanded.returncode:
            raise SystemExit(f"the expand build failed ({expanded.returncode}):\n{expanded.stderr}")
        floor_cfg = floor_config(tmp, docs)

        # Interleaved, cold, floor and warm in turn, so that all three see the same machine: its
        # speed drifts within minutes, and a ratio of builds timed at different moments would
        # measure the drift. Each cold build starts from an empty cache of its own (the fetches
        # vary most: the median).
        colds: list[float] = []
        warm: list[float] = []
        floor: list[float] = []
        cold_runs = 0 if args.skip_cold else args.cold_repeat
        for i in range(max(args.repeat, cold_runs)):
            if i < cold_runs:
                cache_i = env_for(tmp / f"cold-cache{i}")
                colds.append(build(config, tmp / f"cold{i}", cache_i, "cold"))
            floor.append(build(floor_cfg, tmp / f"floor{i}", env, "floor"))
            if i < args.repeat:
                warm.append(build(config, tmp / f"warm{i}", env, "warm"))
        if colds:
            cold = statistics.median(colds)
            spread = f"{min(colds):.2f}–{max(colds):.2f}"
            rows.append(
                (
                    f"cold build (empty cache: fetches, figures; median of {len(colds)})",
                    f"{cold:.2f} s ({spread})",
                )
            )
        warm_median, floor_median = statistics.median(warm), statistics.median(floor)
        rows.append((f"warm build (median of {len(warm)})", f"{warm_median:.2f} s"))
        rows.append(
            (
                f"floor: bare MkDocs + Material, expanded docs (median of {len(floor)})",
                f"{floor_median:.2f} s ({min(floor):.2f}–{max(floor):.2f})",
            )
        )
        if colds:
            rows.append(("cold / floor", f"{cold / floor_median:.2f}×"))
        rows.append(("warm / floor", f"{warm_median / floor_median:.2f}×"))
        cpu = {kind: statistics.median(seconds) for kind, seconds in CPU.items()}
        for kind in ("cold", "warm"):
            if kind in cpu:
                rows.append(
                    (
                        f"{kind} / floor in CPU seconds (median of each)",
                        f"{cpu[kind] / cpu['floor']:.2f}× ({cpu[kind]:.1f} s / {cpu['floor']:.1f} s)",
                    )
                )
        same, differ = compare(tmp / "warm0", tmp / "floor0")
        rows.append(
            ("floor output byte-identical to the site", f"{same} files; {len(differ)} differ")
        )
        rows += [("  differs", name) for name in differ[:10]]
        markdown = sum(p.stat().st_size for p in docs.rglob("*.md"))
        source = sum(p.stat().st_size for p in (ROOT / "docs").rglob("*.md"))
        rows.append(
            ("Markdown: written / expanded", f"{source / 1e6:.2f} / {markdown / 1e6:.2f} MB")
        )
        files = [p for p in (tmp / "warm0").rglob("*") if p.is_file()]
        rows.append(
            ("site", f"{len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.2f} MB")
        )
        for page in ("index.html", "components/attention/index.html", "sources/index.html"):
            size = len(gzip.compress((tmp / "warm0" / page).read_bytes(), mtime=0))
            rows.append((f"  {page} (gzip)", f"{size / 1e3:.1f} kB"))

        if args.serve:
            project = copy_project(tmp / "project")
            page = "glossary"
            url = f"http://127.0.0.1:{free_port()}/{page}/"
            n = args.serve_repeat
            project_page = project / "docs" / f"{page}.md"
            real, real_build = serve_loop(project / "mkdocs.yml", project_page, url, env, n)
            url = f"http://127.0.0.1:{free_port()}/{page}/"
            bare, bare_build = serve_loop(floor_config(tmp, docs), docs / f"{page}.md", url, env, n)
            rows.append((f"mkdocs serve: edit → served (median of {n})", f"{real:.2f} s"))
            rows.append(("  same loop on the floor", f"{bare:.2f} s"))
            rows.append(("  ratio", f"{real / bare:.2f}×"))
            rows.append(("  the rebuild alone, as serve logs it", f"{real_build:.2f} s"))
            rows.append(("  the floor's rebuild", f"{bare_build:.2f} s"))
            rows.append(("  ratio", f"{real_build / bare_build:.2f}×"))
    print_table(rows)
    print(f"\n{os.cpu_count()} cores; load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
