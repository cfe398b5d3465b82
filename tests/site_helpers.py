"""Shared helpers for tests that build the site and look at it (HTML parsing, serving, browser)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE_LOCK = ROOT / "sources" / "lock.toml"  # the GPT-2 site's lock
SHARED = ROOT.parent / "shared"
SEEDS = SHARED / "seeds"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def page_address(docs_path: str) -> str:
    """A docs page's address relative to the site's root, as MkDocs makes it: "" for index.md,
    "llama/" for llama/index.md, "components/mlp/" for components/mlp.md."""
    stem = docs_path.removesuffix(".md")
    if stem == "index" or stem.endswith("/index"):
        return stem.removesuffix("index")
    return f"{stem}/"


def chromium_path() -> str:
    return os.environ.get("ITM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def build_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("ITM_CACHE_DIR", str(ROOT / ".cache"))
    env.setdefault("SOURCE_DATE_EPOCH", "1700000000")
    env["NO_MKDOCS_2_WARNING"] = "1"
    env.update(extra)
    return env


# mkdocs's own command line, in a process where importing torch fails and is reported: a build
# (cold or warm) must not need torch, so every test build proves it does not. A test may block
# more packages (a warm build needs no numpy: tests/test_memo.py).
BLOCKING_MKDOCS = """
import sys

BLOCKED = {blocked!r}
tried = []


class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            tried.append(name)
            raise ImportError(f"a build must not import {{name}}")
        return None


sys.meta_path.insert(0, Blocked())
from mkdocs.__main__ import cli

try:
    cli.main(args=sys.argv[1:], prog_name="mkdocs")
except SystemExit as done:
    code = done.code or 0
loaded = sorted(name for name in BLOCKED if name in sys.modules)
if tried or loaded:
    print(f"the build tried to import {{tried or loaded}}", file=sys.stderr)
    code = code or 3
sys.exit(code)
"""

NO_TORCH_MKDOCS = BLOCKING_MKDOCS.format(blocked=["torch"])

# Before NO_TORCH_MKDOCS: run PATCHES[name] (Python, with the module as `module`) right after
# generator module `name` is imported. Setting an attribute before the build does not last: the
# plugin drops and re-imports the generator's modules on every build (plugin._fresh_generator).
_AFTER_IMPORT = """
import importlib.machinery
import sys


class AfterImport:
    def find_spec(self, name, path=None, target=None):
        if name not in PATCHES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            exec(PATCHES[name], {"module": module})

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, AfterImport())
"""


def patched_mkdocs(patches: dict[str, str]) -> str:
    """NO_TORCH_MKDOCS (run it as `python -c CODE build ...`), with `patches` applied to generator
    modules as they are imported: {"generator.config": "module.CONFIGS['x'] = ..."}. For tests
    and benchmarks that need the build to see a model or a rule of their own. Give such a build
    a cache of its own (ITM_CACHE_DIR): the build memo (generator/memo.py) fingerprints files,
    not patches, so a shared cache could replay what an unpatched build made."""
    return f"PATCHES = {patches!r}\n" + _AFTER_IMPORT + NO_TORCH_MKDOCS


def mkdocs_build(
    site_dir: Path,
    *,
    config_dir: Path = ROOT,
    blocked: tuple[str, ...] = ("torch",),
    memory_cap: int | None = None,
    **env: str,
) -> subprocess.CompletedProcess:
    """`mkdocs build` as a reader would run it, with torch (and any other package `blocked`
    names) made unimportable (see BLOCKING_MKDOCS); returns the finished process. With
    `memory_cap` (bytes), the build and each of its workers may take that much memory (the
    data limit, so a build that reads a huge file whole stops with MemoryError instead of
    taking the machine; an address-space limit would stop KaTeX's V8, which reserves far more
    than it uses)."""
    script = BLOCKING_MKDOCS.format(blocked=sorted(blocked))

    def cap_memory() -> None:
        import resource

        if memory_cap is not None:
            resource.setrlimit(resource.RLIMIT_DATA, (memory_cap, memory_cap))

    return subprocess.run(
        [sys.executable, "-c", script, "build", "--site-dir", str(site_dir)],
        cwd=config_dir,
        env=build_env(**env),
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=cap_memory,
    )


def tree_digest(directory: Path) -> dict[str, str]:
    """{relative path: sha256} of every file below `directory`."""
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    prefix = "/"  # the URL path the site lives under ("/repo/" on GitHub Pages)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass

    def translate_path(self, path: str) -> str:
        if not path.startswith(self.prefix):
            return str(Path(self.directory) / "no such file")
        return super().translate_path("/" + path[len(self.prefix) :])


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        """A browser that drops a connection mid-file (a navigation, a closed page) is no error:
        its BrokenPipeError traceback read like a failure in CI's log. Anything else is shown."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def self_signed(folder: Path, host: str) -> tuple[Path, Path]:
    """A throwaway certificate and key for `host` (openssl), to serve a site at its https URL."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"]
        + ["-subj", f"/CN={host}", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return cert, key


@contextmanager
def serve(
    directory: Path, port: int = 0, *, prefix: str = "/", tls: tuple[Path, Path] | None = None
) -> Iterator[str]:
    """Serve `directory` on 127.0.0.1 (a free port unless given) under the URL path `prefix`,
    over TLS when given (certificate, key); yields the local base URL ending in '/'."""
    handler = type("Handler", (_QuietHandler,), {"prefix": prefix})
    server = _QuietServer(("127.0.0.1", port), functools.partial(handler, directory=str(directory)))
    if tls:
        import ssl

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    scheme = "https" if tls else "http"
    try:
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}{prefix}"
    finally:
        server.shutdown()
        server.server_close()


def seed_code_sections(seed_text: str) -> dict[str, list[str]]:
    """The Code section of a seed page: {"model.py 69–112": [lines...]} as printed in the seed.

    A section starts at a line like `model.py 69–112` and runs to the next such line or to the
    `Sources` heading; trailing blank lines are dropped.
    """
    import re

    label = re.compile(r"^[\w.]+\.py \d+–\d+$")
    lines = seed_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Code") and "·" in line)
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines[start + 1 :]:
        if line.startswith("Sources"):
            break
        if label.match(line):
            current = line
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    for body in sections.values():
        while body and not body[0].strip():
            body.pop(0)
        while body and not body[-1].strip():
            body.pop()
    return sections
