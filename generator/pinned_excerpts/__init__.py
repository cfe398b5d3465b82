"""Pinned excerpts for any MkDocs site: quote upstream code by the id of a pin in a lock file,
verified against its sha256 at build time, with upstream line numbers, elisions, the permalink,
the evidence and the Software Heritage id.

    plugin.py     the MkDocs plugin `pinned-excerpts` (options, events)
    markdown.py   the `/// excerpt | ID` syntax (a Python-Markdown extension, `pinned_excerpts`)

The lock, resolution and verification are generator.sources'; the card is
generator/render/card.py and templates/pinned_excerpt.html, made of the same runs and citations
as Inside the Model's own Code tabs and Sources page.
"""
