"""The lock file: every validation error names the entry and the fix; the format round-trips."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from generator.errors import InputError
from generator.sources.lock import load_lock, parse_lock
from generator.sources.lockwrite import dump_lock
from tests.site_helpers import SITE_LOCK
from tests.sources_helpers import REPO, TOY_V1, excerpt_table, mirror_table, repo_table, write

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def lock_text(*excerpts: str, commit: str = COMMIT) -> str:
    return "version = 1\n\n" + repo_table(commit) + "".join(excerpts)


def load_error(tmp_path: Path, text: str) -> InputError:
    path = write(tmp_path / "sources" / "lock.toml", text)
    with pytest.raises(InputError) as caught:
        load_lock(path)
    return caught.value


def good(excerpt_id: str = "toy.helper", **kwargs) -> str:
    kwargs.setdefault("lines", [[8, 9]])
    return excerpt_table(excerpt_id, TOY_V1, **kwargs)


def test_a_valid_lock_loads(tmp_path: Path) -> None:
    path = write(tmp_path / "lock.toml", lock_text(good(), good("toy.widget", symbol="Widget")))
    lock = load_lock(path)
    assert [p.id for p in lock.pins] == ["toy.helper", "toy.widget"]
    assert lock.pins[0].ranges == ((8, 9),)
    assert lock.pins[1].symbol == "Widget" and lock.pins[1].ranges == ((8, 9),)
    repo = lock.repos[REPO]
    assert repo.short == COMMIT[:12] and repo.url == f"https://github.com/{REPO}"


def test_short_commit_is_rejected(tmp_path: Path) -> None:
    error = load_error(tmp_path, lock_text(good(), commit="0123456789ab"))
    assert f"repos.{REPO}" in str(error)
    assert "short ids are ambiguous" in str(error)
    assert "full lowercase hash" in error.fix


def test_non_hex_commit_is_rejected(tmp_path: Path) -> None:
    error = load_error(tmp_path, lock_text(good(), commit="z" * 40))
    assert f"repos.{REPO}" in str(error) and "40-hex" in str(error)
    assert "git rev-parse" in error.fix


def test_absolute_path_is_rejected(tmp_path: Path) -> None:
    error = load_error(tmp_path, lock_text(good(path="/etc/passwd")))
    assert error.entry == "toy.helper"
    assert "relative" in error.problem and "no leading slash" in error.fix


def test_dotdot_path_is_rejected(tmp_path: Path) -> None:
    error = load_error(tmp_path, lock_text(good(path="pkg/../../secret.py")))
    assert error.entry == "toy.helper"
    assert "'..'" in error.problem and "without '..'" in error.fix


def test_empty_range_list_is_rejected(tmp_path: Path) -> None:
    text = lock_text(good(digest="a" * 64, lines=None)).replace(
        'sha256 = "', 'lines = []\nsha256 = "'
    )
    error = load_error(tmp_path, text)
    assert error.entry == "toy.helper" and "empty" in error.problem
    assert "lines = [[69, 112]]" in error.fix


def test_reversed_range_is_rejected(tmp_path: Path) -> None:
    error = load_error(tmp_path, lock_text(good(lines=[[9, 8]], digest="a" * 64)))
    assert error.entry == "toy.helper" and "reversed" in error.problem
    assert "[8, 9]" in error.fix


def test_overlapping_ranges_are_rejected(tmp_path: Path) -> None:
    error = load_error(tmp_path, lock_text(good(lines=[[8, 12], [10, 14]])))
    assert error.entry == "toy.helper" and "overlap" in error.problem
    assert "merge them into [8, 14]" in error.fix


def test_duplicate_ids_are_rejected(tmp_path: Path) -> None:
    error = load_error(tmp_path, lock_text(good(), good(lines=[[3, 4]])))
    assert error.entry == "toy.helper" and "duplicate" in error.problem
    assert "rename" in error.fix


def test_unknown_repo_is_rejected(tmp_path: Path) -> None:
    error = load_error(tmp_path, lock_text(good(repo="nobody/nothing")))
    assert error.entry == "toy.helper" and "nobody/nothing" in error.problem
    assert f"known repo ({REPO})" in error.fix


def test_missing_hash_is_rejected(tmp_path: Path) -> None:
    head, entry = lock_text(good()).split("[[excerpts]]")
    entry = "".join(line for line in entry.splitlines(True) if not line.startswith("sha256"))
    error = load_error(tmp_path, head + "[[excerpts]]" + entry)
    assert error.entry == "toy.helper" and "missing sha256" in error.problem
    assert "itm pin" in error.fix


def test_errors_name_the_lock_file(tmp_path: Path) -> None:
    error = load_error(tmp_path, lock_text(good(repo="nobody/nothing")))
    assert error.file is not None and error.file.endswith("lock.toml")
    assert str(error).startswith(error.file)


def test_unknown_key_and_bad_level_are_rejected(tmp_path: Path) -> None:
    typo = load_error(tmp_path, lock_text(good()).replace("evidence =", "evidense ="))
    assert "evidense" in typo.problem and "use only these keys" in typo.fix
    level = load_error(tmp_path, lock_text(good(level="certain")))
    assert "certain" in level.problem and "mirror-window" in level.fix


def test_one_member_may_be_listed_once_per_offset(tmp_path: Path) -> None:
    archive = b"any archive bytes"

    def entry(offset: int, lines: list[list[int]] | None) -> str:
        return mirror_table("toy-copy", "1.0", "toy_copy-1.0.tar.gz", archive, "toy.py",
                            offset=offset, lines=lines, commit=COMMIT)  # fmt: skip

    path = write(
        tmp_path / "lock.toml", lock_text() + entry(-1, [[3, 24]]) + entry(-19, [[44, 65]])
    )
    lock = load_lock(path)
    assert [(m.offset, m.lines) for m in lock.mirrors] == [(-1, ((3, 24),)), (-19, ((44, 65),))]
    assert parse_lock(dump_lock(lock), path).mirrors == lock.mirrors
    error = load_error(tmp_path, lock_text() + entry(-1, [[3, 24]]) + entry(-1, [[44, 65]]))
    assert "listed twice at offset -1" in error.problem and "merge" in error.fix
    for other in ([[20, 30]], None):  # sharing upstream line 20-24, or the whole file
        error = load_error(tmp_path, lock_text() + entry(-1, [[3, 24]]) + entry(-19, other))
        assert "the same upstream lines at offsets -1 and -19" in error.problem


def test_dump_then_load_gives_the_same_lock(tmp_path: Path) -> None:
    path = write(tmp_path / "lock.toml", lock_text(good(), good("toy.widget", symbol="Widget")))
    lock = load_lock(path)
    again = parse_lock(dump_lock(lock), path)
    assert again.repos == lock.repos and again.pins == lock.pins


def test_the_real_lock_is_canonical_and_valid() -> None:
    lock = load_lock(SITE_LOCK)
    assert dump_lock(lock) == SITE_LOCK.read_text(encoding="utf-8")
    assert {"gpt2.attn", "gpt2.block-call-attn", "hf.gpt2-attention-forward"} <= {
        p.id for p in lock.pins
    }


def test_real_lock_pins_the_seed_revisions() -> None:
    lock = load_lock(SITE_LOCK)
    assert lock.repos["openai/gpt-2"].commit == "9b63575ef42771a015060c964af2c3da4cf7c8ab"
    hf = lock.repos["huggingface/transformers"]
    assert hf.commit == "71c6f699ac9b3f8fc42a6a3e9dc59034c349a678"
    attn = lock.pin("gpt2.attn")
    assert (attn.symbol, attn.ranges, attn.path) == ("attn", ((69, 112),), "src/model.py")
    assert attn.sha256 == "05b8b58a1bbd1e0cd1ac46dd7177a0b7023f305ac3869658d73767856cbab32c"
    assert lock.pin("hf.gpt2-attention-forward").ranges == ((185, 191), (204, 224))


def test_real_lock_claims_no_more_than_the_evidence() -> None:
    """transformers lines at the pin are confirmed only by the release window inside 39–417
    (UPSTREAM.md); "upstream" is claimed only for openai/gpt-2, whose pinned commit was read from
    a full clone (tests/test_sources_clone.py re-reads every such pin there), and each of those
    names the file's sha256 at the commit (UPSTREAM.md), which builds without the clone check."""
    file_sha256 = {"src/model.py": "2ff5065f5cac", "src/sample.py": "7a726916bdc4"}
    lock = load_lock(SITE_LOCK)
    for pin in lock.pins:
        if pin.evidence_level == "upstream":
            assert pin.repo == "openai/gpt-2", pin.id
            assert "clone of openai/gpt-2" in pin.evidence, pin.id
            assert file_sha256[pin.path] in pin.evidence, pin.id
        if pin.repo == "huggingface/transformers":
            assert pin.evidence_level == "mirror-window", pin.id
            assert "only indirectly" in pin.evidence and "not checked" in pin.evidence, pin.id
            if pin.path.endswith("modeling_gpt2.py"):
                assert all(a >= 39 and b <= 417 for a, b in pin.ranges), pin.id
                assert "5.6.2 to 5.22.2" in pin.evidence, pin.id
            else:  # each names its own window, checked at both ends by test_sources_real_lock
                assert re.search(r"from 5\.[\d.]+ to 5\.[\d.]+", pin.evidence), pin.id
            assert pin.carried_by is not None, pin.id  # what readers' cards say was checked
        family = (
            "gpt2."
            if pin.repo == "openai/gpt-2"
            else ("hf.", "llama.", "mistral.", "mixtral.", "gpt-oss.", "deepseek-v3.")
        )
        assert pin.id.startswith(family), pin.id


