"""Registry mirrors through a fake PEP 691 simple index on 127.0.0.1: archives checked against
the lock's sha256, members read from wheels and sdists, lines found even when shifted."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from generator.errors import InputError
from generator.settings import Settings
from generator.sources.fetch import NetSettings
from generator.sources.lock import load_lock
from generator.sources.pypi import SIMPLE_JSON
from generator.sources.resolve import Resolver
from generator.store import Store
from tests.sources_helpers import (
    REPO,
    TOY_V1,
    Reply,
    excerpt_table,
    isolated_env,
    line_of,
    lines_text,
    mirror_table,
    refused_url,
    repo_table,
    sdist_bytes,
    serve,
    sha256,
    simple_index,
    wheel_bytes,
    write,
)

pytestmark = pytest.mark.usefixtures(isolated_env.__name__)

COMMIT = "ab" * 20
FAST = NetSettings(timeout=0.5, retries=1, backoff=0.01)
ONE_TRY = NetSettings(timeout=5, retries=0, backoff=0.01)  # a failure is final: nothing retries
HELPER = (line_of(TOY_V1, "def helper"), line_of(TOY_V1, "return x * SCALE"))
RENDER = (line_of(TOY_V1, "@staticmethod"), line_of(TOY_V1, "return helper(x) + 1"))
TAIL = (line_of(TOY_V1, "def tail"), line_of(TOY_V1, 'return "end"'))

# A mirror that copied the module under a two-line banner and edited one function:
# every upstream line stands 2 lower, except `area`, which differs.
SHIFTED = "# vendored copy\n# do not edit\n" + TOY_V1.replace("self.size ** 2", "self.size ** 3")
WHEEL = wheel_bytes({"toy_mirror/toy.py": TOY_V1, "toy_mirror/__init__.py": ""})
SDIST = sdist_bytes({"toy-vendor-2.0/toy_vendor/toy.py": SHIFTED})


def index_routes(server_url: str) -> dict[str, list[Reply]]:
    routes = {
        "/simple/toy-mirror/": [Reply(simple_index({"toy_mirror-1.0-py3-none-any.whl": WHEEL},
                                                   server_url), content_type=SIMPLE_JSON)],
        "/simple/toy-vendor/": [Reply(simple_index({"toy-vendor-2.0.tar.gz": SDIST}, server_url),
                                      content_type=SIMPLE_JSON)],
        "/files/toy_mirror-1.0-py3-none-any.whl": [Reply(WHEEL)],
        "/files/toy-vendor-2.0.tar.gz": [Reply(SDIST)],
    }  # fmt: skip
    return routes


WHEEL_MIRROR = mirror_table(
    "toy-mirror",
    "1.0",
    "toy_mirror-1.0-py3-none-any.whl",
    WHEEL,
    "toy_mirror/toy.py",
    commit=COMMIT,
)
SDIST_MIRROR = mirror_table(
    "toy_vendor",
    "2.0",
    "toy-vendor-2.0.tar.gz",
    SDIST,
    "toy-vendor-2.0/toy_vendor/toy.py",
    offset=2,
    commit=COMMIT,
)


def make_lock(tmp_path: Path, *mirrors: str, extra: str = ""):
    entries = [
        excerpt_table("toy.helper", TOY_V1, lines=[list(HELPER)]),
        excerpt_table("toy.two-runs", TOY_V1, lines=[list(HELPER), list(TAIL)]),
        excerpt_table("toy.render", TOY_V1, symbol="Widget.render", lines=[list(RENDER)]),
    ]
    text = repo_table(COMMIT) + "".join(mirrors) + "".join(entries) + extra
    return load_lock(write(tmp_path / "lock.toml", text))


def registry_only(tmp_path: Path, lock, base: str) -> Resolver:
    return Resolver(
        lock, cache_dir=tmp_path / "cache", sources=("cache", "pypi"), pypi_base=base, net=FAST
    )


def prefetching(tmp_path: Path, lock, base: str, net: NetSettings, **options) -> Resolver:
    """A resolver told the run's pins (as resolve_excerpts tells it), so it may fetch ahead."""
    resolver = Resolver(
        lock,
        cache_dir=tmp_path / "cache",
        sources=options.pop("sources", ("cache", "pypi")),
        pypi_base=base,
        net=net,
        **options,
    )
    resolver.upcoming = list(lock.pins)
    return resolver


