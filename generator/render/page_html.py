"""Small fixes to a page's finished HTML for keyboard and search readers (a function from page
HTML to page HTML, called by the plugin before the math is typeset).

- Code line numbers stay links (a line's address), but leave the Tab order: a long excerpt would
  otherwise put a hundred tab stops before the next paragraph.
- Each code block and each Markdown table is a tab stop in the HTML itself, so that a reader
  without JavaScript can scroll one that is wider than the page from the keyboard (axe:
  scrollable-region-focusable). Only a script can tell which ones scroll: with JavaScript,
  Material and site.js take the tab stop back from those that fit (a table then scrolls in
  Material's wrapper, which site.js makes the tab stop). A table already inside a focusable
  scroller of ours (`<div class="itm-scroll" … tabindex="0">`) needs none.
- Tab labels and table cells get a line break between them, so the search index reads "GPT-2
  small GPT-2 medium", not "GPT-2 smallGPT-2 medium" (flex rows and tables ignore it).
- The search index also finds a number printed with thousands separators ("2,362,368") by its
  digits ("2362368"): `searchable_digits` appends them to each entry's text, after Material's
  search plugin has written the index (the pages themselves are left as they are).
"""

from __future__ import annotations

import re

LINE_NUMBER_LINK = re.compile(r'(<span class="normal"><a href="#__codelineno-[^"]*")>')
CODE_BLOCK = re.compile(r"(<pre[^>]*><span></span>)<code>")  # pymdownx.highlight's blocks
TABLE = re.compile(r'(?<!tabindex="0">)<table>')  # Markdown's tables carry no attribute
ADJACENT = re.compile(r"</(label|th|td)><(label|th|td)\b")  # tab labels, table cells
GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,]*\d)")


def for_readers(page_html: str) -> str:
    page_html = LINE_NUMBER_LINK.sub(r'\1 tabindex="-1">', page_html)
    page_html = CODE_BLOCK.sub(r'\1<code tabindex="0">', page_html)
    page_html = TABLE.sub('<table tabindex="0">', page_html)
    return ADJACENT.sub(r"</\1>\n<\2", page_html)


def family_titles(index: dict, sections: dict[str, str]) -> dict:
    """Material's search index with each page of a family other than GPT-2's titled as its
    <title> is (overrides/main.html): "The whole model · Llama 2 and Mistral". `sections`: page
    address -> its nav section; only the page's own entry changes, not its headings', and not
    one whose title names the section already (the section's first page: "Llama 2 and Mistral")."""
    for doc in index.get("docs", []):
        section = sections.get(doc.get("location"))
        if section and section not in doc["title"]:
            doc["title"] += f" · {section}"
    return index


def searchable_digits(index: dict) -> dict:
    """Material's search index with each entry's separated numbers appended as bare digits."""
    for doc in index.get("docs", []):
        digits = dict.fromkeys(m[0].replace(",", "") for m in GROUPED.finditer(doc.get("text", "")))
        if digits:
            doc["text"] += "<p hidden>" + " ".join(digits) + "</p>"
    return index


# -- the first use of each term links to its definition ----------------------------------------
HTML_TOKEN = re.compile(r"<!--.*?-->|<[^>]*>|[^<]+", re.DOTALL)
TAG_NAME = re.compile(r"</?([a-zA-Z][a-zA-Z0-9]*)")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
PROSE = {"p", "li", "dd"}  # where a term's use is linked
# never inside these: links, code, headings, controls, captions, drawings, math, grids
NOT_HERE = {"a", "code", "pre", "kbd", "script", "style", "button", "label", "select", "option"}
NOT_HERE |= {"textarea", "svg", "math", "summary", "caption", "th", "dt", "figcaption", "nav"}
NOT_HERE |= {"abbr", "cite", "h1", "h2", "h3", "h4", "h5", "h6"}
NOT_IN_CLASS = re.compile(r'class="[^"]*\b(arithmatex|katex|itm-map|itm-wt-grid)\b')


def link_terms(page_html: str, terms: list[tuple[re.Pattern[str], str]]) -> str:
    """The page with the first use of each term in its prose (a paragraph or list item, outside
    links, code, headings, math and controls) made a link to `href`, its definition. `terms`:
    (pattern, href) pairs. The HTML is walked as tags and text, with a stack of open elements
    and two counts kept beside it (open prose elements, open elements a term may not be in): a
    warm build spent a fifth of its time in this walk when each text asked the whole stack."""
    left = list(terms)
    tokens = HTML_TOKEN.findall(page_html)
    stack: list[tuple[str, bool]] = []  # (tag, whether a term may be linked inside it)
    prose = barred = 0  # open elements in PROSE; open elements a term may not be linked in
    for index, token in enumerate(tokens):
        if not left:
            break  # every term linked: the rest stays as it is
        if token.startswith("<"):
            match = TAG_NAME.match(token)
            if match is None or token.endswith("/>"):
                continue
            name = match[1].lower()
            if token.startswith("</"):
                at = next((i for i in range(len(stack) - 1, -1, -1) if stack[i][0] == name), None)
                if at is not None:
                    for tag, allowed in stack[at:]:
                        prose -= tag in PROSE
                        barred -= not allowed
                    del stack[at:]
            elif name not in VOID:
                allowed = name not in NOT_HERE and not NOT_IN_CLASS.search(token)
                stack.append((name, allowed))
                prose += name in PROSE
                barred += not allowed
            continue
        if prose and not barred:
            tokens[index] = _link_first(token, left)
    return "".join(tokens)


def _link_first(text: str, left: list[tuple[re.Pattern[str], str]]) -> str:
    """`text` with each of `left`'s terms it uses linked at its first use (and dropped from
    `left`: a term is linked once a page)."""
    done: list[str] = []
    while True:
        found = [(m.start(), m.end(), term) for term in left if (m := term[0].search(text))]
        if not found:
            return "".join(done) + text
        start, end, term = min(found, key=lambda hit: hit[0])
        left.remove(term)
        done += [text[:start], f'<a class="itm-term" href="{term[1]}">{text[start:end]}</a>']
        text = text[end:]
