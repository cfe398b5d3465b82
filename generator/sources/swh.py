"""Software Heritage ids (SWHID, ISO/IEC 18670:2025) for pinned files, and whether the archive
holds them.

A file's SWHID core is `swh:1:cnt:` + its git blob id (sha1 of b"blob <size>\\0" + its bytes), so
it is computed offline from the bytes. Qualifiers say where the file was seen and which lines
are cited:

    swh:1:cnt:<sha1_git>;origin=https://github.com/OWNER/REPO;anchor=swh:1:rev:<commit>;
        path=/PATH;lines=A-B

`archived` asks the archive's public API (GET /content/sha1_git:<id>/) whether it holds a file.
"""

from __future__ import annotations

import hashlib
import json
from urllib.parse import quote

from generator.sources.fetch import FetchError, Http, NotFound


def git_blob_id(data: bytes) -> str:
    """git's object id of a blob with these bytes (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def core(sha1_git: str) -> str:
    """ "swh:1:cnt:<sha1_git>": the file's content, wherever and whenever it was seen."""
    return f"swh:1:cnt:{sha1_git}"


def _qualifier(value: str) -> str:
    # SWHID qualifier values escape ";" and "%" (and anything a URL would), keep "/" and ":"
    return quote(value, safe="/:@!$&'()*+,=-._~")


def swhid(sha1_git: str, *, url: str, commit: str, path: str, lines: tuple[int, int]) -> str:
    """The file's SWHID with its origin, the commit it was read at, its path and the lines."""
    first, last = lines
    span = str(first) if first == last else f"{first}-{last}"
    return (
        f"{core(sha1_git)};origin={_qualifier(url)};anchor=swh:1:rev:{commit}"
        f";path=/{_qualifier(path)};lines={span}"
    )


class ArchiveError(Exception):
    """The archive could not be asked (network, an answer that is not its API's)."""


def archived(http: Http, base: str, sha1_git: str) -> bool:
    """Whether Software Heritage holds this file's content: True when its API describes the
    content (and names the same id), False on 404; ArchiveError when it cannot tell."""
    url = f"{base.rstrip('/')}/content/sha1_git:{sha1_git}/"
    try:
        body = http.get(url, headers={"Accept": "application/json"})
    except NotFound:
        return False
    except FetchError as error:  # offline, timed out, 5xx after retries: say why, never guess
        raise ArchiveError(error.reason) from None
    try:
        checksums = json.loads(body)["checksums"]
        named = checksums["sha1_git"]
    except (ValueError, KeyError, TypeError, RecursionError):  # RecursionError: nested [[[…
        raise ArchiveError(f"{url} did not answer with the archive's JSON") from None
    if named != sha1_git:
        raise ArchiveError(f"{url} described another content ({str(named)[:12]}…)")
    return True
