"""The evidence the commands record in the lock: a whole file's ids ([[files]]) and git's
objects of a commit ([[commits]]).
"""

from __future__ import annotations

from generator.sources.forges import described
from generator.sources.lockschema import FileId, Lock, Repo
from generator.sources.resolve import Resolver
from generator.sources.wholefiles import FullFile


def file_entry(repo: Repo, path: str, file: FullFile, command: str) -> FileId:
    """A [[files]] entry for a whole file read at the repo's pinned commit."""
    where = (
        "a clone (`git show COMMIT:PATH`, whose object id is this blob id)"
        if (file.origin.startswith("git:"))
        else f"{described(repo)} (the raw file at the commit)"
    )
    return FileId(
        repo=repo.name,
        commit=repo.commit,
        path=path,
        sha256=file.sha256,
        sha1_git=file.sha1_git,
        evidence=f"Read whole at commit {repo.commit} from {where} by `{command}`.",
    )


def record_proofs(resolver: Resolver, lock: Lock, repos: set[str]) -> Lock:
    """The lock with git's objects of each repo's commit down to every file it records there
    ([[commits]]), read from the repo's clone; a repo read only from GitHub gets none (its raw
    files carry no git objects), and says so."""
    for name in sorted(repos):
        repo = lock.repos[name]
        paths = [f.path for f in lock.files if f.repo == name and lock.vouches(f)]
        proof = resolver.commit_proof(repo, repo.commit, paths)
        if isinstance(proof, str):
            print(f"commit {name} {repo.short}: git's objects not recorded ({proof})")
        elif proof != lock.proof(name):
            lock = lock.with_proof(proof)
            print(
                f"commit {name} {repo.short}: recorded git's objects in [[commits]] (the commit"
                f" and {len(proof.trees)} tree(s): {len(paths)} file(s) checked offline)"
            )
    return lock
