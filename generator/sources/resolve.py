"""Resolve pinned excerpts to verified text: cache, git, the forge, then registry mirrors.

The forge is where the repository lives (generator/sources/forges.py): GitHub, GitLab or Gitea
serve a file at a commit; a plain git repository is read from a clone only.

Each source's answer is verified against the pin's sha256 before use. Git and the forge give the
whole file at the commit, so a mismatch there is final (the lock is wrong, or upstream is not
what it claims); a mirror that does not match is just skipped. `--offline` keeps to the cache
and git. What is verified goes into the content-addressed cache for the next build.

A whole file read from git or the forge is also checked against the lock's [[files]] entry for it
(sha256 and git blob id), and remembered in `Resolver.files_read` (what `itm pin` and `itm verify
--raise-evidence` record). Every excerpt carries its file's blob id from the lock, if recorded:
the core of its Software Heritage id.

Evidence is bound to the repo's commit: the cache by its key, a mirror by the commit it names
(one checked at another commit vouches for nothing here), a [[files]] entry likewise. A commit
that no source can vouch for stops the build with an error naming the repo's entry.

    excerpts = resolve_excerpts(lock, settings)   # the plugins and the commands call this
"""

from __future__ import annotations

import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, Unpack
from urllib.parse import urlsplit

from generator.errors import InputError
from generator.settings import DEFAULT_GITHUB_RAW, DEFAULT_PYPI_SIMPLE, DEFAULT_SWH_API, Settings
from generator.sources.clones import GIT_DEADLINE, check_clone, git, read_commit_proof
from generator.sources.excerpt import (
    Excerpt,
    cut,
    decode,
    fits,
    make_blocks,
    sha256_hex,
    split_lines,
)
from generator.sources.fetch import FetchError, Http, NetSettings, NotFound
from generator.sources.forges import WEB_FORGES, described, raw_url
from generator.sources.gitobjects import CommitProof, ProofError
from generator.sources.lockschema import FileId, Lock, Mirror, Pin, Repo
from generator.sources.pypi import MirrorError, archive_bytes, read_member
from generator.sources.ranges import Range, format_ranges
from generator.sources.swh import git_blob_id
from generator.sources.symbols import SymbolError, excerpt_problem, symbol_range
from generator.store import Store, key_of

SOURCES = ("cache", "git", "forge", "pypi")
GIT_DIRS_SETTING = "ITM_GIT_DIRS (or the plugin's git_dirs option)"
LARGEST_SOURCE = 16 << 20  # bytes of one pinned upstream file read from a clone

Log = Callable[[str], None]
Found = tuple[str, tuple[Range, ...], str]  # excerpt text, its ranges, where it came from
Via = Callable[[Pin, Repo, list[str]], Found | None]  # one source; appends why it failed


@dataclass(frozen=True)
class FullFile:
    """A whole upstream file at a commit."""

    text: str
    lines: list[str]
    origin: str  # "git:/path", the forge ("github", "gitlab", "gitea") or "file:/path" (a file
    # `itm pin` was told to trust)
    sha256: str = ""  # of the bytes
    sha1_git: str = ""  # git's blob id of the bytes

    @classmethod
    def of(cls, data: bytes, where: str, origin: str) -> FullFile:
        """The file from its bytes (ValueError unless UTF-8), with both of its hashes."""
        text = decode(data, where)
        return cls(text, split_lines(text), origin, sha256_hex(data), git_blob_id(data))

    @property
    def read_at_pin(self) -> bool:
        """Read from git or the forge at the commit (not a file someone vouched for)."""
        return self.origin in WEB_FORGES or self.origin.startswith("git:")


class SourceOptions(TypedDict, total=False):
    """Resolver's keyword arguments that say where to look, beyond the build's settings."""

    sources: tuple[str, ...]
    github_base: str | None
    pypi_base: str | None
    swh_base: str | None
    net: NetSettings | None


