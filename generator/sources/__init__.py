"""Pinned upstream code excerpts: the lock, verified resolution, and how pages cite them.

lock = load_lock(DEFAULT_LOCK)                       # validates; InputError(file, entry, fix)
excerpts = resolve_all(lock, cache_dir=settings.cache_dir)   # settings: generator.settings
excerpts["gpt2.attn"].blocks, .permalink, .label, .license, .evidence_level
"""

from __future__ import annotations

from generator.sources.excerpt import Excerpt, omission_marker
from generator.sources.lock import (
    DEFAULT_LOCK,
    EVIDENCE_LEVELS,
    Lock,
    Mirror,
    Pin,
    Repo,
    load_lock,
)
from generator.sources.resolve import Resolver, resolve_all

__all__ = [
    "DEFAULT_LOCK",
    "EVIDENCE_LEVELS",
    "Excerpt",
    "Lock",
    "Mirror",
    "Pin",
    "Repo",
    "Resolver",
    "load_lock",
    "omission_marker",
    "resolve_all",
]
