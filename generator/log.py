"""The generator's logger: MkDocs shows it with its own (`mkdocs build -v` for debug lines).

Named like Material's plugins' loggers (mkdocs.plugins.*), so MkDocs and ProperDocs print it,
count its warnings under `strict`, and `itm` commands can attach a handler of their own.
"""

from __future__ import annotations

import logging

log = logging.getLogger("mkdocs.plugins.itm")


def progress(message: str) -> None:
    """A step of long work (a fetch, a retry, training, a figure): shown at INFO."""
    log.info(message)
