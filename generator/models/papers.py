"""The papers the site cites for why a model family is built as it is: each a reference a reader
can look up (authors, year, title, arXiv id), printed as text, never a link the site would load.
They are data (papers.toml beside this file), cited by name: PAPERS["RMSNORM"].
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from generator.data_file import keyed, read_data

PAPERS_FILE = Path(__file__).with_name("papers.toml")
FIX = "write it as PapersFile in generator/models/papers.py says, or restore it from git"


class Paper(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str  # how a data file or page cites it: "RMSNORM"
    authors: str  # as cited: "Zhang & Sennrich", "Touvron et al."
    year: int
    title: str
    arxiv: str  # the arXiv identifier: "1910.07467"

    @property
    def short(self) -> str:
        """ "Zhang & Sennrich 2019": how the words around a citation name it."""
        return f"{self.authors} {self.year}"


class PapersFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    papers: tuple[Paper, ...]


def read_papers(path: Path = PAPERS_FILE) -> dict[str, Paper]:
    """The papers of `path` by name (an InputError if it is not as PapersFile says, or a name
    repeats)."""
    papers = read_data(path, PapersFile, fix=FIX).papers
    return keyed(papers, lambda paper: paper.name, path=path, entry="papers", fix=FIX)


# every paper, by its name: how a data file cites one (generator/models/llama/changes.toml)
PAPERS = read_papers()
