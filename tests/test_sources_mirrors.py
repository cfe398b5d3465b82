"""`itm mirror add PACKAGE==VERSION` against a PEP 691 index on 127.0.0.1: a writer who reaches
neither the repository nor a clone pins from a release's archive, and the command finds where
each pin's lines stand in it and records the [[mirrors]] entries a build reads them through.

Before, a pin made with --trusted-file needed a [[mirrors]] entry written by hand (member,
offset, windows, the archive's sha256); without one the next build failed, and `verify
--offline` said only "pass --git ... with a clone"."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import main
from generator.sources.lock import load_lock
from generator.sources.pypi import SIMPLE_JSON
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
    make_upstream,
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
HELPER = (line_of(TOY_V1, "def helper"), line_of(TOY_V1, "return x * SCALE"))
TAIL = (line_of(TOY_V1, "def tail"), line_of(TOY_V1, 'return "end"'))
OUTER = (line_of(TOY_V1, "def outer"), line_of(TOY_V1, "return inner(n)"))

# A vendored copy: a two-line banner on top (every line 2 lower), and three lines added before
# tail() (tail 5 lower), area() edited.
BANNER = "# vendored copy\n# do not edit\n"
VENDORED = BANNER + TOY_V1.replace("def tail", "# added\n# here\n# too\ndef tail").replace(
    "self.size ** 2", "self.size ** 3"
)
SDIST = sdist_bytes(
    {
        "toy-vendor-2.0/toy_vendor/toy.py": VENDORED,
        "toy-vendor-2.0/docs/toy.py": "# a file of the same name that holds nothing pinned\n",
    }
)
WHEEL = wheel_bytes({"toy_vendor/toy.py": TOY_V1})
# Releases for a window: 1.0 and 1.1 carry helper's lines, 1.2 changed them, 2.0 is the above.
OLD = {v: sdist_bytes({f"toy-vendor-{v}/toy_vendor/toy.py": TOY_V1}) for v in ("1.0", "1.1")}
CHANGED = sdist_bytes({"toy-vendor-1.2/toy_vendor/toy.py": TOY_V1.replace("x * SCALE", "x")})
ARCHIVES = {
    "toy-vendor-1.0.tar.gz": OLD["1.0"],
    "toy-vendor-1.1.tar.gz": OLD["1.1"],
    "toy-vendor-1.2.tar.gz": CHANGED,
    "toy-vendor-2.0.tar.gz": SDIST,
    "toy_vendor-2.0-py3-none-any.whl": WHEEL,
    "toy-vendor-3.0.tar.gz": b"not a tarball",
}


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch):
    """The index, its URL in ITM_PYPI_SIMPLE (the settings every command reads)."""
    with serve(FakeServer()) as server:
        server.routes["/simple/toy-vendor/"] = [
            Reply(simple_index(ARCHIVES, server.url), content_type=SIMPLE_JSON)
        ]
        for name, data in ARCHIVES.items():
            server.routes[f"/files/{name}"] = [Reply(data)]
        monkeypatch.setenv("ITM_PYPI_SIMPLE", f"{server.url}/simple")
        monkeypatch.setenv("ITM_GITHUB_RAW", refused_url())  # no real network, ever
        yield server


def make_lock(tmp_path: Path, *entries: str) -> Path:
    return write(tmp_path / "lock.toml", repo_table(COMMIT) + "".join(entries))


def pin_from_archive(tmp_path: Path, lock: Path, pin_id: str, lines: tuple[int, int]) -> None:
    """What a writer does with no clone: pin lines of the file as the release carries it."""
    trusted = write(tmp_path / "toy.py", TOY_V1)
    args = ["pin", pin_id, "--lock", str(lock), "--repo", REPO, "--path", PATH, "--lines"]
    evidence = ["--evidence", "the file of toy_vendor 2.0's wheel"]
    level = ["--evidence-level", "mirror-window", "--trusted-file", str(trusted), "--offline"]
    assert main([*args, f"{lines[0]}-{lines[1]}", *evidence, *level]) == 0


def test_a_pin_from_an_archive_is_read_again_through_the_mirror_it_records(
    tmp_path: Path, index, capsys
) -> None:
    lock = make_lock(tmp_path)
    pin_from_archive(tmp_path, lock, "toy.helper", HELPER)
    capsys.readouterr()
    # nothing reads these lines again yet: the fix says how to record a copy that carries them
    assert main(["verify", "--offline", "--lock", str(lock)]) == 1
    out = capsys.readouterr().out
    assert "fix: pass --git toy/upstream=DIR with a clone that has the commit, or record a" in out
    assert "`itm mirror add PACKAGE==VERSION`" in out

    assert main(["mirror", "add", "toy-vendor==2.0", "--lock", str(lock)]) == 0
    out = capsys.readouterr().out
    assert f"toy-vendor-2.0.tar.gz (sha256 {sha256(SDIST)[:12]}…)" in out
    assert "carried   toy.helper" in out and "toy-vendor-2.0/toy_vendor/toy.py: 9–10 at +2" in out
    (mirror,) = load_lock(lock).mirrors
    assert (mirror.package, mirror.version, mirror.filename) == (
        "toy-vendor", "2.0", "toy-vendor-2.0.tar.gz"
    )  # fmt: skip
    assert (mirror.sha256, mirror.member) == (sha256(SDIST), "toy-vendor-2.0/toy_vendor/toy.py")
    assert (mirror.lines, mirror.offset, mirror.commit) == ((HELPER,), 2, COMMIT)
    assert "[[mirrors]]" in lock.read_text() and "offset = 2" in lock.read_text()

    assert main(["verify", "--offline", "--lock", str(lock)]) == 0  # the archive is cached
    assert "1 of 1 excerpts verified" in capsys.readouterr().out
    assert main(["verify", "--lock", str(lock), "--cache-dir", str(tmp_path / "fresh")]) == 0
    assert "from pypi:toy-vendor==2.0" in capsys.readouterr().out  # as a new machine reads it


def test_each_run_of_a_pin_is_placed_by_its_own_offset(
    tmp_path: Path, index, capsys, isolated_env: Path
) -> None:
    """With the pin's text at hand (cached by `itm pin` from a clone, here written for it), each
    run is found where it moved: helper 2 lower, tail 5 lower; two entries, one per offset."""
    text = lines_text(TOY_V1, HELPER, TAIL)
    lock = make_lock(tmp_path, excerpt_table("toy.two", TOY_V1, lines=[list(HELPER), list(TAIL)]))
    loaded = load_lock(lock)
    Resolver(loaded, cache_dir=isolated_env).remember(loaded.pin("toy.two"), text)
    assert main(["mirror", "add", "toy-vendor==2.0", "--lock", str(lock)]) == 0
    out = capsys.readouterr().out
    assert f"{HELPER[0]}–{HELPER[1]} at +2, {TAIL[0]}–{TAIL[1]} at +5" in out
    mirrors = sorted(load_lock(lock).mirrors, key=lambda m: m.offset)
    assert [(m.lines, m.offset) for m in mirrors] == [((HELPER,), 2), ((TAIL,), 5)]


def test_touching_ranges_of_two_pins_make_one_window(tmp_path: Path, index, capsys) -> None:
    first, last = OUTER
    lock = make_lock(
        tmp_path,
        excerpt_table("toy.head", TOY_V1, lines=[[first, first + 1]]),
        excerpt_table("toy.rest", TOY_V1, lines=[[first + 2, last]]),
    )
    assert main(["mirror", "add", "toy-vendor==2.0", "--lock", str(lock)]) == 0
    (mirror,) = load_lock(lock).mirrors
    assert (mirror.lines, mirror.offset) == ((OUTER,), 2)


def test_a_pin_the_archive_does_not_carry_is_reported_and_nothing_written(
    tmp_path: Path, index, capsys
) -> None:
    area = (line_of(TOY_V1, "def area"), line_of(TOY_V1, "self.size ** 2"))
    lock = make_lock(tmp_path, excerpt_table("toy.area", TOY_V1, lines=[list(area)]))
    before = lock.read_text()
    assert main(["mirror", "add", "toy-vendor==2.0", "--lock", str(lock)]) == 1
    out = capsys.readouterr().out
    assert "not found toy.area" in out and "carries none of these pins' lines" in out
    assert lock.read_text() == before


def test_another_archive_of_the_release_and_a_second_run(tmp_path: Path, index, capsys) -> None:
    """--filename reads the wheel; running again replaces that archive's entries, never adds
    duplicates (the lock refuses a member listed twice at one offset)."""
    lock = make_lock(tmp_path, excerpt_table("toy.helper", TOY_V1, lines=[list(HELPER)]))
    add = ["mirror", "add", "toy-vendor==2.0", "--lock", str(lock)]
    wheel = [*add, "--filename", "toy_vendor-2.0-py3-none-any.whl"]
    assert main(wheel) == 0 and main(wheel) == 0 and main(add) == 0
    members = sorted((m.filename, m.member, m.offset) for m in load_lock(lock).mirrors)
    assert members == [
        ("toy-vendor-2.0.tar.gz", "toy-vendor-2.0/toy_vendor/toy.py", 2),
        ("toy_vendor-2.0-py3-none-any.whl", "toy_vendor/toy.py", 0),
    ]


def test_the_window_reports_which_releases_carry_each_pin(tmp_path: Path, index, capsys) -> None:
    lock = make_lock(
        tmp_path,
        excerpt_table("toy.helper", TOY_V1, lines=[list(HELPER)]),
        excerpt_table("toy.tail", TOY_V1, lines=[list(TAIL)]),
    )
    args = ["mirror", "add", "toy-vendor==2.0", "--lock", str(lock), "--window", "1.0..2.0"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "window toy-vendor 1.0..2.0: 4 releases" in out
    assert "toy.helper                       carried by 1.0, 1.1, 2.0; not by 1.2" in out
    assert "toy.tail                         carried by 1.0, 1.1, 1.2, 2.0" in out
    assert len(load_lock(lock).mirrors) == 2  # the window only reports: 2.0's two entries


@pytest.mark.parametrize(
    ("args", "problem", "fix"),
    [
        (["toy-vendor"], "cannot read 'toy-vendor' as PACKAGE==VERSION", "name one release"),
        (
            ["toy-vendor==9.9"],
            "the index lists no archive of toy-vendor==9.9",
            "1.0, 1.1, 1.2, 2.0",
        ),
        (["toy-vendor==2.0", "--window", "2.0..1.0"], "cannot read the window", "older first"),
        (
            ["toy-vendor==2.0", "--filename", "x.zip"],
            "lists no x.zip of toy-vendor==2.0",
            "archives",
        ),
        (
            ["toy-vendor==3.0"],
            "cannot download toy-vendor-3.0.tar.gz: toy-vendor-3.0.tar.gz is not a readable",
            "--filename",
        ),
    ],
)
def test_a_bad_request_is_a_clear_error(tmp_path, index, capsys, args, problem, fix) -> None:
    lock = make_lock(tmp_path, excerpt_table("toy.helper", TOY_V1, lines=[list(HELPER)]))
    assert main(["mirror", "add", *args, "--lock", str(lock)]) == 2
    err = capsys.readouterr().err
    assert problem in err and "fix:" in err and fix in err.split("fix:")[1], err
    assert "Traceback" not in err


def test_a_clone_gives_the_pins_text_and_a_missing_one_is_refused(
    tmp_path: Path, index, capsys
) -> None:
    """With the text from a clone (not cached) each run is placed on its own, as from the cache;
    a --git that names no clone is refused before anything is fetched."""
    upstream = tmp_path / "upstream"
    commit = make_upstream(upstream, {PATH: TOY_V1})
    two = excerpt_table("toy.two", TOY_V1, lines=[list(HELPER), list(TAIL)])
    lock = write(tmp_path / "lock.toml", repo_table(commit) + two)
    add = ["mirror", "add", "toy-vendor==2.0", "--lock", str(lock)]
    assert main([*add, "--git", str(tmp_path / "nowhere")]) == 2
    assert "--git names" in capsys.readouterr().err and not load_lock(lock).mirrors
    assert main([*add, "--git", str(upstream)]) == 0
    assert sorted((m.lines, m.offset) for m in load_lock(lock).mirrors) == [
        ((HELPER,), 2),
        ((TAIL,), 5),
    ]
