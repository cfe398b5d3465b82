"""HTTPS GETs with timeouts, retries with backoff, and a fast, clear answer when offline.

A DNS failure or a refused connection means "offline": it is not retried, and the host is
skipped for the rest of the run, so an offline build is not slowed down by one wait per excerpt.
Timeouts, 5xx/429 answers and truncated bodies are retried; when the retries run out the host
is skipped for the rest of the run too.

Every download has an overall deadline that nothing can stretch: a server that trickles one byte
every few seconds never trips a per-read timeout, in its headers or its body, so a timer shuts
the connection's socket at the deadline whatever it is waiting for. It also has a size cap: the size the pin or index states when known, else
NetSettings.max_bytes. A body past the cap is refused while it streams, before it fills memory.

Kept on the standard library's urllib, where httpx was asked for: httpx's timeouts bound each
connect, read, write and pool wait, not a whole download (encode/httpx#1450, open: a body
trickled in small chunks never trips them), so it would need this same timer on its socket, and
it would add six packages (httpx, httpcore, h11, anyio, certifi, idna) to the light install that
pins excerpts for any site.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


class FetchError(Exception):
    """The URL could not be fetched; `reason` says why in a few words."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"{url}: {reason}")


class TooLarge(FetchError):
    """The body is larger than the pinned size or the cap: not retried."""


class TooSlow(FetchError):
    """The download did not finish within its overall deadline: not retried."""


class NotFound(FetchError):
    """HTTP 404/410: the server answered, the file is not there."""


class Offline(FetchError):
    """The host cannot be reached at all (DNS failure, connection refused, skipped)."""


@dataclass(frozen=True)
class NetSettings:
    timeout: float = 15.0  # seconds, per connect and per read
    retries: int = 3  # extra attempts after the first
    backoff: float = 0.5  # seconds before retry 1; doubles each time
    deadline: float = 60.0  # seconds for one download, all attempts together
    max_bytes: int = 256 << 20  # size cap when the size is not known in advance


class Deadline:
    """Shuts a connection's socket at an absolute time (time.monotonic()), whatever it is waiting
    for: the TLS handshake, a header line, a body chunk. `fired` tells a failure it caused."""

    def __init__(self, at: float) -> None:
        self.at = at
        self.fired = False
        self._timers: list[threading.Timer] = []

    def watch(self, sock: socket.socket) -> None:
        timer = threading.Timer(max(0.0, self.at - time.monotonic()), self._fire, (sock,))
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _fire(self, sock: socket.socket) -> None:
        self.fired = True
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)  # a blocked recv returns at once

    def cancel(self) -> None:
        for timer in self._timers:
            timer.cancel()


def _watched(base: type[http.client.HTTPConnection], deadline: Deadline) -> Any:
    """`base` whose socket the deadline watches from the moment it connects."""

    class Watched(base):  # type: ignore[valid-type, misc]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = self._connect_watched

        def _connect_watched(self, *args: object, **kwargs: object) -> socket.socket:
            sock = socket.create_connection(*args, **kwargs)  # type: ignore[arg-type]
            deadline.watch(sock)  # before TLS: a trickled handshake is cut too
            return sock

    return Watched


