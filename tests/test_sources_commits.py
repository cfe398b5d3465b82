"""Evidence in the lock is bound to a commit: each [[files]] and [[mirrors]] entry names the
commit it was checked at and vouches for no other, and [[commits]] keeps git's own objects (the
commit's text and the trees down to each recorded file), which hash to the commit id and name
each recorded blob, so a commit id edited in the lock is caught with no clone and no network,
even when it is edited everywhere at once."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from generator.cli import main
from generator.errors import InputError
from generator.sources.clones import read_commit_proof
from generator.sources.gitobjects import ProofError, object_id, tree_bytes
from generator.sources.lock import load_lock
from generator.sources.lockwrite import dump_lock
from generator.sources.resolve import Resolver
from tests.sources_helpers import (
    PATH,
    REPO,
    TOY_V1,
    TOY_V2,
    excerpt_table,
    git,
    isolated_env,
    line_of,
    make_upstream,
    repo_table,
    sha256,
    write,
)

pytestmark = pytest.mark.usefixtures(isolated_env.__name__)

OTHER = "docs/deep/other.py"  # a file two folders down, unchanged by TOY_V2
OTHER_TEXT = "def other():\n    return 1\n"
HELPER = [[line_of(TOY_V1, "def helper"), line_of(TOY_V1, "return x * SCALE")]]


def blob(directory: Path, commit: str, path: str) -> str:
    return git(directory, "rev-parse", f"{commit}:{path}")


def file_table(commit: str, path: str, data: str, sha1_git: str) -> str:
    return (
        f'\n[[files]]\nrepo = "{REPO}"\ncommit = "{commit}"\npath = "{path}"\n'
        f'sha256 = "{sha256(data)}"\nsha1_git = "{sha1_git}"\nevidence = "made up for a test"\n'
    )


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, str]:
    directory = tmp_path / "upstream"
    return directory, make_upstream(directory, {PATH: TOY_V1, OTHER: OTHER_TEXT})


def proven_lock(tmp_path: Path, directory: Path, commit: str) -> Path:
    """A lock recording both files at the commit and git's objects down to them."""
    text = (
        repo_table(commit)
        + file_table(commit, PATH, TOY_V1, blob(directory, commit, PATH))
        + file_table(commit, OTHER, OTHER_TEXT, blob(directory, commit, OTHER))
        + excerpt_table("toy.helper", TOY_V1, lines=HELPER)
    )
    path = write(tmp_path / "lock.toml", text)
    proof = read_commit_proof(directory, REPO, commit, [PATH, OTHER])
    path.write_text(dump_lock(load_lock(path).with_proof(proof)))
    return path


# ---------------------------------------------------------------- each entry names its commit


@pytest.mark.parametrize("table", ["files", "mirrors"])
def test_evidence_that_names_no_commit_is_refused(tmp_path: Path, table: str) -> None:
    entry = (
        {
            "files": file_table("a" * 40, PATH, TOY_V1, "b" * 40),
            "mirrors": '\n[[mirrors]]\nrepo = "toy/upstream"\ncommit = "aaaa"\npath = "pkg/toy.py"\n'
            'package = "p"\nversion = "1"\nfilename = "p-1.tar.gz"\nsha256 = "'
            + "c" * 64
            + '"\nmember = "p-1/toy.py"\n',
        }[table]
        .replace(f'commit = "{"a" * 40}"\n', "")
        .replace('commit = "aaaa"\n', "")
    )
    path = write(tmp_path / "lock.toml", repo_table("a" * 40) + entry)
    with pytest.raises(InputError) as caught:
        load_lock(path)
    assert caught.value.entry == f"{table}[0]"
    assert "missing 'commit'" in caught.value.problem and 'commit = "<40 hex>"' in caught.value.fix


