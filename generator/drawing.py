"""Figures drawn by worker processes while the build goes on.

matplotlib takes ~0.5 s of CPU to import and draws on one core, so a `Drawing` hands the figures
not in the store (signed, keyed by a hash of everything a drawing reads, bound to the figure's
path) at once to a `concurrent.futures.ProcessPoolExecutor` of a process per spare core;
`files()` waits only when the bytes are needed, and `add()` hands later figures (the features')
to the same workers, matplotlib imported. Workers or this process: the same bytes.

Workers are spawned (no fork copies `mkdocs serve`'s threads; re-importing the main script costs
a worker 0.05 s more CPU than `python -m` did, and multiprocessing's resource tracker 0.03 s).
Each sets MPLBACKEND=agg (settings), leaves Ctrl-C to the build, which kills them (`cancel()`),
and ends when the build's process ends, on its parent sentinel's end-of-file (a pool's worker
holds both ends of its task queue: a killed build's idle worker waited forever). A drawing that
raises is one line naming the figure (last_resort).

What the pool lacks, kept here (each case a test in tests/test_charts.py):
- a deadline: `result(timeout)` only stops waiting, and a stuck or stopped (SIGSTOP) worker held
  the build forever. `files()` kills the pool's processes (`_processes`: no public kill before
  Python 3.14) once no figure has come for `stall` seconds, or at once when one is stopped;
- a second chance: one dead worker (the OOM killer) breaks the whole pool, so what it had not
  delivered is drawn again once in a fresh pool; a second failure is a DrawingError naming the
  figures. (multiprocessing.Pool would not tell: a dead worker's task was still unanswered after
  10 s, tried.)
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import signal
import threading
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path

from generator.errors import InputError
from generator.last_resort import last_resort
from generator.log import log
from generator.settings import enter_worker_environment, tracebacks_wanted
from generator.store import Store

MAX_WORKERS = 4  # processes drawing at once (each imports matplotlib: ~0.5 s, ~100 MB)
STALL_SECONDS = 60.0  # no figure for this long while some are due: stuck (ITM_DRAW_TIMEOUT)
LOOK_AGAIN = 0.25  # seconds between looks at quiet workers (stopped? past the deadline?)
WORKER = "the drawing worker"  # as its one-line errors name it


class DrawingError(InputError):
    """Figures that could not be drawn (a drawing raised, or workers died or stalled twice)."""


@dataclass(frozen=True)
class Figure:
    """One figure: where the site serves it, what draws it, and its cache key."""

    path: str  # site path: "figures/params-gpt2.svg"
    draw: str  # "module:function", called as function(*args), returning the file's bytes
    args: tuple  # picklable values (sent to a worker)
    key: str  # sha256 of everything the drawing depends on (its store key)


def draw(figure: Figure) -> bytes:
    """Draw one figure in this process."""
    module, _, name = figure.draw.partition(":")
    return bytes(getattr(importlib.import_module(module), name)(*figure.args))


def spare_cores() -> int:
    """Workers to start: one per core the build process leaves free (at least one)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_WORKERS, (cores or 1) - 1))


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
        self.store = Store(cache_dir) if cache_dir is not None else None
        self.stall = stall
        self.count = spare_cores() if workers is None else workers
        self.figures: list[Figure] = []
        self.done: dict[str, bytes] = {}  # by site path: read from the store, or drawn
        self.unkept: dict[str, bytes] = {}  # drawn, not stored yet (files(keep=False))
        self.here: list[Figure] = []  # drawn by this process (workers=0)
        self.pending: dict[str, tuple[Figure, Future[bytes]]] = {}  # handed to the pool
        self.pool: ProcessPoolExecutor | None = None
        self.processes: list[BaseProcess] = []  # every worker started, the current pool's last
        self.pool_start = 0  # where in `processes` the current pool's workers start
        self.heard = 0.0  # time.monotonic() when a figure was last handed over or delivered
        self.add(figures)

    @property
    def paths(self) -> list[str]:
        return [figure.path for figure in self.figures]

    def add(self, figures: Sequence[Figure]) -> None:
        """Draw `figures` too: read from the store, or handed to the workers now."""
        for figure in figures:
            self.figures.append(figure)
            cached = self.store.get_entry("figure", figure.key) if self.store else None
            if cached is not None:
                self.done[figure.path] = cached
            elif self.count == 0:
                self.here.append(figure)
            else:
                self.pending[figure.path] = (figure, self._submit(figure))

    def _submit(self, figure: Figure) -> Future[bytes]:
        """The figure handed to the pool (started now if there is none)."""
        if self.pool is None:
            self.pool_start = len(self.processes)
            spawn = multiprocessing.get_context("spawn")
            self.pool = ProcessPoolExecutor(self.count, spawn, initializer=start_worker)
        self.heard = time.monotonic()
        future: Future[bytes] = Future()
        try:
            future = self.pool.submit(draw_in_worker, figure)
        except BrokenProcessPool as broken:  # a worker died: files() draws it again
            future.set_exception(broken)
        self.processes += [p for p in self.pool._processes.values() if p not in self.processes]
        return future

    def files(self, *, keep: bool = True) -> dict[str, bytes]:
        """Every figure by site path, in the order given (waits for the workers). The figures
        drawn are stored now, or with keep=False only when `keep()` is called (a build keeps
        them once it knows its inputs did not change while they were drawn)."""
        try:
            for figure in self.here:
                self.unkept[figure.path] = draw(figure)
            self.here = []
            if problem := self._wait():  # a worker died, stalled or stopped: once more
                log.info(  # not a warning: the build recovers, and strict mode fails on warnings
                    "Inside the Model: %s; drawing %d figure(s) again", problem, len(self.pending)
                )
                for path, (figure, _) in self.pending.items():
                    self.pending[path] = (figure, self._submit(figure))
                if problem := self._wait():
                    raise self._error([figure for figure, _ in self.pending.values()], problem)
        finally:  # every figure came, or a DrawingError, Ctrl-C: no worker draws on
            self.cancel()
        self.done.update(self.unkept)
        if keep:
            self.keep()
        return {path: self.done[path] for path in self.paths}

    def _wait(self) -> str | None:
        """Move the figures the pool delivers to `unkept`; if its workers fail first, end it
        and say how. A DrawingError when a drawing raised."""
        while self.pending:
            futures = [future for _, future in self.pending.values()]
            delivered, _ = wait(futures, timeout=LOOK_AGAIN, return_when=FIRST_COMPLETED)
            if delivered:  # (or before files() was called: the deadline starts from now)
                self.heard = time.monotonic()
            for figure, future in [item for item in self.pending.values() if item[1] in delivered]:
                if not isinstance(future.exception(), BrokenProcessPool):  # else drawn again
                    self.unkept[figure.path] = self._result(figure, future)
                    del self.pending[figure.path]
            workers = self.processes[self.pool_start :]
            broken = any(isinstance(future.exception(), BrokenProcessPool) for future in delivered)
            stopped = any(_is_stopped(p.pid) for p in workers if p.pid is not None)
            if broken or stopped or time.monotonic() - self.heard >= self.stall:
                self.cancel()  # its workers reaped: their exit codes known
                if broken:
                    return _death(workers)
                if stopped:
                    return "the worker was stopped"
                return f"the worker sent nothing for {self.stall:g} s (stuck)"
        return None

    def _result(self, figure: Figure, future: Future[bytes]) -> bytes:
        """The figure's bytes, or a DrawingError quoting the drawing's one-line error (its
        traceback with ITM_TRACEBACK)."""
        try:
            return future.result()
        except Exception as error:
            said = "".join(traceback.format_exception(error)) if tracebacks_wanted() else error
            raise self._error([figure], str(said)) from None

    def _error(self, figures: list[Figure], problem: str) -> DrawingError:
        return DrawingError(
            f"could not draw {', '.join(f.path for f in figures)}: {problem}",
            entry=figures[0].draw,
            fix=f"if the machine is very busy, allow a worker more time"
            f" (ITM_DRAW_TIMEOUT, now {self.stall:g} s); a drawing that raised is a bug"
            " in the figure's code",
        )

    def keep(self) -> None:
        """Store the figures drawn (not read from the store) under their keys."""
        unkept, self.unkept = self.unkept, {}
        for figure in self.figures:
            if figure.path in unkept and self.store is not None:
                self.store.put_entry("figure", figure.key, unkept[figure.path])

    def cancel(self) -> None:
        """Kill the workers and shut their pool down: every figure came (a worker stopped while
        it waited would never read that there is no more), or the build failed or stopped."""
        pool, self.pool = self.pool, None
        if pool is not None:
            for process in self.processes[self.pool_start :]:
                if process.is_alive():
                    process.kill()
            pool.shutdown(wait=True, cancel_futures=True)  # its thread reaps them


def _is_stopped(pid: int) -> bool:
    """True when the process is stopped (state T or t in /proc; False where there is no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] in (["T"], ["t"])


def _death(workers: list[BaseProcess]) -> str:
    """How the worker that broke its pool ended (the pool ends the others with SIGTERM)."""
    codes = [p.exitcode or 0 for p in workers if p.exitcode not in (None, 0, -signal.SIGTERM)]
    if codes and codes[0] < 0:
        return f"the worker was killed by signal {-codes[0]}"
    return f"a worker ended (exit {codes[0] if codes else 0})"


def start_worker() -> None:
    """A worker's first step: its environment set, Ctrl-C left to the build, and a thread that
    ends it as soon as the build's process ends (the parent sentinel's end-of-file)."""
    enter_worker_environment()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    build = multiprocessing.parent_process()
    if build is not None:
        threading.Thread(target=_end_with, args=(build,), daemon=True).start()


def _end_with(build: BaseProcess) -> None:
    build.join()  # returns once the build's process has ended
    os._exit(1)


def draw_in_worker(figure: Figure) -> bytes:
    """A worker's task: one figure's bytes; a drawing that raises is told in one line."""
    with last_resort(WORKER, f"{figure.path} (drawn by {figure.draw})"):
        return draw(figure)
