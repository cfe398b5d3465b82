"""A content-addressed blob cache: bytes stored under their own sha256, re-verified on read.

Layout: CACHE_DIR/sha256/ab/abcdef… . Writes go to a temp file in the same directory and are
renamed into place with os.replace, so a reader never sees a partial file and two builds that
write the same blob at once both succeed (the last rename wins; both wrote the same bytes).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from generator.sources.excerpt import sha256_hex


class BlobCache:
    def __init__(self, root: Path, log: Callable[[str], None] | None = None) -> None:
        self.root = Path(root) / "sha256"
        self.log = log or (lambda message: None)

    def path_for(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def get(self, sha256: str) -> bytes | None:
        """The blob, or None when absent. A blob whose bytes no longer hash to its name is
        corrupted: it is removed (and so replaced by the next put)."""
        path = self.path_for(sha256)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        if sha256_hex(data) != sha256:
            self.log(f"cache: {path} is corrupted (hash differs); removing it")
            path.unlink(missing_ok=True)
            return None
        return data

    def put(self, data: bytes) -> str:
        """Store `data` under its sha256 (atomically); returns the hash."""
        sha256 = sha256_hex(data)
        path = self.path_for(sha256)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{sha256[:12]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return sha256
