"""Build benchmark: cold build (empty cache) and warm build, next to a bare `mkdocs build` of the
same pages with the generator switched off. One run, same machine; the ratios are the figures.

    .venv/bin/python bench/bench_build.py [--repeat N]
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MKDOCS = str(Path(sys.executable).with_name("mkdocs"))


def build(config: Path, site: Path, cache: Path) -> float:
    env = {**os.environ, "ITM_CACHE_DIR": str(cache), "NO_MKDOCS_2_WARNING": "1"}
    env.setdefault("SOURCE_DATE_EPOCH", "1700000000")
    start = time.perf_counter()
    subprocess.run(
        [MKDOCS, "build", "-q", "-f", str(config), "-d", str(site)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def bare_config(directory: Path) -> Path:
    """mkdocs.yml with the itm plugin switched off: the same pages, macros left as text."""
    path = directory / "mkdocs-bare.yml"
    path.write_text(
        f"INHERIT: {ROOT / 'mkdocs.yml'}\ndocs_dir: {ROOT / 'docs'}\nstrict: false\n"
        "plugins:\n  - search\n  - itm:\n      enabled: false\n"
    )
    return path


def tree_bytes(site: Path) -> tuple[int, int]:
    files = [p for p in site.rglob("*") if p.is_file()]
    raw = sum(p.stat().st_size for p in files)
    return len(files), raw


def page_weight(site: Path, page: str) -> int:
    """gzip bytes of one page's HTML."""
    return len(gzip.compress((site / page).read_bytes(), mtime=0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="warm and bare builds to time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        cache = tmp_path / "cache"
        config = ROOT / "mkdocs.yml"
        cold = build(config, tmp_path / "cold", cache)
        warm = [build(config, tmp_path / f"warm{i}", cache) for i in range(args.repeat)]
        bare_cfg = bare_config(tmp_path)
        bare = [build(bare_cfg, tmp_path / f"bare{i}", cache) for i in range(args.repeat)]
        files, raw = tree_bytes(tmp_path / "warm0")
        bare_files, bare_raw = tree_bytes(tmp_path / "bare0")
        warm_median, bare_median = statistics.median(warm), statistics.median(bare)
        print(f"cold build (empty cache, fetches from PyPI and npm): {cold:6.2f} s")
        print(f"warm build (median of {args.repeat}):                   {warm_median:6.2f} s")
        print(f"bare mkdocs build, generator off (median):          {bare_median:6.2f} s")
        print(f"ratio cold / bare: {cold / bare_median:5.2f}")
        print(f"ratio warm / bare: {warm_median / bare_median:5.2f}")
        print(
            f"site: {files} files, {raw / 1e6:.2f} MB (bare: {bare_files} files, {bare_raw / 1e6:.2f} MB)"
        )
        for page in ("index.html", "components/attention/index.html", "sources/index.html"):
            print(f"  {page}: {page_weight(tmp_path / 'warm0', page) / 1e3:.1f} kB gzip")


if __name__ == "__main__":
    main()
