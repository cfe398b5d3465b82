"""The content-addressed cache: corruption detected and replaced, interrupted writes leave no
partial file, and two processes writing the same entry at once both succeed."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.sources.lock import load_lock
from generator.sources.resolve import Resolver, location_key
from generator.store import Store
from tests.sources_helpers import (
    PATH,
    REPO,
    TOY_V1,
    excerpt_table,
    isolated_env,
    line_of,
    lines_text,
    make_upstream,
    repo_table,
    sha256,
    write,
)

pytestmark = pytest.mark.usefixtures(isolated_env.__name__)

HELPER = (line_of(TOY_V1, "def helper"), line_of(TOY_V1, "return x * SCALE"))


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_round_trip_and_layout(tmp_path: Path) -> None:
    cache = Store(tmp_path)
    digest = cache.put(b"hello\n")
    assert digest == sha256(b"hello\n")
    assert cache.get(digest) == b"hello\n"
    assert files_under(tmp_path) == [tmp_path / "sha256" / digest[:2] / digest]
    assert cache.get(sha256(b"absent")) is None


def test_corrupted_entry_is_detected_and_replaced(tmp_path: Path, caplog) -> None:
    upstream = tmp_path / "upstream"
    commit = make_upstream(upstream, {PATH: TOY_V1})
    entry = excerpt_table("toy.helper", TOY_V1, lines=[list(HELPER)])
    lock = load_lock(write(tmp_path / "lock.toml", repo_table(commit) + entry))

    def resolver() -> Resolver:
        return Resolver(lock, cache_dir=tmp_path / "cache", offline=True, git_dirs={REPO: upstream})

    pin = lock.pins[0]
    assert resolver().resolve(pin).resolved_from.startswith("git:")
    entry = Store(tmp_path / "cache").entry_path("excerpts", location_key(pin, lock.repos[REPO]))
    assert entry.read_bytes().endswith(lines_text(TOY_V1, HELPER).encode())
    assert resolver().resolve(pin).resolved_from == "cache"

    entry.write_bytes(entry.read_bytes().replace(b"SCALE", b"SCALF"))  # bit rot
    again = resolver().resolve(pin)
    assert again.resolved_from.startswith("git:")  # the bad entry was not used
    assert again.text == lines_text(TOY_V1, HELPER)
    assert any("discarded" in r.getMessage() for r in caplog.records)
    assert entry.read_bytes().endswith(lines_text(TOY_V1, HELPER).encode())  # and was replaced


def test_interrupted_write_leaves_no_partial_file(tmp_path: Path, monkeypatch) -> None:
    cache = Store(tmp_path)
    data = b"x" * 100_000

    def power_cut(src: str, dst: str) -> None:
        raise KeyboardInterrupt  # the process stops after writing, before the rename

    monkeypatch.setattr(os, "replace", power_cut)
    with pytest.raises(KeyboardInterrupt):
        cache.put(data)
    monkeypatch.undo()
    assert not cache.path_for(sha256(data)).exists()
    assert files_under(tmp_path) == []  # the temp file is gone too

    def rename_fails(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", rename_fails)
    cache.put(data)  # a cache that cannot be written is warned about; the build goes on
    monkeypatch.undo()
    assert files_under(tmp_path) == []


def test_a_stray_temp_file_is_not_an_entry(tmp_path: Path) -> None:
    cache = Store(tmp_path)
    data = b"payload\n"
    digest = sha256(data)
    stray = cache.path_for(digest).with_name(f".{digest[:12]}.abc.tmp")  # left by a killed build
    stray.parent.mkdir(parents=True)
    stray.write_bytes(data[:3])
    assert cache.get(digest) is None
    cache.put(data)
    assert cache.get(digest) == data


def _writer(root: str, data: bytes, rounds: int, barrier) -> None:
    cache = Store(Path(root))
    barrier.wait()
    for _ in range(rounds):
        cache.put(data)


def _reader(root: str, digest: str, rounds: int, barrier, corrupt_seen) -> None:
    cache = Store(Path(root))
    cache.discard = lambda path, why: corrupt_seen.put(why)  # type: ignore[method-assign]
    barrier.wait()
    for _ in range(rounds):
        cache.get(digest)


def test_two_processes_write_the_same_entry_at_once(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    data = os.urandom(2_000_000)
    digest = sha256(data)
    barrier = context.Barrier(3)
    corrupt_seen = context.Queue()
    processes = [
        context.Process(target=_writer, args=(str(tmp_path), data, 15, barrier)),
        context.Process(target=_writer, args=(str(tmp_path), data, 15, barrier)),
        context.Process(target=_reader, args=(str(tmp_path), digest, 200, barrier, corrupt_seen)),
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
    assert [p.exitcode for p in processes] == [0, 0, 0]
    assert corrupt_seen.empty()  # the reader never saw a partial entry
    assert Store(tmp_path).get(digest) == data
    assert files_under(tmp_path) == [Store(tmp_path).path_for(digest)]


def reheaded(entry: bytes, **changes: object) -> bytes:
    """The entry with its header's fields changed (a field set to None is left out)."""
    from generator.store import HEADER

    head, payload = entry.split(b"\n", 1)
    fields = {**json.loads(head.removeprefix(HEADER)), **changes}
    fields = {name: value for name, value in fields.items() if value is not None}
    return HEADER + json.dumps(fields).encode() + b"\n" + payload


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda entry: entry[:11], "it is truncated: its 11 bytes end within its header line"),
        (lambda entry: entry[:-10], "it is truncated: 990 bytes of payload, its header says 1,000"),
        (lambda entry: entry + b"xx", "it has 1,002 bytes of payload, its header says 1,000"),
        (lambda entry: b"", "it is empty"),
        (
            lambda entry: b"itm-store/1 " + entry.split(b" ", 1)[1],
            "written by another version of the generator (itm-store/1)",
        ),
        (lambda entry: reheaded(entry, kind="figure"), "its header names another kind"),
        (lambda entry: reheaded(entry, key="b" * 64), "its header names another key"),
        (lambda entry: entry[:-1] + b"y", "its payload does not hash to the sha256 its header"),
        (lambda entry: reheaded(entry, size="1000"), "its header states no size"),
        (lambda entry: reheaded(entry, sha256=None), 'its header lacks "sha256"'),
        (lambda entry: reheaded(entry, note="\n"), 'its header has fields it should not: "note"'),
        (lambda entry: reheaded(entry, mac=None), "not signed with cache.key"),
        (lambda entry: reheaded(entry, mac="0" * 64), "not signed with cache.key"),
        (lambda entry: reheaded(entry, mac="\u00e9" * 64), "not signed with cache.key"),
        (lambda entry: reheaded(entry, mac="\ud800"), "not signed with cache.key"),
        (lambda entry: entry.replace(b'"kind":', b'"kind";', 1), "its header is not JSON"),
        (lambda entry: b"itm-store/2 " + b"[" * 1000 + b"\n", "its header is not JSON"),
        (lambda entry: b"itm-store/2 []\n" + entry, "its header is not a JSON object"),
        (lambda entry: b"<svg>\n" + entry, "its first line is not an itm-store/2 header"),
    ],
)
def test_a_damaged_entry_is_discarded_saying_what_is_wrong(
    tmp_path: Path, caplog, damage, said: str
) -> None:
    """A truncated font entry was discarded as "written by an older version of the generator":
    the one-line warning says what is wrong with it, whatever its kind."""
    cache = Store(tmp_path / "cache")
    cache.put_entry("font", "a" * 64, b"x" * 1000)
    path = cache.entry_path("font", "a" * 64)
    signature = json.loads(path.read_bytes().split(b" ", 1)[1].split(b"\n")[0])["mac"]
    path.write_bytes(damage(path.read_bytes()))
    assert cache.get_entry("font", "a" * 64) is None
    assert not path.exists()
    (warning,) = [r.getMessage() for r in caplog.records if "discarded" in r.getMessage()]
    assert said in warning
    assert warning.endswith("; rebuilding it") and "\n" not in warning
    for secret in (cache.key_path.read_bytes().hex(), signature):  # never the key material
        assert secret not in warning


