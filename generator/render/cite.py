"""How to cite one pinned excerpt: plain text, BibTeX and CSL-JSON, each with the file's Software
Heritage id (SWHID) when the whole file at the pin has been read (generator/sources/swh.py).

One function for every place that cites: the GPT-2 site's Sources page and the cards of the
pinned-excerpts extension (generator/pinned_excerpts/).
"""

from __future__ import annotations

import html
import json

from generator.blocks import Citation, Markup
from generator.render.code import span_label

# CSL's own variables for where a work is archived (CSL 1.0.2: archive, archive_location).
ARCHIVE = "Software Heritage"


def citation_key(ex) -> str:
    """ "gpt-2-9b63575-gpt2-attn": repository, commit (7 hex) and excerpt id."""
    name = ex.repo.name.split("/")[-1]
    return f"{name}-{ex.repo.short[:7]}-{ex.id}".replace(".", "-")


def csl_item(ex) -> dict:
    """One CSL-JSON item (type "software") for the excerpt's lines at the pinned commit."""
    owner = ex.repo.name.rsplit("/", 1)[0]
    item: dict = {
        "id": citation_key(ex),
        "type": "software",
        "author": [{"literal": owner}],
        "title": f"{ex.repo.name}: {ex.path}, {span_label(ex)}",
        "version": ex.repo.commit,
        "URL": ex.link,
        "note": f"excerpt sha256 {ex.sha256}",
    }
    if ex.swhid:
        item["archive"] = ARCHIVE
        item["archive_location"] = ex.swhid
    return item


def citation(ex) -> Citation:
    """Plain-text, BibTeX and CSL-JSON citations of one pinned excerpt."""
    lines = span_label(ex)
    owner = ex.repo.name.rsplit("/", 1)[0]
    swhid = ex.swhid
    plain = (
        f"{ex.repo.name}, {ex.path}, {lines}, at commit {ex.repo.commit}. "
        f"{ex.link} (excerpt sha256 {ex.sha256[:16]}…)"
    )
    if swhid:
        plain += f" {swhid}"
    bibtex = [
        f"@misc{{{citation_key(ex)},",
        f"  author = {{{owner}}},",
        f"  title = {{{{{ex.repo.name}}}: {ex.path}, {lines}}},",
        f"  howpublished = {{\\url{{{ex.link}}}}},",
        f"  note = {{Commit {ex.repo.commit}; excerpt sha256 {ex.sha256}}},",
    ]
    if swhid:
        bibtex.append(f"  swhid = {{{swhid}}},")  # biblatex-software's field
    bibtex.append("}")
    csl = json.dumps([csl_item(ex)], indent=1, ensure_ascii=False)
    return Citation(
        plain=plain,
        bibtex="\n".join(bibtex),
        # escaped for an element's text only: its many quotes stay quotes, not &#34; (weight)
        csl_json=Markup(html.escape(csl, quote=False)),
    )
