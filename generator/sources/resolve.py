"""Resolve pinned excerpts to verified text: cache, git, the forge, then registry mirrors.

The forge is where the repository lives (generator/sources/forges.py): GitHub, GitLab or Gitea
serve a file at a commit; a plain git repository is read from a clone only.

Each source's answer is verified against the pin's sha256 before use. Git and the forge give the
whole file at the commit, so a mismatch there is final (the lock is wrong, or upstream is not
what it claims); a mirror that does not match is just skipped. `--offline` keeps to the cache
and git. What is verified goes into the content-addressed cache for the next build.

Whole files come from wholefiles.py (checked against the lock's [[files]] ids), mirrors' lines
from registry.py. Every excerpt carries its file's blob id from the lock, if recorded: the core
of its Software Heritage id.

Evidence is bound to the repo's commit: the cache by its key, a mirror by the commit it names
(one checked at another commit vouches for nothing here), a [[files]] entry likewise. A commit
that no source can vouch for stops the build with an error naming the repo's entry.

    excerpts = resolve_excerpts(lock, settings)   # the plugins and the commands call this
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypedDict, Unpack

from generator.errors import InputError
from generator.settings import DEFAULT_GITHUB_RAW, DEFAULT_PYPI_SIMPLE, DEFAULT_SWH_API, Settings
from generator.sources.clones import GIT_DIRS_SETTING, check_clones
from generator.sources.excerpt import Excerpt, cut, fits, make_blocks, sha256_hex, split_lines
from generator.sources.fetch import Http, NetSettings
from generator.sources.forges import described
from generator.sources.lockschema import FileId, Lock, Mirror, Pin, Repo
from generator.sources.ranges import format_ranges
from generator.sources.registry import Found, Registry
from generator.sources.symbols import SymbolError, excerpt_problem, symbol_range
from generator.sources.wholefiles import FullFile, Log, WholeFiles
from generator.store import Store, key_of

SOURCES = ("cache", "git", "forge", "pypi")

Via = Callable[[Pin, Repo, list[str]], Found | None]  # one source; appends why it failed


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


class Resolver(WholeFiles):
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
        log = log or (lambda message: None)
        http = Http(net, log=log)
        github_base = (github_base or DEFAULT_GITHUB_RAW).rstrip("/")
        super().__init__(
            lock, offline=offline, git_dirs=git_dirs, http=http, github_base=github_base, log=log
        )
        # offline: no forge; mirrors only from archives already in the cache
        self.sources = tuple(s for s in sources if not (offline and s == "forge"))
        self.cache = Store(cache_dir)
        self.swh_base = (swh_base or DEFAULT_SWH_API).rstrip("/")  # Software Heritage's API
        pypi_base = (pypi_base or DEFAULT_PYPI_SIMPLE).rstrip("/")
        self.registry = Registry(
            lock, cache=self.cache, http=http, pypi_base=pypi_base, offline=offline, log=log
        )
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
            copies=tuple(dict.fromkeys(m.spec for m in self.registry.carriers(pin, ranges))),
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
        return self.registry.find(pin, repo, tried)

    def prefetch_archives(self) -> None:
        """Download at once, a thread each, the mirror archives the upcoming pins will read.

        Called when the first pin falls through to PyPI. Each download is ~0.3 s of waiting on
        the index and the file host, one after the other, while the bytes arrive in a moment.
        Only pins that no source before PyPI will answer count (not cached, no clone given for
        their repository, its forge not asked: offline, found down, or a plain git URL), and for
        each only the archive `_via_pypi` reads first: the first that carries all of its lines.
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
            mirror = self.registry.uncached_carrier(pin)
            if mirror is not None:
                wanted.setdefault(mirror.sha256, mirror)
        self.registry.prefetch(list(wanted.values())[:PREFETCH_AT_ONCE])

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
            if self.registry.uncached_carrier(pin) is not None:
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


def location_key(pin: Pin, repo: Repo, file: FileId | None = None) -> str:
    """The cache key of an excerpt: valid only for this repo, commit, path, lines and hash, and
    the whole file's ids when the lock records them (a changed id is checked again, against the
    file, before an excerpt of it is shown with it)."""
    ids = (file.sha256, file.sha1_git) if file else ()
    # "excerpt@commit": entries of earlier versions may hold lines a mirror vouched for at a
    # commit it was not checked at
    return key_of("excerpt@commit", repo.name, repo.commit, pin.path, pin.ranges, pin.sha256, *ids)