@pytest.mark.parametrize(
    ("damage", "said"),
    [(lambda data: b"", "it is empty"), (lambda data: data[:-1], "no longer hash to its name")],
)
def test_a_damaged_blob_is_discarded_saying_what_is_wrong(
    tmp_path: Path, caplog, damage, said: str
) -> None:
    """A blob has no header: an empty one says so; a cut or changed one no longer hashes."""
    cache = Store(tmp_path / "cache")
    data = b"archive bytes" * 100
    cache.put(data)
    path = cache.path_for(sha256(data))
    path.write_bytes(damage(path.read_bytes()))
    assert cache.get(sha256(data)) is None
    assert not path.exists()
    (warning,) = [r.getMessage() for r in caplog.records if "discarded" in r.getMessage()]
    assert said in warning and "\n" not in warning


def test_a_forged_entry_is_refused_though_its_header_matches_its_bytes(tmp_path, caplog) -> None:
    """Recomputing a keyed entry's header (size, sha256) is easy; its signature needs the key
    beside the cache folder, so a forged figure or hash memo is discarded, never returned."""
    import json

    from generator.store import HEADER, key_of

    store, key = Store(tmp_path / "cache"), key_of("figure", 1)
    store.put_entry("figure", key, b"<svg>honest</svg>")
    assert store.get_entry("figure", key) == b"<svg>honest</svg>"
    assert store.key_path == tmp_path / "cache.key"  # beside the cache, never inside it
    assert store.key_path.stat().st_mode & 0o077 == 0
    payload = b"<svg><script>alert(1)</script></svg>"
    entry = store.entry_path("figure", key)
    old = json.loads(entry.read_bytes().split(b"\n", 1)[0].removeprefix(HEADER))
    for mac in (None, old["mac"], "0" * 64):
        fields = {"kind": "figure", "key": key, "size": len(payload), "sha256": sha256(payload)}
        if mac is not None:
            fields["mac"] = mac
        entry.write_bytes(HEADER + json.dumps(fields, sort_keys=True).encode() + b"\n" + payload)
        assert Store(tmp_path / "cache").get_entry("figure", key) is None, mac
        assert not entry.exists()
    assert any("discarded" in r.getMessage() for r in caplog.records)


