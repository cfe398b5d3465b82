"""Excerpt text rules, symbol anchors (ast), mirror placement search, and how pages cite."""

from __future__ import annotations

import ast

import pytest

from generator.sources.excerpt import (
    Excerpt,
    cut,
    find_placement,
    make_blocks,
    omission_marker,
    split_lines,
)
from generator.sources.lock import Repo
from generator.sources.symbols import SymbolError, symbol_range
from tests.sources_helpers import TOY_V1, line_of, lines_text, sha256


def test_symbol_includes_decorators_and_ends_at_the_last_body_line() -> None:
    first, last = symbol_range(TOY_V1, "Widget.render")
    assert first == line_of(TOY_V1, "@staticmethod")
    assert last == line_of(TOY_V1, "return helper(x) + 1")


def test_symbol_ranges_agree_with_the_ast_of_the_file() -> None:
    """Independent check: every top-level def's range per ast's own lineno/end_lineno."""
    tree = ast.parse(TOY_V1)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            assert symbol_range(TOY_V1, node.name) == (node.lineno, node.end_lineno)


def test_dotted_symbols_walk_classes_and_functions() -> None:
    assert symbol_range(TOY_V1, "Widget.area")[0] == line_of(TOY_V1, "def area")
    assert symbol_range(TOY_V1, "outer.inner") == (
        line_of(TOY_V1, "def inner"),
        line_of(TOY_V1, "return k + n"),
    )
    assert symbol_range(TOY_V1, "SCALE") == (line_of(TOY_V1, "SCALE = 2.0"),) * 2


def test_unknown_and_ambiguous_symbols_say_why() -> None:
    with pytest.raises(SymbolError, match="no 'paint' in 'Widget'.*render"):
        symbol_range(TOY_V1, "Widget.paint")
    twice = "def f():\n    pass\n\n\ndef f():\n    pass\n"
    with pytest.raises(SymbolError, match="defined 2 times.*lines 1, 5"):
        symbol_range(twice, "f")
    with pytest.raises(SymbolError, match="does not parse"):
        symbol_range("def broken(:\n", "broken")


def test_split_lines_splits_on_newline_only() -> None:
    # A form feed and a Unicode line separator are inside lines, as on GitHub.
    text = "a\x0cb\nc\u2028d\ne"
    assert split_lines(text) == ["a\x0cb", "c\u2028d", "e"]
    assert split_lines("x\n") == ["x"] and split_lines("x\n\n") == ["x", ""]


def test_placement_prefers_no_shift_and_finds_a_shifted_copy() -> None:
    upstream = split_lines(TOY_V1)
    ranges = ((8, 9), (12, 13))
    digest = sha256(lines_text(TOY_V1, *ranges))
    assert find_placement(upstream, ranges, digest) == 0
    shifted = ["# mirror banner", "# another"] + upstream
    assert find_placement(shifted, ranges, digest) == 2
    assert "".join(cut(shifted, ranges, 2)) == lines_text(TOY_V1, *ranges)
    assert find_placement(upstream[:5], ranges, digest) is None
    assert find_placement(upstream, ranges, sha256("other")) is None


def test_placement_tries_shift_zero_before_others() -> None:
    # The same single line occurs at 2 and 4; the pin is line 4: shift 0 must win over -2.
    lines = ["x", "same", "y", "same", "z"]
    assert find_placement(lines, ((4, 4),), sha256("same\n")) == 0


def make_excerpt(ranges: tuple[tuple[int, int], ...]) -> Excerpt:
    repo = Repo("openai/gpt-2", "https://github.com/openai/gpt-2", "ab" * 20, "MIT")
    text = lines_text(TOY_V1, *ranges)
    return Excerpt(
        id="x",
        repo=repo,
        path="src/model.py",
        symbol=None,
        ranges=ranges,
        blocks=make_blocks(text, ranges),
        text=text,
        sha256=sha256(text),
        evidence="e",
        evidence_level="seed",
        resolved_from="cache",
    )


def test_permalink_label_and_omissions() -> None:
    one = make_excerpt(((8, 9),))
    assert one.permalink == f"https://github.com/openai/gpt-2/blob/{'ab' * 20}/src/model.py#L8-L9"
    assert one.label == "model.py 8–9" and one.omissions == ()
    two = make_excerpt(((3, 4), (8, 9), (12, 12)))
    assert two.permalink.endswith("#L3-L12")
    assert two.label == "model.py 3–4, 8–9, 12"
    assert two.omissions == ((5, 7), (10, 11))
    assert [omission_marker(g) for g in two.omissions] == [
        "… lines 5–7 omitted …",
        "… lines 10–11 omitted …",
    ]
    assert make_excerpt(((12, 12),)).permalink.endswith("#L12")


def test_blocks_split_the_text_per_range() -> None:
    excerpt = make_excerpt(((3, 4), (8, 9)))
    assert excerpt.blocks == (
        (3, lines_text(TOY_V1, (3, 4))),
        (8, lines_text(TOY_V1, (8, 9))),
    )
    assert "".join(text for _, text in excerpt.blocks) == excerpt.text
    with pytest.raises(ValueError, match="ranges 3–4 need 2"):
        make_blocks("one line\n", ((3, 4),))
