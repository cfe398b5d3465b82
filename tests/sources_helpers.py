"""Test helpers for generator.sources: a made-up upstream git repo, a lock writer, and small
127.0.0.1 servers shaped like GitHub's raw endpoint and a PEP 691 PyPI simple index.

All upstream content here is invented for the tests; no real upstream code is used.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tarfile
import threading
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

# A made-up module with functions, a decorated class method and nested defs.
TOY_V1 = '''\
"""A toy module used as upstream in tests."""

import functools
import math

SCALE = 2.0


def helper(x):
    return x * SCALE


class Widget:
    """A widget."""

    def __init__(self, size):
        self.size = size

    @staticmethod
    @functools.cache
    def render(x):
        # two decorators above
        return helper(x) + 1

    def area(self):
        return self.size ** 2


def outer(n):
    def inner(k):
        return k + n

    return inner(n)


def tail():
    return "end"
'''

# v2: four lines inserted above Widget (everything below moves by +4), area() changed.
TOY_V2 = TOY_V1.replace(
    "class Widget:",
    "def added():\n    return 0\n\n\nclass Widget:",
).replace("        return self.size ** 2", "        return self.size * self.size")


def sha256(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()


def lines_text(text: str, *ranges: tuple[int, int]) -> str:
    """The excerpt text of `ranges` in `text`, computed independently of generator.sources."""
    lines = text.split("\n")
    return "".join(line + "\n" for a, b in ranges for line in lines[a - 1 : b])


def line_of(text: str, needle: str) -> int:
    """1-based number of the first line containing `needle`."""
    for number, line in enumerate(text.split("\n"), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in text")


# ---------------------------------------------------------------- git


def git(directory: Path, *args: str) -> str:
    result = subprocess.run(
        [
            "git",
            "-C",
            str(directory),
            "-c",
            "user.name=Test",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def make_upstream(directory: Path, files: dict[str, str]) -> str:
    """Create (or add a commit to) a git repo holding `files`; returns the commit id."""
    if not (directory / ".git").exists():
        directory.mkdir(parents=True, exist_ok=True)
        git(directory, "init", "-q")
    for path, text in files.items():
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        git(directory, "add", path)
    git(directory, "commit", "-q", "-m", "upstream change")
    return git(directory, "rev-parse", "HEAD")


# ---------------------------------------------------------------- locks


REPO = "toy/upstream"
PATH = "pkg/toy.py"


def repo_table(commit: str, name: str = REPO) -> str:
    return (
        f'[repos."{name}"]\nurl = "https://github.com/{name}"\ncommit = "{commit}"\n'
        'license = "MIT"\n'
    )


def excerpt_table(
    excerpt_id: str,
    text: str,
    *,
    lines: list[list[int]] | None = None,
    symbol: str | None = None,
    path: str = PATH,
    repo: str = REPO,
    digest: str | None = None,
    level: str = "upstream",
) -> str:
    """One [[excerpts]] entry; the sha256 is computed here from `text` and the ranges."""
    out = [f'\n[[excerpts]]\nid = "{excerpt_id}"\nrepo = "{repo}"\npath = "{path}"\n']
    if symbol:
        out.append(f'symbol = "{symbol}"\n')
    if lines:
        out.append(f"lines = {json.dumps(lines)}\n")
        digest = digest or sha256(lines_text(text, *[tuple(r) for r in lines]))
    out.append(f'sha256 = "{digest}"\n')
    out.append(f'evidence_level = "{level}"\nevidence = "made up for a test"\n')
    return "".join(out)


def mirror_table(
    package: str,
    version: str,
    filename: str,
    archive: bytes,
    member: str,
    path: str = PATH,
    offset: int = 0,
    lines: list[list[int]] | None = None,
    *,
    commit: str,
) -> str:
    """One [[mirrors]] entry, vouching for `path`'s lines at `commit`."""
    return (
        f'\n[[mirrors]]\nrepo = "{REPO}"\ncommit = "{commit}"\npath = "{path}"\n'
        f'package = "{package}"\n'
        f'version = "{version}"\nfilename = "{filename}"\nsha256 = "{sha256(archive)}"\n'
        f'member = "{member}"\n'
        + (f"lines = {lines}\n" if lines else "")
        + (f"offset = {offset}\n" if offset else "")
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- archives


def wheel_bytes(members: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        for name, text in members.items():
            zipped.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), text)
    return buffer.getvalue()


