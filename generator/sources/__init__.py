"""Pinned upstream code excerpts: the lock, verified resolution, and how pages cite them.

lock = load_lock(Path("sources/lock.toml"))          # validates; InputError(file, entry, fix)
excerpts = resolve_excerpts(lock, settings)          # settings: generator.settings.Settings
excerpts["gpt2.attn"].blocks, .permalink, .label, .license, .evidence_level, .swhid
"""

from __future__ import annotations

from generator.sources.excerpt import Excerpt, omission_marker
from generator.sources.lock import load_lock
from generator.sources.lockschema import EVIDENCE_LEVELS, FileId, Lock, Mirror, Pin, Repo
from generator.sources.resolve import Resolver, resolve_all, resolve_excerpts

__all__ = [
    "EVIDENCE_LEVELS",
    "Excerpt",
    "FileId",
    "Lock",
    "Mirror",
    "Pin",
    "Repo",
    "Resolver",
    "load_lock",
    "omission_marker",
    "resolve_all",
    "resolve_excerpts",
]
