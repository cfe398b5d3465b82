"""Benchmark of pinned-excerpt resolution (a report, not a test).

    .venv/bin/python bench/bench_sources.py [--cache-dir DIR]

In one run: import cost; cold resolution of every excerpt of sources/lock.toml with an empty
cache (GitHub as the build would try it, then the PyPI mirrors: index queries, archive
downloads, placement search); warm resolution from the filled cache; and warm with --offline.
Uses the network to pypi.org / files.pythonhosted.org for the cold run only.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

from report import print_table, timed  # bench/report.py (scripts run from bench/)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, help="empty dir to fill (default: a temp dir)")
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []

    def import_ours():
        import generator.sources.resolve  # noqa: F401

    _, t = timed(import_ours)
    rows.append(("import generator.sources.resolve", f"{t * 1000:.0f} ms"))

    from generator.sources.lock import load_lock
    from generator.sources.resolve import Resolver

    lock, t = timed(lambda: load_lock(Path(__file__).resolve().parent.parent / "sources/lock.toml"))
    rows.append((f"load + validate the lock ({len(lock.pins)} excerpts)", f"{t * 1000:.1f} ms"))

    with tempfile.TemporaryDirectory() as scratch:
        cache_dir = args.cache_dir or Path(scratch)
        log: list[str] = []

        def run(**options):
            resolver = Resolver(lock, cache_dir=cache_dir, log=log.append, **options)
            return {pin.id: resolver.resolve(pin) for pin in lock.pins}, resolver

        (cold, resolver), t_cold = timed(run)
        origins = Counter(e.resolved_from for e in cold.values())
        downloaded = [
            url
            for url in resolver.http.attempts
            if "/simple/" not in url and not url.startswith(resolver.github_base)
        ]
        rows.append(("cold: resolve all (empty cache)", f"{t_cold:.2f} s"))
        rows.append(("cold: resolved from", ", ".join(f"{k} ×{v}" for k, v in origins.items())))
        rows.append(("cold: HTTP requests (index + archives)", str(len(resolver.http.attempts))))
        rows.append(("cold: archives downloaded", str(len(downloaded))))
        rows.append(("cold: hosts skipped as down", ", ".join(resolver.http.down) or "none"))
        size = sum(p.stat().st_size for p in Path(cache_dir).rglob("*") if p.is_file())
        rows.append(("cache size after cold run", f"{size / 1e6:.1f} MB"))

        (warm, _), t_warm = timed(run)
        assert {e.resolved_from for e in warm.values()} == {"cache"}
        rows.append(("warm: resolve all (cached)", f"{t_warm * 1000:.1f} ms"))
        (_, _), t_offline = timed(lambda: run(offline=True))
        rows.append(("warm, --offline: resolve all", f"{t_offline * 1000:.1f} ms"))
        rows.append(("cold / warm", f"{t_cold / t_warm:.0f}×"))

    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
