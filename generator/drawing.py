"""Figures drawn by worker processes while the build goes on.

matplotlib draws on one core and takes ~0.4–1 s to import, so a cold build that drew its figures
itself would wait for them. A `Drawing` starts its workers at once (`python -m generator.drawing`,
plain subprocesses managed from a `concurrent.futures` thread each: nothing re-runs the caller's
main script, no fork copies `mkdocs serve`'s threads), one per spare core, each drawing its
share, while the build fetches sources and fills pages; `files()` waits for them only when the
bytes are needed. A figure already in the store (signed, keyed by a hash of everything its
drawing depends on, so an entry can only be read back for the path it was drawn for) is read,
not drawn. Workers or this process: the same bytes.

A figure known only later (the features' figures, once the inputs are loaded) joins a running
worker with `add()`, which sends it as one more line: that worker has matplotlib imported
already, where a fresh one would import it again for one figure (about a second of CPU, on a
machine whose cores the build keeps busy).

A worker's life is tied to its build, and its build never waits on it forever:
- The build writes tasks as lines, `[]` when it has no more, and keeps the worker's stdin open;
  when the build ends (even by SIGKILL, even before the worker has imported anything) the
  kernel closes it, and the worker sees end-of-file: a thread of its own, reading the tasks,
  exits the process at once.
- A worker sends each figure as it is drawn. One that is stopped (SIGSTOP), or sends nothing for
  `stall` seconds while it has figures to draw (stuck), is killed; one killed by a signal (the
  OOM killer, a SIGKILL) has its undelivered figures drawn again once in a fresh worker; a
  second failure, or a drawing that raises, stops the build with a `DrawingError` naming the
  figures.
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import json
import os
import queue
import select
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO

from generator.errors import InputError
from generator.last_resort import exit_code, last_resort
from generator.log import log
from generator.settings import tracebacks_wanted, worker_environment
from generator.store import Store

MAX_WORKERS = 4  # processes drawing at once (each imports matplotlib: ~0.5 s, ~100 MB)
STALL_SECONDS = 60.0  # a worker that sends no figure for this long is stuck (ITM_DRAW_TIMEOUT)
CHECKOUT = Path(__file__).resolve().parent.parent  # where `-m generator.drawing` finds this code
LOOK_AGAIN = 0.25  # seconds between looks at a quiet worker (is it stopped? past its stall?)
STDERR_KEPT = 4000  # characters of a failed worker's stderr quoted in the error
WORKER = "the drawing worker (`python -m generator.drawing`)"  # as its one-line errors name it


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
class Share:
    """One worker's figures: those it started with and those added while it runs."""

    figures: list[Figure]
    process: subprocess.Popen[bytes] | None = None  # once started
    sent: int = 0  # figures written to the worker so far
    sent_at: float = 0.0  # time.monotonic() when they were last written
    closed: bool = False  # told there are no more (`[]`): add() starts another worker


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
    workers=0, drawn by this process when `files()` asks).

    more=True keeps the workers waiting for figures `add()` may send, until `close()` (or
    `files()`) says there are none; a worker left waiting `idle` seconds (default: `stall`) with
    nothing to draw is told so itself. more=False: each worker ends once its figures are drawn."""

    def __init__(
        self,
        figures: Sequence[Figure],
        cache_dir: Path | None = None,
        *,
        workers: int | None = None,
        stall: float = STALL_SECONDS,
        more: bool = False,
        idle: float | None = None,
    ) -> None:
        self.figures: list[Figure] = []
        self.store = Store(cache_dir) if cache_dir is not None else None
        self.stall = stall
        self.idle = stall if idle is None else idle
        self.done: dict[str, bytes] = {}
        self.unkept: dict[str, bytes] = {}  # drawn, not stored yet (files(keep=False))
        self.cancelled = False
        self.count = spare_cores() if workers is None else workers
        self.here: list[Figure] = []  # drawn by this process (workers=0)
        self.processes: list[subprocess.Popen[bytes]] = []
        self.pool: ThreadPoolExecutor | None = None
        self.pending: list[tuple[Share, Future[Delivery]]] = []
        self._lock = threading.Lock()  # guards the shares' processes and what they were sent
        self.add(figures)
        if not more:
            self.close()

    def add(self, figures: Sequence[Figure]) -> None:
        """Draw `figures` too: read from the store, or sent to the workers still waiting for more
        (matplotlib imported already), or, when none is, to new ones."""
        missing = []
        for figure in figures:
            self.figures.append(figure)
            cached = self.store.get_entry("figure", figure.key) if self.store else None
            if cached is None:
                missing.append(figure)
            else:
                self.done[figure.path] = cached
        if not missing:
            return
        if self.count == 0:
            self.here += missing
            return
        with self._lock:
            waiting = [share for share, _ in self.pending if not share.closed]
            for index, share in enumerate(waiting):
                share.figures += missing[index :: len(waiting)]
                self._send(share)
        if waiting:
            return
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=MAX_WORKERS)
        for index in range(min(self.count, len(missing))):
            share = Share(missing[index :: self.count])
            self.pending.append((share, self.pool.submit(self._in_worker, share)))

    def close(self) -> None:
        """No more figures: each worker ends once it has drawn its share."""
        with self._lock:
            for share, _ in self.pending:
                share.closed = True
                self._send(share)

    @property
    def paths(self) -> list[str]:
        return [figure.path for figure in self.figures]

    def _start(self, errors: IO[bytes]) -> subprocess.Popen[bytes]:
        """A new worker (called with the lock held: cancel() kills every process started, and
        none after it)."""
        if self.cancelled:
            raise DrawingError("the build was stopped while figures were being drawn")
        process = subprocess.Popen(
            [sys.executable, "-m", "generator.drawing"],
            cwd=CHECKOUT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,  # a file, read once it ended: a full pipe could block it
            env=worker_environment(),  # MPLBACKEND pinned: nothing in the environment breaks it
        )
        self.processes.append(process)
        return process

    def _send(self, share: Share) -> None:
        """Write the share's figures its worker has not been sent, and `[]` once it is closed
        (called with the lock held; a worker not started yet is sent everything at its start).
        A worker that died misses them: its delivery says so, and they are drawn again."""
        process = share.process
        if process is None or process.stdin is None or process.stdin.closed:
            return
        lines = b""
        if share.sent < len(share.figures):
            tasks = [[f.path, f.draw, list(f.args)] for f in share.figures[share.sent :]]
            lines += json.dumps(tasks).encode() + b"\n"
            share.sent, share.sent_at = len(share.figures), time.monotonic()
        if share.closed:
            lines += b"[]\n"
        try:
            process.stdin.write(lines)
            process.stdin.flush()  # and kept open: its end-of-file tells the worker we are gone
        except OSError:  # BrokenPipeError: it died
            pass

    def _in_worker(self, share: Share) -> Delivery:
        """Draw `share` in a new worker: every figure it sent, and why it stopped early if it did."""
        with tempfile.TemporaryFile() as errors:
            with self._lock:
                process = share.process = self._start(errors)
                self._send(share)
            assert process.stdin is not None and process.stdout is not None
            delivery = Delivery()
            try:
                waiting = partial(self._waiting, share)
                while not _receive(process, self.stall, self.idle, delivery, waiting):
                    with self._lock:  # it drew all it was sent and waits: unless more came, done
                        if self._waiting(share, delivery.drawn)[0]:
                            share.closed = True
                            self._send(share)
                            break
            finally:
                try:
                    process.wait(timeout=self.stall)  # it closed its output: it is exiting
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
                with self._lock:  # ended: what add() brings from now on goes to a new worker
                    share.closed = True
                    with contextlib.suppress(OSError):  # BrokenPipeError: it died before
                        process.stdin.close()  # reading lines it was sent (drawn again)
                process.stdout.close()
            missing = [f.path for f in share.figures if f.path not in delivery.drawn]
            if not missing:
                return Delivery(delivery.drawn)
            if delivery.problem is None:
                code = process.returncode
                if code < 0:
                    delivery.problem = f"the worker was killed by signal {-code}"
                    delivery.retry = True
                elif code != 0:
                    errors.seek(0)
                    said = errors.read().decode("utf-8", errors="replace")[-STDERR_KEPT:]
                    delivery.problem = f"the worker failed (exit {code}): {_last_words(said)}"
                else:
                    delivery.problem = f"the worker ended without drawing {missing[0]}"
                    delivery.retry = True
            return delivery

    def _waiting(self, share: Share, drawn: dict[str, bytes]) -> tuple[bool, float]:
        """(Has the worker drawn every figure of its share?, when were figures last sent to it)."""
        return all(f.path in drawn for f in share.figures), share.sent_at

    def files(self, *, keep: bool = True) -> dict[str, bytes]:
        """Every figure by site path, in the order given (waits for the workers). The figures
        drawn are stored now, or with keep=False only when `keep()` is called (a build keeps
        them once it knows its inputs did not change while they were drawn)."""
        self.close()
        drawn: dict[str, bytes] = {}
        pending, self.pending = self.pending, []
        for share, future in pending:
            delivery = future.result()  # returns: every worker has its stall deadline
            if delivery.problem is not None and delivery.retry:
                rest = [f for f in share.figures if f.path not in delivery.drawn]
                log.info(  # not a warning: the build recovers, and strict mode fails on warnings
                    "Inside the Model: %s; drawing %d figure(s) again", delivery.problem, len(rest)
                )
                again = self._in_worker(Share(rest, closed=True))
                delivery = Delivery({**delivery.drawn, **again.drawn}, again.problem)
            if delivery.problem is not None:
                raise DrawingError(
                    f"could not draw {', '.join(f.path for f in share.figures)}: {delivery.problem}",
                    entry=share.figures[0].draw,
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


def _receive(
    process: subprocess.Popen[bytes],
    stall: float,
    idle: float,
    delivery: Delivery,
    waiting: Callable[[dict[str, bytes]], tuple[bool, float]],
) -> bool:
    """Read a worker's figures (one JSON line each) into `delivery` until it closes its output
    (True), or until it has drawn every figure sent and been quiet for `idle` seconds (False:
    it is only waiting, for more or to be told there are none). `waiting(drawn)`: (has it drawn
    every figure sent?, when were figures last sent). A worker that is stopped (SIGSTOP, a
    debugger) is killed at once; one that sends nothing for `stall` seconds while it has figures
    to draw is killed then."""
    assert process.stdout is not None
    source = process.stdout.fileno()
    pending = bytearray()
    quiet_since = time.monotonic()
    while True:
        ready, _, _ = select.select([source], [], [], LOOK_AGAIN)
        if not ready:
            stopped = _is_stopped(process.pid)
            all_drawn, sent_at = waiting(delivery.drawn)
            limit = idle if all_drawn else stall
            if stopped or time.monotonic() - max(quiet_since, sent_at) >= limit:
                if all_drawn and not stopped:
                    return False
                process.kill()
                delivery.problem = (
                    "the worker was stopped"
                    if stopped
                    else f"the worker sent nothing for {stall:g} s (stuck)"
                )
                delivery.retry = True
                return True
            continue
        chunk = os.read(source, 1 << 20)
        if not chunk:
            return True
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
                return True


def _last_words(said: str) -> str:
    """What a failed worker printed, for the build's error: its last line (its one-line error,
    or a traceback's exception line), or all of it when ITM_TRACEBACK asks for tracebacks."""
    if tracebacks_wanted():
        return "\n" + said
    lines = [line.strip() for line in said.split("\n") if line.strip()]
    return lines[-1].removeprefix("error: ") if lines else "it printed nothing"