def test_a_files_entry_of_another_commit_says_nothing_of_this_one(tmp_path: Path, upstream) -> None:
    """A [[files]] entry read at an earlier commit gives no blob id (no SWHID) at the pinned
    one, and is not held against the file read there."""
    directory, old = upstream
    new = make_upstream(directory, {PATH: TOY_V2})
    text = repo_table(new) + file_table(old, PATH, TOY_V1, blob(directory, old, PATH))
    path = write(tmp_path / "lock.toml", text + excerpt_table("toy.helper", TOY_V2, lines=HELPER))
    lock = load_lock(path)
    assert lock.file_id(REPO, PATH) is None and lock.recorded_file(REPO, PATH) is not None
    resolver = Resolver(lock, cache_dir=tmp_path / "c", offline=True, git_dirs={REPO: directory})
    excerpt = resolver.resolve(lock.pin("toy.helper"))
    assert excerpt.resolved_from.startswith("git:") and excerpt.sha1_git is None


# ---------------------------------------------------------------- git's objects ([[commits]])


def test_the_commits_objects_name_each_recorded_blob(tmp_path: Path, upstream) -> None:
    directory, commit = upstream
    lock = load_lock(proven_lock(tmp_path, directory, commit))
    proof = lock.proof(REPO)
    assert proof is not None and proof.commit == commit
    assert proof.blob_at(PATH) == blob(directory, commit, PATH)
    assert proof.blob_at(OTHER) == blob(directory, commit, OTHER)
    with pytest.raises(ProofError, match="the commit's trees hold no blob at README"):
        proof.blob_at("README")
    # independent of our reader: git's own ids of each object recorded
    assert object_id("commit", proof.text.encode()) == commit
    root = git(directory, "rev-parse", f"{commit}^{{tree}}")
    assert root in {object_id("tree", tree_bytes(t)) for t in proof.trees}
    assert git(directory, "rev-parse", f"{commit}:docs/deep") in {
        object_id("tree", tree_bytes(t)) for t in proof.trees
    }


def test_a_commit_edited_everywhere_in_the_lock_no_longer_matches_its_objects(
    tmp_path: Path, upstream
) -> None:
    """Replacing the commit id wherever it appears (repo, [[files]], [[commits]]) keeps the lock
    consistent with itself, but git's objects still hash to the old id."""
    directory, commit = upstream
    path = proven_lock(tmp_path, directory, commit)
    path.write_text(path.read_text().replace(commit, "ed" * 20))
    with pytest.raises(InputError) as caught:
        load_lock(path)
    error = caught.value
    assert error.entry == f"commits {REPO}"
    assert f"hashes to {commit}, not to {'ed' * 20}" in error.problem
    assert "restore" in error.fix and f"itm bump {REPO} COMMIT --git DIR --write" in error.fix


def test_a_recorded_blob_the_trees_contradict_is_refused(tmp_path: Path, upstream) -> None:
    directory, commit = upstream
    path = proven_lock(tmp_path, directory, commit)
    real = blob(directory, commit, OTHER)
    path.write_text(path.read_text().replace(f'sha1_git = "{real}"', f'sha1_git = "{"9" * 40}"'))
    with pytest.raises(InputError) as caught:
        load_lock(path)
    assert caught.value.entry == f"files {REPO} {OTHER}"
    assert f"the commit's trees name blob {real}, not the recorded {'9' * 40}" in (
        caught.value.problem
    )


def test_a_blob_edited_in_files_and_in_its_tree_is_refused(tmp_path: Path, upstream) -> None:
    """Editing a blob id in [[files]] and in the tree listing that names it keeps the two in
    agreement, but that tree no longer hashes to the id its parent tree names: it is not the
    commit's, and must not vouch for a Software Heritage id."""
    directory, commit = upstream
    path = proven_lock(tmp_path, directory, commit)
    real = blob(directory, commit, OTHER)
    path.write_text(path.read_text().replace(real, "9" * 40))
    with pytest.raises(InputError) as caught:
        load_lock(path)
    assert caught.value.entry == f"commits {REPO}"
    assert "trees[" in caught.value.problem and "not a tree of the commit" in caught.value.problem
    assert "restore the lock" in caught.value.fix


