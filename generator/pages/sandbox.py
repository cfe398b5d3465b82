"""The sandboxed Jinja that fills a page's {{ … }} calls: bounded in size and in time.

A page is the site's own code but is written by hand: PageSandbox keeps its Jinja from reaching
Python's internals or making a huge value, and page_clock stops its own loops after LONGEST_FILL
seconds (the generator's macros' time not counted).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from jinja2.utils import Namespace


class Macros(Protocol):
    """What fills a page: PageMacros, whose namespace() maps each macro's name to its callable."""

    def namespace(self) -> dict[str, Callable[..., str]]: ...


LONGEST_TEXT = 1 << 20  # characters (or items) a page's own arithmetic may make: 1 MiB
LARGEST_POWER = 4096  # bits of an integer a page may compute
LONGEST_PAGE = 16 << 20  # characters a filled page may hold (the longest is about 0.3 MiB)
LONGEST_FILL = 30.0  # seconds a page's own Jinja may run, its macros' time not counted (ms today)
# Filters whose result is no larger than their input (times a small constant): pages use no
# filter today. Left out: those whose size an argument sets (center, indent, wordwrap, format,
# replace, join, tojson, batch, slice), and random (a build must give the same bytes).
PAGE_FILTERS = (
    "abs", "attr", "capitalize", "count", "d", "default", "dictsort", "e", "escape", "first",
    "float", "int", "items", "last", "length", "list", "lower", "map", "max", "min", "reject",
    "rejectattr", "reverse", "round", "select", "selectattr", "sort", "string", "striptags",
    "sum", "title", "trim", "truncate", "unique", "upper", "wordcount",
)  # fmt: skip


class PageSandbox(ImmutableSandboxedEnvironment):
    """Jinja for pages: sandboxed (no attribute of Python's internals, no mutation of what a
    macro returns, `range` capped at 100,000 items), and no value past LONGEST_TEXT characters
    or items or LARGEST_POWER bits: `*`, `**`, `+` and `~` check their results' size, the
    filters are those that cannot grow their input (PAGE_FILTERS), `%` and str.format are
    refused (a width makes any size), a namespace holds bounded values only, and a page stops at
    LONGEST_PAGE characters. `{{ range(10**9)|list }}` took 24 GB; `{{ 'a'|center(10**9) }}` and
    `{% set a = a ~ a %}` repeated made any size. Loops in loops stop after LONGEST_FILL
    seconds of the page's own time (page_clock; the generator's macros' time is not counted,
    see GeneratorMacro: the page's own `{% macro %}`s, `caller()` and filters are its time)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.code_generator_class = BoundedConcat
        self.filters = {name: self.filters[name] for name in PAGE_FILTERS}
        del self.globals["lipsum"]  # lipsum(n=10**7) is unbounded
        self.globals["namespace"] = BoundedNamespace

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and _bits_of_power(left, right) > LARGEST_POWER:
            raise SecurityError(f"{left} ** {right} is too large for a page")
        if operator == "*" and _length_of_product(left, right) > LONGEST_TEXT:
            raise SecurityError(f"a text or list {left!r:.40} × {right!r:.40} is too long")
        if operator == "*" and _bits(left) + _bits(right) > LARGEST_POWER:
            raise SecurityError(f"{left!r:.40} × {right!r:.40} is too large for a page")
        if operator == "+":
            _check_size(left, right)
        if operator == "%" and isinstance(left, str):
            raise SecurityError("a page cannot format text with %: a width makes any size")
        return super().call_binop(context, operator, left, right)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """str.format and format_map, refused: a width ({:>999999999}) makes any size."""
        if super().wrap_str_format(value) is None:
            return None

        def refuse(*args: Any, **kwargs: Any) -> str:
            raise SecurityError("a page cannot use str.format: a width makes any size")

        return refuse

    def join_bounded(self, values: tuple[Any, ...]) -> str:
        """`a ~ b`: their texts joined, refused past LONGEST_TEXT characters."""
        texts = [str(value) for value in values]
        if sum(map(len, texts)) > LONGEST_TEXT:
            raise SecurityError(f"a text joined with ~ passes {LONGEST_TEXT:,} characters")
        return "".join(texts)


class BoundedConcat(CodeGenerator):
    """Compiles `~` to PageSandbox.join_bounded (Jinja's own join has no hook to check it)."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.join_bounded((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class BoundedNamespace(Namespace):
    """`namespace()`, whose attributes (`{% set ns.x = … %}`) hold bounded values only."""

    def __setitem__(self, name: str, value: Any) -> None:
        _check_size(value)
        super().__setitem__(name, value)


def _bits(value: Any) -> int:
    return value.bit_length() if isinstance(value, int) else 0


def _check_size(*values: Any) -> None:
    """A SecurityError when texts or lists together pass LONGEST_TEXT, or an integer passes
    LARGEST_POWER bits."""
    if sum(len(v) for v in values if isinstance(v, str | list | tuple)) > LONGEST_TEXT:
        raise SecurityError(f"a text or list passes {LONGEST_TEXT:,} characters or items")
    if any(_bits(v) > LARGEST_POWER for v in values):
        raise SecurityError(f"an integer passes {LARGEST_POWER:,} bits")


def _bits_of_power(base: Any, exponent: Any) -> int:
    """About how many bits base ** exponent has (0 when it is not a positive integer power)."""
    if not (isinstance(base, int) and isinstance(exponent, int) and exponent > 0):
        return 0
    return max(1, abs(base).bit_length()) * exponent


def _length_of_product(left: Any, right: Any) -> int:
    """The length of a text or list repeated by an integer (0 for any other product)."""
    for sized, times in ((left, right), (right, left)):
        if isinstance(sized, str | list | tuple) and isinstance(times, int):
            return len(sized) * times
    return 0


def render_page(markdown: str, macros: Macros) -> str:
    """Fill a page's {{ macro() }} calls. Jinja comments are `{## ##}` so `{#id}` stays Markdown."""
    env = PageSandbox(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        comment_start_string="{##",
        comment_end_string="##}",
        keep_trailing_newline=True,
    )
    parts, length = [], 0
    with page_clock(LONGEST_FILL):
        namespace = {name: GeneratorMacro(macro) for name, macro in macros.namespace().items()}
        for part in env.from_string(markdown).generate(**namespace):
            length += len(part)
            if length > LONGEST_PAGE:
                raise SecurityError(f"the filled page passes {LONGEST_PAGE:,} characters")
            parts.append(part)
    return "".join(parts)


class GeneratorMacro:
    """One of the generator's macros (PageMacros.namespace()) as a page calls it: the page clock
    stops while it runs, as its time is the generator's, not the page's. Only these: the clock
    once stopped for every call, and a loop in the page's own `{% macro %}` ran for ever."""

    def __init__(self, macro: Callable[..., str]) -> None:
        self._macro = macro  # `_`: the sandbox keeps the page from reaching it

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        with _clock_stopped():
            return self._macro(*args, **kwargs)


_clock = threading.local()


def _clock_running() -> bool:
    return getattr(_clock, "running", False)


@contextmanager
def _clock_stopped() -> Iterator[None]:
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
