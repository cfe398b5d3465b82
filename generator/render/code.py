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
from typing import TYPE_CHECKING, Protocol

from generator.blocks import Block, Markup
from generator.render.blocks import CodeTab, EvidenceCard

if TYPE_CHECKING:
    from generator.sources.lock import Repo


class ExcerptLike(Protocol):  # generator.sources.Excerpt
    id: str
    path: str
    blocks: tuple[tuple[int, str], ...]

    @property
    def repo(self) -> Repo: ...
    @property
    def label(self) -> str: ...
    @property
    def permalink(self) -> str: ...


# Characters that would break a line, vanish, reorder text or be rewritten as spaces (a tab):
# shown, never interpreted.
_INVISIBLE = {
    **{code: chr(0x2400 + code) for code in range(0x20) if code != 0x0A},  # ␉ ␌ ␋ ␍ …
    0x7F: "\u2421",  # ␡
    **{code: f"⟨U+{code:04X}⟩" for code in (0x85, 0x2028, 0x2029, 0xFEFF, 0x200B, 0x200C, 0x200D)},
    **{code: f"⟨U+{code:04X}⟩" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))},
    **{code: f"⟨U+{code:04X}⟩" for code in (0x200E, 0x200F, 0x061C)},
}


# How an excerpt's text was checked, in a reader's words, by the lock's evidence level (the
# lock's own account of each pin, with commands and package copies, is for maintainers), and
# what any reader can do to check it again.
EVIDENCE_WORDS: dict[str, tuple[str, str]] = {  # level -> (short name, what was checked)
    "upstream": ("read at the commit", "Read from the file at the pinned commit itself."),
    "file-hash": (
        "rebuilt from published copies",
        "Read from copies of the file published on PyPI that together rebuild the file at the "
        "pinned commit exactly (the same sha256).",
    ),
    "mirror-window": (
        "checked indirectly",
        "Every release of the package published around the pinned commit has these lines "
        "unchanged; the file at the commit itself was not read.",
    ),
}
HOW_TO_CHECK = (
    "To check them yourself, open the pinned revision: its lines are these, byte for byte."
)


def evidence_words(level: str) -> tuple[str, str]:
    """(short name, sentence) of an evidence level, for readers."""
    return EVIDENCE_WORDS[level]


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
    """The marker between two runs: lines after+1 .. before-1 are not shown."""
    first, last = after + 1, before - 1
    lines = f"line {first}" if first == last else f"lines {first}–{last}"
    return f"… {lines} omitted …\n{{: .{css_class} }}\n"


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
        permalink=excerpt.permalink,
        repo=Markup(literal(excerpt.repo.name)),
        path=Markup(literal(excerpt.path)),
        license=Markup(literal(excerpt.repo.license)),
        level=evidence_words(level)[0] if level else "",
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
        permalink=excerpt.permalink,
        commit=repo.commit,
        short=repo.short,
        lines=span_label(excerpt),
        license=repo.license,
        cite=sources_url,
        status=f"{evidence_words(excerpt.evidence_level)[1]} {HOW_TO_CHECK}",
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
            marker = omitted(previous_last, first_line).split("\n", 1)[0]
        lines = code.split("\n")[:-1]
        numbers = "\n".join(str(first_line + i) for i in range(len(lines)))
        runs.append((marker, numbers, "\n".join(visible(line) for line in lines)))
        previous_last = first_line + len(lines) - 1
    return runs