def test_an_edited_commit_object_is_not_blamed_on_the_id(tmp_path: Path, upstream) -> None:
    """When the object's text was edited and the id left alone, the message must not tell the
    reader to put in the id the edited text hashes to (a commit that does not exist)."""
    directory, commit = upstream
    path = proven_lock(tmp_path, directory, commit)
    lock = load_lock(path)
    proof = lock.proof(REPO)
    assert proof is not None
    edited = replace(proof, text=proof.text.replace("\n\n", "\n\nEdited. ", 1))
    wrong = object_id("commit", edited.text.encode())
    path.write_text(dump_lock(replace(lock, commits=(edited,))))
    with pytest.raises(InputError) as caught:
        load_lock(path)
    error = caught.value
    assert error.entry == f"commits {REPO}"
    assert "changed without its objects" not in error.problem
    assert "edited" in error.problem and wrong not in error.fix


def test_the_commit_text_survives_an_editor_that_trims_lines(tmp_path: Path, upstream) -> None:
    """A commit message with trailing spaces, quotes, backslashes, a tab and non-ASCII text is
    written so that it reads back byte for byte, even after every line of the lock is trimmed."""
    directory, _ = upstream
    message = "subject  \n\nbody with 'quotes' \"\"\" ''' and a \\ back\tslash, é  \n  \n"
    git(directory, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", message)
    commit = git(directory, "rev-parse", "HEAD")
    assert "subject  \n" in git(directory, "cat-file", "commit", commit) + "\n"
    path = proven_lock(tmp_path, directory, commit)
    trimmed = "\n".join(line.rstrip() for line in path.read_text().split("\n"))
    path.write_text(trimmed)
    proof = load_lock(path).proof(REPO)
    assert proof is not None and object_id("commit", proof.text.encode()) == commit


# ---------------------------------------------------------------- the commands record them


def test_pin_verify_and_bump_record_git_objects_and_move_mirrors(
    tmp_path: Path, upstream, capsys
) -> None:
    directory, old = upstream
    lock_path = tmp_path / "lock.toml"
    base = ["--lock", str(lock_path), "--cache-dir", str(tmp_path / "c"), "--offline"]
    git_dir = ["--git", f"{REPO}={directory}"]
    # itm pin from a clone records the file and the commit's objects down to it
    assert main(["pin", "toy.other", "--repo", REPO, "--path", OTHER, "--lines", "1-2",
                 "--commit", old, "--license", "MIT", *git_dir, *base]) == 0  # fmt: skip
    assert main(["pin", "toy.helper", "--repo", REPO, "--path", PATH, "--symbol", "helper",
                 *git_dir, *base]) == 0  # fmt: skip
    lock = load_lock(lock_path)
    proof = lock.proof(REPO)
    assert proof is not None and proof.commit == old
    assert proof.blob_at(OTHER) == blob(directory, old, OTHER)
    assert proof.blob_at(PATH) == blob(directory, old, PATH)
    # a lock without them gets them from `itm verify --git --raise-evidence`
    lock_path.write_text(dump_lock(replace(lock, commits=())))
    assert main(["verify", "--raise-evidence", *git_dir, *base]) == 0
    assert load_lock(lock_path).proof(REPO) == proof
    # two mirrors checked at the old commit: of the file the bump leaves alone, and of the one
    # it changes (whose archive is not at hand offline)
    mirrors = "".join(
        f'\n[[mirrors]]\nrepo = "{REPO}"\ncommit = "{old}"\npath = "{p}"\npackage = "copy"\n'
        f'version = "1"\nfilename = "copy-1.tar.gz"\nsha256 = "{"c" * 64}"\nmember = "copy-1/{p}"\n'
        for p in (OTHER, PATH)
    )
    lock_path.write_text(lock_path.read_text() + mirrors)
    new = make_upstream(directory, {PATH: TOY_V2})
    capsys.readouterr()
    assert main(["bump", REPO, new, "--write", *git_dir, *base]) == 0
    out = capsys.readouterr().out
    bumped = load_lock(lock_path)
    assert bumped.repos[REPO].commit == new
    assert {m.path: m.commit for m in bumped.mirrors} == {OTHER: new, PATH: old}
    assert f"moves to {new[:12]} ({OTHER} is unchanged)" in out
    assert f"stays at {old[:12]}, vouching for nothing at {new[:12]}" in out
    new_proof = bumped.proof(REPO)
    assert new_proof is not None and new_proof.commit == new
    assert new_proof.blob_at(PATH) == blob(directory, new, PATH)
    assert {f.commit for f in bumped.files} == {new}