def test_a_cache_restored_without_its_key_serves_only_what_the_lock_can_check(
    tmp_path: Path, caplog
) -> None:
    """A cache folder copied elsewhere (a CI cache, a tarball) arrives without CACHE.key: its
    derived entries are rebuilt (one warning per kind), its excerpts, checked against the lock's
    sha256 on every read, are still served."""
    import shutil

    from generator.store import key_of

    here = Store(tmp_path / "here" / "cache")
    for n in range(3):
        here.put_entry("figure", key_of(n), b"svg %d" % n)
    here.put_entry("excerpts", key_of("x"), b"lines\n", signed=False)
    shutil.copytree(here.root, tmp_path / "there" / "cache")
    there = Store(tmp_path / "there" / "cache")
    caplog.clear()
    assert [there.get_entry("figure", key_of(n)) for n in range(3)] == [None] * 3
    assert there.get_entry("excerpts", key_of("x"), signed=False) == b"lines\n"
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "not signed" in warnings[0].getMessage()
    there.put_entry("figure", key_of(0), b"svg 0")
    assert Store(there.root).get_entry("figure", key_of(0)) == b"svg 0"


def test_the_cache_keeps_what_the_last_builds_used_and_prunes_the_rest(tmp_path: Path) -> None:
    """Memo entries were never pruned: the cache grew with every fingerprint. An entry a build
    reads or writes is marked used; after BUILDS_KEPT builds, what none of them used goes, but
    never a pinned archive or a verified excerpt (an offline build needs those)."""

    from generator.store import BUILDS_KEPT

    store = Store(tmp_path)
    keys = {name: sha256(name) for name in ("stale", "used", "excerpt")}
    store.put_entry("figure", keys["stale"], b"<svg>old</svg>")
    store.put_entry("figure", keys["used"], b"<svg>recent</svg>")
    store.put_entry("excerpts", keys["excerpt"], b"def f(): pass\n", signed=False)
    archive, memo_blob = store.put(b"a pinned wheel"), store.put(b"a filled page")
    paths = [store.entry_path("figure", k) for k in (keys["stale"], keys["used"])]
    paths += [store.entry_path("excerpts", keys["excerpt"]), store.path_for(archive)]
    paths.append(store.path_for(memo_blob))
    for path in paths:
        os.utime(path, (1000, 1000))  # all last used long ago
    for started in range(2000, 2000 + BUILDS_KEPT - 1):  # fewer builds than kept: nothing goes
        assert store.prune(started, keep={archive}) == 0
    assert store.get_entry("figure", keys["used"]) == b"<svg>recent</svg>"  # this build uses it
    stale_bytes = paths[0].stat().st_size + store.path_for(memo_blob).stat().st_size
    assert store.prune(3000, keep={archive}) == stale_bytes
    assert not paths[0].exists() and not store.path_for(memo_blob).exists()
    assert store.get_entry("figure", keys["used"]) == b"<svg>recent</svg>"
    assert store.get(archive) == b"a pinned wheel"
    assert store.get_entry("excerpts", keys["excerpt"], signed=False) == b"def f(): pass\n"


