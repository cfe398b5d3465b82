"""What changed from GPT-2 to Llama, one difference at a time, written in changes.toml beside
this file: what it is, why the field made it (the reason its paper gives, with the papers to
look up), the components it touches, and the pinned code on each side. The costs are computed
by the accounting of both families (generator/pages/compare.py), at each Llama size and at a
GPT-2-shaped model of the same width, depth, heads, context and vocabulary."""

from __future__ import annotations

from pathlib import Path

import msgspec

from generator.data_file import read_data
from generator.errors import InputError
from generator.models.papers import PAPERS, Paper

CHANGES_FILE = Path(__file__).parent / "changes.toml"
FIX = "write it as the Change schema in generator/models/llama/changes.py says, or restore it from git"


class Change(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    key: str  # "norm": its anchor on the page
    title: str
    text: str  # Markdown, in words: the numbers come from the cost table
    gpt2: str  # the excerpt id of GPT-2's side (openai/gpt-2)
    llama: tuple[str, ...]  # the excerpt ids of Llama's side (transformers), one tab each
    page: str  # the Llama component page that explains it
    why: str  # plain words: the reason the papers give for the change (no numbers the code has)
    papers: tuple[str, ...]  # the papers that give it, by name in papers.toml, its own first
    only_with: str | None = None  # shown for the sizes whose spec sets this field only

    @property
    def cite(self) -> tuple[Paper, ...]:
        """The papers that give it."""
        return tuple(PAPERS[name] for name in self.papers)


class ChangesFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    changes: tuple[Change, ...]


def read_changes(path: Path = CHANGES_FILE) -> tuple[Change, ...]:
    """The changes of `path`, each citing papers papers.toml has (an InputError otherwise)."""
    changes = read_data(path, ChangesFile, fix=FIX).changes
    for index, change in enumerate(changes):
        for cited, name in enumerate(change.papers):
            if name not in PAPERS:
                raise InputError(
                    f"{name!r} is not a paper of generator/models/papers.toml",
                    file=str(path),
                    entry=f"changes[{index}].papers[{cited}]",
                    fix=f"use one of: {', '.join(PAPERS)}",
                )
    return changes


CHANGES = read_changes()