def files_entry(**overrides: str) -> str:
    values = {
        "repo": REPO,
        "commit": COMMIT,
        "path": "pkg/toy.py",
        "sha256": "a" * 64,
        "sha1_git": "b" * 40,
        "evidence": "made up for a test",
        **overrides,
    }
    return "\n[[files]]\n" + "".join(f'{k} = "{v}"\n' for k, v in values.items())


def test_a_files_entry_round_trips(tmp_path: Path) -> None:
    path = write(tmp_path / "lock.toml", lock_text(files_entry(), good()))
    lock = load_lock(path)
    (entry,) = lock.files
    assert (entry.sha1_git, lock.file_id(REPO, "pkg/toy.py")) == ("b" * 40, entry)
    assert lock.file_id(REPO, "other.py") is None
    assert parse_lock(dump_lock(lock), path).files == lock.files


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"sha1_git": "b" * 39}, "40 lowercase hex"),
        ({"sha1_git": "B" * 40}, "40 lowercase hex"),
        ({"sha256": "a" * 63}, "64 lowercase hex"),
        ({"repo": "some/other"}, "unknown repo"),
        ({"path": "../x.py"}, "'..'"),
        ({"evidence": " "}, "empty evidence"),
    ],
)
def test_a_bad_files_entry_is_named_with_its_fix(tmp_path: Path, overrides, problem) -> None:
    error = load_error(tmp_path, lock_text(files_entry(**overrides), good()))
    assert problem in error.problem and error.entry.startswith("files") and error.fix