def test_a_damaged_build_record_only_delays_pruning(tmp_path: Path) -> None:
    """builds.json nested deeper than json can parse (2,000 "[") stopped the build with a
    RecursionError; 100,000 of them were refused by size alone."""
    store = Store(tmp_path)
    for junk in (b"not json", b'{"a": 1}', b'[1e999, "x", true]', b"[" * 2000, b"[" * 100000):
        (tmp_path / "builds.json").write_bytes(junk)
        assert store.prune(5000.0, keep=set()) == 0
        assert json.loads((tmp_path / "builds.json").read_text()) == [5000.0]


# -- bounded reads (issue 35): a 3 GB file in the cache OOM-killed every build until cleared ------
HUGE = 3 << 30  # 3 GB, made sparse with truncate: no disk used
# Reads the entries given as {kind: key} from the cache given, in a process that cannot take
# 512 MB: a store that reads a 3 GB file whole stops with MemoryError instead of eating the
# machine. Prints {kind: what the read returned was None}.
CAPPED_READS = """
import json, logging, resource, sys, time
from pathlib import Path

resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))
logging.basicConfig(level=logging.WARNING, format="%(message)s")
from generator.store import BLOBS, Store

store, keys = Store(Path(sys.argv[1])), json.loads(sys.argv[2])
found = {
    kind: store.get(key) if kind == BLOBS else store.get_entry(kind, key, signed=kind != "excerpts")
    for kind, key in keys.items()
}
store.prune(time.time(), keep=set())  # reads builds.json
store.put_entry("figure", "ab" * 32, b"<svg/>")  # reads CACHE.key
print(json.dumps({kind: value is None for kind, value in found.items()}))
"""


def capped_reads(root: Path, keys: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CAPPED_READS, str(root), json.dumps(keys)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_huge_file_in_the_cache_is_discarded_unread_whatever_its_kind(tmp_path: Path) -> None:
    """Every kind of entry, the blobs and builds.json grown to 3 GB (one memo entry did it): each
    is refused by its size before a byte is read, discarded with a warning and rebuilt."""
    from generator.store import BLOBS, BUILDS_FILE, MAX_BYTES

    store, keys = Store(tmp_path / "cache"), {}
    for kind in MAX_BYTES:
        keys[kind] = store.put(b"a blob") if kind == BLOBS else sha256(kind)
        if kind != BLOBS:
            store.put_entry(kind, keys[kind], b"payload", signed=kind != "excerpts")
    paths = {
        k: store.path_for(v) if k == BLOBS else store.entry_path(k, v) for k, v in keys.items()
    }
    for path in [*paths.values(), store.root / BUILDS_FILE]:
        path.touch()
        os.truncate(path, HUGE)
    done = capped_reads(store.root, keys)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == dict.fromkeys(MAX_BYTES, True)
    for kind, path in paths.items():
        assert f"{path} discarded (larger than" in done.stderr, kind
        assert not path.exists(), kind
    assert (store.root / BUILDS_FILE).stat().st_size < 100  # rewritten
    store.put_entry("memo_page", keys["memo_page"], b"{}")
    assert store.get_entry("memo_page", keys["memo_page"]) == b"{}"  # rebuilt


@pytest.mark.parametrize("damage", ["huge", "fifo", "empty"])
def test_a_key_file_that_cannot_be_a_key_is_replaced(tmp_path: Path, damage: str) -> None:
    """CACHE.key is read as a regular file of exactly 32 bytes: a 3 GB one was read whole (out
    of memory), a FIFO left every build on a key of its own (nothing cached survived it), and an
    empty one was never replaced."""
    store = Store(tmp_path / "cache")
    if damage == "fifo":
        os.mkfifo(store.key_path)
    else:
        store.key_path.touch()
        os.truncate(store.key_path, HUGE if damage == "huge" else 0)
    done = capped_reads(store.root, {})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "is not a cache key; making a new one" in done.stderr
    assert store.key_path.is_file() and store.key_path.stat().st_size == 32
    assert Store(store.root).get_entry("figure", "ab" * 32) == b"<svg/>"  # signed with it
