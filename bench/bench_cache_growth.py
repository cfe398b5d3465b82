"""The cache's size over many builds with edits: does it stay bounded?

    .venv/bin/python bench/bench_cache_growth.py [--builds 20]

On a copy of the project (docs/, generator/, sources/, overrides/, mkdocs.yml) with a cache of
its own, each build follows an edit: every build edits a page (a new sentence), every other build
also edits the generator (a comment in a module), which changes the build's fingerprint, so the
memo, the figures and the compiled templates are made afresh. Prints the cache's size after each
build, and what the same builds leave when nothing is pruned (the store's BUILDS_KEPT set so high
that no build is ever old enough).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import print_table  # noqa: E402  (bench/report.py)

COPIED = ("docs", "generator", "sources", "overrides", "mkdocs.yml")
PAGE = "docs/glossary.md"
MODULE = "generator/render/numbers.py"


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def run(builds: int, keep_everything: bool) -> list[int]:
    sizes = []
    with tempfile.TemporaryDirectory(prefix="itm-growth-") as scratch:
        project = Path(scratch) / "project"
        project.mkdir()
        for name in COPIED:
            source = ROOT / name
            if source.is_dir():
                shutil.copytree(
                    source, project / name, ignore=shutil.ignore_patterns("__pycache__")
                )
            else:
                shutil.copy2(source, project / name)
        env = {
            **os.environ,
            "ITM_CACHE_DIR": str(Path(scratch) / "cache"),
            "SOURCE_DATE_EPOCH": "1700000000",
            "NO_MKDOCS_2_WARNING": "1",
        }
        if keep_everything:  # the store module of the copy: prune nothing
            store = project / "generator" / "store.py"
            text = store.read_text()
            store.write_text(text.replace("BUILDS_KEPT = 10", "BUILDS_KEPT = 10**6", 1))
        for number in range(builds):
            with open(project / PAGE, "a", encoding="utf-8") as page:
                page.write(f"\nEdit number {number} of this page.\n")
            if number % 2 == 1:
                with open(project / MODULE, "a", encoding="utf-8") as module:
                    module.write(f"# edit {number}\n")
            done = subprocess.run(
                [str(BIN / "mkdocs"), "build", "-q", "-d", str(Path(scratch) / "site")],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                raise SystemExit(f"build {number + 1} failed:\n{done.stderr[-3000:]}")
            sizes.append(size_of(Path(scratch) / "cache"))
            print(f"build {number + 1}: cache {sizes[-1] / 1e6:.1f} MB", file=sys.stderr)
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=int, default=20)
    args = parser.parse_args()
    pruned = run(args.builds, keep_everything=False)
    kept = run(args.builds, keep_everything=True)
    rows = [
        (f"cache after build {n + 1} (pruned / never pruned), MB", f"{a / 1e6:.1f} / {b / 1e6:.1f}")
        for n, (a, b) in enumerate(zip(pruned, kept, strict=True))
    ]
    rows.append(("after the last build: pruned ÷ never pruned", f"{pruned[-1] / kept[-1]:.2f}"))
    print_table(rows)


if __name__ == "__main__":
    main()