def test_wheel_mirror_at_the_same_lines(tmp_path: Path) -> None:
    with serve() as server:
        server.routes.update(index_routes(server.url))
        lock = make_lock(tmp_path, WHEEL_MIRROR)
        resolver = registry_only(tmp_path, lock, f"{server.url}/simple")
        excerpts = {pin.id: resolver.resolve(pin) for pin in lock.pins}
    assert excerpts["toy.helper"].text == lines_text(TOY_V1, HELPER)
    assert excerpts["toy.two-runs"].blocks == (
        (HELPER[0], lines_text(TOY_V1, HELPER)),
        (TAIL[0], lines_text(TOY_V1, TAIL)),
    )
    assert {e.resolved_from for e in excerpts.values()} == {"pypi:toy-mirror==1.0"}
    # one index query (PEP 691 JSON) and one download serve every excerpt
    assert server.hits == ["/simple/toy-mirror/", "/files/toy_mirror-1.0-py3-none-any.whl"]
    assert server.accepts[0] == SIMPLE_JSON
    assert Store(tmp_path / "cache").get(sha256(WHEEL)) == WHEEL


def test_shifted_sdist_mirror_keeps_upstream_line_numbers(tmp_path: Path) -> None:
    with serve() as server:
        server.routes.update(index_routes(server.url))
        lock = make_lock(tmp_path, SDIST_MIRROR)
        resolver = registry_only(tmp_path, lock, f"{server.url}/simple")
        excerpts = {pin.id: resolver.resolve(pin) for pin in lock.pins}
    two = excerpts["toy.two-runs"]
    assert two.ranges == (HELPER, TAIL)  # upstream numbers, not the mirror's (+2)
    assert two.text == lines_text(TOY_V1, HELPER, TAIL)
    assert two.resolved_from == "pypi:toy_vendor==2.0"
    assert excerpts["toy.render"].label == f"toy.py {RENDER[0]}–{RENDER[1]}"
    assert server.hits[0] == "/simple/toy-vendor/"  # PEP 503 name normalization


def test_a_shift_the_lock_does_not_declare_is_refused(tmp_path: Path) -> None:
    """Lines moved in the lock must be confirmed where they are: a mirror that carries the text
    at other line numbers than it declares does not vouch for it."""
    undeclared = mirror_table(
        "toy_vendor",
        "2.0",
        "toy-vendor-2.0.tar.gz",
        SDIST,
        "toy-vendor-2.0/toy_vendor/toy.py",
        commit=COMMIT,
    )
    with serve() as server:
        server.routes.update(index_routes(server.url))
        lock = make_lock(tmp_path, undeclared)
        with pytest.raises(InputError, match="do not hash to"):
            registry_only(tmp_path, lock, f"{server.url}/simple").resolve(lock.pin("toy.helper"))


def test_first_mirror_without_the_lines_falls_to_the_next(tmp_path: Path) -> None:
    area = (line_of(TOY_V1, "def area"), line_of(TOY_V1, "self.size ** 2"))
    extra = excerpt_table("toy.area", TOY_V1, lines=[list(area)])
    with serve() as server:
        server.routes.update(index_routes(server.url))
        lock = make_lock(tmp_path, SDIST_MIRROR, WHEEL_MIRROR, extra=extra)
        resolver = registry_only(tmp_path, lock, f"{server.url}/simple")
        area_excerpt = resolver.resolve(lock.pin("toy.area"))
    # the vendored copy changed `area`, so only the wheel can confirm it
    assert area_excerpt.resolved_from == "pypi:toy-mirror==1.0"


