"""HTTPS GETs with timeouts, retries with backoff, and a fast, clear answer when offline.

A DNS failure or a refused connection means "offline": it is not retried, and the host is
skipped for the rest of the run, so an offline build is not slowed down by one wait per excerpt.
Timeouts, 5xx/429 answers and truncated bodies are retried; when the retries run out the host
is skipped for the rest of the run too.
"""

from __future__ import annotations

import http.client
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit


class FetchError(Exception):
    """The URL could not be fetched; `reason` says why in a few words."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"{url}: {reason}")


class NotFound(FetchError):
    """HTTP 404/410: the server answered, the file is not there."""


class Offline(FetchError):
    """The host cannot be reached at all (DNS failure, connection refused, skipped)."""


@dataclass(frozen=True)
class NetSettings:
    timeout: float = 15.0  # seconds, per connect and per read
    retries: int = 3  # extra attempts after the first
    backoff: float = 0.5  # seconds before retry 1; doubles each time


class Http:
    """One run's HTTP client: remembers which hosts are down."""

    def __init__(
        self, settings: NetSettings | None = None, log: Callable[[str], None] | None = None
    ) -> None:
        self.settings = settings or NetSettings()
        self.log = log or (lambda message: None)
        self.down: dict[str, str] = {}  # host -> why it is skipped
        self.attempts: list[str] = []  # every URL actually requested, in order

    def get(self, url: str, headers: dict[str, str] | None = None) -> bytes:
        host = urlsplit(url).netloc
        if host in self.down:
            raise Offline(url, f"{host} skipped for this run ({self.down[host]})")
        settings = self.settings
        last = "no attempt"
        for attempt in range(settings.retries + 1):
            if attempt:
                delay = settings.backoff * 2 ** (attempt - 1)
                self.log(f"http: {last}; retry {attempt}/{settings.retries} in {delay:g} s: {url}")
                time.sleep(delay)
            self.attempts.append(url)
            try:
                return self._get_once(url, headers or {})
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
        attempts = settings.retries + 1
        self.down[host] = f"{last} after {attempts} attempts"
        self.log(f"http: {url}: {last} after {attempts} attempts; skipping {host} for this run")
        raise FetchError(url, f"{last} after {attempts} attempts")

    def _get_once(self, url: str, headers: dict[str, str]) -> bytes:
        request = urllib.request.Request(url, headers={"User-Agent": "itm-sources/1", **headers})
        with urllib.request.urlopen(request, timeout=self.settings.timeout) as response:
            body = response.read()
            declared = response.headers.get("Content-Length")
            if declared is not None and declared.isdigit() and len(body) != int(declared):
                raise http.client.IncompleteRead(body, int(declared) - len(body))
            return body
