"""The one HTTP client of smevals (the judges' OpenAI-compatible backend, the `smevals:openai`
and `smevals:agent` runners, the `custom_webhook` checker): an abortable POST on a worker
thread with a cap on the response, and net/retry.py retries it.

Cheap to import: http.client and ssl load on the first request.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from smevals.files.regular import megabytes

if TYPE_CHECKING:
    import http.client
    import ssl


@dataclass(frozen=True)
class Endpoint:
    """An http(s) URL split for http.client; `url` (no credentials, no query) is for messages."""

    https: bool
    host: str
    port: int
    target: str
    url: str

    @classmethod
    def parse(cls, base_url: str, path: str = "") -> Endpoint:
        """`base_url` with `path` appended to its path; a query in `base_url` is kept."""
        from urllib.parse import urlsplit

        parts = urlsplit(base_url)
        https = parts.scheme == "https"
        target = parts.path.rstrip("/") + path
        url = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{target}"
        query = f"?{parts.query}" if parts.query else ""
        port = parts.port or (443 if https else 80)
        return cls(https, parts.hostname or "", port, target + query, url)

    def connect(self, timeout: float) -> http.client.HTTPConnection:
        import http.client

        if self.https:
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=timeout, context=_tls_context()
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    import ssl

    return ssl.create_default_context()


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    headers: dict[str, str]  # names in lower case
    latency_ms: float  # from sending the request to the end of the body


RESPONSE_LIMIT_SETTING = "SMEVALS_MAX_RESPONSE_MB"
RESPONSE_LIMIT_MB = 32


class ResponseTooLarge(Exception):
    """A response body above the limit, given up on after limit + 1 bytes (never retried)."""

    def __init__(self, limit: int, setting: str | None = RESPONSE_LIMIT_SETTING) -> None:
        raises = f" ({setting} raises it)" if setting else ""
        super().__init__(f"the response body is above the {limit / (1 << 20):g} MB limit of a "
                         f"response{raises}")


class HttpCall:
    """One POST on a worker thread, so that the caller can give up on it at any moment.

    `limit` caps the response body (SMEVALS_MAX_RESPONSE_MB by default); `setting` is what
    raises the limit, named when a response is above it."""

    def __init__(self, conn: http.client.HTTPConnection, target: str, body: bytes,
                 headers: Mapping[str, str], limit: int | None = None,
                 setting: str | None = RESPONSE_LIMIT_SETTING) -> None:
        self.conn = conn
        self.limit = megabytes(RESPONSE_LIMIT_SETTING, RESPONSE_LIMIT_MB) if limit is None \
            else limit
        self.setting = setting
        self.reply: Reply | None = None
        self.error: BaseException | None = None
        request = (target, body, dict(headers))
        self.thread = threading.Thread(target=self._run, args=request, daemon=True,
                                       name="smevals-http")
        self.thread.start()

    @classmethod
    def to(cls, endpoint: Endpoint, body: bytes, headers: Mapping[str, str],
           timeout: float) -> HttpCall:
        """A POST of `body` to `endpoint`, each socket operation within `timeout` seconds."""
        return cls(endpoint.connect(timeout), endpoint.target, body, headers)

    def _run(self, target: str, body: bytes, headers: dict[str, str]) -> None:
        started = time.monotonic()
        try:
            self.conn.request("POST", target, body, headers)
            response = self.conn.getresponse()
            data = response.read(self.limit + 1)
            if len(data) > self.limit:
                raise ResponseTooLarge(self.limit, self.setting)
            latency = round((time.monotonic() - started) * 1000, 1)
            names = {name.lower(): value for name, value in response.getheaders()}
            self.reply = Reply(response.status, data, names, latency)
        except BaseException as error:  # handed over to the caller's thread
            self.error = error
        finally:
            self.conn.close()

    def wait(self, seconds: float) -> bool:
        """Whether the call ended within `seconds`."""
        self.thread.join(seconds)
        return not self.thread.is_alive()

    def abort(self) -> None:
        import socket

        sock = self.conn.sock
        if sock is not None:  # shutdown (not close) wakes the thread blocked on the socket
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