def test_a_file_listed_twice_is_an_error(tmp_path: Path) -> None:
    error = load_error(tmp_path, lock_text(files_entry(), files_entry(), good()))
    assert "listed twice" in error.problem


def test_the_real_lock_records_gpt2s_files_with_upstreams_hashes() -> None:
    """The whole-file sha256 UPSTREAM.md gives for each openai/gpt-2 file the site quotes; the
    blob ids beside them are checked against the bytes by test_sources_clone.py (a clone) and
    test_sources_real_lock.py (model.py rebuilt from the registry copies)."""
    lock = load_lock(SITE_LOCK)
    upstream = {
        "src/model.py": "2ff5065f5cac3dc93065f8a3f36eb013e407972a80abcd4ee6b89a7138a0d5a6",
        "src/sample.py": "7a726916bdc416b296665b52ea7b87581152e16794c8eaff90bf4f89b1235771",
    }
    assert {(f.repo, f.path): f.sha256 for f in lock.files} == {
        ("openai/gpt-2", path): digest for path, digest in upstream.items()
    }


# ---------------------------------------------------------------- carried_by: the release window

CARRIED = 'carried_by = {package = "pkg", releases = [["1.0", "1.4"], ["2.0", "2.0"]], except = ["1.2"]}\n'


def indirect(carried: str = CARRIED, level: str = "mirror-window") -> str:
    return good(level=level) + carried


