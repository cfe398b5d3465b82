"""The GitHub resolver against a 127.0.0.1 server shaped like raw.githubusercontent.com:
success, 404, timeout, truncated body, wrong bytes, retry then success, and offline."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from generator.cli import main
from generator.errors import InputError
from generator.sources.fetch import Http, NetSettings, Offline
from generator.sources.lock import load_lock
from generator.sources.resolve import Resolver
from tests.sources_helpers import (
    PATH,
    REPO,
    TOY_V1,
    FakeServer,
    Reply,
    excerpt_table,
    isolated_env,
    line_of,
    lines_text,
    refused_url,
    repo_table,
    serve,
    sha256,
    write,
)

pytestmark = pytest.mark.usefixtures(isolated_env.__name__)

COMMIT = "c0ffee" + "0" * 34
RAW_PATH = f"/{REPO}/{COMMIT}/{PATH}"
FAST = NetSettings(timeout=0.2, retries=1, backoff=0.01)
HELPER = (line_of(TOY_V1, "def helper"), line_of(TOY_V1, "return x * SCALE"))
TAIL = (line_of(TOY_V1, "def tail"), line_of(TOY_V1, 'return "end"'))


def make_lock(tmp_path: Path):
    entries = [
        excerpt_table("toy.helper", TOY_V1, lines=[list(HELPER)]),
        excerpt_table("toy.tail", TOY_V1, lines=[list(TAIL)]),
    ]
    return load_lock(write(tmp_path / "lock.toml", repo_table(COMMIT) + "".join(entries)))


def github_only(tmp_path: Path, base: str, **options) -> tuple[Resolver, object]:
    lock = make_lock(tmp_path)
    resolver = Resolver(
        lock,
        cache_dir=tmp_path / "cache",
        sources=("forge",),
        github_base=base,
        net=options.pop("net", FAST),
        **options,
    )
    return resolver, lock


def test_fetch_at_the_commit(tmp_path: Path) -> None:
    with serve(FakeServer({RAW_PATH: [Reply(TOY_V1.encode())]})) as server:
        resolver, lock = github_only(tmp_path, server.url)
        excerpt = resolver.resolve(lock.pin("toy.helper"))
        resolver.resolve(lock.pin("toy.tail"))
    assert excerpt.text == lines_text(TOY_V1, HELPER)
    assert excerpt.resolved_from == "github"
    assert server.hits == [RAW_PATH]  # one fetch of the file serves both excerpts


def test_not_found_is_not_retried(tmp_path: Path) -> None:
    with serve(FakeServer()) as server:
        resolver, lock = github_only(tmp_path, server.url)
        with pytest.raises(InputError) as caught:
            resolver.resolve(lock.pin("toy.helper"))
    assert "HTTP 404" in caught.value.problem and caught.value.entry == "toy.helper"
    assert server.count(RAW_PATH) == 1


def test_timeout_retries_then_gives_up(tmp_path: Path) -> None:
    with serve(FakeServer({RAW_PATH: [Reply(TOY_V1.encode(), delay=1.0)]})) as server:
        resolver, lock = github_only(tmp_path, server.url)
        started = time.monotonic()
        with pytest.raises(InputError) as caught:
            resolver.resolve(lock.pin("toy.helper"))
        elapsed = time.monotonic() - started
        # the next excerpt does not wait again, and the host is skipped for other files too
        with pytest.raises(InputError, match="timed out"):
            resolver.resolve(lock.pin("toy.tail"))
        with pytest.raises(Offline, match="skipped for this run"):
            resolver.http.get(f"{server.url}/{REPO}/{COMMIT}/other.py")
    assert "timed out after 2 attempts" in caught.value.problem
    assert server.count(RAW_PATH) == 2 and elapsed < 1.0


def test_truncated_body_is_rejected(tmp_path: Path) -> None:
    body = TOY_V1.encode()
    short = Reply(body[:40], declared_length=len(body))  # Content-Length larger than what is sent
    with serve(FakeServer({RAW_PATH: [short]})) as server:
        resolver, lock = github_only(tmp_path, server.url)
        with pytest.raises(InputError) as caught:
            resolver.resolve(lock.pin("toy.helper"))
    assert "truncated body" in caught.value.problem
    assert server.count(RAW_PATH) == 2


def test_wrong_bytes_are_rejected(tmp_path: Path) -> None:
    tampered = TOY_V1.replace("x * SCALE", "x * 3")
    with serve(FakeServer({RAW_PATH: [Reply(tampered.encode())]})) as server:
        resolver, lock = github_only(tmp_path, server.url)
        with pytest.raises(InputError) as caught:
            resolver.resolve(lock.pin("toy.helper"))
        assert resolver.resolve(lock.pin("toy.tail")).resolved_from == "github"  # untouched lines
    error = caught.value
    assert error.entry == "toy.helper" and "hash mismatch" in error.problem
    assert "(github)" in error.problem and "itm pin toy.helper --replace" in error.fix
    assert not list((tmp_path / "cache").rglob("*")) or all(
        "x * 3" not in p.read_text() for p in (tmp_path / "cache").rglob("*") if p.is_file()
    )


def test_retry_then_success(tmp_path: Path) -> None:
    replies = [Reply(b"busy", status=503), Reply(TOY_V1.encode())]
    with serve(FakeServer({RAW_PATH: replies})) as server:
        resolver, lock = github_only(tmp_path, server.url)
        excerpt = resolver.resolve(lock.pin("toy.helper"))
    assert excerpt.text == lines_text(TOY_V1, HELPER)
    assert server.count(RAW_PATH) == 2


def test_truncated_then_success(tmp_path: Path) -> None:
    body = TOY_V1.encode()
    replies = [Reply(body[:10], declared_length=len(body)), Reply(body)]
    with serve(FakeServer({RAW_PATH: replies})) as server:
        resolver, lock = github_only(tmp_path, server.url)
        assert resolver.resolve(lock.pin("toy.helper")).resolved_from == "github"
    assert server.count(RAW_PATH) == 2


def test_connection_refused_means_offline_for_the_rest_of_the_run(tmp_path: Path) -> None:
    resolver, lock = github_only(tmp_path, refused_url(), net=NetSettings(retries=3, backoff=5))
    started = time.monotonic()
    for pin_id in ("toy.helper", "toy.tail"):
        with pytest.raises(InputError, match="offline: connection refused"):
            resolver.resolve(lock.pin(pin_id))
    assert time.monotonic() - started < 1.0  # no backoff waits
    assert len(resolver.http.attempts) == 1  # never retried, never tried again


def test_dns_failure_means_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def no_dns(host, *args, **kwargs):
        calls.append(host)
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr("socket.getaddrinfo", no_dns)  # the lookup every connection makes
    http = Http(NetSettings(retries=3, backoff=5))
    for _ in range(2):
        with pytest.raises(Offline, match="DNS lookup failed|skipped"):
            http.get("https://raw.githubusercontent.com/a/b/c")
    assert len(calls) == 1 and "raw.githubusercontent.com" in http.down


def test_offline_flag_forbids_the_network(tmp_path: Path) -> None:
    with serve(FakeServer({RAW_PATH: [Reply(TOY_V1.encode())]})) as server:
        lock = make_lock(tmp_path)
        resolver = Resolver(
            lock, cache_dir=tmp_path / "cache", offline=True, github_base=server.url, net=FAST
        )
        with pytest.raises(InputError) as caught:
            resolver.resolve(lock.pin("toy.helper"))
    assert server.hits == [] and resolver.sources == ("cache", "git", "pypi")  # pypi: cache only
    assert "pass --git" in caught.value.fix and "PyPI" not in caught.value.fix  # no [[mirrors]]


def test_verify_online_checks_github(tmp_path: Path, monkeypatch, capsys) -> None:
    make_lock(tmp_path)
    args = ["verify", "--online", "--lock", str(tmp_path / "lock.toml")]
    with serve(FakeServer({RAW_PATH: [Reply(TOY_V1.encode())]})) as server:
        monkeypatch.setenv("ITM_GITHUB_RAW", server.url)
        assert main(args) == 0
    assert "from github" in capsys.readouterr().out
    monkeypatch.setenv("ITM_GITHUB_RAW", refused_url())
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "FAIL toy.helper" in out and "offline: connection refused" in out


def test_pin_and_bump_read_whole_files_from_github(tmp_path: Path, monkeypatch, capsys) -> None:
    path = write(tmp_path / "lock.toml", repo_table(COMMIT))
    moved = "# new first line\n" + TOY_V1
    new_commit = "d" * 40
    routes = {RAW_PATH: [Reply(TOY_V1.encode())], RAW_PATH.replace(COMMIT, new_commit): [
        Reply(moved.encode())]}  # fmt: skip
    with serve(FakeServer(routes)) as server:
        monkeypatch.setenv("ITM_GITHUB_RAW", server.url)
        pin = ["pin", "toy.tail", "--repo", REPO, "--path", PATH, "--symbol", "tail"]
        assert main([*pin, "--lock", str(path)]) == 0
        entry = load_lock(path).pin("toy.tail")
        assert entry.ranges == (TAIL,) and entry.sha256 == sha256(lines_text(TOY_V1, TAIL))
        assert entry.evidence_level == "upstream" and "GitHub" in entry.evidence
        bump = ["bump", REPO, new_commit, "--lock", str(path), "--write"]
        assert main([*bump, "--pages", str(tmp_path)]) == 0  # a lock of no site: no pages
    assert "moved      toy.tail" in capsys.readouterr().out
    assert load_lock(path).pin("toy.tail").ranges == ((TAIL[0] + 1, TAIL[1] + 1),)


def test_verify_online_can_raise_evidence_that_github_confirmed(tmp_path, monkeypatch, capsys):
    """An excerpt GitHub served at its pinned commit (bytes hashing to the pin) becomes
    'upstream'; one GitHub could not confirm keeps its level; nothing else in the lock moves."""
    other = "/other/file.py"
    entries = [
        excerpt_table("toy.helper", TOY_V1, lines=[list(HELPER)], level="mirror-window"),
        excerpt_table("toy.tail", TOY_V1, lines=[list(TAIL)], level="file-hash", path=other[1:]),
    ]
    path = write(tmp_path / "lock.toml", repo_table(COMMIT) + "".join(entries))
    args = ["verify", "--online", "--raise-evidence", "--lock", str(path)]
    routes = {RAW_PATH: [Reply(TOY_V1.encode())]}  # the other file is missing on GitHub
    with serve(FakeServer(routes)) as server:
        monkeypatch.setenv("ITM_GITHUB_RAW", server.url)
        assert main(args) == 1  # the missing file still fails the run
    lock = load_lock(path)
    helper, tail = lock.pin("toy.helper"), lock.pin("toy.tail")
    assert helper.evidence_level == "upstream" and COMMIT in helper.evidence
    assert tail.evidence_level == "file-hash" and tail.evidence == "made up for a test"
    assert "toy.helper: evidence mirror-window -> upstream" in capsys.readouterr().out
    assert main(["verify", "--raise-evidence", "--lock", str(path)]) == 2  # needs --online
