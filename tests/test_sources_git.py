"""Resolution from a local git checkout (at the commit, never the working tree), symbol anchors,
`itm verify`, `itm pin` and `itm bump` against a made-up upstream repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.cli import main
from generator.errors import InputError
from generator.settings import Settings
from generator.sources.lock import load_lock
from generator.sources.resolve import Resolver, resolve_all
from tests.sources_helpers import (
    PATH,
    REPO,
    TOY_V1,
    TOY_V2,
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


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, str]:
    directory = tmp_path / "upstream"
    return directory, make_upstream(directory, {PATH: TOY_V1})


def lock_file(tmp_path: Path, commit: str, *excerpts: str) -> Path:
    return write(tmp_path / "sources" / "lock.toml", repo_table(commit) + "".join(excerpts))


def symbol_lines(text: str, first: str, last: str) -> list[list[int]]:
    return [[line_of(text, first), line_of(text, last)]]


RENDER = ("@staticmethod", "return helper(x) + 1")
HELPER = symbol_lines(TOY_V1, "def helper", "return x * SCALE")  # [[first, last]]
TOTAL = len(TOY_V1.splitlines())


def test_git_reads_the_commit_not_the_working_tree(tmp_path: Path, upstream) -> None:
    directory, commit = upstream
    lines = symbol_lines(TOY_V1, *RENDER)
    lock = load_lock(lock_file(tmp_path, commit, excerpt_table("toy.render", TOY_V1, lines=lines)))
    (directory / PATH).write_text(TOY_V1.replace("helper(x) + 1", "helper(x) + 2"))  # uncommitted
    excerpts = resolve_all(
        lock, cache_dir=tmp_path / "cache", offline=True, git_dirs={REPO: directory}
    )
    excerpt = excerpts["toy.render"]
    assert excerpt.text == lines_text(TOY_V1, tuple(lines[0]))
    assert "helper(x) + 1" in excerpt.text
    assert excerpt.resolved_from == f"git:{directory}"


def test_symbol_only_pin_resolves_its_lines_through_ast(tmp_path: Path, upstream) -> None:
    directory, commit = upstream
    first, last = line_of(TOY_V1, "def inner"), line_of(TOY_V1, "return k + n")
    digest = sha256(lines_text(TOY_V1, (first, last)))
    entry = excerpt_table("toy.inner", TOY_V1, symbol="outer.inner", digest=digest)
    lock = load_lock(lock_file(tmp_path, commit, entry))
    assert lock.pins[0].ranges == ()
    excerpt = Resolver(lock, cache_dir=tmp_path / "c", offline=True, git_dirs={REPO: directory})
    resolved = excerpt.resolve(lock.pins[0])
    assert resolved.ranges == ((first, last),)
    assert resolved.label == f"toy.py {first}–{last}"


def test_git_checkout_from_the_environment(tmp_path: Path, upstream, monkeypatch) -> None:
    directory, commit = upstream
    env = {"ITM_GIT_DIRS": f"{REPO}={directory}", "ITM_OFFLINE": "yes"}
    settings = Settings.load(tmp_path, env=env)
    lock = load_lock(lock_file(tmp_path, commit, excerpt_table("t", TOY_V1, lines=HELPER)))
    resolver = Resolver.for_settings(lock, settings)
    assert resolver.resolve(lock.pins[0]).resolved_from == f"git:{directory}"


def test_a_hash_mismatch_at_the_commit_is_final(tmp_path: Path, upstream) -> None:
    directory, commit = upstream
    entry = excerpt_table("toy.helper", TOY_V1, lines=HELPER, digest="0" * 64)
    lock = load_lock(lock_file(tmp_path, commit, entry))
    with pytest.raises(InputError) as caught:
        resolve_all(lock, cache_dir=tmp_path / "c", offline=True, git_dirs={REPO: directory})
    error = caught.value
    assert error.entry == "toy.helper" and "hash mismatch" in error.problem
    assert error.file.endswith("lock.toml") and "itm pin toy.helper --replace" in error.fix


def test_symbol_and_recorded_lines_must_agree(tmp_path: Path, upstream) -> None:
    directory, commit = upstream
    first, last = symbol_lines(TOY_V1, "def area", "self.size ** 2")[0]
    wrong = [[first - 1, last - 1]]
    entry = excerpt_table("toy.area", TOY_V1, symbol="Widget.area", lines=wrong)
    lock = load_lock(lock_file(tmp_path, commit, entry))
    with pytest.raises(InputError) as caught:
        resolve_all(lock, cache_dir=tmp_path / "c", offline=True, git_dirs={REPO: directory})
    assert f"is at lines {first}–{last}" in caught.value.problem
    assert f"lock says {first - 1}–{last - 1}" in caught.value.problem
    assert "itm pin toy.area --replace" in caught.value.fix


def test_unknown_symbol_and_range_past_end(tmp_path: Path, upstream) -> None:
    directory, commit = upstream
    unknown = excerpt_table("toy.nope", TOY_V1, symbol="Widget.nope", digest="1" * 64)
    past = excerpt_table("toy.past", TOY_V1, lines=[[TOTAL - 2, 99]], digest="2" * 64)
    lock = load_lock(lock_file(tmp_path, commit, unknown, past))
    resolver = Resolver(lock, cache_dir=tmp_path / "c", offline=True, git_dirs={REPO: directory})
    with pytest.raises(InputError, match="no 'nope' in 'Widget'") as caught:
        resolver.resolve(lock.pin("toy.nope"))
    assert caught.value.entry == "toy.nope"
    with pytest.raises(InputError, match=f"runs past the end.*{TOTAL} lines") as caught:
        resolver.resolve(lock.pin("toy.past"))
    assert caught.value.entry == "toy.past"


def test_missing_commit_falls_through_with_a_clear_message(tmp_path: Path, upstream) -> None:
    directory, _ = upstream
    lock = load_lock(lock_file(tmp_path, "f" * 40, excerpt_table("t", TOY_V1, lines=HELPER)))
    with pytest.raises(InputError) as caught:
        resolve_all(lock, cache_dir=tmp_path / "c", offline=True, git_dirs={REPO: directory})
    assert "commit ffffffffffff is not in" in caught.value.problem
    assert "cache: not cached" in caught.value.problem
    assert f"pass --git {REPO}=DIR" in caught.value.fix
    assert "PyPI" not in caught.value.fix  # the file has no [[mirrors]]: a registry cannot help


def test_verified_text_is_cached_for_offline_builds(tmp_path: Path, upstream) -> None:
    directory, commit = upstream
    lock = load_lock(lock_file(tmp_path, commit, excerpt_table("t", TOY_V1, lines=HELPER)))
    cache = tmp_path / "cache"
    first = resolve_all(lock, cache_dir=cache, offline=True, git_dirs={REPO: directory})
    second = resolve_all(lock, cache_dir=cache, offline=True)
    assert first["t"].resolved_from.startswith("git:")
    assert second["t"].resolved_from == "cache" and second["t"].text == first["t"].text


# ---------------------------------------------------------------- commands


def test_verify_command(tmp_path: Path, upstream, capsys) -> None:
    directory, commit = upstream
    path = lock_file(tmp_path, commit, excerpt_table("toy.helper", TOY_V1, lines=HELPER))
    args = ["--lock", str(path), "--cache-dir", str(tmp_path / "c"), "--offline"]
    assert main(["verify", *args, "--git", f"{REPO}={directory}"]) == 0
    assert "1 of 1 excerpts verified" in capsys.readouterr().out
    first, last = HELPER[0]
    path.write_text(path.read_text().replace(f"[[{first}, {last}]]", f"[[{first}, {last + 1}]]"))
    assert main(["verify", *args, "--git", f"{REPO}={directory}"]) == 1
    out = capsys.readouterr().out
    assert "FAIL toy.helper" in out and "hash mismatch" in out


def test_verify_git_raises_evidence_read_from_the_clone_never_from_the_cache(
    tmp_path: Path, upstream, capsys
) -> None:
    """`--git DIR --raise-evidence`: an excerpt read from the clone at its pinned commit becomes
    'upstream' (its old account kept after it); with a warm cache but a clone that lacks the
    commit, the clone is refused before anything is read or raised, and without any clone the
    command says what it needs."""
    directory, commit = upstream
    table = excerpt_table("toy.helper", TOY_V1, lines=HELPER, level="mirror-window")
    path = lock_file(tmp_path, commit, table)
    cache = ["--cache-dir", str(tmp_path / "c")]
    assert main(["verify", "--lock", str(path), *cache, "--git", f"{REPO}={directory}"]) == 0
    stranger = tmp_path / "stranger"
    make_upstream(stranger, {PATH: TOY_V2})  # a clone without the pinned commit
    raise_from = ["verify", "--raise-evidence", "--lock", str(path), *cache, "--git"]
    before = path.read_text()
    assert main([*raise_from, f"{REPO}={stranger}"]) == 2
    error = capsys.readouterr().err
    assert f"--git names {stranger} as a clone of {REPO}" in error
    assert f"does not hold commit {commit}" in error and "fetch" in error
    assert path.read_text() == before
    assert main(["verify", "--raise-evidence", "--lock", str(path), *cache]) == 2
    assert "GitHub or a clone" in capsys.readouterr().err
    assert main([*raise_from, f"{REPO}={directory}"]) == 0
    pin = load_lock(path).pin("toy.helper")
    assert pin.evidence_level == "upstream"
    assert f"clone of {REPO} at commit {commit}" in pin.evidence
    assert pin.evidence.endswith("Before: made up for a test")
    assert "toy.helper: evidence mirror-window -> upstream" in capsys.readouterr().out


def test_pin_records_lines_and_hash_from_git(tmp_path: Path, upstream, capsys) -> None:
    directory, commit = upstream
    path = lock_file(tmp_path, commit)
    base = ["--lock", str(path), "--cache-dir", str(tmp_path / "c"), "--offline"]
    code = main(["pin", "toy.render", "--repo", REPO, "--path", PATH, "--symbol", "Widget.render",
                 "--git", str(directory), *base])  # fmt: skip
    assert code == 0
    pin = load_lock(path).pin("toy.render")
    expected = tuple(symbol_lines(TOY_V1, *RENDER)[0])
    assert pin.ranges == (expected,)
    assert pin.sha256 == sha256(lines_text(TOY_V1, expected))
    assert pin.evidence_level == "upstream" and "git show" in pin.evidence
    # an existing id is not overwritten without --replace
    capsys.readouterr()
    assert main(["pin", "toy.render", "--repo", REPO, "--path", PATH, "--lines", "3-4",
                 "--git", str(directory), *base]) == 2  # fmt: skip
    error = capsys.readouterr().err
    assert "entry 'toy.render'" in error and "exists" in error and "--replace" in error
    assert main(["pin", "toy.render", "--repo", REPO, "--path", PATH, "--lines", "3-4,9-10",
                 "--replace", "--git", str(directory), *base]) == 0  # fmt: skip
    repinned = load_lock(path).pin("toy.render")
    assert repinned.ranges == ((3, 4), (9, 10)) and repinned.symbol is None
    assert repinned.sha256 == sha256(lines_text(TOY_V1, (3, 4), (9, 10)))


def test_pin_without_a_whole_file_says_so(tmp_path: Path, upstream, capsys) -> None:
    _, commit = upstream
    path = lock_file(tmp_path, commit)
    assert main(["pin", "toy.x", "--repo", REPO, "--path", PATH, "--lines", "1-2", "--lock",
                 str(path), "--offline"]) == 2  # fmt: skip
    error = capsys.readouterr().err
    assert "entry 'toy.x'" in error and "needs the whole of pkg/toy.py" in error
    assert "--git DIR" in error and "registry mirrors carry only parts" in error


def bump_lock(tmp_path: Path, commit: str, *, with_blocked: bool) -> Path:
    entries = [
        excerpt_table("toy.helper", TOY_V1, symbol="helper", lines=symbol_lines(
            TOY_V1, "def helper", "return x * SCALE")),
        excerpt_table("toy.render", TOY_V1, symbol="Widget.render", lines=symbol_lines(
            TOY_V1, *RENDER)),
        excerpt_table("toy.area", TOY_V1, symbol="Widget.area", lines=symbol_lines(
            TOY_V1, "def area", "self.size ** 2")),
        excerpt_table("toy.tail-lines", TOY_V1, lines=symbol_lines(
            TOY_V1, "def tail", 'return "end"')),
    ]  # fmt: skip
    if with_blocked:
        line = line_of(TOY_V1, "self.size ** 2")
        entries.append(excerpt_table("toy.area-body", TOY_V1, lines=[[line, line]]))
    return lock_file(tmp_path, commit, *entries)


def test_bump_reports_moved_and_changed_code(tmp_path: Path, upstream, capsys) -> None:
    directory, old = upstream
    new = make_upstream(directory, {PATH: TOY_V2})
    path = bump_lock(tmp_path, old, with_blocked=True)
    before = path.read_text()
    args = ["bump", REPO, new, "--git", str(directory), "--lock", str(path), "--offline"]
    assert main(args) == 1  # toy.area-body needs a hand re-pin
    report = capsys.readouterr().out
    rows = [line.split() for line in report.splitlines() if re.match(r"  \w", line)]
    status = {row[1]: row[0] for row in rows}
    assert status == {
        "toy.helper": "unchanged",
        "toy.render": "moved",
        "toy.area": "changed",
        "toy.tail-lines": "moved",
        "toy.area-body": "changed",
    }
    assert "toy.area-body" in report.splitlines()[-2] and "report only" in report
    assert path.read_text() == before  # nothing written without --write
    assert main([*args, "--write"]) == 1
    assert path.read_text() == before  # refused: one excerpt cannot re-resolve


def test_bump_write_updates_commit_lines_and_hashes(tmp_path: Path, upstream, capsys) -> None:
    directory, old = upstream
    new = make_upstream(directory, {PATH: TOY_V2})
    path = bump_lock(tmp_path, old, with_blocked=False)
    assert main(["bump", REPO, new, "--git", str(directory), "--lock", str(path), "--offline",
                 "--write", "--accept", "toy.area", "--pages", str(tmp_path)]) == 0  # fmt: skip
    lock = load_lock(path)
    assert lock.repos[REPO].commit == new
    for pin_id, first, last in [
        ("toy.render", *RENDER),
        ("toy.area", "def area", "self.size * self.size"),
        ("toy.tail-lines", "def tail", 'return "end"'),
    ]:
        pin = lock.pin(pin_id)
        expected = (line_of(TOY_V2, first), line_of(TOY_V2, last))
        assert pin.ranges == (expected,), pin_id
        assert pin.sha256 == sha256(lines_text(TOY_V2, expected)), pin_id
        assert pin.evidence_level == "upstream" and "itm bump" in pin.evidence
    # and the new lock verifies at the new commit
    excerpts = resolve_all(lock, cache_dir=tmp_path / "c", offline=True, git_dirs={REPO: directory})
    assert "self.size * self.size" in excerpts["toy.area"].text


def test_a_bump_from_a_clone_verifies_offline_without_it(tmp_path: Path, upstream, capsys) -> None:
    """`itm bump --git DIR --write` keeps the excerpts it read and checked at the new commit in
    the cache, as `itm pin` does: `itm verify --offline` right after it needs no clone."""
    directory, old = upstream
    new = make_upstream(directory, {PATH: TOY_V2})
    path = bump_lock(tmp_path, old, with_blocked=False)
    cache = ["--lock", str(path), "--cache-dir", str(tmp_path / "c"), "--offline"]
    accept = ["--accept-changes", "--pages", str(tmp_path)]
    assert main(["bump", REPO, new, "--git", str(directory), *cache, "--write", *accept]) == 0
    capsys.readouterr()
    assert main(["verify", *cache]) == 0
    out = capsys.readouterr().out
    pins = len(load_lock(path).pins)
    assert f"{pins} of {pins} excerpts verified" in out and out.count("from cache") == pins


def test_bump_rejects_a_short_commit(tmp_path: Path, upstream, capsys) -> None:
    directory, old = upstream
    path = bump_lock(tmp_path, old, with_blocked=False)
    assert main(["bump", REPO, old[:12], "--git", str(directory), "--lock", str(path)]) == 2
    error = capsys.readouterr().err
    assert f"entry '{REPO}'" in error and "not a full 40-hex" in error and "rev-parse" in error


def test_a_pinned_file_larger_than_a_source_file_is_not_read_from_the_clone(
    tmp_path: Path, upstream, monkeypatch
) -> None:
    """`git show` read the blob whole with no cap: a clone whose pinned path holds a huge file
    would fill memory. Its size is asked first."""
    from generator.sources import wholefiles

    directory, commit = upstream
    lock = load_lock(lock_file(tmp_path, commit, excerpt_table("t", TOY_V1, lines=HELPER)))
    monkeypatch.setattr(wholefiles, "LARGEST_SOURCE", len(TOY_V1) - 1)
    with pytest.raises(InputError) as caught:
        resolve_all(lock, cache_dir=tmp_path / "c", offline=True, git_dirs={REPO: directory})
    assert f"is larger than {len(TOY_V1) - 1:,} bytes" in caught.value.problem
