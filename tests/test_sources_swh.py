"""Software Heritage ids: the blob id is git's own, the SWHID is spelled as the standard says,
the lock records the ids of whole files read at the pin (and a build that reads a file checks
them), and `itm verify --online` asks the archive about each file (a local fake of its API)."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from generator.cli import main
from generator.sources.fetch import Http, NetSettings
from generator.sources.lock import load_lock
from generator.sources.swh import ArchiveError, archived, git_blob_id, swhid
from tests.sources_helpers import (
    PATH,
    REPO,
    TOY_V1,
    FakeServer,
    Reply,
    excerpt_table,
    git,
    isolated_env,
    make_upstream,
    refused_url,
    repo_table,
    serve,
    write,
)

pytestmark = pytest.mark.usefixtures(isolated_env.__name__)

COMMIT = "c0ffee" + "0" * 34
RAW_PATH = f"/{REPO}/{COMMIT}/{PATH}"
FAST = NetSettings(timeout=0.5, retries=0, backoff=0.01)
BLOB = hashlib.sha1(b"blob %d\0" % len(TOY_V1.encode()) + TOY_V1.encode()).hexdigest()


def hash_object(data: bytes) -> str:
    """git's own answer, independent of generator.sources.swh."""
    done = subprocess.run(
        ["git", "hash-object", "--stdin"], input=data, capture_output=True, check=True
    )
    return done.stdout.decode().strip()


@pytest.mark.parametrize(
    "data", [b"", b"x\n", TOY_V1.encode(), b"\0\xff\xfe binary\r\n", bytes(range(256)) * 50]
)
def test_the_blob_id_is_gits(data: bytes) -> None:
    assert git_blob_id(data) == hash_object(data)


def test_a_swhid_names_the_file_its_origin_commit_path_and_lines() -> None:
    commit = "9b63575ef42771a015060c964af2c3da4cf7c8ab"
    got = swhid(BLOB, url="https://github.com/o/r", commit=commit, path="src/m.py", lines=(5, 9))
    assert got == (
        f"swh:1:cnt:{BLOB};origin=https://github.com/o/r;anchor=swh:1:rev:{commit}"
        ";path=/src/m.py;lines=5-9"
    )
    one = swhid(BLOB, url="https://github.com/o/r", commit=commit, path="a;b%c.py", lines=(7, 7))
    assert one.endswith(";path=/a%3Bb%25c.py;lines=7")  # ";" and "%" are escaped in qualifiers


def content_reply(sha1_git: str) -> Reply:
    """What the archive's API answers for a content it holds (the fields used here)."""
    body = {"checksums": {"sha1_git": sha1_git, "sha256": "0" * 64}, "length": 1}
    return Reply(json.dumps(body).encode(), content_type="application/json")


def test_archived_asks_the_api_and_tells_held_missing_and_unknown() -> None:
    held, other = "a" * 40, "b" * 40
    routes = {
        f"/api/1/content/sha1_git:{held}/": [content_reply(held)],
        f"/api/1/content/sha1_git:{'c' * 40}/": [content_reply(other)],  # describes another
        f"/api/1/content/sha1_git:{'d' * 40}/": [Reply(b"<html>maintenance</html>")],
        f"/api/1/content/sha1_git:{'e' * 40}/": [Reply(b"[" * 100_000)],  # json's recursion
    }
    with serve(FakeServer(routes)) as server:
        http, base = Http(FAST), f"{server.url}/api/1"
        assert archived(http, base, held) is True
        assert archived(http, base, other) is False  # 404
        for wrong in ("c" * 40, "d" * 40, "e" * 40):
            with pytest.raises(ArchiveError):
                archived(http, base, wrong)
    with pytest.raises(ArchiveError, match="refused"):
        archived(Http(FAST), refused_url(), held)


def lock_file(tmp_path: Path, files: str = "") -> Path:
    entry = excerpt_table("toy.helper", TOY_V1, lines=[[9, 10]])
    return write(tmp_path / "lock.toml", repo_table(COMMIT) + files + entry)


def files_table(sha1_git: str = BLOB, sha256: str | None = None) -> str:
    digest = sha256 or hashlib.sha256(TOY_V1.encode()).hexdigest()
    return (
        f'\n[[files]]\nrepo = "{REPO}"\ncommit = "{COMMIT}"\npath = "{PATH}"\n'
        f'sha256 = "{digest}"\n'
        f'sha1_git = "{sha1_git}"\nevidence = "made up for a test"\n'
    )


