"""Page Jinja runs sandboxed: a page cannot reach Python's internals or make a huge value
(`{{ range(10**9)|list }}` took 24 GB), and the error names the page."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.site_helpers import ROOT

# Runs in a process capped at 2 GB of address space: before the sandbox, each of these either
# ran out of memory there or reached into Python's objects.
RENDER = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from generator.pages import render_page

class NoMacros:
    def namespace(self):
        return {"echo": lambda text: text}

try:
    print(render_page(sys.argv[1], NoMacros()))
except MemoryError:
    print("MemoryError")
except Exception as error:
    print(type(error).__name__, error)
"""


def render_capped(page: str) -> str:
    """What RENDER prints for `page`: its filled text, or the error that stopped it."""
    done = subprocess.run(
        [sys.executable, "-c", RENDER, page], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(
    "page",
    [
        "{{ range(10**9)|list }}",
        "{{ 'x' * 10**10 }}",
        "{{ [0] * 10**9 }}",
        "{{ 7 ** (10**8) }}",  # Jinja reads 7 ** 10**8 as (7 ** 10) ** 8
        "{{ echo.__globals__ }}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        # issue 24's re-run: filters, formatting, `+`, `~` and loops made values of any size
        "{{ 'a'|center(10**10) }}",
        "{{ ('a' * 1000000)|replace('a', 'a' * 1000000) }}",
        "{{ range(10)|batch(10**10, 0)|list }}",
        "{{ range(100000)|join('x' * 1000000) }}",
        "{{ '%9999999999d' % 1 }}",
        "{{ '{:>9999999999}'.format(1) }}",
        "{% set a = 'x' * 1000000 %}" + "{% set a = a ~ a %}" * 12 + "{{ a }}",
        "{% set ns = namespace(s=[0]) %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}"
        "{% endfor %}",
        "{% for i in range(100000) %}{% for j in range(100) %}{{ 'a' * 1000000 }}{% endfor %}"
        "{% endfor %}",
    ],
)
def test_a_page_cannot_make_a_huge_value_or_reach_python(page: str) -> None:
    out = render_capped(page)
    refused = ("SecurityError", "OverflowError", "UndefinedError", "TemplateAssertionError")
    assert out.startswith(refused), out  # TemplateAssertionError: no such filter for pages
    assert "MemoryError" not in out


def test_ordinary_page_jinja_still_works() -> None:
    from generator.pages import render_page

    class Macros:
        def namespace(self):
            return {"echo": lambda text: text}

    page = "{% for i in range(3) %}{{ echo('a') * 2 }}{{ 2 ** 10 }} {% endfor %}{#id}\n"
    assert render_page(page, Macros()) == "aa1024 aa1024 aa1024 {#id}\n"
    kept = "{% set ns = namespace(s='a') %}{% set ns.s = ns.s ~ 'b' + 'c' %}{{ ns.s|upper }}{{ 7 % 4 }}"
    assert render_page(kept, Macros()) == "ABC3"


def test_a_page_whose_own_loops_do_not_end_stops_but_a_slow_macro_does_not(monkeypatch) -> None:
    """Loops in loops (10**10 turns) stop once the page's own Jinja has run LONGEST_FILL seconds;
    a macro's time does not count: while one runs, the page's clock is stopped (no timer is
    armed, however long the macro takes), and it runs again afterwards."""
    import signal

    import generator.pages.sandbox as pages
    from generator.pages import render_page

    monkeypatch.setattr(pages, "LONGEST_FILL", 0.2)
    timers: list[tuple[float, float]] = []  # the page's timer as each macro call saw it

    class Macros:
        def namespace(self):
            return {"macro": lambda: timers.append(signal.getitimer(signal.ITIMER_REAL)) or "done"}

    endless = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    with pytest.raises(pages.SecurityError, match="ran for 0.2 s"):
        render_page(endless, Macros())
    assert render_page("{{ macro() }}{{ macro() }}", Macros()) == "donedone"
    assert timers == [(0.0, 0.0), (0.0, 0.0)]  # stopped during each call, not only the first


ENDLESS = "{% for i in range(100000) %}{% for j in range(100000) %}{% set x = j %}{% endfor %}{% endfor %}"


@pytest.mark.parametrize(
    "page",
    [
        "{% macro m() %}" + ENDLESS + "{% endmacro %}{{ m() }}",
        "{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}" + ENDLESS + "{% endcall %}",
        "{% macro m(n) %}{% if n %}{{ m(n - 1) }}{{ m(n - 1) }}{% endif %}{% endmacro %}{{ m(40) }}",
    ],
    ids=["loop", "caller", "recursion"],
)
def test_loops_in_the_page_own_macros_are_on_the_page_clock(monkeypatch, page: str) -> None:
    """The clock stopped during every call, the page's own `{% macro %}`s and `caller()`
    included: a loop in one ran for ever (issue 35). Only the generator's macros stop it now."""
    import generator.pages.sandbox as sandbox
    from generator.pages import render_page

    class NoMacros:
        def namespace(self):
            return {}

    monkeypatch.setattr(sandbox, "LONGEST_FILL", 0.2)
    with pytest.raises(sandbox.SecurityError, match="ran for 0.2 s"):
        render_page(page, NoMacros())


def test_a_loop_around_the_generators_macros_stops_at_its_call_count(monkeypatch) -> None:
    """The clock stops while a generator macro runs, so a loop around one (27 ms a call, 10**10
    calls) stopped nothing and ran for days; the page's calls of them are counted instead, and
    the count is the page's, whichever of its macros it calls."""
    import generator.pages.sandbox as sandbox
    from generator.pages import render_page

    class Macros:
        def namespace(self):
            return {"a": lambda: "a", "b": lambda: "b"}

    monkeypatch.setattr(sandbox, "MOST_MACRO_CALLS", 5)
    assert render_page("{{ a() }}{{ b() }}{{ a() }}{{ b() }}{{ a() }}", Macros()) == "ababa"
    loop = "{% for i in range(100000) %}{% for j in range(100000) %}{% set x = a() %}{% endfor %}"
    with pytest.raises(sandbox.SecurityError, match="more than 5 times"):
        render_page(loop + "{% endfor %}", Macros())
    with pytest.raises(sandbox.SecurityError, match="more than 5 times"):
        render_page("{{ a() }}{{ b() }}" * 3, Macros())


NESTED = "{% set a = 'x' %}" + "{% set a = [a, a] %}" * 40  # a holds 2**40 copies of 'x'


@pytest.mark.parametrize(
    "page",
    [
        "{{ ([('x' * 10**6)] * 10**6)|string }}",  # a million references to one 1 MB text
        "{{ ([[0] * 10**6] * 10**6)|sum(start=[]) }}",
        "{{ ([[0]] * 300000)|sum(start=[]) }}",  # small, but adding lists takes n**2 steps
        NESTED + "{{ a|string }}",
        "{% set s = 'x' * 10**6 %}{{ {'a': s, 'b': s}|string }}",
        "{{ {}.fromkeys(range(10**5), 'x' * 10**6)|string }}",
        "{% macro m() %}{% for i in range(10**5) %}{{ 'x' * 10**6 }}{% endfor %}{% endmacro %}"
        "{{ m() }}",  # each 1 MB text is new: the macro's buffer held them all
        "{% set s %}{% for i in range(10**5) %}{{ 'x' * 10**6 }}{% endfor %}{% endset %}",
        "{{ 5.0|round(10**10, 'ceil') }}",  # computes 10 ** 10**10
    ],
)
def test_a_value_is_bounded_with_every_copy_it_holds(page: str) -> None:
    """Issue 35: the bound counted a list's items, not what they hold: `[s] * 10**6` of a 1 MB
    text s passed, and `|string` then ran out of memory, `|sum(start=[])` past 300 s. Now every
    value a page makes (literals, filters' results, macros' output) is refused at once by size,
    before the clock or the memory runs out."""
    out = render_capped(page)
    assert out.startswith("SecurityError"), out
    assert "ran for" not in out, out


@pytest.mark.parametrize(
    ("page", "method"),
    [
        ("{{ 'a'.ljust(10**10) }}", "ljust"),
        ("{{ 'a'.rjust(10**10) }}", "rjust"),
        ("{{ 'a'.center(4 * 10**9) }}", "center"),  # 4 GB, allocated: it succeeded
        ("{{ ('a'|e).center(10**10) }}", "center"),  # Markup's own methods
        ("{{ 'a'.zfill(10**10) }}", "zfill"),
        ("{{ ('x' * 10**6).join(['a', 'b', 'c']) }}", "join"),
        ("{{ ('x' * 600000).join(range(3)|map('string')) }}", "join"),  # items from a generator
        ("{{ ('a' * 10**4).replace('a', 'x' * 10**6) }}", "replace"),
        ("{{ ('a' * 10**4).replace('', 'x' * 10**6) }}", "replace"),
        ("{{ ('\t' * 1000).expandtabs(10**7) }}", "expandtabs"),
        ("{{ ('a' * 10**4).translate({97: 'x' * 10**6}) }}", "translate"),
        ("{{ 'a'.encode().ljust(10**10) }}", "ljust"),
        ("{{ (1).to_bytes(10**10, 'big') }}", "to_bytes"),
        ("{{ 'a'.encode() * 10**10 }}", "×"),
        ("{{ '%9999999999d'.encode() % 1 }}", "%"),
    ],
)
def test_a_string_method_is_refused_before_it_makes_a_huge_text(page: str, method: str) -> None:
    """Issue 35: no method's result was checked: `'a'.ljust(10**10)` ran out of memory,
    `'a'.center(4*10**9)` allocated 4 GB and succeeded, `join`, `replace`, `zfill` and
    `expandtabs` stopped with an empty message. Their result's length is computed from their
    arguments and refused before any memory is taken, naming the method."""
    out = render_capped(page)
    assert out.startswith("SecurityError"), out
    assert method in out, out


def test_ordinary_string_methods_and_filters_still_work() -> None:
    from generator.pages import render_page

    class NoMacros:
        def namespace(self):
            return {}

    page = (
        "{{ 'a'.ljust(3) }}|{{ 'a'.center(5, '*') }}|{{ '-'.join(['a', 'b']) }}|"
        "{{ 'abc'.replace('b', 'xx') }}|{{ 'a\tb'.expandtabs(4) }}|{{ '7'.zfill(3) }}|"
        "{{ 'ab'.translate({97: 'zz'}) }}|{{ (258).to_bytes(2, 'big') }}|"
        "{{ '-'.join(range(3)|map('string')) }}|{{ [3, 1, 2]|sort|list }}|{{ [1, 2.5]|sum }}|"
        "{{ 3.14159|round(2) }}|{% for a, b in [(1, 2)] %}{{ a }}{{ b }}{% endfor %}|"
        "{{ {'k': (1,)}|dictsort }}|{% macro m(x=[1]) %}{{ x }}{{ caller() }}{% endmacro %}"
        "{% call m() %}c{% endcall %}"
    )
    assert render_page(page, NoMacros()) == (
        "a  |**a**|a-b|axxc|a   b|007|zzb|b'\\x01\\x02'|0-1-2|[1, 2, 3]|3.5|3.14|12|"
        "[('k', (1,))]|[1]c"
    )


def test_a_refusal_names_the_page_and_what_to_change() -> None:
    """A refusal reaches the user as the page and a fix; MemoryError() had an empty message."""
    from generator.pages.sandbox import SecurityError, page_error

    refused = str(page_error(SecurityError("'a'.ljust(…) would make 10 characters"), "docs/x.md"))
    assert refused.startswith("docs/x.md: 'a'.ljust(…) would make 10 characters\n  fix: ")
    assert "generator" in refused
    assert str(page_error(MemoryError(), "docs/x.md")).startswith("docs/x.md: MemoryError")
