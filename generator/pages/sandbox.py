"""The sandboxed Jinja that fills a page's {{ … }} calls: bounded in size and in time.

A page is the site's own code but is written by hand: PageSandbox keeps its Jinja from reaching
Python's internals or making a huge value, and page_clock stops its own loops after LONGEST_FILL
seconds (the generator's macros' time not counted).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from jinja2.utils import Namespace

from generator.errors import InputError
from generator.pages.page_clock import clock_stopped, page_clock
from generator.pages.page_sizes import (
    LARGEST_POWER,
    LONGEST_TEXT,
    bits,
    bits_of_power,
    bounded,
    check_size,
    is_join,
    length_of_product,
    listed,
    made_length,
    owner_and_name,
)


class Macros(Protocol):
    """What fills a page: PageMacros, whose namespace() maps each macro's name to its callable."""

    def namespace(self) -> dict[str, Callable[..., str]]: ...


LONGEST_PAGE = 16 << 20  # characters a filled page may hold (the longest is about 0.3 MiB)
LARGEST_DIGITS = LARGEST_POWER * 3 // 10  # the digits of such an integer (|round's precision)
MOST_MACRO_CALLS = 1_000  # calls of the generator's macros a page may make (the busiest: 12)
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
REFUSAL_FIX = (
    f"a page's own Jinja reaches no name that starts with _, makes values of at most"
    f" {LONGEST_TEXT:,} characters or items and runs at most {LONGEST_FILL:g} s: make the value"
    " smaller, or have a macro of the generator make it (generator/pages/, a feature's macros)"
)


class PageSandbox(ImmutableSandboxedEnvironment):
    """Jinja for pages: sandboxed (no attribute of Python's internals, no mutation of what a
    macro returns, `range` capped at 100,000 items), and no value past LONGEST_TEXT characters
    or items (as `held` counts them: a shared item wherever it appears) or LARGEST_POWER bits.
    Every value a page makes is checked: `*`, `**` and `+` before they compute, `~`, the
    buffers of its macros and blocks, its list, tuple and dict literals, what its filters and
    calls return, and what a namespace holds. The filters are those that cannot grow their input
    much (PAGE_FILTERS), `%` and str.format are refused (a width makes any size), and a page
    stops at LONGEST_PAGE characters. `{{ range(10**9)|list }}` took 24 GB, `{{ 'a'|center(10**9)
    }}` and `{% set a = a ~ a %}` repeated made any size, and a list of a million references to
    one 1 MB text (`[s] * 10**6`) ran out of memory in `|string`. Loops in loops stop after
    LONGEST_FILL seconds of the page's own time (page_clock; the generator's macros' time is not
    counted, see GeneratorMacro: the page's own `{% macro %}`s, `caller()` and filters are its
    time)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.code_generator_class = BoundedCode
        self.filters = {name: _bounded_filter(name, self.filters[name]) for name in PAGE_FILTERS}
        del self.globals["lipsum"]  # lipsum(n=10**7) is unbounded
        self.globals["namespace"] = BoundedNamespace

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and bits_of_power(left, right) > LARGEST_POWER:
            raise SecurityError(f"{left} ** {right} is too large for a page")
        if operator == "*" and length_of_product(left, right) > LONGEST_TEXT:
            raise SecurityError(f"a text or list {left!r:.40} × {right!r:.40} is too long")
        if operator == "*" and bits(left) + bits(right) > LARGEST_POWER:
            raise SecurityError(f"{left!r:.40} × {right!r:.40} is too large for a page")
        if operator == "+":
            check_size(left, right)
        if operator == "%" and isinstance(left, str | bytes):
            raise SecurityError("a page cannot format text with %: a width makes any size")
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        """A call from the page. A str or bytes method whose result an argument sizes
        (`'a'.ljust(10**10)`) is refused before it runs (see `made_length`); what any call
        returns is checked, unless one of the generator's macros made it (dict.fromkeys(range(
        10**5), s) holds a text s 100,000 times)."""
        if is_join(__obj) and args:  # its items counted, then joined
            args = (listed(args[0]), *args[1:])
        length = made_length(__obj, args, kwargs)
        if length > LONGEST_TEXT:
            owner, name = owner_and_name(__obj)
            raise SecurityError(
                f"{name}(…) on {owner!r:.40} would make {length:,} characters: a value on a page "
                f"holds at most {LONGEST_TEXT:,}"
            )
        made = super().call(__context, __obj, *args, **kwargs)
        return made if isinstance(__obj, GeneratorMacro) else bounded(made)

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

    @staticmethod
    def new_buffer() -> TextBuffer:
        """Where a `{% macro %}`, `caller()` or a `{% set %}…{% endset %}` block writes."""
        return TextBuffer()

    @staticmethod
    def bounded(value: Any) -> Any:
        """`value`, once checked (see `bounded`): what a page's literal makes."""
        return bounded(value)


