"""The page clock: a page's own Jinja stopped after a number of seconds, the clock paused while
one of the generator's macros runs (pages/sandbox.py's GeneratorMacro)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from jinja2.sandbox import SecurityError

_clock = threading.local()


def _clock_running() -> bool:
    return getattr(_clock, "running", False)


@contextmanager
def clock_stopped() -> Iterator[None]:
    """The page clock (if it runs) stopped meanwhile, and started again with the time it had."""
    left = signal.getitimer(signal.ITIMER_REAL)[0] if _clock_running() else 0.0
    if left:
        signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        yield
    finally:
        if left:
            signal.setitimer(signal.ITIMER_REAL, left)


@contextmanager
def page_clock(seconds: float) -> Iterator[None]:
    """A SecurityError once the page's own Jinja has run `seconds` (a GeneratorMacro stops the
    clock while it runs). SIGALRM's timer: in the main thread only, where builds fill
    pages; elsewhere the page runs unclocked."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise SecurityError(
            f"the page's own Jinja ran for {seconds:g} s (its macros' time not counted): a loop "
            "in a loop that does not end? Fill pages with macros, not long loops"
        )

    previous = signal.signal(signal.SIGALRM, stop)
    _clock.running = True
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _clock.running = False
        signal.signal(signal.SIGALRM, previous)
