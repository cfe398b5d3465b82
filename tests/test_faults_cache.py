"""Fault injection, warm cache + edited lock: an excerpt's cached text is valid only where it was
verified (repo, commit, path, lines, sha256). Issue 11: moving `gpt2.block-call-attn` to line 124
and keeping its sha256 published line 126's code as "model.py 124"."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from generator.errors import InputError
from generator.sources.fetch import NetSettings
from generator.sources.lock import load_lock
from generator.sources.resolve import Resolver
from tests.site_helpers import SITE_LOCK

PYPI = "https://pypi.org/simple"


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path]:
    """The real lock, resolved once from the registry mirrors into a cache of its own."""
    lock = load_lock(SITE_LOCK)
    cache = tmp_path_factory.mktemp("warm-cache")
    resolver = Resolver(lock, cache_dir=cache, sources=("cache", "pypi"), pypi_base=PYPI,
                        net=NetSettings(timeout=30, retries=2, backoff=1))  # fmt: skip
    try:
        resolver.resolve(lock.pin("gpt2.block-call-attn"))
        resolver.resolve(lock.pin("gpt2.attn"))
    except InputError as error:
        if "offline" in str(error):
            pytest.skip(f"PyPI is unreachable: {error.problem[:200]}")
        raise
    return lock, cache


def offline(lock, cache: Path) -> Resolver:
    return Resolver(lock, cache_dir=cache, offline=True, sources=("cache", "pypi"))


def test_the_warm_cache_serves_the_pinned_location(warm) -> None:
    lock, cache = warm
    excerpt = offline(lock, cache).resolve(lock.pin("gpt2.block-call-attn"))
    assert excerpt.resolved_from == "cache" and excerpt.label == "model.py 126"


@pytest.mark.parametrize("lines", [((124, 124),), ((125, 125),), ((127, 127),)])
def test_moved_lines_with_the_same_sha256_are_refused(warm, lines) -> None:
    lock, cache = warm
    moved = replace(lock.pin("gpt2.block-call-attn"), ranges=lines)
    with pytest.raises(InputError) as caught:
        offline(lock.with_pin(moved), cache).resolve(moved)
    assert caught.value.entry == "gpt2.block-call-attn"
    assert "do not hash to" in caught.value.problem  # the mirror was asked, at those lines


def test_another_excerpts_sha256_is_refused(warm) -> None:
    lock, cache = warm
    attn = lock.pin("gpt2.attn")
    forged = replace(lock.pin("gpt2.block-call-attn"), sha256=attn.sha256)
    with pytest.raises(InputError):
        offline(lock.with_pin(forged), cache).resolve(forged)
