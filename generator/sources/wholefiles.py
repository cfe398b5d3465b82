"""Whole upstream files at a commit, from a clone (`git show`) or the repository's forge (its
raw file), each checked against the lock's [[files]] ids and remembered in `files_read` (what
`itm pin`, `itm bump` and `itm verify --raise-evidence` record). Registry mirrors carry only
parts of files, so they cannot serve here. The Resolver (resolve.py) is one of these.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from generator.errors import InputError
from generator.sources.clones import GIT_DEADLINE, git, read_commit_proof
from generator.sources.excerpt import decode, sha256_hex, split_lines
from generator.sources.fetch import FetchError, Http, NotFound
from generator.sources.forges import WEB_FORGES, described, raw_url
from generator.sources.gitobjects import CommitProof, ProofError
from generator.sources.lockschema import Lock, Repo
from generator.sources.swh import git_blob_id

LARGEST_SOURCE = 16 << 20  # bytes of one pinned upstream file read from a clone

Log = Callable[[str], None]


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


class WholeFiles:
    """Whole files read in one run: each read once, from a clone or the forge."""

    def __init__(
        self,
        lock: Lock,
        *,
        offline: bool,
        git_dirs: Mapping[str, Path] | None,
        http: Http,
        github_base: str,
        log: Log,
    ) -> None:
        self.lock = lock
        self.offline = offline
        self.git_dirs = dict(git_dirs or {})
        self.http = http
        self.github_base = github_base
        self.log = log
        self._files: dict[tuple[str, str, str, str], FullFile | str] = {}
        # (repo, path) -> the whole file read at the repo's pinned commit, checked against the
        # lock's [[files]] entry when there is one
        self.files_read: dict[tuple[str, str], FullFile] = {}

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

    def _forge_up(self, repo: Repo) -> bool:
        """The repo's forge serves files and has not been found down in this run."""
        url = raw_url(repo, "", repo.commit, self.github_base)
        return url is not None and urlsplit(url).netloc not in self.http.down