def _opener(deadline: Deadline, context: ssl.SSLContext) -> urllib.request.OpenerDirector:
    """urllib's opener, whose HTTP and HTTPS connections the deadline watches."""

    class Plain(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(_watched(http.client.HTTPConnection, deadline), req)

    class Secure(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            connection = _watched(http.client.HTTPSConnection, deadline)
            return self.do_open(connection, req, context=context)

    return urllib.request.build_opener(Plain(), Secure(context=context))


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The default TLS context (system CA certificates), made once: loading the certificates is
    ~20 ms, which urlopen would otherwise pay again for every download."""
    return ssl.create_default_context()


class Http:
    """One run's HTTP client: remembers which hosts are down."""

    def __init__(
        self, settings: NetSettings | None = None, log: Callable[[str], None] | None = None
    ) -> None:
        self.settings = settings or NetSettings()
        self.log = log or (lambda message: None)
        self.down: dict[str, str] = {}  # host -> why it is skipped
        self.attempts: list[str] = []  # every URL actually requested, in order

    def get(
        self, url: str, headers: dict[str, str] | None = None, *, size: int | None = None
    ) -> bytes:
        """The body of `url`; `size` (when known, e.g. pinned) is the exact size expected and
        the cap, else settings.max_bytes caps it."""
        host = urlsplit(url).netloc
        if host in self.down:
            raise Offline(url, f"{host} skipped for this run ({self.down[host]})")
        settings = self.settings
        last = "no attempt"
        deadline = time.monotonic() + settings.deadline
        cap = size if size is not None else settings.max_bytes
        for attempt in range(settings.retries + 1):
            if attempt:
                delay = settings.backoff * 2 ** (attempt - 1)
                self.log(f"http: {last}; retry {attempt}/{settings.retries} in {delay:g} s: {url}")
                if time.monotonic() + delay >= deadline:
                    break
                time.sleep(delay)
            self.attempts.append(url)
            try:
                return self._get_once(url, headers or {}, cap, deadline)
            except TooLarge as error:
                self.log(f"http: {error}")
                raise
            except TooSlow as error:  # the host, not the file: the next download would wait too
                self.down[host] = f"a download did not finish in {settings.deadline:g} s"
                self.log(f"http: {error}; skipping {host} for the rest of this run")
                raise
            except urllib.error.HTTPError as error:
                if error.code in (404, 410):
                    raise NotFound(url, f"HTTP {error.code} (not found)") from None
                if error.code not in (408, 425, 429) and error.code < 500:
                    raise FetchError(url, f"HTTP {error.code} {error.reason}") from None
                last = f"HTTP {error.code}"
            except urllib.error.URLError as error:
                reason = error.reason
                if isinstance(reason, socket.gaierror | ConnectionRefusedError):
                    dns = isinstance(reason, socket.gaierror)
                    why = "DNS lookup failed" if dns else "connection refused"
                    self.down[host] = f"offline: {why}"
                    self.log(f"http: {host} is offline ({why}); skipped for the rest of this run")
                    raise Offline(url, f"offline: {why} for {host}") from None
                last = "timed out" if isinstance(reason, TimeoutError) else f"{reason}"
            except TimeoutError:
                last = "timed out"
            except http.client.IncompleteRead as error:
                last = f"truncated body ({len(error.partial)} bytes, more expected)"
            except (http.client.HTTPException, ConnectionError) as error:
                last = f"connection failed ({type(error).__name__})"
        attempts = len([u for u in self.attempts if u == url])
        self.down[host] = f"{last} after {attempts} attempts"
        self.log(f"http: {url}: {last} after {attempts} attempts; skipping {host} for this run")
        raise FetchError(url, f"{last} after {attempts} attempts")

    def _get_once(self, url: str, headers: dict[str, str], cap: int, deadline: float) -> bytes:
        guard = Deadline(deadline)
        cut = TooSlow(url, f"not finished after {self.settings.deadline:g} s (cut at its"
                      " deadline); download stopped")  # fmt: skip
        try:
            body = self._read(url, headers, cap, deadline, guard)
        except (OSError, http.client.HTTPException) as error:
            if guard.fired or time.monotonic() >= deadline:
                raise cut from None
            raise error
        finally:
            guard.cancel()
        if guard.fired:  # the cut socket read as a short answer: never trust it
            raise cut
        return body

    def _read(
        self, url: str, headers: dict[str, str], cap: int, deadline: float, guard: Deadline
    ) -> bytes:
        request = urllib.request.Request(url, headers={"User-Agent": "itm-sources/1", **headers})
        timeout = max(0.1, min(self.settings.timeout, deadline - time.monotonic()))
        opener = _opener(guard, tls_context())
        with opener.open(request, timeout=timeout) as response:
            declared = response.headers.get("Content-Length")
            if declared is not None and declared.isdigit() and int(declared) > cap:
                raise TooLarge(url, f"the server announces {int(declared):,} bytes, more than the"
                               f" {cap:,} allowed; not downloaded")  # fmt: skip
            chunks: list[bytes] = []
            total = 0
            while chunk := response.read1(1 << 16):
                total += len(chunk)
                if total > cap:
                    raise TooLarge(url, f"the body passed {cap:,} bytes; download stopped")
                if time.monotonic() > deadline:
                    raise TooSlow(url, f"not finished after {self.settings.deadline:g} s "
                                  f"({total:,} bytes so far); download stopped")  # fmt: skip
                chunks.append(chunk)
            body = b"".join(chunks)
            if declared is not None and declared.isdigit() and len(body) != int(declared):
                raise http.client.IncompleteRead(body, int(declared) - len(body))
            return body