def test_carried_by_round_trips_in_canonical_form(tmp_path: Path) -> None:
    path = write(tmp_path / "lock.toml", lock_text(indirect()))
    lock = load_lock(path)
    carried = lock.pins[0].carried_by
    assert carried is not None and carried.package == "pkg"
    assert carried.releases == (("1.0", "1.4"), ("2.0", "2.0")) and carried.excepted == ("1.2",)
    text = dump_lock(lock)
    assert CARRIED in text and parse_lock(text, path).pins == lock.pins


@pytest.mark.parametrize(
    "carried",
    [
        'carried_by = {package = "pkg"}\n',
        'carried_by = {package = "pkg", releases = []}\n',
        'carried_by = {package = "pkg", releases = [["1.0"]]}\n',
        'carried_by = {package = "pkg", releases = [["1.0", "<b>"]]}\n',
        'carried_by = {package = "pkg", releases = [["1.0", "1.1"]], except = "1.0"}\n',
        'carried_by = {package = "pkg", releases = [["1.0", "1.1"]], after = "1.0"}\n',
        'carried_by = "pkg 1.0-1.1"\n',
    ],
)
def test_a_malformed_release_window_is_named_with_its_fix(tmp_path: Path, carried: str) -> None:
    error = load_error(tmp_path, lock_text(indirect(carried)))
    assert "toy.helper" in str(error) and "carried_by" in str(error)
    assert "releases" in (error.fix or "")


def test_a_release_window_on_an_excerpt_read_at_its_commit_is_refused(tmp_path: Path) -> None:
    """carried_by is evidence for readers' cards: on an "upstream" excerpt it would say less
    than was checked, and on a bump it must not survive the new evidence."""
    error = load_error(tmp_path, lock_text(indirect(level="upstream")))
    assert error.entry == "toy.helper" and "'upstream'" in error.problem
    assert "delete carried_by" in error.fix


def test_the_real_locks_release_windows_are_the_ones_its_evidence_names() -> None:
    """Each mirror-window excerpt's carried_by (what its cards say) names exactly the windows of
    releases its own evidence names ("from A to B", in its first sentence) and excepts 5.10.0
    exactly where that sentence says 5.10.0 differs: never a window wider than was compared."""
    lock = load_lock(SITE_LOCK)
    checked = 0
    for pin in lock.pins:
        if pin.evidence_level != "mirror-window":
            continue
        first = pin.evidence.split(". ")[0]
        windows = tuple(re.findall(r"from (5\.\d+\.\d+) to (5\.\d+\.\d+)", first))
        differs = re.search(r"5\.10\.0[^.;)]*(differs|has lines|built from another)", first)
        assert pin.carried_by is not None, pin.id
        assert pin.carried_by.package == "transformers", pin.id
        assert pin.carried_by.releases == windows, pin.id
        assert pin.carried_by.excepted == (("5.10.0",) if differs else ()), pin.id
        checked += 1
    assert checked >= 60


# ---------------------------------------------------------------- [[claims]]: approvals


def claim_entry(claim_id: str = "toy.helper.doubles", excerpt: str = "toy.helper", sha="c" * 64):
    return f'\n[[claims]]\nid = "{claim_id}"\nexcerpt = "{excerpt}"\nsha256 = "{sha}"\n'