def test_one_member_listed_at_two_offsets_serves_an_excerpt_across_them(tmp_path: Path) -> None:
    """A copy that moved its runs by different amounts (here +1 above `tail`, +2 from it on) is
    listed once per offset; an excerpt whose runs lie under different entries reads each run at
    its own entry's offset, from one download."""
    split = "# banner\n" + TOY_V1.replace("def tail", "# inserted\ndef tail")
    archive = sdist_bytes({"toy-split-1.0/toy.py": split})
    member = ("toy_split", "1.0", "toy-split-1.0.tar.gz", archive, "toy-split-1.0/toy.py")
    entries = (
        mirror_table(*member, offset=1, lines=[list(HELPER)], commit=COMMIT),
        mirror_table(*member, offset=2, lines=[list(TAIL)], commit=COMMIT),
    )
    with serve() as server:
        server.routes.update(
            {
                "/simple/toy-split/": [
                    Reply(simple_index({"toy-split-1.0.tar.gz": archive}, server.url),
                          content_type=SIMPLE_JSON)
                ],
                "/files/toy-split-1.0.tar.gz": [Reply(archive)],
            }
        )  # fmt: skip
        lock = make_lock(tmp_path, *entries)
        resolver = registry_only(tmp_path, lock, f"{server.url}/simple")
        two = resolver.resolve(lock.pin("toy.two-runs"))
        with pytest.raises(InputError) as caught:  # Widget.render: no entry vouches for it
            resolver.resolve(lock.pin("toy.render"))
    assert two.text == lines_text(TOY_V1, HELPER, TAIL) and two.ranges == (HELPER, TAIL)
    assert two.resolved_from == "pypi:toy_split==1.0"
    assert server.hits == ["/simple/toy-split/", "/files/toy-split-1.0.tar.gz"]
    h, t = (f"{a}–{b}" for a, b in (HELPER, TAIL))
    assert f"carries upstream lines {h} (at +1), {t} (at +2)" in caught.value.problem


def test_warm_cache_needs_no_network(tmp_path: Path) -> None:
    with serve() as server:
        server.routes.update(index_routes(server.url))
        lock = make_lock(tmp_path, WHEEL_MIRROR)
        cold = registry_only(tmp_path, lock, f"{server.url}/simple")
        for pin in lock.pins:
            cold.resolve(pin)
        hits = len(server.hits)
        warm = registry_only(tmp_path, lock, f"{server.url}/simple")
        assert {warm.resolve(pin).resolved_from for pin in lock.pins} == {"cache"}
        assert len(server.hits) == hits


def test_archive_must_match_the_lock_not_only_the_index(tmp_path: Path) -> None:
    forged = wheel_bytes({"toy_mirror/toy.py": TOY_V1 + "# extra\n"})
    with serve() as server:
        server.routes.update(index_routes(server.url))
        # the index lists the forged file's own hash: consistent with itself, not with the lock
        server.routes["/simple/toy-mirror/"] = [
            Reply(simple_index({"toy_mirror-1.0-py3-none-any.whl": forged}, server.url))
        ]
        server.routes["/files/toy_mirror-1.0-py3-none-any.whl"] = [Reply(forged)]
        lock = make_lock(tmp_path, WHEEL_MIRROR)
        with pytest.raises(InputError) as caught:
            registry_only(tmp_path, lock, f"{server.url}/simple").resolve(lock.pin("toy.helper"))
    assert "the index lists sha256" in caught.value.problem
    assert "the lock pins" in caught.value.problem and caught.value.entry == "toy.helper"


def test_downloaded_bytes_must_hash_to_the_lock(tmp_path: Path) -> None:
    forged = wheel_bytes({"toy_mirror/toy.py": TOY_V1 + "# extra\n"})
    with serve() as server:
        server.routes.update(index_routes(server.url))
        server.routes["/files/toy_mirror-1.0-py3-none-any.whl"] = [Reply(forged)]
        lock = make_lock(tmp_path, WHEEL_MIRROR)
        with pytest.raises(InputError, match="downloaded with sha256 .* not used"):
            registry_only(tmp_path, lock, f"{server.url}/simple").resolve(lock.pin("toy.helper"))
    assert Store(tmp_path / "cache").get(sha256(forged)) is None


def test_no_placement_matches(tmp_path: Path) -> None:
    wrong = excerpt_table("toy.wrong", TOY_V1, lines=[list(HELPER)], digest="3" * 64)
    with serve() as server:
        server.routes.update(index_routes(server.url))
        lock = make_lock(tmp_path, WHEEL_MIRROR, extra=wrong)
        with pytest.raises(InputError) as caught:
            registry_only(tmp_path, lock, f"{server.url}/simple").resolve(lock.pin("toy.wrong"))
    error = caught.value
    assert error.entry == "toy.wrong"
    assert f"lines {HELPER[0]}–{HELPER[1]} of toy_mirror/toy.py do not hash to" in error.problem
    assert "[[mirrors]]" in error.fix and "itm pin toy.wrong --replace" in error.fix


