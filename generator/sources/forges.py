"""Where an upstream repository lives: its forge, the permalink to lines at a commit, and the
address of a whole file at a commit (its "raw" form). The repository's URL, as the lock writes
it, is also its Software Heritage origin.

    forge   hosts it is assumed for        permalink to lines a-b                 raw file
    github  github.com                     URL/blob/C/P#La-Lb                     RAW/NAME/C/P
    gitlab  gitlab.com                     URL/-/blob/C/P#La-b                    URL/-/raw/C/P
    gitea   codeberg.org, gitea.com        URL/src/commit/C/P#La-Lb               URL/raw/commit/C/P
    git     any other host (a plain URL)   none: no web view                      none: a clone

(RAW: the raw-file host, ITM_GITHUB_RAW, raw.githubusercontent.com by default; a GitHub
Enterprise host serves URL/raw/C/P.) A repository on a host of its own names its forge in the
lock (`forge = "gitlab"`); a host listed above is that forge and no other.
"""

from __future__ import annotations

import re
from typing import Protocol
from urllib.parse import quote, urlsplit

FORGES = ("github", "gitlab", "gitea", "git")
WEB_FORGES = ("github", "gitlab", "gitea")  # those with a web view and raw files
KNOWN_HOSTS = {
    "github.com": "github",
    "gitlab.com": "gitlab",
    "codeberg.org": "gitea",
    "gitea.com": "gitea",
}
SCHEMES = ("https", "http", "ssh", "git", "file")  # a plain git URL; a web forge's is http(s)
_NAME = re.compile(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+")  # OWNER/REPO, or GROUP/SUB/REPO


class Repo(Protocol):
    """What a forge needs of a lock's repository (generator.sources.lockschema.Repo)."""

    @property
    def name(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def commit(self) -> str: ...
    @property
    def forge(self) -> str: ...


class ForgeError(ValueError):
    """A repository's URL or forge that cannot be right; `fix` says what to write."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix


def valid_name(name: str) -> bool:
    """OWNER/REPO (or GROUP/SUBGROUP/REPO, as GitLab nests them), no '.' or '..' segment."""
    return bool(_NAME.fullmatch(name)) and not {".", ".."} & set(name.split("/"))


def default_forge(url: str) -> str:
    """The forge a URL's host is (KNOWN_HOSTS), else "git": a plain repository."""
    return KNOWN_HOSTS.get((urlsplit(url).hostname or "").lower(), "git")


def check_repo(name: str, url: str, forge: str | None) -> tuple[str, str]:
    """The repository's URL (without a trailing slash) and forge, checked; ForgeError otherwise.

    A web forge's URL is http(s) and ends with the repository's name (GitHub's is exactly
    https://github.com/NAME); a plain git URL may be any clone address without credentials."""
    url = url.strip().rstrip("/")
    example = f'write url = "https://github.com/{name}" (or the address you clone it from)'
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES or not (parts.netloc or parts.scheme == "file"):
        raise ForgeError(f"url {url!r} is not a repository's address", example)
    if parts.password or parts.query or parts.fragment or re.search(r"[\s\x00-\x1f\x7f]", url):
        raise ForgeError(
            f"url {url!r} holds a password, a query, a fragment or a blank",
            "write the plain address of the repository (a lock is public: no credentials)",
        )
    host_forge = default_forge(url)
    if forge is None:
        forge = host_forge
    elif forge not in FORGES:
        raise ForgeError(f"unknown forge {forge!r}", f"use one of: {', '.join(FORGES)}")
    elif parts.hostname in KNOWN_HOSTS and forge != host_forge:
        raise ForgeError(
            f"{parts.hostname} is {host_forge}, not {forge}", f'drop forge = "{forge}"'
        )
    github = forge == "github" and parts.hostname == "github.com"
    if github and url != f"https://github.com/{name}":
        raise ForgeError(
            f"url {url!r} does not match the repo name", f'write url = "https://github.com/{name}"'
        )
    web = parts.scheme in ("https", "http") and parts.path.endswith(f"/{name}")
    if forge in WEB_FORGES and not github and not web:
        raise ForgeError(
            f"url {url!r} is not the {forge} page of {name}",
            f'write url = "https://HOST/{name}" (the address of its web page), or name the repo'
            " as its page does",
        )
    return url, forge


def line_anchor(forge: str, first: int, last: int) -> str:
    """ "#L5", or the forge's range: GitHub and Gitea "#L1-L5", GitLab "#L1-5"."""
    if first == last:
        return f"#L{first}"
    return f"#L{first}-{last}" if forge == "gitlab" else f"#L{first}-L{last}"


def permalink(repo: Repo, path: str, first: int, last: int) -> str | None:
    """The forge's page of lines first-last of `path` at the repo's commit; None for a repository
    with no web view."""
    where = f"{repo.commit}/{quote(path)}{line_anchor(repo.forge, first, last)}"
    if repo.forge == "github":
        return f"{repo.url}/blob/{where}"
    if repo.forge == "gitlab":
        return f"{repo.url}/-/blob/{where}"
    if repo.forge == "gitea":
        return f"{repo.url}/src/commit/{where}"
    return None


def raw_url(repo: Repo, path: str, commit: str, github_raw: str) -> str | None:
    """Where the forge serves the whole file at `commit`; None for a repository it does not
    serve (a plain git URL: only a clone reads it)."""
    at = f"{commit}/{quote(path)}"
    if repo.forge == "github":
        if urlsplit(repo.url).hostname == "github.com":
            return f"{github_raw.rstrip('/')}/{repo.name}/{at}"
        return f"{repo.url}/raw/{at}"  # GitHub Enterprise
    if repo.forge == "gitlab":
        return f"{repo.url}/-/raw/{at}"
    if repo.forge == "gitea":
        return f"{repo.url}/raw/commit/{at}"
    return None


def described(repo: Repo) -> str:
    """How messages name where the repository's files are read: "GitHub", "gitlab.com", ..."""
    if repo.forge == "git":
        return "a clone"
    host = urlsplit(repo.url).hostname or repo.url
    return "GitHub" if host == "github.com" else host