def test_claims_round_trip_in_canonical_form(tmp_path: Path) -> None:
    path = write(tmp_path / "lock.toml", lock_text(good()) + claim_entry() + claim_entry("b/c"))
    lock = load_lock(path)
    assert [(c.id, c.excerpt, c.sha256) for c in lock.claims] == [
        ("toy.helper.doubles", "toy.helper", "c" * 64),
        ("b/c", "toy.helper", "c" * 64),
    ]
    assert lock.claims_about("toy.helper") == lock.claims and lock.claims_about("x") == ()
    text = dump_lock(lock)
    assert text.endswith(claim_entry("b/c")) and parse_lock(text, path).claims == lock.claims


@pytest.mark.parametrize(
    ("entry", "problem", "fix"),
    [
        (claim_entry(excerpt="toy.gone"), "which the lock does not pin", "--excerpt ID"),
        (claim_entry(sha="c" * 12), "not 64 lowercase hex", "sha256"),
        (claim_entry("Toy Claim"), "a claim id is lowercase", "name it like"),
        (claim_entry() + claim_entry(), "approved twice", "keep one [[claims]] entry"),
        ('\n[[claims]]\nid = "a"\nexcerpt = "toy.helper"\n', "missing 'sha256'", "sha256"),
        ('\n[[claims]]\nid = "a"\nexcerpt = "toy.helper"\nsha256 = "' + "c" * 64
         + '"\nnote = "x"\n', "unknown key 'note'", "id, excerpt, sha256"),
    ],
)  # fmt: skip
def test_a_bad_claims_entry_is_named_with_its_fix(
    tmp_path: Path, entry: str, problem: str, fix: str
) -> None:
    error = load_error(tmp_path, lock_text(good()) + entry)
    assert "claims" in (error.entry or "") and problem in error.problem and fix in error.fix


@pytest.mark.parametrize(
    ("text", "entry", "fix"),
    [
        ('repos = "x"\n', "repos", '[repos."OWNER/NAME"]'),
        ("mirrors = 5\n", "mirrors", "[[mirrors]]"),
        ("excerpts = 5\n", "excerpts", "[[excerpts]]"),
    ],
)
def test_a_top_level_entry_of_the_wrong_kind_is_named_with_its_fix(
    tmp_path: Path, text: str, entry: str, fix: str
) -> None:
    """A hand-edited lock whose repos is not a table, or whose mirrors or excerpts are not lists
    of tables, stops with the entry and the fix (it raised AttributeError or TypeError)."""
    error = load_error(tmp_path, "version = 1\n" + text)
    assert error.entry == entry and fix in error.fix, str(error)


def test_an_entry_that_is_not_a_table_is_told_in_the_writers_own_terms(tmp_path: Path) -> None:
    """`excerpts = [5]` in a writer's site told her to "see the format at the top of
    sources/lock.toml", this project's file; the fix names the keys instead."""
    path = write(tmp_path / "docs-lock.toml", "version = 1\nexcerpts = [5]\n")
    with pytest.raises(InputError) as caught:
        load_lock(path)
    assert "sources/lock.toml" not in caught.value.fix and "itm pin" in caught.value.fix
    assert "sha256" in caught.value.fix  # one of the keys an excerpt has


# ---------------------------------------------------------------- keys and types (msgspec's word)


def mirror_entry(extra: str) -> str:
    return mirror_table("copy", "1", "copy-1.tar.gz", b"x", "copy-1/toy.py", commit=COMMIT) + extra