def test_index_answers_that_are_not_json_or_miss_the_file(tmp_path: Path) -> None:
    with serve() as server:
        server.routes.update(index_routes(server.url))
        server.routes["/simple/toy-mirror/"] = [Reply(b"<html>simple</html>")]
        unlisted = SDIST_MIRROR.replace("toy-vendor-2.0.tar.gz", "x.tar.gz")
        lock = make_lock(tmp_path, WHEEL_MIRROR, unlisted)
        with pytest.raises(InputError) as caught:
            registry_only(tmp_path, lock, f"{server.url}/simple").resolve(lock.pin("toy.helper"))
    assert "did not answer with PEP 691 JSON" in caught.value.problem
    assert "x.tar.gz is not listed" in caught.value.problem
    with serve() as server:  # nested past json's recursion limit: the same refusal
        server.routes.update(index_routes(server.url))
        server.routes["/simple/toy-mirror/"] = [Reply(b"[" * 100_000)]
        lock = make_lock(tmp_path, WHEEL_MIRROR)
        with pytest.raises(InputError) as caught:
            registry_only(tmp_path, lock, f"{server.url}/simple").resolve(lock.pin("toy.helper"))
    assert "did not answer with PEP 691 JSON" in caught.value.problem


def test_missing_member_is_named(tmp_path: Path) -> None:
    with serve() as server:
        server.routes.update(index_routes(server.url))
        lock = make_lock(tmp_path, WHEEL_MIRROR.replace("toy_mirror/toy.py", "toy_mirror/gone.py"))
        with pytest.raises(InputError, match="has no file 'toy_mirror/gone.py'"):
            registry_only(tmp_path, lock, f"{server.url}/simple").resolve(lock.pin("toy.helper"))


def test_registry_unreachable_is_offline(tmp_path: Path, monkeypatch) -> None:
    settings = Settings.load(tmp_path, env={"ITM_PYPI_SIMPLE": refused_url() + "/simple"})
    lock = make_lock(tmp_path, WHEEL_MIRROR)
    resolver = Resolver.for_settings(lock, settings, sources=("cache", "pypi"), net=FAST)
    with pytest.raises(InputError, match="offline: connection refused"):
        resolver.resolve(lock.pin("toy.helper"))


AREA = (line_of(TOY_V1, "def area"), line_of(TOY_V1, "return self.size ** 2"))


def test_a_symbol_whose_lines_and_hash_were_moved_to_another_function_is_refused(
    tmp_path: Path,
) -> None:
    """`helper` pinned at tail()'s lines with tail()'s sha256: without GitHub, the cache and the
    registry checked only the hash, and the page showed tail() under helper's name."""
    from generator.sources.resolve import location_key

    moved = excerpt_table("toy.helper", TOY_V1, symbol="helper", lines=[list(TAIL)])
    lock = load_lock(write(tmp_path / "lock.toml", repo_table(COMMIT) + WHEEL_MIRROR + moved))
    pin = lock.pin("toy.helper")
    # a cache entry at exactly that location (excerpt entries are unsigned: the hash vouches)
    Store(tmp_path / "cache").put_entry(
        "excerpts", location_key(pin, lock.repos[pin.repo]), lines_text(TOY_V1, TAIL).encode(),
        signed=False,
    )  # fmt: skip
    cached = Resolver(lock, cache_dir=tmp_path / "cache", sources=("cache",))
    with pytest.raises(InputError) as caught:
        cached.resolve(pin)
    assert "the lines define 'tail', not 'helper'" in caught.value.problem
    assert caught.value.entry == "toy.helper" and "--symbol helper" in caught.value.fix
    with serve() as server:
        server.routes.update(index_routes(server.url))
        registry = registry_only(tmp_path / "fresh", lock, f"{server.url}/simple")
        with pytest.raises(InputError) as caught:
            registry.resolve(pin)
    assert "'helper' stands at upstream lines" in caught.value.problem


def test_a_method_moved_within_its_class_is_refused_by_a_mirror_that_has_the_whole_file(
    tmp_path: Path,
) -> None:
    moved = excerpt_table("toy.render", TOY_V1, symbol="Widget.render", lines=[list(AREA)])
    lock = load_lock(write(tmp_path / "lock.toml", repo_table(COMMIT) + WHEEL_MIRROR + moved))
    with serve() as server:
        server.routes.update(index_routes(server.url))
        with pytest.raises(InputError) as caught:
            registry_only(tmp_path, lock, f"{server.url}/simple").resolve(lock.pin("toy.render"))
    assert "'Widget.render' stands at upstream lines" in caught.value.problem


