"""Where openai/gpt-2 and transformers differ, said where it matters and backed by both excerpts.

Each difference names the component pages it belongs on and the two excerpts that show it. The
prose is ours and is data (differences.toml beside this file); the code is pinned
(sources/lock.toml); a number in the prose is measured here (MEASURED) and named in it by a
{placeholder}.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from generator.data_file import keyed, one_of, read_data

DIFFERENCES_FILE = Path(__file__).with_name("differences.toml")
FIX = "write it as DifferencesFile in generator/differences.py says, or restore it from git"


class Difference(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    key: str  # anchor on the page: #diff-<key>
    title: str
    text: str  # Markdown, our words; {name} is filled from MEASURED (numbers come from code)
    excerpts: tuple[str, ...]  # excerpt ids, openai/gpt-2 first
    pages: tuple[str, ...]  # component keys whose pages show it

    def markdown(self) -> str:
        """The text with its measured numbers filled in (each measured only when used)."""
        text = self.text
        for name, measure in MEASURED.items():
            if f"{{{name}}}" in text:
                text = text.replace(f"{{{name}}}", measure())
        return text


class DifferencesFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    differences: tuple[Difference, ...]


def for_page(component: str) -> list[Difference]:
    return [d for d in DIFFERENCES if component in d.pages]


def gelu_gap() -> str:
    """How far GPT-2's tanh GELU is from the exact x·Φ(x), measured on a grid (numbers from code)."""
    import math

    import numpy as np

    from generator.engine.layers import gelu

    x = np.linspace(-6.0, 6.0, 12001)  # step 0.001
    exact = 0.5 * x * (1.0 + np.array([math.erf(v / math.sqrt(2.0)) for v in x]))
    gap = np.abs(gelu(x) - exact)
    worst = int(np.argmax(gap))
    # |gap| is symmetric: both formulas satisfy f(x) − f(−x) = x.
    return (
        f"the largest difference for x in [−6, 6] is {gap[worst]:.1e}, at x = ±{abs(x[worst]):.2f}"
    )


MEASURED = {"gelu_gap": gelu_gap}  # placeholder in a Difference's text -> the code measuring it


def read_differences(path: Path = DIFFERENCES_FILE) -> tuple[Difference, ...]:
    """The differences of `path`, each key once and each {placeholder} one MEASURED has (an
    InputError otherwise: an unknown one would reach the page as written)."""
    differences = read_data(path, DifferencesFile, fix=FIX).differences
    keyed(differences, lambda d: d.key, path=path, entry="differences", fix=FIX)
    for index, difference in enumerate(differences):
        placeholders = re.findall(r"\{(\w+)\}", difference.text)
        entry = f"differences[{index}].text"
        one_of(placeholders, MEASURED, what="a measured number", path=path, entry=entry)
    return differences


DIFFERENCES = read_differences()