class ResolverOptions(SourceOptions, total=False):
    """Every keyword argument of Resolver: `for_settings` fills those the settings give."""

    cache_dir: Path
    offline: bool
    git_dirs: Mapping[str, Path]
    log: Log | None


PREFETCH_AT_ONCE = 8  # archives downloaded ahead at most (the lock names 5 today)


class Resolver:
    """One run of resolution: remembers fetched files, mirrors and hosts found down."""

    def __init__(
        self,
        lock: Lock,
        *,
        cache_dir: Path,
        offline: bool = False,
        git_dirs: Mapping[str, Path] | None = None,
        log: Log | None = None,
        sources: tuple[str, ...] = SOURCES,
        github_base: str | None = None,
        pypi_base: str | None = None,
        swh_base: str | None = None,
        net: NetSettings | None = None,
    ) -> None:
        unknown = set(sources) - set(SOURCES)
        if unknown:
            raise ValueError(f"unknown sources {sorted(unknown)}; known: {SOURCES}")
        self.lock = lock
        self.offline = offline
        # offline: no forge; mirrors only from archives already in the cache
        self.sources = tuple(s for s in sources if not (offline and s == "forge"))
        self.log: Log = log or (lambda message: None)
        self.cache = Store(cache_dir)
        self.git_dirs = dict(git_dirs or {})
        self.github_base = (github_base or DEFAULT_GITHUB_RAW).rstrip("/")
        self.pypi_base = (pypi_base or DEFAULT_PYPI_SIMPLE).rstrip("/")
        self.swh_base = (swh_base or DEFAULT_SWH_API).rstrip("/")  # Software Heritage's API
        self.http = Http(net, log=self.log)
        self._files: dict[tuple[str, str, str, str], FullFile | str] = {}
        self._mirrors: dict[Mirror, list[str] | str] = {}
        self._archives: dict[str, bytes] = {}  # sha256 -> a mirror archive read (and hashed) once
        # (repo, path) -> the whole file read at the repo's pinned commit, checked against the
        # lock's [[files]] entry when there is one
        self.files_read: dict[tuple[str, str], FullFile] = {}
        self.upcoming: list[Pin] = []  # the pins this run will resolve (prefetch_archives)
        self._prefetched = False

    @classmethod
    def for_settings(
        cls, lock: Lock, settings: Settings, **options: Unpack[ResolverOptions]
    ) -> Resolver:
        """A resolver for the build's settings; `options` as in the constructor win over them."""
        chosen: ResolverOptions = {
            "cache_dir": settings.cache_dir,
            "offline": settings.offline,
            "git_dirs": settings.git_dirs,
            "github_base": settings.github_raw,
            "pypi_base": settings.pypi_simple,
            "swh_base": settings.swh_api,
            "net": NetSettings(deadline=settings.download_deadline),
            **options,
        }
        return cls(lock, **chosen)

    # ------------------------------------------------------------ excerpts

    def resolve(self, pin: Pin) -> Excerpt:
        """The pin's text, verified; InputError (file, id, fix) when no source can give it."""
        repo = self.lock.repos[pin.repo]
        tried: list[str] = []
        via: dict[str, Via] = {
            "cache": self._via_cache,
            "git": self._via_git,
            "forge": self._via_forge,
            "pypi": self._via_pypi,
        }
        for source in self.sources:
            found = via[source](pin, repo, tried)
            if found is not None:
                break
        else:
            raise self._unresolved(pin, tried)
        text, ranges, origin = found
        if origin == "cache" or origin.startswith("pypi:"):  # only the lines were read
            self._holds_symbol(pin, text, origin)
        if origin != "cache" and ranges == pin.ranges:
            self.remember(pin, text)
        recorded = self.lock.file_id(pin.repo, pin.path)
        return Excerpt(
            id=pin.id,
            repo=repo,
            path=pin.path,
            symbol=pin.symbol,
            ranges=ranges,
            blocks=make_blocks(text, ranges),
            text=text,
            sha256=pin.sha256,
            evidence=pin.evidence,
            evidence_level=pin.evidence_level,
            resolved_from=origin,
            sha1_git=recorded.sha1_git if recorded else None,
            carried_by=pin.carried_by,
            copies=tuple(dict.fromkeys(m.spec for m in self.carriers(pin, ranges))),
            claims=self.lock.claims_about(pin.id),
        )

    def remember(self, pin: Pin, text: str) -> None:
        """Keep a pin's verified text in the cache, where later runs look first (offline too).
        Unsigned: every read checks the text against the lock's sha256 (_via_cache)."""
        key = location_key(pin, self.lock.repos[pin.repo], self.lock.file_id(pin.repo, pin.path))
        self.cache.put_entry("excerpts", key, text.encode("utf-8"), signed=False)

    def _holds_symbol(self, pin: Pin, text: str, origin: str) -> None:
        """A source that gave only the pinned lines: they must still be the symbol's."""
        if pin.symbol is None:
            return
        problem = excerpt_problem(text, pin.symbol)
        if problem is not None:
            raise self._error(
                pin,
                f"symbol {pin.symbol!r}: lines {format_ranges(pin.ranges)} ({origin}) match the"
                f" sha256, but {problem}",
                f"re-pin from a clone of the commit: `itm pin {pin.id} --replace --repo"
                f" {pin.repo} --path {pin.path} --symbol {pin.symbol}`",
            )

    def _via_cache(self, pin: Pin, repo: Repo, tried: list[str]) -> Found | None:
        """Text verified earlier at exactly this location (repo, commit, path, lines, sha256)."""
        if not pin.ranges:
            tried.append("cache: the lock records no lines for this symbol yet")
            return None
        key = location_key(pin, repo, self.lock.file_id(pin.repo, pin.path))
        data = self.cache.get_entry("excerpts", key, signed=False)
        if data is None:
            tried.append("cache: not cached for these lines at this commit")
            return None
        text = data.decode("utf-8", errors="replace")
        needed = sum(b - a + 1 for a, b in pin.ranges)
        if sha256_hex(data) != pin.sha256 or len(split_lines(text)) != needed:
            self.cache.discard(self.cache.entry_path("excerpts", key),
                               f"it does not hold the pinned text of {pin.id}")  # fmt: skip
            tried.append("cache: entry discarded (not the pinned text)")
            return None
        return text, pin.ranges, "cache"

    def _via_git(self, pin: Pin, repo: Repo, tried: list[str]) -> Found | None:
        found = self._git_file(repo, pin.path, repo.commit)
        if isinstance(found, str):
            tried.append(f"git: {found}")
            return None
        return self._from_full_file(pin, repo, found)

    def _via_forge(self, pin: Pin, repo: Repo, tried: list[str]) -> Found | None:
        found = self._forge_file(repo, pin.path, repo.commit)
        if isinstance(found, str):
            tried.append(f"{repo.forge}: {found}")
            return None
        return self._from_full_file(pin, repo, found)

    def _via_pypi(self, pin: Pin, repo: Repo, tried: list[str]) -> Found | None:
        if not self._prefetched:
            self._prefetched = True
            self.prefetch_archives()
        listed = self.lock.mirrors_for(repo.name, pin.path)
        if not listed:
            tried.append(f"pypi: no [[mirrors]] entry for {pin.path}")
            return None
        mirrors = tuple(m for m in listed if self.lock.vouches(m))
        for commit in sorted({m.commit for m in listed if not self.lock.vouches(m)}):
            tried.append(
                f"pypi: the [[mirrors]] of {pin.path} checked at {commit[:12]} do not vouch for"
                f" its lines at {repo.short}"
            )
        if not mirrors:
            return None
        if not pin.ranges:
            tried.append("pypi: the lock records no lines for this symbol (mirrors check lines)")
            return None
        for group in _by_member(mirrors):
            mirror = group[0]  # the entries of one archive member differ only in lines and offset
            # each range from the entry that vouches for it (one offset per range)
            placed = [next((m for m in group if m.carries((r,))), None) for r in pin.ranges]
            if None in placed:
                tried.append(
                    f"pypi:{mirror.spec}: carries upstream lines {_windows(group)},"
                    f" not {format_ranges(pin.ranges)}"
                )
                continue
            lines = self.mirror_lines(mirror)
            if isinstance(lines, str):
                tried.append(f"pypi:{mirror.spec}: {lines}")
                continue
            runs = [(r, m.offset) for r, m in zip(pin.ranges, placed, strict=True) if m]
            text = "".join(cut(lines, (r,), shift)[0] for r, shift in runs)
            inside = all(fits(lines, (r,), shift) for r, shift in runs)
            if not inside or sha256_hex(text) != pin.sha256:
                shifts = sorted({shift for _, shift in runs})
                at = f" (at {'/'.join(f'{s:+d}' for s in shifts)})" if shifts != [0] else ""
                tried.append(
                    f"pypi:{mirror.spec}: lines {format_ranges(pin.ranges)}{at} of {mirror.member}"
                    f" do not hash to {pin.sha256[:12]}…"
                )
                continue
            moved = self._symbol_elsewhere(pin, lines, runs[0][1])
            if moved:
                tried.append(f"pypi:{mirror.spec}: {moved}")
                continue
            return text, pin.ranges, f"pypi:{mirror.spec}"
        return None

    def prefetch_archives(self) -> None:
        """Download at once, a thread each, the mirror archives the upcoming pins will read.

        Called when the first pin falls through to PyPI. Each download is ~0.3 s of waiting on
        the index and the file host, one after the other, while the bytes arrive in a moment.
        Only pins that no source before PyPI will answer count (not cached, no clone given for
        their repository, its forge not asked: offline, found down, or a plain git URL), and for
        each only the
        archive `_via_pypi` reads first: the first that carries all of its lines. The downloads
        use a client of their own: what fails here is met again, and reported, by the
        resolution that follows (only a host found offline is skipped by it, as it would be
        anyway); what arrives is in the cache, checked against the lock's sha256 on every read.
        """
        if self.offline:
            return
        wanted: dict[str, Mirror] = {}
        for pin in self.upcoming:
            repo = self.lock.repos[pin.repo]
            if "forge" in self.sources and self._forge_up(repo):
                continue  # the forge answers for it
            cached = self.cache.entry_path(
                "excerpts", location_key(pin, repo, self.lock.file_id(pin.repo, pin.path))
            )
            skipped = "git" in self.sources and repo.name in self.git_dirs
            if cached.is_file() or skipped or not pin.ranges:
                continue
            mirror = self._uncached_carrier(pin)
            if mirror is not None:
                wanted.setdefault(mirror.sha256, mirror)
        http = Http(self.http.settings, log=self.log)
        threads = [
            threading.Thread(target=self._prefetch, args=(m, http), name="prefetch", daemon=True)
            for m in list(wanted.values())[:PREFETCH_AT_ONCE]
        ]  # daemons: Ctrl-C does not wait for a download (each has its deadline anyway)
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for host, why in http.down.items():
            if why.startswith("offline"):  # DNS or a refused connection: down for this run too
                self.http.down.setdefault(host, why)

    def _uncached_carrier(self, pin: Pin) -> Mirror | None:
        """The first archive member that vouches for the pin's commit, carries all of its lines
        and is not in the cache yet: the only kind worth fetching (one in the cache was read
        already, and PyPI would send the same bytes). None for a pin without lines (a mirror
        checks lines)."""
        for mirror in self.carriers(pin, pin.ranges):
            if not self.cache.path_for(mirror.sha256).is_file():
                return mirror
        return None

    def carriers(self, pin: Pin, ranges: tuple[Range, ...]) -> list[Mirror]:
        """The first entry of each archive member that vouches for the pin's commit and carries
        all of `ranges` (none for no lines: a mirror checks lines)."""
        listed = self.lock.mirrors_for(pin.repo, pin.path)
        groups = _by_member(tuple(m for m in listed if self.lock.vouches(m)))
        return [
            group[0]
            for group in groups
            if ranges and all(any(m.carries((r,)) for m in group) for r in ranges)
        ]

    def _forge_up(self, repo: Repo) -> bool:
        """The repo's forge serves files and has not been found down in this run."""
        url = raw_url(repo, "", repo.commit, self.github_base)
        return url is not None and urlsplit(url).netloc not in self.http.down

    def _prefetch(self, mirror: Mirror, http: Http) -> None:
        try:
            archive_bytes(mirror, http, self.cache, self.pypi_base)
        except Exception:  # noqa: BLE001  (the resolution reads it again and reports why)
            return

    def _symbol_elsewhere(self, pin: Pin, lines: list[str], shift: int) -> str | None:
        """Where a mirror's whole member parses, the symbol must stand at the pinned lines
        (shifted as the mirror is): the same text under another class does not vouch for it."""
        if pin.symbol is None or len(pin.ranges) != 1:
            return None
        try:
            first, last = symbol_range("\n".join(lines), pin.symbol)
        except SymbolError:
            return None  # a partial copy: the excerpt itself is checked in resolve()
        (a, b) = pin.ranges[0]
        if (first - shift, last - shift) == (a, b):
            return None
        return (
            f"{pin.symbol!r} stands at upstream lines {first - shift}–{last - shift} of its"
            f" member, not {format_ranges(pin.ranges)}"
        )

    def _from_full_file(self, pin: Pin, repo: Repo, file: FullFile) -> Found:
        """Cut the pin from the whole file at the commit; a mismatch here is final."""
        where = f"{pin.path} at {repo.short} ({file.origin})"
        self.check_file(repo, pin.path, file, entry=pin.id)
        ranges = pin.ranges
        if pin.symbol is not None:
            try:
                found = symbol_range(file.text, pin.symbol)
            except SymbolError as error:
                raise self._error(
                    pin,
                    f"symbol {pin.symbol!r} does not resolve in {where}: {error}",
                    "fix the symbol (dotted: Class.method), or pin lines instead of a symbol",
                ) from None
            if ranges and ranges != (found,):
                raise self._error(
                    pin,
                    f"symbol {pin.symbol!r} is at lines {format_ranges((found,))} in {where},"
                    f" but the lock says {format_ranges(ranges)}",
                    f"re-pin: `itm pin {pin.id} --replace --repo {pin.repo} --path {pin.path}"
                    f" --symbol {pin.symbol}`",
                )
            ranges = (found,)
        if not fits(file.lines, ranges):
            raise self._error(
                pin,
                f"line range {format_ranges(ranges)} runs past the end of {where}"
                f" ({len(file.lines)} lines)",
                "fix the lines in the lock (or re-pin with `itm pin`)",
            )
        text = "".join(cut(file.lines, ranges))
        got = sha256_hex(text)
        if got != pin.sha256:
            raise self._error(
                pin,
                f"hash mismatch: lines {format_ranges(ranges)} of {where} hash to {got[:12]}…,"
                f" the lock pins {pin.sha256[:12]}… (these bytes are not used)",
                f"if upstream is right and the lock wrong, re-pin with `itm pin {pin.id} --replace"
                " ...`; otherwise check the lines and the commit",
            )
        return text, ranges, file.origin

    # ------------------------------------------------------------ whole files (pin, bump)

    def check_file(self, repo: Repo, path: str, file: FullFile, *, entry: str) -> None:
        """A whole file read at the repo's commit must have the ids the lock records for it
        ([[files]]); it is remembered in `files_read`. InputError on a mismatch: final."""
        recorded = self.lock.file_id(repo.name, path)
        if recorded is not None:
            differ = [
                f"{name} {got}, the lock records {want}"
                for name, got, want in (
                    ("sha256", file.sha256, recorded.sha256),
                    ("git blob id", file.sha1_git, recorded.sha1_git),
                )
                if got != want
            ]
            if differ:
                raise InputError(
                    f"hash mismatch: {path} at {repo.short} ({file.origin}) has "
                    + "; ".join(differ)
                    + " (these bytes are not used)",
                    file=self.lock.display,
                    entry=entry,
                    fix=f"if upstream is right and the lock wrong, delete the [[files]] entry of"
                    f" {path} and record it again (`itm verify --raise-evidence`); otherwise check"
                    " the commit and the clone",
                )
        if file.read_at_pin:
            self.files_read[(repo.name, path)] = file

    def file_at(self, repo: Repo, path: str, commit: str, *, entry: str) -> FullFile:
        """The whole file at a commit, from git or the forge; InputError saying so when neither
        has it.

        Registry mirrors carry only parts of files, so they cannot serve here.
        """
        notes = []
        found = self._git_file(repo, path, commit)
        if not isinstance(found, FullFile):
            notes.append(f"git: {found}")
            if self.offline:
                notes.append(f"{repo.forge}: not tried (--offline)")
            else:
                found = self._forge_file(repo, path, commit)
                if not isinstance(found, FullFile):
                    notes.append(f"{repo.forge}: {found}")
        if isinstance(found, FullFile):
            return found
        raise InputError(
            f"needs the whole of {path} at {commit[:12]} (from git or {described(repo)}), and"
            " neither has it: " + "; ".join(notes),
            file=self.lock.display,
            entry=entry,
            fix=f"pass --git DIR with a clone of {repo.name} that contains the commit (or set"
            f" ITM_GIT_DIRS), or run where {described(repo)} is reachable; registry mirrors"
            " carry only parts"
            " of files",
        )

    def _git_file(self, repo: Repo, path: str, commit: str) -> FullFile | str:
        directory = self.git_dirs.get(repo.name)
        if directory is None:
            return f"no checkout configured for {repo.name} (pass --git or set ITM_GIT_DIRS)"
        key = ("git", repo.name, commit, path)
        if key not in self._files:
            self._files[key] = self._git_show(Path(directory), path, commit)
        return self._files[key]

    def commit_proof(self, repo: Repo, commit: str, paths: list[str]) -> CommitProof | str:
        """git's objects of `commit` down to each of `paths`, from the repo's clone (what
        `itm pin`, `itm bump` and `itm verify --raise-evidence` record), or why not."""
        directory = self.git_dirs.get(repo.name)
        if directory is None:
            return f"no clone of {repo.name} given (a forge's raw files carry no git objects)"
        try:
            return read_commit_proof(Path(directory), repo.name, commit, paths)
        except ProofError as error:
            return str(error)

    def _git_show(self, directory: Path, path: str, commit: str) -> FullFile | str:
        """`git show COMMIT:PATH`: the blob at the commit, never the working tree."""
        try:
            size = git(directory, "cat-file", "-s", f"{commit}:{path}")  # before reading it
            if size.returncode == 0 and int(size.stdout.strip() or 0) > LARGEST_SOURCE:
                return f"{path} at {commit[:12]} is larger than {LARGEST_SOURCE:,} bytes"
            shown = git(directory, "show", "--no-textconv", f"{commit}:{path}")
        except FileNotFoundError:
            return "the git program is not installed"
        except subprocess.TimeoutExpired:
            return f"git did not answer within {GIT_DEADLINE:g} s in {directory}"
        if shown.returncode == 0:
            try:
                file = FullFile.of(shown.stdout, f"{path} at {commit[:12]}", f"git:{directory}")
            except ValueError as error:
                return str(error)
            # git names the blob by the hash of its bytes: ours must be the same id
            named = git(directory, "rev-parse", "--verify", "--quiet", f"{commit}:{path}")
            if named.stdout.decode(errors="replace").strip() != file.sha1_git:
                return (
                    f"git's id of {path} at {commit[:12]} is not the hash of the bytes it showed"
                    f" ({file.sha1_git[:12]}…): the clone is damaged (git fsck)"
                )
            self.log(f"git: read {path} at {commit[:12]} from {directory}")
            return file
        if git(directory, "cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
            stderr = shown.stderr.decode(errors="replace").strip().splitlines()
            if not directory.is_dir() or (stderr and "not a git repository" in stderr[-1]):
                return f"{directory} is not a git checkout"
            return f"commit {commit[:12]} is not in {directory} (git fetch it first)"
        return f"{path} does not exist at {commit[:12]} in {directory}"

    def _forge_file(self, repo: Repo, path: str, commit: str) -> FullFile | str:
        """The whole file at `commit` from the repository's forge (its raw form), or why not."""
        url = raw_url(repo, path, commit, self.github_base)
        if url is None:
            return f"{repo.url} has no web view to read files from: only a clone (--git) reads it"
        key = ("forge", repo.name, commit, path)
        if key not in self._files:
            try:
                self._files[key] = FullFile.of(self.http.get(url), url, repo.forge)
            except NotFound:
                self._files[key] = f"{path} not found at {commit[:12]} (HTTP 404)"
            except FetchError as error:
                self._files[key] = error.reason
            except ValueError as error:
                self._files[key] = str(error)
        return self._files[key]

    def mirror_lines(self, mirror: Mirror) -> list[str] | str:
        """The lines of the mirror's member (cache, or the index when online), or why not."""
        if mirror not in self._mirrors:
            try:
                http = None if self.offline else self.http
                archive = self._archives.get(mirror.sha256) or archive_bytes(
                    mirror, http, self.cache, self.pypi_base
                )
                self._archives[mirror.sha256] = archive
                text = decode(read_member(archive, mirror), f"{mirror.filename}:{mirror.member}")
                self._mirrors[mirror] = split_lines(text)
            except FetchError as error:
                self._mirrors[mirror] = error.reason
            except (MirrorError, ValueError) as error:
                self._mirrors[mirror] = str(error)
        return self._mirrors[mirror]

    # ------------------------------------------------------------ errors

    def _error(self, pin: Pin, problem: str, fix: str) -> InputError:
        return InputError(problem, file=self.lock.display, entry=pin.id, fix=fix)

    def _unresolved(self, pin: Pin, tried: list[str]) -> InputError:
        repo = self.lock.repos[pin.repo]
        commits = Counter(e.commit for e in self.lock.evidence(repo.name))
        if commits and repo.commit not in commits:
            # the lock's evidence is all of another commit: the commit was changed alone
            checked = commits.most_common(1)[0][0]
            return InputError(
                f"nothing vouches for commit {repo.commit}: the lock's evidence for"
                f" {repo.name} ([[files]], [[mirrors]], [[commits]]) was checked at"
                f" {checked[:12]}…, and no clone or {described(repo)} confirmed excerpt {pin.id} at"
                f" {repo.short} (" + "; ".join(tried) + ")",
                file=self.lock.display,
                entry=f'repos."{repo.name}"',
                fix=f'if the commit was edited by hand, restore commit = "{checked}"; to move the'
                f" pin, run `itm bump {repo.name} {repo.commit} --git DIR --write` with a clone"
                f" that holds it (or where {described(repo)} is reachable), which checks every"
                " excerpt and"
                " records the new commit's evidence",
            )
        carried = any(
            m.carries((r,)) for m in self.lock.mirrors_for(pin.repo, pin.path) for r in pin.ranges
        )
        # a registry copy of the file, found and recorded by the command (for a pin made from a
        # file of the archive, say, with --trusted-file: nothing else reads its lines again)
        record = (
            "record a package-registry copy that carries these lines with `itm mirror add"
            " PACKAGE==VERSION` (where the index is reachable; the copy is cached for offline"
            " builds)"
        )
        if self.offline:
            fix = f"pass --git {pin.repo}=DIR with a clone that has the commit"
            # PyPI helps only with an archive that carries the lines and is not cached yet: one
            # in the cache was read already, and PyPI would send the same bytes (its sha256)
            if self._uncached_carrier(pin) is not None:
                fix += ", or build once with PyPI reachable (its [[mirrors]] fill the cache)"
            elif not carried:
                fix += f", or {record}"
        else:
            fix = (
                f"re-pin with `itm pin {pin.id} --replace ...` from a clone of the commit, or"
                + (
                    f" check the [[mirrors]] entries for {pin.path} (a mirror must carry these"
                    " exact lines)"
                    if carried
                    else f" {record}"
                )
                + "; offline machines need a filled cache (ITM_CACHE_DIR) or --git"
            )
        return self._error(pin, "could not be resolved and verified: " + "; ".join(tried), fix)


def resolve_excerpts(
    lock: Lock,
    settings: Settings,
    *,
    ids: list[str] | None = None,
    **options: Unpack[ResolverOptions],
) -> dict[str, Excerpt]:
    """The lock's excerpts (or those of `ids`, in that order), verified, by id: what the MkDocs
    plugins and the `itm` commands call. `settings` gives the cache, offline, local clones and
    hosts (generator.settings.Settings); `options` go to Resolver and win over them.

    Raises InputError (the lock's file, the excerpt's id, the fix) for the first excerpt that
    cannot be resolved or does not match its hash."""
    check_clones(lock, options.get("git_dirs", settings.git_dirs), option=GIT_DIRS_SETTING)
    resolver = Resolver.for_settings(lock, settings, **options)
    pins = [lock.pin(excerpt_id) for excerpt_id in ids] if ids is not None else list(lock.pins)
    resolver.upcoming = pins
    return {pin.id: resolver.resolve(pin) for pin in pins}


def resolve_all(lock: Lock, **options: Unpack[ResolverOptions]) -> dict[str, Excerpt]:
    """Every excerpt of the lock, verified, by id (in lock order), with no site's settings:
    `options` are Resolver's. InputError for the first that cannot be resolved or verified."""
    resolver = Resolver(lock, **options)
    return {pin.id: resolver.resolve(pin) for pin in lock.pins}


def check_clones(
    lock: Lock,
    git_dirs: Mapping[str, Path],
    *,
    option: str,
    commits: Mapping[str, str] | None = None,
) -> None:
    """Each clone given (by `option`: "--git", or ITM_GIT_DIRS and the plugins' git_dirs) must
    be a git clone holding its repo's commit in the lock (or in `commits`, for `itm bump`);
    InputError naming the option, the path and the fix otherwise."""
    for name, directory in git_dirs.items():
        repo = lock.repos.get(name)
        commit = (commits or {}).get(name) or (repo.commit if repo else None)
        url = repo.url if repo else None
        check_clone(Path(directory), repo=name, commit=commit, option=option, url=url)


def _by_member(mirrors: tuple[Mirror, ...]) -> list[list[Mirror]]:
    """The mirrors grouped by archive member (one entry per offset), in lock order."""
    groups: dict[tuple[str, str, str], list[Mirror]] = {}
    for mirror in mirrors:
        groups.setdefault((mirror.filename, mirror.sha256, mirror.member), []).append(mirror)
    return list(groups.values())


def _windows(group: list[Mirror]) -> str:
    """ "3–24 (at -1), 44–65 (at -19)": the upstream lines a member's entries vouch for."""
    return ", ".join(
        format_ranges(m.lines) + (f" (at {m.offset:+d})" if m.offset else "") for m in group
    )


def location_key(pin: Pin, repo: Repo, file: FileId | None = None) -> str:
    """The cache key of an excerpt: valid only for this repo, commit, path, lines and hash, and
    the whole file's ids when the lock records them (a changed id is checked again, against the
    file, before an excerpt of it is shown with it)."""
    ids = (file.sha256, file.sha1_git) if file else ()
    # "excerpt@commit": entries of earlier versions may hold lines a mirror vouched for at a
    # commit it was not checked at
    return key_of("excerpt@commit", repo.name, repo.commit, pin.path, pin.ranges, pin.sha256, *ids)