def test_offline_with_an_empty_cache_says_how_the_mirrors_would_fill_it(tmp_path: Path) -> None:
    """A file with [[mirrors]]: offline and nothing cached, the fix names both ways out."""
    lock = make_lock(tmp_path, WHEEL_MIRROR)
    offline = Resolver(lock, cache_dir=tmp_path / "empty", offline=True)
    with pytest.raises(InputError) as caught:
        offline.resolve(lock.pin("toy.helper"))
    assert caught.value.fix.startswith(f"pass --git {REPO}=DIR")
    assert "build once with PyPI reachable" in caught.value.fix


def test_offline_a_mirror_of_another_commit_is_not_offered_as_a_fix(tmp_path: Path) -> None:
    """A [[mirrors]] entry checked at another commit vouches for nothing: reaching PyPI would
    not help, so the fix names only a clone (the lock's other evidence is of the commit)."""
    stale = WHEEL_MIRROR.replace(COMMIT, "ed" * 20)
    other = mirror_table(
        "toy-other", "1.0", "toy_other-1.0-py3-none-any.whl", WHEEL, "toy_mirror/toy.py",
        path="pkg/other.py", commit=COMMIT,
    )  # fmt: skip
    lock = make_lock(tmp_path, stale, other)
    offline = Resolver(lock, cache_dir=tmp_path / "empty", offline=True)
    with pytest.raises(InputError) as caught:
        offline.resolve(lock.pin("toy.helper"))
    assert "do not vouch" in caught.value.problem
    assert caught.value.fix == f"pass --git {REPO}=DIR with a clone that has the commit"


def test_offline_a_mirror_without_the_pinned_lines_is_not_offered_as_a_fix(
    tmp_path: Path,
) -> None:
    """A [[mirrors]] entry of the right commit that vouches only for other lines of the file
    cannot answer this pin: reaching PyPI would not help it either."""
    elsewhere = [[TAIL[0], TAIL[1]]]  # tail()'s lines, not helper()'s
    partial = mirror_table(
        "toy-mirror", "1.0", "toy_mirror-1.0-py3-none-any.whl", WHEEL, "toy_mirror/toy.py",
        lines=elsewhere, commit=COMMIT,
    )  # fmt: skip
    tail = excerpt_table("toy.tail", TOY_V1, lines=[list(TAIL)])
    lock = make_lock(tmp_path, partial, extra=tail)
    offline = Resolver(lock, cache_dir=tmp_path / "empty", offline=True)
    with pytest.raises(InputError) as caught:
        offline.resolve(lock.pin("toy.helper"))
    assert caught.value.fix.startswith(f"pass --git {REPO}=DIR with a clone that has the commit")
    assert "build once with PyPI reachable" not in caught.value.fix
    assert "record a package-registry copy that carries these lines with `itm mirror add" in (
        caught.value.fix
    )  # which finds helper's lines in the archive too
    with pytest.raises(InputError) as caught:  # the pin whose lines it carries: PyPI would do
        offline.resolve(lock.pin("toy.tail"))
    assert "build once with PyPI reachable" in caught.value.fix


def test_offline_a_mirror_already_in_the_cache_is_not_offered_as_a_fix(tmp_path: Path) -> None:
    """The archive that carries the pin's lines is in the cache already, and its lines do not
    hash to the pin: PyPI would send the same bytes (they must hash to the lock's sha256), so
    the fix names only a clone."""
    wrong = excerpt_table("toy.wrong", TOY_V1, lines=[list(HELPER)], digest="0" * 64)
    lock = make_lock(tmp_path, WHEEL_MIRROR, extra=wrong)
    Store(tmp_path / "cache").put(WHEEL)
    offline = Resolver(lock, cache_dir=tmp_path / "cache", offline=True)
    with pytest.raises(InputError) as caught:
        offline.resolve(lock.pin("toy.wrong"))
    assert "do not hash" in caught.value.problem
    assert caught.value.fix == f"pass --git {REPO}=DIR with a clone that has the commit"