def _is_stopped(pid: int) -> bool:
    """True when the process is stopped (state T or t in /proc; False where there is no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] in (["T"], ["t"])


def _read_tasks(tasks: queue.Queue[list]) -> None:
    """Put each line the build sends (a JSON list of tasks; `[]`: no more) on `tasks`, and exit
    the process as soon as the build's end of our stdin closes (the build ended, however early).
    Reads the descriptor itself: a daemon thread holding sys.stdin's lock aborts the exit."""
    pending = bytearray()
    try:
        while chunk := os.read(sys.stdin.fileno(), 1 << 16):
            pending += chunk
            while (end := pending.find(b"\n")) >= 0:
                line, pending[: end + 1] = bytes(pending[:end]), b""
                tasks.put(json.loads(line))
    finally:  # end-of-file, or a line that is not JSON: never left waiting for tasks
        os._exit(1)


def _worker() -> int:
    """A worker of Drawing: JSON lines [[path, "module:function", args], ...] on stdin, then `[]`
    with stdin held open until the build ends; one JSON line [path, base64 bytes] per figure on
    stdout. A drawing that raises is a bug: one line on stderr names the figure (last_resort)."""
    tasks: queue.Queue[list] = queue.Queue()
    threading.Thread(target=_read_tasks, args=(tasks,), daemon=True).start()
    out = sys.stdout.buffer
    while batch := tasks.get():
        for path, function, args in batch:
            with last_resort(WORKER, f"{path} (drawn by {function})"):
                data = draw(Figure(path, function, tuple(args), ""))
            out.write(json.dumps([path, base64.b64encode(data).decode("ascii")]).encode() + b"\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(exit_code(WORKER, _worker))