class BoundedCode(CodeGenerator):
    """Compiles `~` to PageSandbox.join_bounded (Jinja's own join has no hook to check it), each
    list, tuple and dict literal to one PageSandbox.bounded checks (`[a, a]` nested forty times
    holds 2**40 copies of a), and each buffer to a TextBuffer."""

    def buffer(self, frame: Frame) -> None:
        frame.buffer = self.temporary_identifier()
        self.writeline(f"{frame.buffer} = environment.new_buffer()")

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.join_bounded((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")

    def visit_List(self, node: nodes.List, frame: Frame) -> None:
        self.write("environment.bounded(")
        super().visit_List(node, frame)
        self.write(")")

    def visit_Dict(self, node: nodes.Dict, frame: Frame) -> None:
        self.write("environment.bounded(")
        super().visit_Dict(node, frame)
        self.write(")")

    def visit_Tuple(self, node: nodes.Tuple, frame: Frame) -> None:
        if node.ctx != "load":  # names assigned to: `{% for a, b in … %}`
            super().visit_Tuple(node, frame)
            return
        self.write("environment.bounded(")
        super().visit_Tuple(node, frame)
        self.write(")")


class TextBuffer(list[str]):
    """What a macro or block writes, refused as it passes LONGEST_TEXT characters: a loop writing
    a new 1 MB text 100,000 times filled memory before Jinja joined them (the page itself is
    counted by render_page)."""

    length = 0

    def append(self, text: str) -> None:
        self._count(len(text))
        super().append(text)

    def extend(self, texts: Iterable[str]) -> None:
        texts = list(texts)
        self._count(sum(map(len, texts)))
        super().extend(texts)

    def _count(self, more: int) -> None:
        self.length += more
        if self.length > LONGEST_TEXT:
            raise SecurityError(f"a macro or block writes more than {LONGEST_TEXT:,} characters")


class BoundedNamespace(Namespace):
    """`namespace()`, whose attributes (`{% set ns.x = … %}`) hold bounded values only."""

    def __setitem__(self, name: str, value: Any) -> None:
        check_size(value)
        super().__setitem__(name, value)


def _bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """A filter whose result is checked (see `bounded`), and its arguments too where they alone
    would take long (FILTER_ARGUMENTS)."""
    check = FILTER_ARGUMENTS.get(name)
    signature = inspect.signature(function) if check else None

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        if check is not None and signature is not None:
            check(signature.bind(*args, **kwargs).arguments)
        return bounded(function(*args, **kwargs))

    return run


def _sum_of_numbers(given: dict[str, Any]) -> None:
    """`|sum` adds numbers: lists added one by one take a time that grows with the square of
    their number, in one call no clock interrupts (`[[0]] * 300000` took minutes)."""
    if not isinstance(given.get("start", 0), int | float):
        raise SecurityError("a page's |sum adds numbers: give start a number, or none")


def _rounding_digits(given: dict[str, Any]) -> None:
    """`|round(precision)` computes 10 ** precision."""
    precision = given.get("precision", 0)
    if isinstance(precision, int) and abs(precision) > LARGEST_DIGITS:
        raise SecurityError(f"a page's |round keeps at most {LARGEST_DIGITS:,} digits")


FILTER_ARGUMENTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "sum": _sum_of_numbers,
    "round": _rounding_digits,
}


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
        calls = [MOST_MACRO_CALLS]  # calls left, shared by every macro of the page
        namespace = {
            name: GeneratorMacro(macro, calls) for name, macro in macros.namespace().items()
        }
        for part in env.from_string(markdown).generate(**namespace):
            length += len(part)
            if length > LONGEST_PAGE:
                raise SecurityError(f"the filled page passes {LONGEST_PAGE:,} characters")
            parts.append(part)
    return "".join(parts)


def page_error(error: Exception, page: str) -> InputError:
    """What stopped filling `page` (a docs path), as one InputError: a Jinja syntax or name error
    as Jinja words it, and a sandbox refusal with how to do without (MemoryError() has no
    message: its name is the message)."""
    refused = isinstance(error, SecurityError | MemoryError | RecursionError | OverflowError)
    return InputError(
        str(error) or type(error).__name__,
        file=page,
        fix=REFUSAL_FIX if refused else None,
    )


class GeneratorMacro:
    """One of the generator's macros (PageMacros.namespace()) as a page calls it: the page clock
    stops while it runs, as its time is the generator's, not the page's. Only these: the clock
    once stopped for every call, and a loop in the page's own `{% macro %}` ran for ever. Their
    calls are counted instead (`calls_left`, shared by a page's macros): a loop around a macro
    (27 ms a call) stopped no clock and would have run for days."""

    def __init__(self, macro: Callable[..., str], calls_left: list[int]) -> None:
        self._macro = macro  # `_`: the sandbox keeps the page from reaching it
        self._calls_left = calls_left

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        self._calls_left[0] -= 1
        if self._calls_left[0] < 0:
            raise SecurityError(
                f"the page calls the generator's macros more than {MOST_MACRO_CALLS:,} times:"
                " a macro inside a loop? Call each where its output goes"
            )
        with clock_stopped():
            return self._macro(*args, **kwargs)