def test_offline_a_second_mirror_not_in_the_cache_is_offered_as_a_fix(tmp_path: Path) -> None:
    """Both archives carry the pin's lines; the first is cached (and read), the second is not:
    PyPI may still help with the second. Only the first carrying archive was looked at."""
    wrong = excerpt_table("toy.wrong", TOY_V1, lines=[list(HELPER)], digest="0" * 64)
    lock = make_lock(tmp_path, WHEEL_MIRROR, SDIST_MIRROR, extra=wrong)
    Store(tmp_path / "cache").put(WHEEL)
    offline = Resolver(lock, cache_dir=tmp_path / "cache", offline=True)
    with pytest.raises(InputError) as caught:
        offline.resolve(lock.pin("toy.wrong"))
    assert "build once with PyPI reachable" in caught.value.fix
    Store(tmp_path / "cache").put(SDIST)  # both read now: a clone is the only way left
    with pytest.raises(InputError) as caught:
        offline.resolve(lock.pin("toy.wrong"))
    assert caught.value.fix == f"pass --git {REPO}=DIR with a clone that has the commit"


# ---------------------------------------------------------------- evidence bound to a commit

EDITED = "ed" * 20  # another valid commit id, put in the lock by hand


def test_a_commit_edited_in_the_lock_is_not_vouched_for_by_mirrors_or_the_cache(
    tmp_path: Path,
) -> None:
    """The repo's commit changed by hand, lines and hashes unchanged: the registry copy and the
    cache vouch for the lines at the commit the mirror was checked at, never at another, so the
    page cannot link a commit nothing checked. The error names the repo's entry and the fix."""
    with serve() as server:
        server.routes.update(index_routes(server.url))
        lock = make_lock(tmp_path, WHEEL_MIRROR)
        for pin in lock.pins:  # verified once at the true commit: the archive and lines cached
            registry_only(tmp_path, lock, f"{server.url}/simple").resolve(pin)
    path = tmp_path / "lock.toml"
    text = path.read_text()
    path.write_text(text.replace(repo_table(COMMIT), repo_table(EDITED)))
    edited = load_lock(path)
    offline = Resolver(edited, cache_dir=tmp_path / "cache", offline=True)  # cached archive only
    with pytest.raises(InputError) as caught:
        offline.resolve(edited.pin("toy.helper"))
    error = caught.value
    assert error.file == str(path) and error.entry == f'repos."{REPO}"'
    assert f"nothing vouches for commit {EDITED}" in error.problem
    assert f"checked at {COMMIT[:12]}" in error.problem and "toy.helper" in error.problem
    assert f'restore commit = "{COMMIT}"' in error.fix
    assert f"itm bump {REPO} {EDITED} --git DIR --write" in error.fix


def test_a_mirror_vouches_only_at_its_own_commit(tmp_path: Path) -> None:
    """Two mirrors, one checked at the pinned commit and one at another: only the first is
    used; the other says why it was passed over."""
    stale = SDIST_MIRROR.replace(f'commit = "{COMMIT}"', f'commit = "{EDITED}"')
    area = (line_of(TOY_V1, "def area"), line_of(TOY_V1, "self.size ** 2"))
    with serve() as server:
        server.routes.update(index_routes(server.url))
        lock = make_lock(
            tmp_path,
            stale,
            WHEEL_MIRROR,
            extra=excerpt_table("toy.area", TOY_V1, lines=[list(area)]),
        )
        resolver = registry_only(tmp_path, lock, f"{server.url}/simple")
        assert resolver.resolve(lock.pin("toy.helper")).resolved_from == "pypi:toy-mirror==1.0"
        assert server.count("/simple/toy-vendor/") == 0  # the stale one is not even fetched
        only_stale = make_lock(tmp_path / "b", stale)
        with pytest.raises(InputError) as caught:
            registry_only(tmp_path / "b", only_stale, f"{server.url}/simple").resolve(
                only_stale.pin("toy.helper")
            )
    assert caught.value.entry == f'repos."{REPO}"'
    assert f"checked at {EDITED[:12]} do not vouch for its lines at {COMMIT[:12]}" in (
        caught.value.problem
    )


