"""Every excerpt the lock calls "upstream" is the clone's bytes at its pinned commit.

Runs where a clone of the repository is configured (ITM_GIT_DIRS, e.g.
`ITM_GIT_DIRS=openai/gpt-2=~/src/gpt-2`); skipped elsewhere (CI has no GitHub). The clone is
read with `git show COMMIT:PATH`, so git's object ids, not the working tree, give the bytes; the
blob ids the lock records ([[files]], the files' Software Heritage ids) are git's own.
"""

from __future__ import annotations

import hashlib
import subprocess

import pytest

from generator.settings import Settings
from generator.sources.lock import load_lock
from generator.sources.resolve import Resolver
from tests.site_helpers import ROOT, SITE_LOCK

# From UPSTREAM.md: the sha256 of each file at openai/gpt-2's pinned commit.
FILE_SHA256 = {
    "src/model.py": "2ff5065f5cac3dc93065f8a3f36eb013e407972a80abcd4ee6b89a7138a0d5a6",
    "src/sample.py": "7a726916bdc416b296665b52ea7b87581152e16794c8eaff90bf4f89b1235771",
}


def test_every_upstream_pin_is_the_clones_bytes_at_its_commit(tmp_path) -> None:
    lock = load_lock(SITE_LOCK)
    clones = Settings.load(ROOT).git_dirs
    pins = [p for p in lock.pins if p.evidence_level == "upstream"]
    assert pins, "the lock claims 'upstream' nowhere: drop this test or the claim"
    if not any(p.repo in clones for p in pins):
        pytest.skip("no clone of an 'upstream' repository in ITM_GIT_DIRS")
    resolver = Resolver(lock, cache_dir=tmp_path, git_dirs=clones, sources=("git",))
    for pin in (p for p in pins if p.repo in clones):
        commit = lock.repos[pin.repo].commit
        shown = subprocess.run(
            ["git", "-C", str(clones[pin.repo]), "show", f"{commit}:{pin.path}"],
            capture_output=True,
            check=True,
        ).stdout
        assert hashlib.sha256(shown).hexdigest() == FILE_SHA256[pin.path], pin.path
        lines = shown.decode("utf-8").split("\n")
        expected = "".join(
            lines[n - 1] + "\n" for first, last in pin.ranges for n in range(first, last + 1)
        )
        excerpt = resolver.resolve(pin)
        assert excerpt.resolved_from.startswith("git:"), pin.id
        assert excerpt.text == expected, pin.id
        # the ids the lock records for the whole file are git's own for the clone's bytes
        recorded = lock.file_id(pin.repo, pin.path)
        named = subprocess.run(
            ["git", "-C", str(clones[pin.repo]), "rev-parse", f"{commit}:{pin.path}"],
            capture_output=True,
            check=True,
            text=True,
        ).stdout.strip()
        assert recorded is not None and recorded.sha1_git == named, pin.id
        assert recorded.sha256 == FILE_SHA256[pin.path], pin.id


def test_the_locks_git_objects_are_the_clones_own() -> None:
    """[[commits]]: the commit object and the trees the lock records for each clone-read repo
    are what the clone itself holds, down to every file recorded ([[files]]); and the clone
    passes the check every `--git` / ITM_GIT_DIRS path gets."""
    from generator.sources.clones import check_clone, read_commit_proof

    lock = load_lock(SITE_LOCK)
    clones = Settings.load(ROOT).git_dirs
    proven = [proof for proof in lock.commits if proof.repo in clones]
    if not proven:
        pytest.skip("no clone of a repository the lock records git objects for, in ITM_GIT_DIRS")
    for proof in proven:
        directory = clones[proof.repo]
        check_clone(directory, repo=proof.repo, commit=proof.commit, option="ITM_GIT_DIRS")
        paths = [f.path for f in lock.files if f.repo == proof.repo]
        assert read_commit_proof(directory, proof.repo, proof.commit, paths) == proof
        for path in paths:
            named = subprocess.run(
                ["git", "-C", str(directory), "rev-parse", f"{proof.commit}:{path}"],
                capture_output=True,
                check=True,
                text=True,
            ).stdout.strip()
            assert proof.blob_at(path) == named, path
