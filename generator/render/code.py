"""Pinned excerpts as Markdown: fenced blocks with upstream line numbers, omission markers,
Code tabs and "Direct evidence" cards (blocks; their markup is templates/code_tab.md and
templates/evidence_card.html). Pygments (via pymdownx.highlight) escapes the code.

Upstream text is data, never markup: code is split on "\n" only (never str.splitlines, which
also breaks at form feeds and Unicode separators), characters a browser or Markdown would
interpret, hide or rewrite are shown as visible marks (tabs too: Python-Markdown expands them to
spaces before fences are read, so a kept tab would reach the page as padding), and every other
text from the lock reaches the page through `literal`, which leaves Markdown and HTML nothing to
interpret.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from generator.blocks import Block, Markup
from generator.render.blocks import CodeTab, EvidenceCard
from generator.sources.excerpt import omission_marker

if TYPE_CHECKING:
    from generator.sources.lock import Repo


class ExcerptLike(Protocol):  # generator.sources.excerpt.Excerpt
    id: str
    path: str
    blocks: tuple[tuple[int, str], ...]

    @property
    def repo(self) -> Repo: ...
    @property
    def label(self) -> str: ...
    @property
    def link(self) -> str: ...  # the permalink, or the repository's address (no web view)


# Characters that would break a line, vanish, reorder text or be rewritten as spaces (a tab):
# shown, never interpreted.
_INVISIBLE = {
    **{code: chr(0x2400 + code) for code in range(0x20) if code != 0x0A},  # ␉ ␌ ␋ ␍ …
    0x7F: "\u2421",  # ␡
    **{code: f"⟨U+{code:04X}⟩" for code in (0x85, 0x2028, 0x2029, 0xFEFF, 0x200B, 0x200C, 0x200D)},
    **{code: f"⟨U+{code:04X}⟩" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))},
    **{code: f"⟨U+{code:04X}⟩" for code in (0x200E, 0x200F, 0x061C)},
}


# How an excerpt's text can have been checked, by the lock's evidence level, in a reader's words
# (the Sources page lists them); a card says what was checked for its own excerpt
# (`evidence_words`), from its lock entry, and never more.
EVIDENCE_WORDS: dict[str, tuple[str, str]] = {  # level -> (short name, what such a check is)
    "upstream": ("read at the commit", "Read from the file at the pinned commit itself."),
    "file-hash": (
        "rebuilt from published copies",
        "Read from copies of the file published on PyPI that together rebuild the file at the "
        "pinned commit exactly (the same sha256).",
    ),
    "mirror-window": (
        "checked indirectly",
        "Releases of a package published on PyPI have these lines unchanged (each excerpt names "
        "which); the file at the pinned commit itself was not read.",
    ),
}
HOW_TO_CHECK = (
    "To check them yourself, open the pinned revision: its lines are these, byte for byte."
)
# where the lines were not read at the commit, the revision is where to compare, not a promise
HOW_TO_COMPARE = (
    "To check them yourself, open the pinned revision and compare its lines with these."
)


def evidence_words(excerpt: Any) -> tuple[str, str]:
    """(short name, sentence) of what was checked for this excerpt, for readers: its level's
    words, and for an excerpt checked only in registry copies exactly the releases its lock entry
    names (carried_by) and the copies builds read, never a window wider than those."""
    level = excerpt.evidence_level
    name, sentence = EVIDENCE_WORDS[level]
    if level != "mirror-window":
        return name, sentence
    copies = [tuple(spec.split("==", 1)) for spec in excerpt.copies]  # (package, version)
    carried = excerpt.carried_by
    said = _copies_words(copies) if carried is None else _carried_words(carried, copies)
    said = said[0].upper() + said[1:]
    return name, f"{said}. The file at the pinned commit {excerpt.repo.short} was not read."


def _copies_words(copies: list[tuple[str, ...]]) -> str:
    """ "the published copy transformers 5.14.1 has these lines ...": all a lock without
    carried_by says (its [[mirrors]] that carry the lines)."""
    named = _joined([" ".join(copy) for copy in copies])
    if not copies:
        return "a copy published on a package index has these lines byte for byte"
    if len(copies) == 1:
        return (
            f"the published copy {named} has these lines byte for byte, and builds check them there"
        )
    return (
        f"the published copies {named} have these lines byte for byte, and builds check them there"
    )


def _carried_words(carried: Any, copies: list[tuple[str, ...]]) -> str:
    """ "every transformers release on PyPI from 5.6.2 to 5.14.1 has these lines ...; builds
    check them in release 5.14.1": the lock's carried_by and the copies read."""
    said = f"{carried_releases(carried)} has these lines byte for byte at the same line numbers"
    versions = [copy[1] for copy in copies if copy[0] == carried.package]
    if copies and len(versions) == len(copies):
        return (
            f"{said}; builds check them in release{'s' * (len(versions) > 1)} {_joined(versions)}"
        )
    if copies:
        return f"{said}; builds check them in {_joined([' '.join(copy) for copy in copies])}"
    return said