def test_archives_a_run_will_need_download_at_once(tmp_path: Path) -> None:
    """When the first pin falls through to PyPI, every archive the run's other pins will read
    is fetched at once, a thread each: the two archive downloads here are answered only once
    both have arrived, so fetching them one after the other breaks the gate (and is recorded)."""
    other = "other.py"
    gate = threading.Barrier(2, timeout=60)  # a bound for a failing run, not a wait that passes
    with serve() as server:
        routes = index_routes(server.url)
        for name in ("/files/toy_mirror-1.0-py3-none-any.whl", "/files/toy-vendor-2.0.tar.gz"):
            routes[name] = [Reply(routes[name][0].body, gate=gate)]
        server.routes.update(routes)
        sdist_other = mirror_table(
            "toy_vendor", "2.0", "toy-vendor-2.0.tar.gz", SDIST,
            "toy-vendor-2.0/toy_vendor/toy.py", path=other, offset=2, commit=COMMIT,
        )  # fmt: skip
        extra = excerpt_table("other.helper", TOY_V1, lines=[list(HELPER)], path=other)
        lock = make_lock(tmp_path, WHEEL_MIRROR, sdist_other, extra=extra)
        base, slow_ok = f"{server.url}/simple", NetSettings(timeout=90, retries=0, deadline=90)
        resolver = prefetching(tmp_path, lock, base, slow_ok)
        excerpts = {pin.id: resolver.resolve(pin) for pin in lock.pins}
    assert not [hit for hit in server.hits if hit.startswith("gate broken")]
    assert excerpts["other.helper"].resolved_from == "pypi:toy_vendor==2.0"
    assert excerpts["toy.helper"].resolved_from == "pypi:toy-mirror==1.0"
    assert sorted(hit for hit in server.hits if hit.startswith("/files/")) == [
        "/files/toy-vendor-2.0.tar.gz",
        "/files/toy_mirror-1.0-py3-none-any.whl",
    ]  # each once: the resolution read them from the cache


def test_no_prefetch_when_a_clone_or_github_will_answer(tmp_path: Path) -> None:
    """Prefetching is for runs that will read PyPI: with GitHub among the sources and not found
    down, nothing is downloaded ahead (a reachable GitHub answers every pin)."""
    with serve() as server:
        server.routes.update(index_routes(server.url))
        lock = make_lock(tmp_path, WHEEL_MIRROR)
        resolver = prefetching(
            tmp_path,
            lock,
            f"{server.url}/simple",
            FAST,
            sources=("cache", "forge", "pypi"),
            github_base=f"{server.url}/raw",
        )
        resolver.prefetch_archives()
    assert server.hits == []


def test_prefetch_fetches_only_the_archive_the_resolution_reads(tmp_path: Path) -> None:
    """An archive listed first that does not carry the pin's lines is not fetched ahead, so its
    host failing cannot stop the archive that does carry them (nor a build that passed before)."""
    tail_only = mirror_table(
        "toy_vendor", "2.0", "toy-vendor-2.0.tar.gz", SDIST,
        "toy-vendor-2.0/toy_vendor/toy.py", offset=2, lines=[list(TAIL)], commit=COMMIT,
    )  # fmt: skip
    with serve() as server:
        routes = index_routes(server.url)
        routes["/files/toy-vendor-2.0.tar.gz"] = [Reply(status=503)]
        server.routes.update(routes)
        text = repo_table(COMMIT) + tail_only + WHEEL_MIRROR
        lock = load_lock(
            write(tmp_path / "lock.toml", text + excerpt_table("toy.helper", TOY_V1,
                                                               lines=[list(HELPER)]))
        )  # fmt: skip
        resolver = prefetching(tmp_path, lock, f"{server.url}/simple", ONE_TRY)
        excerpt = resolver.resolve(lock.pin("toy.helper"))
    assert excerpt.resolved_from == "pypi:toy-mirror==1.0"
    assert "/files/toy-vendor-2.0.tar.gz" not in server.hits


def test_a_failed_prefetch_is_met_again_by_the_resolution(tmp_path: Path) -> None:
    """A download that fails ahead (HTTP 503) leaves its host usable: the resolution asks again
    (and, had it failed too, would report its own error, for the pin that needs the archive)."""
    with serve() as server:
        routes = index_routes(server.url)
        wheel = "/files/toy_mirror-1.0-py3-none-any.whl"
        routes[wheel] = [Reply(status=503), Reply(WHEEL)]  # fails once, then answers
        server.routes.update(routes)
        lock = make_lock(tmp_path, WHEEL_MIRROR)
        resolver = prefetching(tmp_path, lock, f"{server.url}/simple", ONE_TRY)
        excerpt = resolver.resolve(lock.pin("toy.helper"))
    assert excerpt.resolved_from == "pypi:toy-mirror==1.0"
    assert server.count(wheel) == 2  # ahead (503), then by the resolution
