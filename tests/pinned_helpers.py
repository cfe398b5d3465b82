"""A small MkDocs site that quotes a made-up upstream through the pinned-excerpts plugin: its
upstream git repository, its lock (hashes computed here, independently of generator.sources) and
a `mkdocs build` of it in a child process."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.sources_helpers import PATH, REPO, TOY_V1, excerpt_table, git, make_upstream, repo_table

WIDGET = (13, 26)  # class Widget in TOY_V1
HELPER = (9, 10)  # def helper


@dataclass(frozen=True)
class ToySite:
    root: Path  # the site's folder (mkdocs.yml)
    upstream: Path  # the made-up upstream's git clone
    commit: str
    blob: str  # git's own id of PATH at the commit (`git rev-parse COMMIT:PATH`)

    @property
    def lock(self) -> Path:
        return self.root / "excerpts.lock.toml"

    @property
    def page(self) -> Path:
        return self.root / "docs" / "index.md"

    @property
    def site(self) -> Path:
        return self.root / "site"

    def swhid(self, first: int, last: int) -> str:
        """The SWHID the card must show, spelled out here from its definition."""
        return (
            f"swh:1:cnt:{self.blob};origin=https://github.com/{REPO};anchor=swh:1:rev:{self.commit}"
            f";path=/{PATH};lines={first}-{last}"
        )


PAGE = """\
# Toy

The widget:

/// excerpt | toy.widget
///

Its renderer, and its area:

/// excerpt | toy.widget
    lines: 19-23, 25-26
///

The syntax itself, shown in a fence, stays as it is:

```text
/// excerpt | not.an.excerpt
///
```
"""


def lock_text(commit: str, blob: str, *, files: bool = True) -> str:
    """The toy lock: the repo, the whole file's ids, and two excerpts."""
    data = TOY_V1.encode()
    table = (
        f'\n[[files]]\nrepo = "{REPO}"\ncommit = "{commit}"\npath = "{PATH}"\n'
        f'sha256 = "{hashlib.sha256(data).hexdigest()}"\nsha1_git = "{blob}"\n'
        'evidence = "made up for a test"\n'
    )
    return (
        repo_table(commit)
        + (table if files else "")
        + excerpt_table("toy.widget", TOY_V1, lines=[list(WIDGET)])
        + excerpt_table("toy.helper", TOY_V1, lines=[list(HELPER)])
    )


def make_toy_site(tmp_path: Path, *, page: str = PAGE, plugin: str = "") -> ToySite:
    """A site quoting the made-up upstream; `plugin` adds lines to its plugin options."""
    upstream = tmp_path / "upstream"
    commit = make_upstream(upstream, {PATH: TOY_V1})
    blob = git(upstream, "rev-parse", f"{commit}:{PATH}")
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "index.md").write_text(page, encoding="utf-8")
    (root / "excerpts.lock.toml").write_text(lock_text(commit, blob), encoding="utf-8")
    (root / "mkdocs.yml").write_text(
        "site_name: Toy\ntheme: mkdocs\nstrict: true\nplugins:\n  - pinned-excerpts:\n"
        f"      git_dirs:\n        {REPO}: {upstream}\n" + plugin,
        encoding="utf-8",
    )
    return ToySite(root, upstream, commit, blob)


def build(
    site: ToySite, *, timeout: float = 120, patches: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """`mkdocs build` of the toy site in a child process: offline, a cache of its own, no
    developer settings. `timeout` only keeps a hanging build from hanging the tests; `patches`
    change generator modules as they are imported (tests.site_helpers.patched_mkdocs)."""
    from tests.site_helpers import patched_mkdocs

    env = {k: v for k, v in os.environ.items() if not k.startswith("ITM_")}
    env.update(
        ITM_OFFLINE="1",
        ITM_CACHE_DIR=str(site.root / ".test-cache"),
        SOURCE_DATE_EPOCH="1700000000",
        NO_MKDOCS_2_WARNING="1",
    )
    return subprocess.run(
        [
            sys.executable,
            *(["-c", patched_mkdocs(patches)] if patches else ["-m", "mkdocs"]),
            *("build", "-f", str(site.root / "mkdocs.yml")),
        ],
        cwd=site.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
