"""Figures drawn by worker processes while the build goes on.

matplotlib draws on one core and takes ~0.4–1 s to import, so a cold build that drew its figures
itself would wait for them. A `Drawing` starts its workers at once (`python -m generator.drawing`,
plain subprocesses: nothing re-runs the caller's main script, no fork copies `mkdocs serve`'s
threads), one per spare core, each drawing its share, while the build fetches sources and fills
pages; `files()` waits for them only when the bytes are needed. A figure already in the store
(signed, keyed by a hash of everything its drawing depends on, so an entry can only be read back
for the path it was drawn for) is read, not drawn. Workers or this process: the same bytes.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from generator.store import Store

MAX_WORKERS = 4  # processes drawing at once (each imports matplotlib: ~0.5 s, ~100 MB)
CHECKOUT = Path(__file__).resolve().parent.parent  # where `-m generator.drawing` finds this code


@dataclass(frozen=True)
class Figure:
    """One figure: where the site serves it, what draws it, and its cache key."""

    path: str  # site path: "figures/params-gpt2.svg"
    draw: str  # "module:function", called as function(*args), returning the file's bytes
    args: tuple  # JSON values (workers receive them as JSON)
    key: str  # sha256 of everything the drawing depends on (its store key)


def draw(figure: Figure) -> bytes:
    """Draw one figure in this process."""
    module, _, name = figure.draw.partition(":")
    return bytes(getattr(importlib.import_module(module), name)(*figure.args))


def spare_cores() -> int:
    """Workers to start: one per core the build process leaves free (at least one)."""
    if hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:  # pragma: no cover (macOS, Windows)
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores - 1))


class Drawing:
    """Figures being drawn: cached ones read now, the rest started in workers now (or, with
    workers=0, drawn by this process when `files()` asks)."""

    def __init__(
        self,
        figures: Sequence[Figure],
        cache_dir: Path | None = None,
        *,
        workers: int | None = None,
    ) -> None:
        self.figures = list(figures)
        self.store = Store(cache_dir) if cache_dir is not None else None
        self.done: dict[str, bytes] = {}
        self.unkept: dict[str, bytes] = {}  # drawn, not stored yet (files(keep=False))
        missing = []
        for figure in self.figures:
            cached = self.store.get_entry("figure", figure.key) if self.store else None
            if cached is None:
                missing.append(figure)
            else:
                self.done[figure.path] = cached
        count = spare_cores() if workers is None else workers
        self.here = missing if count == 0 else []
        shares = [share for share in (missing[i::count] for i in range(count)) if share]
        self.processes: list[subprocess.Popen[bytes]] = []
        self.pool = ThreadPoolExecutor(max_workers=len(shares)) if shares else None
        self.pending: list[Future[dict[str, bytes]]] = [
            self.pool.submit(self._in_worker, share) for share in shares if self.pool
        ]

    @property
    def paths(self) -> list[str]:
        return [figure.path for figure in self.figures]

    def _in_worker(self, share: list[Figure]) -> dict[str, bytes]:
        tasks = json.dumps([[f.path, f.draw, list(f.args)] for f in share]).encode()
        process = subprocess.Popen(
            [sys.executable, "-m", "generator.drawing"],
            cwd=CHECKOUT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.processes.append(process)
        out, err = process.communicate(tasks)
        if process.returncode != 0:
            names = ", ".join(f.path for f in share)
            raise RuntimeError(f"drawing {names} failed:\n{err.decode(errors='replace')}")
        drawn = json.loads(out)
        return {f.path: base64.b64decode(drawn[f.path]) for f in share}

    def files(self, *, keep: bool = True) -> dict[str, bytes]:
        """Every figure by site path, in the order given (waits for the workers). The figures
        drawn are stored now, or with keep=False only when `keep()` is called (a build keeps
        them once it knows its inputs did not change while they were drawn)."""
        drawn: dict[str, bytes] = {}
        for future in self.pending:
            drawn.update(future.result())
        self.pending = []
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None
        for figure in self.here:
            drawn[figure.path] = draw(figure)
        self.here = []
        self.unkept.update(drawn)
        if keep:
            self.keep()
        self.done.update(drawn)
        return {path: self.done[path] for path in self.paths}

    def keep(self) -> None:
        """Store the figures drawn (not read from the store) under their keys."""
        unkept, self.unkept = self.unkept, {}
        for figure in self.figures:
            if figure.path in unkept and self.store is not None:
                self.store.put_entry("figure", figure.key, unkept[figure.path])

    def cancel(self) -> None:
        """Stop the workers (the build failed or was interrupted)."""
        for process in self.processes:
            if process.poll() is None:
                process.kill()
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None
        self.pending = []


def _worker() -> None:
    """A worker of Drawing: JSON [[path, "module:function", args], ...] on stdin, JSON
    {path: base64 bytes} on stdout."""
    parent = os.getppid()
    tasks = json.loads(sys.stdin.buffer.read())
    out = {}
    for path, function, args in tasks:
        if os.getppid() != parent:  # the build was killed (SIGTERM skips its cleanup): stop
            sys.exit(1)
        out[path] = base64.b64encode(draw(Figure(path, function, tuple(args), ""))).decode("ascii")
    sys.stdout.buffer.write(json.dumps(out).encode())


if __name__ == "__main__":
    _worker()
