"""Figures drawn by worker processes while the build goes on.

matplotlib draws on one core and takes ~0.4–1 s to import, so a cold build that drew its figures
itself would wait for them. A `Drawing` starts its workers at once (`python -m generator.drawing`,
plain subprocesses managed from a `concurrent.futures` thread each: nothing re-runs the caller's
main script, no fork copies `mkdocs serve`'s threads), one per spare core, each drawing its
share, while the build fetches sources and fills pages; `files()` waits for them only when the
bytes are needed. A figure already in the store (signed, keyed by a hash of everything its
drawing depends on, so an entry can only be read back for the path it was drawn for) is read,
not drawn. Workers or this process: the same bytes.

A worker's life is tied to its build, and its build never waits on it forever:
- The build writes the tasks as one line and keeps the worker's stdin open; when the build ends
  (even by SIGKILL, even before the worker has imported anything) the kernel closes it, and the
  worker sees end-of-file: a thread of its own exits at once, and it checks again before every
  figure. Nothing depends on when the worker reads its parent's pid.
- A worker sends each figure as it is drawn. One that is stopped (SIGSTOP), or sends nothing for
  `stall` seconds while it runs (stuck), is killed; one killed by a signal (the OOM killer, a SIGKILL) has its undelivered
  figures drawn again once in a fresh worker; a second failure, or a drawing that raises, stops
  the build with a `DrawingError` naming the figures.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from generator.errors import InputError
from generator.log import log
from generator.store import Store

MAX_WORKERS = 4  # processes drawing at once (each imports matplotlib: ~0.5 s, ~100 MB)
STALL_SECONDS = 60.0  # a worker that sends no figure for this long is stuck (ITM_DRAW_TIMEOUT)
CHECKOUT = Path(__file__).resolve().parent.parent  # where `-m generator.drawing` finds this code
LOOK_AGAIN = 0.25  # seconds between looks at a quiet worker (is it stopped? past its stall?)
STDERR_KEPT = 4000  # characters of a failed worker's stderr quoted in the error


class DrawingError(InputError):
    """Figures that no worker could draw (a drawing raised, or workers died or stalled twice)."""


@dataclass(frozen=True)
class Figure:
    """One figure: where the site serves it, what draws it, and its cache key."""

    path: str  # site path: "figures/params-gpt2.svg"
    draw: str  # "module:function", called as function(*args), returning the file's bytes
    args: tuple  # JSON values (workers receive them as JSON)
    key: str  # sha256 of everything the drawing depends on (its store key)


@dataclass
class Delivery:
    """What one worker sent before it ended, and why it ended early (None: it finished)."""

    drawn: dict[str, bytes] = field(default_factory=dict)
    problem: str | None = None
    retry: bool = False  # killed or stalled: a fresh worker may well succeed


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
        stall: float = STALL_SECONDS,
    ) -> None:
        self.figures = list(figures)
        self.store = Store(cache_dir) if cache_dir is not None else None
        self.stall = stall
        self.done: dict[str, bytes] = {}
        self.unkept: dict[str, bytes] = {}  # drawn, not stored yet (files(keep=False))
        self.cancelled = False
        self._lock = threading.Lock()
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
        self.pending: list[tuple[list[Figure], Future[Delivery]]] = [
            (share, self.pool.submit(self._in_worker, share)) for share in shares if self.pool
        ]

    @property
    def paths(self) -> list[str]:
        return [figure.path for figure in self.figures]

    def _start(self, errors: IO[bytes]) -> subprocess.Popen[bytes]:
        with self._lock:  # cancel() kills every process started, and none after it
            if self.cancelled:
                raise DrawingError("the build was stopped while figures were being drawn")
            process = subprocess.Popen(
                [sys.executable, "-m", "generator.drawing"],
                cwd=CHECKOUT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,  # a file, read once it ended: a full pipe could block it
            )
            self.processes.append(process)
            return process

    def _in_worker(self, share: list[Figure]) -> Delivery:
        """Draw `share` in a new worker: every figure it sent, and why it stopped early if it did."""
        with tempfile.TemporaryFile() as errors:
            process = self._start(errors)
            assert process.stdin is not None and process.stdout is not None
            tasks = json.dumps([[f.path, f.draw, list(f.args)] for f in share]).encode()
            try:
                process.stdin.write(tasks + b"\n")
                process.stdin.flush()  # and kept open: its end-of-file tells the worker we are gone
                delivery = _receive(process, self.stall)
            except BrokenPipeError:  # it died before reading its tasks
                delivery = Delivery()
            finally:
                try:
                    process.wait(timeout=self.stall)  # it closed its output: it is exiting
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
                process.stdin.close()
                process.stdout.close()
            missing = [f.path for f in share if f.path not in delivery.drawn]
            if not missing:
                return Delivery(delivery.drawn)
            if delivery.problem is None:
                code = process.returncode
                if code < 0:
                    delivery.problem = f"the worker was killed by signal {-code}"
                    delivery.retry = True
                elif code != 0:
                    errors.seek(0)
                    tail = errors.read().decode("utf-8", errors="replace")[-STDERR_KEPT:]
                    delivery.problem = f"the worker failed (exit {code}):\n{tail}"
                else:
                    delivery.problem = f"the worker ended without drawing {missing[0]}"
                    delivery.retry = True
            return delivery

    def files(self, *, keep: bool = True) -> dict[str, bytes]:
        """Every figure by site path, in the order given (waits for the workers). The figures
        drawn are stored now, or with keep=False only when `keep()` is called (a build keeps
        them once it knows its inputs did not change while they were drawn)."""
        drawn: dict[str, bytes] = {}
        pending, self.pending = self.pending, []
        for share, future in pending:
            delivery = future.result()  # returns: every worker has its stall deadline
            if delivery.problem is not None and delivery.retry:
                rest = [f for f in share if f.path not in delivery.drawn]
                log.info(  # not a warning: the build recovers, and strict mode fails on warnings
                    "Inside the Model: %s; drawing %d figure(s) again", delivery.problem, len(rest)
                )
                again = self._in_worker(rest)
                delivery = Delivery({**delivery.drawn, **again.drawn}, again.problem)
            if delivery.problem is not None:
                raise DrawingError(
                    f"could not draw {', '.join(f.path for f in share)}: {delivery.problem}",
                    entry=share[0].draw,
                    fix=f"if the machine is very busy, allow a worker more time"
                    f" (ITM_DRAW_TIMEOUT, now {self.stall:g} s); a drawing that raised is a bug"
                    " in the figure's code",
                )
            drawn.update(delivery.drawn)
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
        with self._lock:
            self.cancelled = True
            for process in self.processes:
                if process.poll() is None:
                    process.kill()
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None
        self.pending = []


def _receive(process: subprocess.Popen[bytes], stall: float) -> Delivery:
    """Read a worker's figures (one JSON line each) until it closes its output. A worker that
    is stopped (SIGSTOP, a debugger) is killed at once; one that sends nothing for `stall`
    seconds while running is killed then."""
    assert process.stdout is not None
    delivery = Delivery()
    source = process.stdout.fileno()
    pending = bytearray()
    quiet_since = time.monotonic()
    while True:
        ready, _, _ = select.select([source], [], [], LOOK_AGAIN)
        if not ready:
            stopped = _is_stopped(process.pid)
            if stopped or time.monotonic() - quiet_since >= stall:
                process.kill()
                delivery.problem = (
                    "the worker was stopped"
                    if stopped
                    else f"the worker sent nothing for {stall:g} s (stuck)"
                )
                delivery.retry = True
                return delivery
            continue
        chunk = os.read(source, 1 << 20)
        if not chunk:
            return delivery
        quiet_since = time.monotonic()
        pending += chunk
        while (end := pending.find(b"\n")) >= 0:
            line, pending[: end + 1] = bytes(pending[:end]), b""
            try:
                path, data = json.loads(line)
                delivery.drawn[str(path)] = base64.b64decode(data)
            except (ValueError, TypeError) as error:
                process.kill()
                delivery.problem = f"the worker sent something that is not a figure ({error})"
                return delivery


def _is_stopped(pid: int) -> bool:
    """True when the process is stopped (state T or t in /proc; False where there is no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] in (["T"], ["t"])


def _end_with_the_build() -> None:
    """Exit as soon as the build's end of our stdin closes (the build ended, however early).
    Reads the descriptor itself: a daemon thread holding sys.stdin's lock aborts the exit."""
    if os.read(sys.stdin.fileno(), 1) == b"":  # the build sends nothing after the tasks line
        os._exit(1)


def _build_is_gone() -> bool:
    """True once the build has closed our stdin (checked without waiting)."""
    ready, _, _ = select.select([sys.stdin.fileno()], [], [], 0)
    return bool(ready)


def _worker() -> None:
    """A worker of Drawing: one JSON line [[path, "module:function", args], ...] on stdin, then
    stdin held open until the build ends; one JSON line [path, base64 bytes] per figure on
    stdout."""
    line = sys.stdin.buffer.readline()
    if not line.endswith(b"\n"):  # the build ended before it had sent the tasks
        os._exit(1)
    threading.Thread(target=_end_with_the_build, daemon=True).start()
    out = sys.stdout.buffer
    for path, function, args in json.loads(line):
        if _build_is_gone():
            os._exit(1)
        data = draw(Figure(path, function, tuple(args), ""))
        out.write(json.dumps([path, base64.b64encode(data).decode("ascii")]).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    _worker()
