"""What a build made, kept under a fingerprint of everything it read: a warm build replays it.

A build with unchanged inputs makes the same generated files and fills every page's macros the
same way, so recomputing them (importing numpy and the engine, tracing the toy, rendering ~600
blocks) is the generator's whole cost on a warm build. `BuildMemo` keeps those results in the
store under a fingerprint of the build's inputs:

- the generator's code and templates (every file of the `generator` package this build runs,
  wherever it is installed), the pins and artifacts (every file under the project's sources/)
  and a site's block overrides (custom_dir/itm/), byte for byte;
- every setting (generator/settings.py), the Python version and the installed distributions
  (their dist-info names carry their versions);
- which GPT-2 checkpoint the forward-pass page would show (checkpoints.resolve: none, or the
  pinned files found and verified, and where).

and, for a page, its Markdown, front matter, address and the address of every file it may link.
Two kinds of entry: the generated files with the KaTeX bundle the build typesets with (an index of
their sha256, the bytes stored as blobs named by their hash, so a file unchanged since another
fingerprint is stored once), and one entry per page (the sha256 of its filled Markdown, a blob
too, and the description a block set). Entries are signed like every derived entry (generator/store.py) and blobs are
re-hashed on every read: a forged or foreign memo is discarded and the build computes afresh. On
a miss nothing changes: the build loads and checks every input (a bad pin still stops it in
on_config) and records what it made, at its end and only if the fingerprint taken again then
is unchanged (an input edited while the build ran would otherwise be recorded under the wrong one).

What the fingerprint leaves out, on purpose: upstream bytes from the network or a clone (every
excerpt is checked against the lock's sha256, which the fingerprint covers), and mkdocs.yml
(the generator reads it only through its settings, the theme's custom_dir and page addresses).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import cast

from generator.digests import code_fingerprint, tree_digest
from generator.settings import Settings
from generator.store import Store, key_of, sha256_hex

VERSION = 1  # bump when what an entry holds changes


def checkpoint_identity(settings: Settings) -> object:
    """Which GPT-2 files the forward-pass page would use: None (the stand-in), or each pinned
    file's path and verified sha256 and where it was found. A bad file raises InputError, as the
    build itself would."""
    from generator.checkpoint_files import resolve
    from generator.checkpoints import PINS_FILE, checkpoint_pin

    pin = checkpoint_pin(settings.root / PINS_FILE, "gpt2")
    found = resolve(
        pin,
        cache_dir=settings.cache_dir,
        hub_cache=settings.hub_cache,
        user_path=settings.gpt2_weights,
        origin=pin.env,
        download=settings.may_download,
    )
    if found is None:
        return None
    return {
        "origin": found.origin,
        "files": {name: [str(path), pin.files[name].sha256] for name, path in found.paths.items()},
    }


def fingerprint(settings: Settings) -> str:
    """sha256 of everything a build's generated files and filled pages depend on."""
    digest = hashlib.sha256(b"itm-memo/%d\0" % VERSION)
    digest.update(code_fingerprint().encode())
    tree_digest(digest, "sources", settings.root / "sources")
    if settings.custom_dir is not None:
        overrides = settings.root / settings.custom_dir / "itm"
        if overrides.is_dir():
            tree_digest(digest, "custom_dir/itm", overrides)
    described = {f.name: getattr(settings, f.name) for f in fields(settings)}
    digest.update(key_of(described, checkpoint_identity(settings)).encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class MadeFiles:
    """A build's generated files (site path -> bytes) and the KaTeX bundle it typesets with."""

    files: dict[str, bytes]
    katex_js: bytes


@dataclass(frozen=True)
class FilledPage:
    markdown: str  # the page with every {{ macro() }} filled
    description: str | None  # what a block said the page shows (meta description), if any


class BuildMemo:
    """The memo of one fingerprint: read what an earlier build made, record what this one made."""

    def __init__(self, store: Store, fingerprint: str) -> None:
        self.store = store
        self.fingerprint = fingerprint

    @classmethod
    def open(cls, settings: Settings) -> BuildMemo:
        return cls(Store(settings.cache_dir), fingerprint(settings))

    # -- generated files: an index of sha256, the bytes as blobs ----------------------------------
    def _files_key(self) -> str:
        return key_of("memo-files", self.fingerprint)

    def files(self) -> MadeFiles | None:
        index = self.store.get_json("memo_files", self._files_key())
        if not isinstance(index, dict) or not isinstance(index.get("files"), dict):
            return None
        found = {path: self.store.get(str(sha)) for path, sha in index["files"].items()}
        katex_js = self.store.get(str(index.get("katex_js")))
        if katex_js is None or any(data is None for data in found.values()):
            return None  # a blob is gone or damaged (and discarded): make everything again
        return MadeFiles(files=found, katex_js=katex_js)  # type: ignore[arg-type]

    def record_files(self, made: MadeFiles) -> None:
        index = {
            "files": {path: self.store.put(data) for path, data in sorted(made.files.items())},
            "katex_js": self.store.put(made.katex_js),
        }
        self.store.put_json("memo_files", self._files_key(), index)

    # -- pages ------------------------------------------------------------------------------------
    def page_key(
        self, src_uri: str, markdown: str, meta: Mapping[object, object], links: str
    ) -> str:
        """The key of one page's filled Markdown; `links` is `links_digest` of the build's files."""
        meta_digest = front_matter_digest(meta)
        return key_of("memo-page", self.fingerprint, src_uri, markdown, meta_digest, links)

    def page(self, key: str) -> FilledPage | None:
        value = self.store.get_json("memo_page", key)
        if not isinstance(value, dict):
            return None
        markdown = self.store.get(str(value.get("markdown")))
        description = value.get("description")
        try:
            text = markdown.decode("utf-8") if markdown is not None else None
        except UnicodeDecodeError:
            text = None
        if text is None:
            return None
        return FilledPage(text, description if isinstance(description, str) else None)

    def record_page(self, key: str, filled: FilledPage) -> None:
        """The entry names the filled Markdown by its sha256 (a blob): a page that fills the same
        under another fingerprint is stored once."""
        markdown = self.store.put(filled.markdown.encode("utf-8"))
        self.store.put_json(
            "memo_page", key, {"markdown": markdown, "description": filled.description}
        )


def front_matter_digest(meta: Mapping[object, object]) -> str:
    """sha256 of a page's front matter, each value read once however often it appears: YAML
    aliases (`*name`) share one value, and nine levels of ten (a "billion laughs", a few hundred
    bytes) expanded to 10**9 values: keying the page ran out of memory after 222 s, where
    MkDocs reads it at once. Equal values give equal digests however they are shared; types
    are kept apart (YAML allows keys that are not strings, `2024: year`, and a date is not the
    string that names it) and the order of keys does not matter. A loop, not recursion: YAML
    nests a value 990 deep."""
    done: dict[int, bytes] = {}  # by id: every value read is alive in `meta`
    todo: list[tuple[object, bool]] = [(meta, False)]
    while todo:
        value, parts_read = todo.pop()
        if parts_read:
            done[id(value)] = _digest_of_parts(value, done)
        elif id(value) not in done:
            parts = _parts(value)
            if parts is None:
                done[id(value)] = _digest_of_scalar(value)
                continue
            done[id(value)] = b"cycle"  # until its parts are read: a value inside itself
            todo.append((value, True))
            todo += ((part, False) for part in parts if id(part) not in done)
    return done[id(meta)].hex()


def _parts(value: object) -> list[object] | None:
    """The values a mapping, list or set holds (keys too); None for any other value."""
    if isinstance(value, Mapping):
        return [*value.keys(), *value.values()]
    if isinstance(value, list | tuple | set | frozenset):
        return list(value)
    return None


def _digest_of_parts(value: object, done: dict[int, bytes]) -> bytes:
    if isinstance(value, Mapping):
        pairs = sorted(done[id(k)] + done[id(v)] for k, v in value.items())
        text = b"map\0" + b"".join(pairs)
    elif isinstance(value, list | tuple):
        text = b"list\0" + b"".join(done[id(v)] for v in value)
    else:  # a set (YAML's !!set): no order
        text = b"set\0" + b"".join(sorted(done[id(v)] for v in cast(Iterable[object], value)))
    return hashlib.sha256(text).digest()


def _digest_of_scalar(value: object) -> bytes:
    """A string, number, date...: its type's name and repr (which escapes lone surrogates)."""
    return hashlib.sha256(f"{type(value).__name__}\0{value!r}".encode()).digest()


def links_digest(addresses: Iterable[tuple[str, str]]) -> str:
    """sha256 of (docs path, address) for every file a page may link to."""
    return sha256_hex("\n".join(f"{src}\0{url}" for src, url in sorted(addresses)))