def sdist_bytes(members: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tarball:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tarball.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


# ---------------------------------------------------------------- servers


@dataclass
class Reply:
    """One canned answer: status, body, optional delay and a Content-Length that lies."""

    body: bytes = b""
    status: int = 200
    delay: float = 0.0
    declared_length: int | None = None
    content_type: str = "application/octet-stream"
    trickle: float = 0.0  # seconds between single bytes of the body
    endless: int = 0  # stream this many zero bytes with no Content-Length instead of `body`
    trickled_headers: bool = False  # a header line that never ends, one byte every `trickle` s
    gate: threading.Barrier | None = None  # answer only once every request at the gate arrived


@dataclass
class FakeServer:
    """Routes path -> list of replies (the last one repeats); records every request path."""

    routes: dict[str, list[Reply]] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)
    accepts: list[str] = field(default_factory=list)  # the Accept header of each request
    url: str = ""

    def count(self, path: str) -> int:
        return self.hits.count(path)


class _Handler(BaseHTTPRequestHandler):
    server_state: FakeServer

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        state = self.server.state  # type: ignore[attr-defined]
        state.hits.append(self.path)
        state.accepts.append(self.headers.get("Accept", ""))
        replies = state.routes.get(self.path)
        if not replies:
            self.send_error(404)
            return
        reply = replies.pop(0) if len(replies) > 1 else replies[0]
        if reply.delay:
            time.sleep(reply.delay)
        if reply.gate is not None:
            try:
                reply.gate.wait()
            except threading.BrokenBarrierError:
                state.hits.append("gate broken: the requests did not overlap")
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            length = reply.declared_length if reply.declared_length is not None else len(reply.body)
            if not reply.endless:
                self.send_header("Content-Length", str(length))
            self.send_header("Connection", "close")
            if reply.trickled_headers:
                self.flush_headers()
                self.wfile.write(b"X-Slow: ")
                while True:  # until the client hangs up (BrokenPipeError)
                    self.wfile.write(b"a")
                    self.wfile.flush()
                    time.sleep(reply.trickle)
            self.end_headers()
            if reply.endless:
                block = bytes(1 << 16)
                for _ in range(reply.endless // len(block)):
                    self.wfile.write(block)
            elif reply.trickle:
                for byte in reply.body:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(reply.trickle)
            else:
                self.wfile.write(reply.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request, client_address) -> None:  # client gave up: fine
        pass


@contextmanager
def serve(state: FakeServer | None = None) -> Iterator[FakeServer]:
    """A threaded HTTP server on 127.0.0.1 (an ephemeral port) answering from `state.routes`."""
    state = state or FakeServer()
    server = _Server(("127.0.0.1", 0), _Handler)
    server.state = state  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def simple_index(files: dict[str, bytes], base_url: str) -> bytes:
    """A PEP 691 JSON project page listing `files` (filename -> bytes) under /files/."""
    return json.dumps(
        {
            "meta": {"api-version": "1.0"},
            "name": "x",
            "files": [
                {
                    "filename": name,
                    "url": f"{base_url}/files/{name}",
                    "hashes": {"sha256": sha256(data)},
                }
                for name, data in files.items()
            ],
        }
    ).encode()


def refused_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens (connection refused)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No developer settings leak in: a fresh cache dir, no git dirs, no server overrides, and
    Software Heritage's API at an address where nothing listens (a test that asks it serves it)."""
    for name in ("ITM_GIT_DIRS", "ITM_GITHUB_RAW", "ITM_PYPI_SIMPLE", "ITM_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ITM_SWH_API", refused_url())
    cache = tmp_path / "env-cache"
    monkeypatch.setenv("ITM_CACHE_DIR", str(cache))
    return cache