def carried_releases(carried: Any) -> str:
    """ "every transformers release on PyPI from 5.6.2 to 5.14.1, except 5.10.0," (windows of
    one release: "release 5.14.1 of transformers on PyPI", "each of the transformers releases 5.13.0
    and 5.14.1 on PyPI"): a lock's carried_by in words, the subject of "has"."""
    windows = carried.releases
    if all(first == last for first, last in windows) and not carried.excepted:
        versions = [first for first, _ in windows]
        if len(versions) == 1:
            return f"release {versions[0]} of {carried.package} on PyPI"
        return f"each of the {carried.package} releases {_joined(versions)} on PyPI"
    spans = [first if first == last else f"from {first} to {last}" for first, last in windows]
    words = f"every {carried.package} release on PyPI {_joined(spans)}"
    if carried.excepted:
        words += f", except {_joined(list(carried.excepted))},"
    return words


def _joined(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c" ("" for none)."""
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def how_to_check(excerpt: Any) -> str:
    """How a reader checks the lines: against the pinned revision, whose lines were read (or
    rebuilt) for them, or which was not read and is only where to compare."""
    return HOW_TO_COMPARE if excerpt.evidence_level == "mirror-window" else HOW_TO_CHECK


def visible(text: str) -> str:
    """`text` with control characters (tabs included), line/paragraph separators and bidi or
    zero-width marks replaced by visible stand-ins (␉, ␌, ⟨U+2028⟩); only "\n" is kept."""
    return text.translate(_INVISIBLE)


def indent(text: str, prefix: str = "    ") -> str:
    """textwrap.indent, but lines end at "\n" only (textwrap splits at \f, \v, U+2028 too)."""
    return "\n".join(prefix + line if line else line for line in text.split("\n"))


def literal(text: str) -> str:
    """Text from a lock or upstream, safe anywhere in Markdown or HTML: escaped for HTML, with
    Markdown's syntax characters as numeric references and no line breaks."""
    out = html.escape(visible(" ".join(text.split("\n"))), quote=True)
    out = "".join(f"&#{ord(ch)};" if ch in "\\`*[]()!{}" else ch for ch in out)
    return f"&#{ord(out[0])};{out[1:]}" if out[:1] in ("#", "-", "+", "=", "|") else out


def fence_id(prefix: str, excerpt_id: str, first_line: int) -> str:
    """A stable HTML id for one run; line anchors become __codelineno-<id>-<line>."""
    return f"{prefix}-{re.sub(r'[^A-Za-z0-9]+', '-', excerpt_id).strip('-')}-{first_line}"


def fence(code: str, *, first_line: int, block_id: str, lang: str = "python") -> str:
    """One fenced block numbered from `first_line`; the fence outgrows any backtick run in the code."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    ticks = "`" * max(3, longest + 1)
    code = visible(code)
    body = code if code.endswith("\n") else code + "\n"
    if body.endswith("\n\n"):  # a blank last line: superfences drops the fence's last newline,
        body += "\n"  # which would take the line with it (with stripnl off, mkdocs.yml)
    return f'{ticks}{{.{lang} #{block_id} linenums="{first_line}"}}\n{body}{ticks}\n'


OMITTED_CLASS = "itm-omitted"  # this site's; the pinned-excerpts extension passes its own


def omitted(after: int, before: int, css_class: str = OMITTED_CLASS) -> str:
    """The marker between two runs (lines after+1 .. before-1 are not shown), with its class."""
    return f"{omission_marker((after + 1, before - 1))}\n{{: .{css_class} }}\n"


def excerpt_blocks(excerpt: ExcerptLike, prefix: str, omitted_class: str = OMITTED_CLASS) -> str:
    """All runs of an excerpt, with omission markers between them: Markdown fences numbered
    with the upstream lines (pymdownx.superfences and pymdownx.highlight convert them)."""
    parts: list[str] = []
    previous_last: int | None = None
    for first_line, code in excerpt.blocks:
        if previous_last is not None:
            parts.append(omitted(previous_last, first_line, omitted_class))
        parts.append(
            fence(code, first_line=first_line, block_id=fence_id(prefix, excerpt.id, first_line))
        )
        previous_last = first_line + code.count("\n") - 1
    return "\n".join(parts)


def excerpt_anchor(excerpt_id: str) -> str:
    """The stable anchor of an excerpt on the Sources page: "gpt2.attn" -> "ex-gpt2-attn"."""
    return "ex-" + "".join(ch if ch.isalnum() else "-" for ch in excerpt_id)


def indented_runs(excerpt: ExcerptLike, prefix: str) -> Markup:
    """`excerpt_blocks` indented into a tab or a collapsed box, without its final "\n": Markdown
    fences, whose code Pygments escapes."""
    return Markup(indent(excerpt_blocks(excerpt, prefix).removesuffix("\n")))


def code_tab(excerpt: ExcerptLike, *, sources: str | None, prefix: str = "code") -> CodeTab:
    """A Material content tab titled like "model.py 69–112", captioned with its permalink,
    license and evidence level, linked to its entry on the Sources page (`sources`, that page's
    URL; None only in a build without one): wherever code is quoted, a reader can see how it
    was checked. `prefix` keeps fence ids unique when a page shows the same excerpt twice."""
    level = getattr(excerpt, "evidence_level", "")
    return CodeTab(
        label=Markup(literal(excerpt.label)),
        permalink=excerpt.link,
        repo=Markup(literal(excerpt.repo.name)),
        path=Markup(literal(excerpt.path)),
        license=Markup(literal(excerpt.repo.license)),
        level=evidence_words(excerpt)[0] if level else "",
        level_href=f"{sources}#{excerpt_anchor(excerpt.id)}" if sources else None,
        runs=indented_runs(excerpt, prefix),
    )


def code_tabs(
    excerpts: list[ExcerptLike],
    *,
    sources: str | None,
    prefix: str = "code",
    render: Callable[[Block], str],
) -> str:
    """One tab per excerpt (`code_tab`), each through `render` (a page's `render_block`, so
    the site's override of the template applies)."""
    tabs = [code_tab(excerpt, sources=sources, prefix=prefix) for excerpt in excerpts]
    return "\n".join(render(tab) for tab in tabs)


def span_label(excerpt) -> str:
    """ "lines 185–224": the whole span an excerpt covers (omissions are marked inside)."""
    first, last = excerpt.ranges[0][0], excerpt.ranges[-1][1]
    return f"line {first}" if first == last else f"lines {first}–{last}"


def evidence_card(excerpt, claim: str, *, sources_url: str | None = None) -> EvidenceCard:
    """A "Direct evidence" card: claim, repo and path, pinned revision link, lines, excerpt."""
    repo = excerpt.repo
    return EvidenceCard(
        claim=claim,
        owner=repo.name.split("/")[0],
        repo=repo.name,
        path=excerpt.path,
        permalink=excerpt.link,
        commit=repo.commit,
        short=repo.short,
        lines=span_label(excerpt),
        license=repo.license,
        cite=sources_url,
        status=f"{evidence_words(excerpt)[1]} {how_to_check(excerpt)}",
        runs=indented_runs(excerpt, "src"),
    )


def plain_runs(excerpt: ExcerptLike) -> list[tuple[str, str, str]]:
    """Per run of an excerpt: (omission marker before it or "", line numbers, lines), split on
    "\n" only so U+2028 and friends stay inside their line. For the Sources page's plain text,
    where every excerpt is listed and the coloured, anchored version stands on the page that
    quotes it."""
    runs: list[tuple[str, str, str]] = []
    previous_last: int | None = None
    for first_line, code in excerpt.blocks:
        marker = ""
        if previous_last is not None:
            marker = omission_marker((previous_last + 1, first_line - 1))
        lines = code.split("\n")[:-1]
        numbers = "\n".join(str(first_line + i) for i in range(len(lines)))
        runs.append((marker, numbers, "\n".join(visible(line) for line in lines)))
        previous_last = first_line + len(lines) - 1
    return runs