@pytest.mark.parametrize(
    ("text", "entry", "problem", "fix"),
    [
        ("git_dirs = {a = 5}\n" + lock_text(), "top level", "unknown key 'git_dirs'", "excerpts"),
        ("version = 1\n[repos]\n\"o/r\" = 5\n", "repos.o/r", "expected a table", "license"),
        ('"k - at `$.repos`" = 1\n' + lock_text(), "top level", "unknown key 'k - at `$.repos`'",
         "claims"),
        (lock_text(good() + '"k - at `$.repos`" = 1\n'), "toy.helper",
         "unknown key 'k - at `$.repos`'", "use only these keys: id, repo"),
        (lock_text().replace('url = "https://github.com/toy/upstream"', "url = 3"),
         f"repos.{REPO}", "url: expected a string, got a whole number", 'url = "..."'),
        (lock_text(good()).replace("[[8, 9]]", "[[8, 9, 10]]"), "toy.helper", "lines[0]: expected a list of length 2",
         "lines = [[69, 112]]"),
        (lock_text(good()).replace("[[8, 9]]", "[[8, true]]"), "toy.helper",
         "lines[0][1]: expected a whole number, got a bool", "lines = [[69, 112]]"),
        (lock_text(good()).replace("[[8, 9]]", '"8-9"'), "toy.helper",
         "lines: expected a list, got a string", "lines = [[69, 112]]"),
        (lock_text(good(symbol="helper")).replace('"helper"', "5"), "toy.helper",
         "symbol: expected a string", 'symbol = "..."'),
        ("version = 1\nexcerpts = [[1]]\n", "excerpts[0]", "expected a table", "itm pin"),
        (lock_text(good(), mirror_entry('offset = "2"\n')), "mirrors[0]",
         "offset: expected a whole number", "offset = 2"),
        (lock_text(good(), mirror_entry("lines = []\n")), "mirrors[0]",
         "lines: expected a non-empty list", "lines = [[69, 112]]"),
        (lock_text(good(), mirror_entry("").replace("commit = ", "kommit = ")), "mirrors[0]",
         "unknown key 'kommit'", "use only these keys: repo, commit"),
        (lock_text(good(), files_entry().replace('sha1_git = "' + "b" * 40 + '"', "sha1_git = 5")),
         "files[0]", "sha1_git: expected a string", 'sha1_git = "..."'),
        (lock_text(good(), files_entry().replace('commit = "' + COMMIT + '"\n', "")),
         "files[0]", "missing 'commit'", "git rev-parse"),
        (lock_text(good(), f'\n[[commits]]\nrepo = "{REPO}"\ncommit = "{COMMIT}"\nobject = ""\n'
                   "trees = [5]\n"), "commits[0]", "trees[0]: expected a string", "trees = "),
        (lock_text(good(), claim_entry().replace('"' + "c" * 64 + '"', "1979-05-27")),
         "claims toy.helper.doubles", "sha256: expected a string, got a date", 'sha256 = "..."'),
        (lock_text(indirect('carried_by = {package = "pkg", releases = [["1.0", 2]]}\n')),
         "toy.helper", "carried_by.releases[0][1]: expected a string", "releases = [["),
    ],
)  # fmt: skip
def test_a_key_or_a_type_msgspec_refuses_is_told_as_the_entry_and_its_fix(
    tmp_path: Path, text: str, entry: str | None, problem: str, fix: str
) -> None:
    """msgspec checks the lock's keys and types; its complaint ("Expected `str`, got `int` - at
    `$.excerpts[0].lines`") reaches the author as the entry, the problem and the fix."""
    error = load_error(tmp_path, text)
    assert (error.entry, error.fix is not None) == (entry, True), str(error)
    assert problem in error.problem and fix in error.fix, str(error)
    assert "\n" not in error.problem and "`$" not in error.problem.replace(problem, "")


def test_a_lock_nested_too_deeply_for_tomllib_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    """tomllib reads nested arrays by recursion: 100,000 brackets raised RecursionError."""
    for nested in ("[" * 100_000 + "]" * 100_000, "{a = " * 5_000 + "1" + "}" * 5_000):
        error = load_error(tmp_path, f"version = 1\nx = {nested}\n")
        assert "nested too deeply" in error.problem and "itm pin" in error.fix


def test_a_control_character_in_a_string_is_written_as_toml_reads_it(tmp_path: Path) -> None:
    """The writer spelled strings with json.dumps, which leaves DEL (U+007F) raw where TOML
    forbids it: an evidence or a license holding one was written as a lock that did not load
    (`itm pin` refused its own text). tomli-w spells TOML's escapes."""
    path = write(tmp_path / "lock.toml", lock_text(good()))
    lock = load_lock(path)
    odd = replace(lock.pins[0], evidence="read \x7f twice\x1b, a tab\tand é")
    again = parse_lock(dump_lock(lock.with_pin(odd)), path)
    assert again.pins == (odd,)
