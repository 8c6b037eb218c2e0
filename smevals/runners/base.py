"""What the in-process Runners (`runner: smevals:NAME`) share: the context and outcome of a Run,
a Task's chat messages, and an abortable HTTP request (config keys: runners/options.py).

Cheap to import: http.client and ssl load on the first request.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smevals.store.regular import megabytes

if TYPE_CHECKING:
    import http.client
    import ssl

Problems = list[tuple[str, str]]   # (field path, message)


@dataclass(frozen=True)
class BuiltinContext:
    """Everything a built-in Runner gets for one Run."""

    config: Mapping[str, Any]
    config_dir: Path
    task: Mapping[str, Any]
    model: str
    sample_index: int
    workspace: Path
    timeout: float | None
    environ: Mapping[str, str]
    cancel: threading.Event


@dataclass
class BuiltinOutcome:
    """What a built-in Runner produced; the run engine stores it as a Run."""

    stdout: str
    stderr: str = ""
    exit_code: int = 0
    usage: dict[str, Any] | None = None
    failure: str | None = None


class RunFailed(Exception):
    """Raised inside a built-in to end its Run as failed; `run_builtin` turns it into an outcome."""

    def __init__(
        self,
        reason: str,
        failure: str = "exit",
        exit_code: int = 1,
        usage: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.failure = failure
        self.exit_code = exit_code
        self.usage = usage

    def outcome(self, prefix: str, stderr: str = "") -> BuiltinOutcome:
        """The failed outcome, with `prefix: reason` appended to what `stderr` already holds."""
        return BuiltinOutcome(
            stdout="",
            stderr=f"{stderr}{prefix}: {self.reason}\n",
            exit_code=self.exit_code,
            usage=self.usage,
            failure=self.failure,
        )


def type_name(value: Any) -> str:
    """How a YAML author would call the type of `value`."""
    if value is None:
        return "null"
    names = {bool: "boolean", int: "integer", float: "number", str: "string"}
    if type(value) in names:
        return names[type(value)]
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, list | tuple):
        return "list"
    return type(value).__name__


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- a Task as chat messages ---


def chat_messages(task: Mapping[str, Any], system: str | None) -> list[dict[str, Any]]:
    """The chat messages of a Task (`prompt` or `messages`), with the config's system prompt first
    unless the Task's messages already begin with a system message."""
    name = task.get("name", "?")
    if "prompt" in task and "messages" in task:
        raise RunFailed(f"task {name!r} has both `prompt` and `messages`", failure="launch")
    if isinstance(task.get("prompt"), str):
        chat = [{"role": "user", "content": task["prompt"]}]
    elif "messages" in task:
        chat = _task_messages(name, task["messages"])
    else:
        raise RunFailed(f"task {name!r} needs a string `prompt` or `messages`", failure="launch")
    if system and not (chat and chat[0].get("role") == "system"):
        chat.insert(0, {"role": "system", "content": system})
    return chat


def _task_messages(name: str, value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise RunFailed(f"task {name!r}: `messages` must be a non-empty list", failure="launch")
    for index, item in enumerate(value):
        if not (isinstance(item, Mapping) and isinstance(item.get("role"), str)):
            raise RunFailed(
                f"task {name!r}: messages[{index}] needs a string `role`", failure="launch"
            )
    return [dict(item) for item in value]


# --- HTTP for built-ins that call a server (http.client and ssl load on first use) ---


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

    def __init__(self, limit: int) -> None:
        super().__init__(f"the response body is above the {limit / (1 << 20):g} MB limit of a "
                         f"response ({RESPONSE_LIMIT_SETTING} raises it)")


class HttpCall:
    """One POST on a worker thread, so that the caller can give up on it at any moment."""

    def __init__(self, endpoint: Endpoint, body: bytes, headers: Mapping[str, str],
                 timeout: float) -> None:
        self.conn = endpoint.connect(timeout)
        self.limit = megabytes(RESPONSE_LIMIT_SETTING, RESPONSE_LIMIT_MB)
        self.reply: Reply | None = None
        self.error: BaseException | None = None
        request = (endpoint.target, body, dict(headers))
        self.thread = threading.Thread(target=self._run, args=request, daemon=True,
                                       name="smevals-http")
        self.thread.start()

    def _run(self, target: str, body: bytes, headers: dict[str, str]) -> None:
        started = time.monotonic()
        try:
            self.conn.request("POST", target, body, headers)
            response = self.conn.getresponse()
            data = response.read(self.limit + 1)
            if len(data) > self.limit:
                raise ResponseTooLarge(self.limit)
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
