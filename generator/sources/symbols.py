"""Symbol anchors: a dotted Python name ("attn", "GPT2Attention.forward") -> its lines, via ast."""

from __future__ import annotations

import ast
import functools
import textwrap

from generator.sources.ranges import Range


class SymbolError(ValueError):
    """The symbol is missing, ambiguous, or the file does not parse."""


def _name_of(node: ast.stmt) -> str | None:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return target.id if isinstance(target, ast.Name) else None
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


@functools.lru_cache(maxsize=4)
def _parsed(source: str) -> ast.Module:
    """ast.parse(source), kept for the next call: one file's many excerpts are checked one
    after another, each against the whole file (read only: nothing changes a tree it returns)."""
    return ast.parse(source)


def symbol_range(source: str, symbol: str) -> Range:
    """First and last line of `symbol` in `source`, decorators included.

    Each dotted part is looked up among the statements directly in the body of the previous one
    (module, class or function), so "GPT2Attention.forward" is the method, not any `forward`.
    """
    try:
        tree = _parsed(source)
    except SyntaxError as error:
        where = f"line {error.lineno}: {error.msg}"
        raise SymbolError(f"the file does not parse as Python ({where})") from None
    body: list[ast.stmt] = tree.body
    scope = "the module"
    node: ast.stmt | None = None
    for part in symbol.split("."):
        matches = [n for n in body if _name_of(n) == part]
        if not matches:
            names = sorted({name for n in body if (name := _name_of(n))})
            shown = ", ".join(names[:12]) + (" …" if len(names) > 12 else "")
            raise SymbolError(f"no {part!r} in {scope} (it defines: {shown or 'nothing'})")
        if len(matches) > 1:
            where = ", ".join(str(n.lineno) for n in matches)
            count = len(matches)
            raise SymbolError(f"{part!r} is defined {count} times in {scope} (lines {where})")
        node = matches[0]
        body = getattr(node, "body", [])
        scope = repr(part)
    assert node is not None and node.end_lineno is not None
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno] + [d.lineno for d in decorators])
    return first, node.end_lineno


def excerpt_problem(text: str, symbol: str) -> str | None:
    """Why an excerpt's text is not exactly the definition of `symbol` (None when it is).

    A source that gives only the excerpt (the cache, a registry copy of part of a file) proves
    its bytes by their hash, not that the lines still hold the symbol: a lock whose lines and
    sha256 were both moved to another function would pass. The text must be one definition
    named after the symbol's last part, from its first decorator to its last line. (Which class
    a method sits in is not in its lines: that is checked where the whole file is read.)"""
    name = symbol.rsplit(".", 1)[-1]
    try:
        tree = ast.parse(textwrap.dedent(text))
    except SyntaxError:
        return "the lines are not one whole Python definition"
    found = [_name_of(node) for node in tree.body]
    if found != [name]:
        shown = ", ".join(repr(n) for n in found if n) or "no definition"
        return f"the lines define {shown}, not {name!r}"
    first, last = symbol_range(textwrap.dedent(text), name)
    if (first, last) != (1, len(text.rstrip("\n").split("\n"))):
        return f"the lines hold more than {name!r}"
    return None