def test_verify_online_records_the_blob_id_and_asks_the_archive(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    path = lock_file(tmp_path)
    routes = {RAW_PATH: [Reply(TOY_V1.encode())]}  # the archive's route: not there (404)
    with serve(FakeServer(routes)) as server:
        monkeypatch.setenv("ITM_GITHUB_RAW", server.url)
        monkeypatch.setenv("ITM_SWH_API", f"{server.url}/api/1")
        assert main(["verify", "--online", "--lock", str(path)]) == 0
        out = capsys.readouterr().out
        assert f"sha1_git {BLOB} (not recorded yet)" in out
        assert f"NOT ARCHIVED {REPO} {PATH}" in out and f"swh:1:cnt:{BLOB}" in out
        assert load_lock(path).files == ()  # verify alone never writes
        assert main(["verify", "--online", "--raise-evidence", "--lock", str(path)]) == 0
        (recorded,) = load_lock(path).files
        assert (recorded.repo, recorded.path) == (REPO, PATH)
        assert recorded.sha1_git == hash_object(TOY_V1.encode())
        assert recorded.sha256 == hashlib.sha256(TOY_V1.encode()).hexdigest()
        assert COMMIT in recorded.evidence and "GitHub" in recorded.evidence
        assert recorded.commit == COMMIT  # it vouches for this commit only
        # GitHub's raw files carry no git objects: none are recorded, and the run says so
        assert load_lock(path).commits == ()
        assert f"git's objects not recorded (no clone of {REPO} given" in capsys.readouterr().out
        server.routes[f"/api/1/content/sha1_git:{BLOB}/"] = [content_reply(BLOB)]
        assert main(["verify", "--online", "--lock", str(path)]) == 0
    out = capsys.readouterr().out
    assert "(as recorded)" in out and f"archived {REPO} {PATH}: swh:1:cnt:{BLOB}" in out
    assert "NOT ARCHIVED" not in out


def test_verify_online_without_the_archive_still_passes(tmp_path, monkeypatch, capsys) -> None:
    """The archive is asked, not relied on: when it cannot be reached the run says so."""
    path = lock_file(tmp_path, files_table())
    with serve(FakeServer({RAW_PATH: [Reply(TOY_V1.encode())]})) as server:
        monkeypatch.setenv("ITM_GITHUB_RAW", server.url)
        assert main(["verify", "--online", "--lock", str(path)]) == 0  # ITM_SWH_API refuses
    assert "could not ask Software Heritage" in capsys.readouterr().out


@pytest.mark.parametrize("field", ["sha1_git", "sha256"])
def test_a_recorded_file_id_that_github_contradicts_fails(
    tmp_path: Path, monkeypatch, capsys, field: str
) -> None:
    wrong = {"sha1_git": files_table(sha1_git="e" * 40), "sha256": files_table(sha256="e" * 64)}
    path = lock_file(tmp_path, wrong[field])
    with serve(FakeServer({RAW_PATH: [Reply(TOY_V1.encode())]})) as server:
        monkeypatch.setenv("ITM_GITHUB_RAW", server.url)
        assert main(["verify", "--online", "--lock", str(path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL toy.helper" in out and "hash mismatch" in out and "the lock records" in out


def test_pin_from_a_clone_records_the_files_id_and_bump_replaces_it(tmp_path: Path, capsys) -> None:
    upstream = tmp_path / "upstream"
    first = make_upstream(upstream, {PATH: TOY_V1})
    path = write(tmp_path / "lock.toml", repo_table(first))
    pin = ["pin", "toy.tail", "--repo", REPO, "--path", PATH, "--symbol", "tail"]
    assert main([*pin, "--git", str(upstream), "--lock", str(path)]) == 0
    (recorded,) = load_lock(path).files
    assert recorded.sha1_git == git(upstream, "rev-parse", f"{first}:{PATH}")
    second = make_upstream(upstream, {PATH: "# moved\n" + TOY_V1})
    bump = ["bump", REPO, second, "--git", str(upstream), "--lock", str(path), "--write"]
    bump += ["--pages", str(tmp_path)]  # a lock of no site: the pages to keep in step
    assert main(bump) == 0
    (recorded,) = load_lock(path).files
    assert recorded.sha1_git == git(upstream, "rev-parse", f"{second}:{PATH}")
    assert second in recorded.evidence


def test_verify_from_a_clone_records_what_git_names(tmp_path: Path, capsys) -> None:
    upstream = tmp_path / "upstream"
    commit = make_upstream(upstream, {PATH: TOY_V1})
    path = write(
        tmp_path / "lock.toml",
        repo_table(commit) + excerpt_table("toy.helper", TOY_V1, lines=[[9, 10]]),
    )
    args = ["verify", "--git", f"{REPO}={upstream}", "--raise-evidence", "--lock", str(path)]
    assert main(args) == 0
    (recorded,) = load_lock(path).files
    assert recorded.sha1_git == git(upstream, "rev-parse", f"{commit}:{PATH}")
    assert "clone" in recorded.evidence


def test_the_excerpts_carry_their_files_swhid(tmp_path: Path) -> None:
    from generator.sources.resolve import Resolver

    lock = load_lock(lock_file(tmp_path, files_table()))
    bare = load_lock(lock_file(tmp_path / "bare"))  # no [[files]] entry: no whole file recorded
    with serve(FakeServer({RAW_PATH: [Reply(TOY_V1.encode())]})) as server:
        excerpts = [
            Resolver(x, cache_dir=tmp_path / "c", github_base=server.url, net=FAST).resolve(
                x.pin("toy.helper")
            )
            for x in (lock, bare)
        ]
    assert excerpts[0].swhid == (
        f"swh:1:cnt:{BLOB};origin=https://github.com/{REPO};anchor=swh:1:rev:{COMMIT}"
        f";path=/{PATH};lines=9-10"
    )
    assert excerpts[1].swhid is None
