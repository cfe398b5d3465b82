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


@pytest.mark.parametrize(
    "page",
    [
        "{{ range(10**9)|list }}",
        "{{ 'x' * 10**10 }}",
        "{{ [0] * 10**9 }}",
        "{{ 7 ** (10**8) }}",  # Jinja reads 7 ** 10**8 as (7 ** 10) ** 8
        "{{ echo.__globals__ }}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    ],
)
def test_a_page_cannot_make_a_huge_value_or_reach_python(page: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", RENDER, page], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.strip()
    assert out.startswith(("SecurityError", "OverflowError", "UndefinedError")), out
    assert "MemoryError" not in out


def test_ordinary_page_jinja_still_works() -> None:
    from generator.pages import render_page

    class Macros:
        def namespace(self):
            return {"echo": lambda text: text}

    page = "{% for i in range(3) %}{{ echo('a') * 2 }}{{ 2 ** 10 }} {% endfor %}{#id}\n"
    assert render_page(page, Macros()) == "aa1024 aa1024 aa1024 {#id}\n"
