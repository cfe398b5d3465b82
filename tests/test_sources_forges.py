"""Any forge, any source: a repository on GitHub, GitLab, Codeberg/Gitea or at a plain git URL
gets its forge's permalink (none without a web view), its own URL as its Software Heritage
origin, and its files read from the forge's raw form (a 127.0.0.1 server here) or a clone.

Before, only https://github.com/OWNER/REPO loaded: any other url was refused, and the lock could
not say where a repository lives, so every card linked github.com."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import main
from generator.errors import InputError
from generator.pinned_excerpts.excerpts import card_renderer
from generator.sources.excerpt import Excerpt, make_blocks
from generator.sources.fetch import NetSettings
from generator.sources.lock import load_lock
from generator.sources.lockwrite import dump_lock
from generator.sources.resolve import Resolver
from tests.sources_helpers import (
    PATH,
    TOY_V1,
    FakeServer,
    Reply,
    excerpt_table,
    git,
    isolated_env,
    line_of,
    lines_text,
    make_upstream,
    serve,
    write,
)

pytestmark = pytest.mark.usefixtures(isolated_env.__name__)

COMMIT = "c0ffee" + "0" * 34
FAST = NetSettings(timeout=0.5, retries=0, backoff=0.01)
HELPER = (line_of(TOY_V1, "def helper"), line_of(TOY_V1, "return x * SCALE"))


def repo_lock(tmp_path: Path, name: str, url: str, forge: str | None = None):
    """A lock with one repository at `url` and one excerpt of it (lines of `helper`)."""
    table = f'[repos."{name}"]\nurl = "{url}"\ncommit = "{COMMIT}"\nlicense = "MIT"\n' + (
        f'forge = "{forge}"\n' if forge else ""
    )
    entry = excerpt_table("toy.helper", TOY_V1, lines=[list(HELPER)], repo=name)
    return load_lock(write(tmp_path / "lock.toml", table + entry))


def resolver(tmp_path: Path, lock, **options) -> Resolver:
    return Resolver(lock, cache_dir=tmp_path / "cache", sources=("forge",), net=FAST, **options)


@pytest.mark.parametrize(
    ("name", "url", "forge", "kind", "permalink"),
    [
        (
            "openai/gpt-2",
            "https://github.com/openai/gpt-2",
            None,
            "github",
            f"https://github.com/openai/gpt-2/blob/{COMMIT}/{PATH}#L9-L10",
        ),
        (
            "group/sub/proj",
            "https://gitlab.com/group/sub/proj",
            None,
            "gitlab",
            f"https://gitlab.com/group/sub/proj/-/blob/{COMMIT}/{PATH}#L9-10",
        ),
        (
            "owner/repo",
            "https://codeberg.org/owner/repo",
            None,
            "gitea",
            f"https://codeberg.org/owner/repo/src/commit/{COMMIT}/{PATH}#L9-L10",
        ),
        (
            "team/tool",
            "https://git.example.org/team/tool",
            "gitea",
            "gitea",
            f"https://git.example.org/team/tool/src/commit/{COMMIT}/{PATH}#L9-L10",
        ),
        ("kernel/git", "https://git.example.org/pub/scm/git/git.git", None, "git", None),
        ("local/toy", "file:///srv/git/toy.git", None, "git", None),
    ],
)
def test_each_forge_links_its_own_permalink_and_origin(
    tmp_path: Path, name: str, url: str, forge: str | None, kind: str, permalink: str | None
) -> None:
    lock = repo_lock(tmp_path, name, url, forge)
    repo = lock.repos[name]
    assert (repo.url, repo.forge) == (url, kind)
    text = lines_text(TOY_V1, HELPER)
    shown = Excerpt(
        id="toy.helper", repo=repo, path=PATH, symbol=None, ranges=(HELPER,),
        blocks=make_blocks(text, (HELPER,)), text=text, sha256="0" * 64, evidence="x",
        evidence_level="upstream", resolved_from="cache", sha1_git="ab" * 20,
    )  # fmt: skip
    assert shown.permalink == permalink
    assert shown.link == (permalink or url)
    assert f";origin={url};" in (shown.swhid or "")  # the origin as it really is
    # the lock writes it back the same, naming the forge only where the host does not say it
    again = load_lock(write(tmp_path / "again.toml", dump_lock(lock)))
    assert again.repos == lock.repos
    assert ('forge = "gitea"' in dump_lock(lock)) == (forge == "gitea")
    card = card_renderer(None)(shown, "excerpt").html[0]
    if permalink:
        assert f'<a href="{permalink}"' in card
    else:
        assert "<a href" not in card and f"<code>{url}</code>, no web view" in card


@pytest.mark.parametrize(
    ("name", "url", "forge", "problem"),
    [
        ("openai/gpt-2", "https://github.com/openai/gpt-3", None, "does not match the repo name"),
        ("o/r", "https://gitlab.com/o/r", "gitea", "gitlab.com is gitlab, not gitea"),
        ("o/r", "https://git.example.org/o/r", "sourcehut", "unknown forge 'sourcehut'"),
        ("o/r", "https://user:secret@gitlab.com/o/r", None, "holds a password"),
        ("o/r", "https://gitlab.com/o/other", None, "is not the gitlab page of o/r"),
        ("o/r", "ssh://git.example.org/o/r", "gitlab", "is not the gitlab page of o/r"),
        ("o/r", "ftp://example.org/o/r", None, "is not a repository's address"),
        ("o/../r", "https://git.example.org/r", None, "repo name must be OWNER/REPO"),
    ],
)
def test_a_url_that_cannot_be_the_repositorys_is_refused(
    tmp_path: Path, name: str, url: str, forge: str | None, problem: str
) -> None:
    with pytest.raises(InputError) as refused:
        repo_lock(tmp_path, name, url, forge)
    assert problem in refused.value.problem
    assert refused.value.entry == f"repos.{name}" and refused.value.fix


@pytest.mark.parametrize(
    ("forge", "route"),
    [
        ("gitlab", "/group/sub/proj/-/raw/{commit}/{path}"),
        ("gitea", "/group/sub/proj/raw/commit/{commit}/{path}"),
        ("github", "/group/sub/proj/raw/{commit}/{path}"),  # GitHub Enterprise
    ],
)
def test_a_forges_raw_file_is_read_and_checked(tmp_path: Path, forge: str, route: str) -> None:
    """GitLab and Gitea serve a file at a commit under their own raw forms; the bytes are checked
    against the pin like GitHub's (github.com's raw host stays the default)."""
    raw = route.format(commit=COMMIT, path=PATH)
    with serve(FakeServer({raw: [Reply(TOY_V1.encode())]})) as server:
        lock = repo_lock(tmp_path, "group/sub/proj", f"{server.url}/group/sub/proj", forge)
        excerpt = resolver(tmp_path, lock).resolve(lock.pin("toy.helper"))
    assert excerpt.text == lines_text(TOY_V1, HELPER)
    assert excerpt.resolved_from == forge
    assert server.hits == [raw]


def test_a_forges_wrong_bytes_are_refused(tmp_path: Path) -> None:
    raw = f"/o/r/-/raw/{COMMIT}/{PATH}"
    wrong = TOY_V1.replace("x * SCALE", "x * 3")
    with serve(FakeServer({raw: [Reply(wrong.encode())]})) as server:
        lock = repo_lock(tmp_path, "o/r", f"{server.url}/o/r", "gitlab")
        with pytest.raises(InputError) as refused:
            resolver(tmp_path, lock).resolve(lock.pin("toy.helper"))
    assert "hash mismatch" in refused.value.problem and "(gitlab)" in refused.value.problem


def test_a_plain_git_repository_is_read_from_a_clone_only(tmp_path: Path) -> None:
    upstream = tmp_path / "upstream"
    commit = make_upstream(upstream, {PATH: TOY_V1})
    url = upstream.as_uri()
    table = f'[repos."local/toy"]\nurl = "{url}"\ncommit = "{commit}"\nlicense = "MIT"\n'
    entry = excerpt_table("toy.helper", TOY_V1, lines=[list(HELPER)], repo="local/toy")
    lock = load_lock(write(tmp_path / "lock.toml", table + entry))
    with pytest.raises(InputError) as refused:
        resolver(tmp_path, lock).resolve(lock.pin("toy.helper"))
    assert f"git: {url} has no web view to read files from" in refused.value.problem
    cloned = Resolver(lock, cache_dir=tmp_path / "cache", git_dirs={"local/toy": upstream})
    excerpt = cloned.resolve(lock.pin("toy.helper"))
    assert excerpt.resolved_from == f"git:{upstream}" and excerpt.permalink is None
    blob = git(upstream, "rev-parse", f"{commit}:{PATH}")
    assert cloned.files_read[("local/toy", PATH)].sha1_git == blob


def test_pin_adds_a_repository_of_any_forge(tmp_path: Path, capsys) -> None:
    """`itm pin` wrote every new repo as https://github.com/REPO."""
    upstream = tmp_path / "upstream"
    commit = make_upstream(upstream, {PATH: TOY_V1})
    lock = tmp_path / "lock.toml"
    common = ["--path", PATH, "--symbol", "helper", "--commit", commit, "--license", "MIT"]
    url = "https://codeberg.org/owner/toy"
    clone = ["--lock", str(lock), "--git", str(upstream), "--offline"]
    assert main(["pin", "toy.helper", "--repo", "owner/toy", "--url", url, *common, *clone]) == 0
    own = "https://git.example.org/team/toy"
    args = ["pin", "toy.own", "--repo", "team/toy", "--url", own, "--forge", "gitlab", *common]
    assert main([*args, "--lock", str(lock), "--git", f"team/toy={upstream}", "--offline"]) == 0
    loaded = load_lock(lock)
    assert (loaded.repos["owner/toy"].url, loaded.repos["owner/toy"].forge) == (url, "gitea")
    assert (loaded.repos["team/toy"].url, loaded.repos["team/toy"].forge) == (own, "gitlab")
    capsys.readouterr()
    bad = ["pin", "toy.bad", "--repo", "x/y", "--url", "https://gitlab.com/x/z", *common]
    assert main([*bad, "--lock", str(lock), "--git", f"x/y={upstream}", "--offline"]) == 2
    assert "entry '--url': url 'https://gitlab.com/x/z' is not the gitlab page of x/y" in (
        capsys.readouterr().err
    )
