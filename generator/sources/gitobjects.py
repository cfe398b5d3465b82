"""Git's own objects for a pinned commit, kept in the lock ([[commits]]): the commit's text and
the trees from its root down to each whole file the lock records ([[files]]).

Git names an object by the sha1 of b"<kind> <size>\\0" + its bytes; a commit's text names its
root tree, and a tree lists each entry's mode, name and id. So these few objects, checked by
their hashes alone (no clone, no network), prove which blob the commit holds at a path: a commit
id changed in the lock, however consistently, no longer matches them.

    proof = CommitProof(repo, commit, text, trees)  # trees: listings as `git ls-tree` prints them
    proof.check()                                   # ProofError unless the text hashes to commit
    proof.blob_at("src/model.py")                   # its blob id; None where no tree is recorded

Ours rather than dulwich's: checking a few objects takes one sha1 and a tree parser of some 20
lines, where dulwich (a whole git implementation) would be a dependency of the light install.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

MODES = {"40000": "tree", "160000": "commit"}  # every other mode is a blob's


class ProofError(ValueError):
    """Objects that do not hash to the ids that name them, or cannot be spelled as text."""


def object_id(kind: str, data: bytes) -> str:
    """git's id of an object: sha1 of b"<kind> <size>\\0" + data (`git hash-object -t kind`)."""
    return hashlib.sha1(b"%s %d\0" % (kind.encode(), len(data)) + data).hexdigest()


def tree_listing(data: bytes) -> str:
    """A raw tree object as `git ls-tree` lists it: "<mode> <kind> <id>\\t<name>" per entry,
    mode in six digits. ProofError for a name text cannot hold (not UTF-8, a tab or newline)
    or a tree the listing would not spell back byte for byte."""
    lines, at = [], 0
    while at < len(data):
        try:
            space, nul = data.index(b" ", at), data.index(b"\0", at)
            mode, raw_name = data[at:space].decode("ascii"), data[space + 1 : nul]
            int(mode, 8)
        except ValueError:
            raise ProofError("a tree object git gave is malformed") from None
        try:
            name = raw_name.decode("utf-8")
        except UnicodeDecodeError:
            raise ProofError(f"entry {raw_name!r} of a tree is not UTF-8") from None
        if "\t" in name or "\n" in name:
            raise ProofError(f"entry {name!r} of a tree holds a tab or newline")
        lines.append(
            f"{int(mode, 8):06o} {MODES.get(mode, 'blob')} {data[nul + 1 : nul + 21].hex()}\t{name}"
        )
        at = nul + 21
    listing = "\n".join(lines)
    if tree_bytes(listing) != data:
        raise ProofError("a tree with a mode git no longer writes cannot be spelled back")
    return listing


def tree_bytes(listing: str) -> bytes:
    """The raw tree object a listing spells: mode (no leading zero), name, NUL, 20-byte id."""
    out = bytearray()
    for line in listing.split("\n") if listing else ():
        head, _, name = line.partition("\t")
        mode, _, object_hex = head.split(" ")
        out += f"{int(mode, 8):o} {name}\0".encode() + bytes.fromhex(object_hex)
    return bytes(out)


def entries(listing: str) -> dict[str, tuple[str, str]]:
    """name -> (kind, id) of a listing; ProofError for a line that is not an entry."""
    found = {}
    for line in listing.split("\n") if listing else ():
        head, tab, name = line.partition("\t")
        parts = head.split(" ")
        if not tab or len(parts) != 3 or len(parts[2]) != 40 or not name:
            raise ProofError(f"tree line {line!r} is not '<mode> <kind> <id>\\t<name>'")
        try:
            int(parts[0], 8), bytes.fromhex(parts[2])
        except ValueError:
            raise ProofError(f"tree line {line!r} has a bad mode or id") from None
        found[name] = (parts[1], parts[2])
    return found


@dataclass(frozen=True)
class CommitProof:
    """A commit object and some of its trees: enough to name the blob at each recorded path."""

    repo: str
    commit: str  # the id the text must hash to
    text: str  # the commit object, verbatim (`git cat-file commit COMMIT`)
    trees: tuple[str, ...]  # listings of the trees on the way to each recorded file

    def check(self) -> None:
        """ProofError unless the text is a commit object with this id, and each tree parses."""
        named = object_id("commit", self.text.encode("utf-8"))
        if named != self.commit:
            raise ProofError(
                f"the commit object recorded here hashes to {named}, not to {self.commit}"
            )
        if not self.text.startswith("tree ") or len(self.text.split("\n", 1)[0]) != 45:
            raise ProofError("the commit object does not start with its tree's id")
        parents = {self.text.split("\n", 1)[0].removeprefix("tree ")}  # the root tree's id
        for listing in self.trees:  # and every tree a recorded tree names (each line checked)
            parents |= {id_ for kind, id_ in entries(listing).values() if kind == "tree"}
        for index, listing in enumerate(self.trees):
            tree_id = object_id("tree", tree_bytes(listing))
            if tree_id not in parents:
                raise ProofError(
                    f"trees[{index}] hashes to {tree_id}, which is not a tree of the commit"
                    " (neither its root tree nor one a recorded tree names)"
                )

    def blob_at(self, path: str) -> str | None:
        """The blob id the commit holds at `path`; None when a tree on the way is not recorded.
        ProofError when the recorded trees say there is no such file."""
        by_id = {object_id("tree", tree_bytes(listing)): listing for listing in self.trees}
        current = self.text.split("\n", 1)[0].removeprefix("tree ")
        *folders, filename = path.split("/")
        for depth, name in enumerate([*folders, filename]):
            listing = by_id.get(current)
            if listing is None:
                return None
            kind, current = entries(listing).get(name, ("", ""))
            wanted = "blob" if depth == len(folders) else "tree"
            if kind != wanted:
                where = "/".join(path.split("/")[: depth + 1])
                raise ProofError(f"the commit's trees hold no {wanted} at {where}")
        return current
