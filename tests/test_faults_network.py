"""Fault injection, network: a local HTTP server on 127.0.0.1 that trickles, lies about sizes or
sends far more than it should. Every download has an overall deadline and a size cap; each
fault is a clear error, found quickly, with memory bounded by the cap."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from generator.assets import PackagePin, fetch_verified
from generator.errors import InputError
from generator.sources.fetch import Http, NetSettings, TooLarge, TooSlow
from tests.sources_helpers import Reply, serve, sha256

FAST = NetSettings(timeout=2.0, retries=1, backoff=0.05, deadline=1.0, max_bytes=1 << 20)


def test_a_trickling_server_meets_the_overall_deadline() -> None:
    """One byte every 0.2 s never trips a per-read timeout; the download's deadline stops it."""
    with serve() as server:
        server.routes["/slow"] = [Reply(b"x" * 1000, trickle=0.2)]
        started = time.monotonic()
        with pytest.raises(TooSlow, match=r"not finished after 1 s .* download stopped"):
            Http(FAST).get(f"{server.url}/slow")
    assert time.monotonic() - started < 3.0
    assert server.count("/slow") == 1  # a deadline is final: no retry


def test_a_host_past_its_deadline_is_skipped_for_the_rest_of_the_run() -> None:
    """`itm verify` against a trickling host waited the whole deadline once per download (18 of
    them: 18 minutes at the default 60 s); the README says such a host is skipped."""
    from generator.sources.fetch import Offline

    with serve() as server:
        server.routes["/slow"] = [Reply(b"x" * 1000, trickle=0.2)]
        server.routes["/other"] = [Reply(b"x" * 1000, trickle=0.2)]
        http = Http(FAST)
        with pytest.raises(TooSlow):
            http.get(f"{server.url}/slow")
        with pytest.raises(Offline, match="skipped for this run"):
            http.get(f"{server.url}/other")
    assert server.count("/other") == 0


def test_a_server_trickling_its_headers_meets_the_overall_deadline() -> None:
    """A header line that grows by a byte every 0.2 s trips no per-read timeout and never
    reaches the body, where the deadline used to be checked: it ran past 480 s."""
    import threading

    outcome: list[BaseException] = []
    with serve() as server:
        server.routes["/headers"] = [Reply(trickle=0.2, trickled_headers=True)]

        def fetch() -> None:
            try:
                Http(FAST).get(f"{server.url}/headers")
            except BaseException as error:  # noqa: BLE001 (reported below)
                outcome.append(error)

        worker = threading.Thread(target=fetch, daemon=True)
        worker.start()
        worker.join(timeout=120)  # a safety net only: the deadline is 1 s
    assert not worker.is_alive(), "the download outlived its deadline"
    assert len(outcome) == 1 and isinstance(outcome[0], TooSlow), outcome
    assert "not finished after 1 s" in outcome[0].reason


def test_an_endless_body_is_cut_at_the_cap_without_filling_memory() -> None:
    with serve() as server:
        server.routes["/huge"] = [Reply(endless=64 << 20)]  # 64 MiB, no Content-Length
        tracemalloc.start()
        with pytest.raises(TooLarge, match="passed 1,048,576 bytes; download stopped"):
            Http(FAST).get(f"{server.url}/huge")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < 8 << 20  # bounded by the 1 MiB cap, not the 64 MiB body


def test_an_announced_size_over_the_cap_is_not_downloaded() -> None:
    with serve() as server:
        server.routes["/big"] = [Reply(b"small", declared_length=10 << 30)]
        with pytest.raises(TooLarge, match="announces 10,737,418,240 bytes"):
            Http(FAST).get(f"{server.url}/big")


def test_a_known_size_is_the_cap() -> None:
    with serve() as server:
        server.routes["/pinned"] = [Reply(b"y" * 2000, endless=0)]
        with pytest.raises(TooLarge):
            Http(FAST).get(f"{server.url}/pinned", size=1000)
        assert Http(FAST).get(f"{server.url}/pinned", size=2000) == b"y" * 2000


def test_web_assets_report_a_slow_registry_as_an_input_error(tmp_path, monkeypatch) -> None:
    body = b"tarball"
    with serve() as server:
        server.routes["/katex.tgz"] = [Reply(body, trickle=0.5)]
        pin = PackagePin("katex", "0", f"{server.url}/katex.tgz", sha256(body), "MIT", ("*",))
        with pytest.raises(InputError) as caught:
            fetch_verified(pin, tmp_path, offline=False, net=FAST)
    assert "not finished after" in caught.value.problem and caught.value.entry == "katex"


def test_an_index_cannot_raise_the_cap_by_listing_a_huge_size(tmp_path) -> None:
    """PEP 700's size comes from the index, not the lock: it may lower the cap, never lift it."""
    import json

    from generator.sources.lock import Mirror
    from generator.sources.pypi import MirrorError, archive_bytes
    from generator.store import Store

    mirror = Mirror(
        repo="a/b", commit="a" * 40, path="m.py", package="toy", version="1",
        filename="toy-1.tar.gz", sha256="0" * 64, member="toy-1/m.py",
    )  # fmt: skip
    with serve() as server:
        listing = {"files": [{"filename": mirror.filename, "url": "/files/toy-1.tar.gz",
                              "hashes": {}, "size": 10 << 30}]}  # fmt: skip
        server.routes["/simple/toy/"] = [Reply(json.dumps(listing).encode())]
        server.routes["/files/toy-1.tar.gz"] = [Reply(endless=64 << 20)]
        with pytest.raises(MirrorError, match="over the 1,048,576-byte cap; not downloaded"):
            archive_bytes(mirror, Http(FAST), Store(tmp_path), f"{server.url}/simple")
        assert server.count("/files/toy-1.tar.gz") == 0
