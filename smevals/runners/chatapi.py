"""One OpenAI-compatible chat-completions call with retries, shared by the built-in Runners
that talk to such a server (`smevals:openai`, one request per Run; `smevals:agent`, one per
turn): the request's headers, the retry loop honouring the Run's deadline and cancel event,
and the reading of a response (first choice, text, token counts, tool calls).

Retries 429, 5xx and lost connections with bounded exponential backoff; a request in flight
is aborted (its socket shut down) when the Run is cancelled or its deadline passes.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from smevals.runners.base import BuiltinContext, RunFailed, is_int, type_name
from smevals.runners.http import (
    BACKOFF_BASE,
    BACKOFF_CAP,
    Backoff,
    Endpoint,
    HttpCall,
    Reply,
    ResponseTooLarge,
    retry_after,
    retryable,
)
from smevals.version import __version__

DEFAULT_RETRIES = 4
DEFAULT_REQUEST_TIMEOUT = 120.0
SHOWN_CHARS = 300  # of a response body quoted in stderr
POLL = 0.05  # seconds between looks at the cancel event and the deadline during a request
_RESETS = (ConnectionResetError, ConnectionAbortedError, BrokenPipeError,
           http.client.IncompleteRead)


@dataclass(frozen=True)
class Plan:
    """Where the requests of one Run go, and how to retry them."""

    endpoint: Endpoint
    body: bytes
    headers: dict[str, str] = field(repr=False)
    secret: str = field(repr=False)  # the API key: only used to redact it from quoted bodies
    retries: int = DEFAULT_RETRIES
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    backoff_base: float = BACKOFF_BASE
    backoff_cap: float = BACKOFF_CAP


def request_headers(config: Mapping[str, Any], secret: str) -> dict[str, str]:
    """JSON headers, a bearer token when there is an API key, then the config's `headers`."""
    headers = {"Content-Type": "application/json", "Accept": "application/json",
               "User-Agent": f"smevals/{__version__}"}
    if secret:
        headers["Authorization"] = f"Bearer {secret}"
    for key, value in (config.get("headers") or {}).items():
        headers = {k: v for k, v in headers.items() if k.lower() != key.lower()} | {key: value}
    return headers


@dataclass
class Retryable:
    reason: str
    retry_after: float | None = None
    usage: dict[str, Any] | None = None


@dataclass(frozen=True)
class Answer:
    """A 2xx response whose body is a JSON object."""

    data: dict[str, Any]
    reply: Reply


class Session:
    """The requests of one Run, their log, and the Run's deadline."""

    def __init__(self, ctx: BuiltinContext, plan: Plan, prefix: str,
                 keep: str | None = None) -> None:
        self.ctx = ctx
        self.plan = plan
        self.prefix = prefix
        self.keep_as = keep  # the workspace file keeping the last response body
        self.deadline = None if ctx.timeout is None else time.monotonic() + ctx.timeout
        self.log: list[str] = []

    def post(self, body: bytes | None = None) -> Answer:
        """POST `body` (the plan's by default), retrying as the plan says."""
        total = self.plan.retries + 1
        for attempt in range(1, total + 1):
            if self.ctx.cancel.is_set():
                raise cancelled()
            result = self.attempt(self.plan.body if body is None else body)
            if isinstance(result, Answer):
                return result
            if attempt == total:
                raise RunFailed(f"{result.reason} (gave up after {total} attempts)",
                                usage=result.usage)
            self.pause(attempt, total, result)
        raise AssertionError("unreachable")

    def stderr(self) -> str:
        return "".join(f"{self.prefix}: {line}\n" for line in self.log)

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def timed_out(self, doing: str) -> RunFailed:
        return RunFailed(f"timed out after {self.ctx.timeout:g} s {doing}", failure="timeout")

    def pause(self, attempt: int, total: int, retry: Retryable) -> None:
        policy = Backoff(self.plan.backoff_base, self.plan.backoff_cap, self.plan.backoff_cap)
        delay = policy.delay(attempt, retry.retry_after)
        remaining = self.remaining()
        if remaining is not None and delay >= remaining:
            raise self.timed_out(f"(no time left to retry after: {retry.reason})")
        self.log.append(f"attempt {attempt}/{total}: {retry.reason}; retrying in {delay:.2f} s")
        if self.ctx.cancel.wait(delay):
            raise cancelled()

    def attempt(self, body: bytes) -> Answer | Retryable:
        try:
            reply = self.request(body)
        except _Reset as reset:
            return Retryable(str(reset))
        self.keep(reply.body)
        status, shown = reply.status, self.quote(reply.body)
        if retryable(status):
            wait = retry_after(reply.headers.get("retry-after"))
            return Retryable(f"HTTP {status}: {shown}", wait, {"http_status": status})
        if not 200 <= status <= 299:
            raise RunFailed(f"HTTP {status} from {self.plan.endpoint.url}: {shown}",
                            usage={"http_status": status})
        try:
            data = orjson.loads(reply.body)
        except orjson.JSONDecodeError as error:
            raise self.malformed(reply, ValueError(f"not JSON ({error})")) from None
        if not isinstance(data, dict):
            raise self.malformed(reply, ValueError(f"expected a JSON object, got "
                                                   f"{type_name(data)}"))
        return Answer(data, reply)

    def malformed(self, reply: Reply, error: ValueError) -> RunFailed:
        """The failure of a 2xx response that is not a chat completion."""
        usage: dict[str, Any] = {"http_status": reply.status, "latency_ms": reply.latency_ms}
        return RunFailed(f"malformed response body (HTTP {reply.status}): {error}; "
                         f"body: {self.quote(reply.body)}", usage=usage)

    def request(self, body: bytes) -> Reply:
        timeout = self.plan.request_timeout
        remaining = self.remaining()
        if remaining is not None:
            if remaining <= 0:
                raise self.timed_out("before the request")
            timeout = min(timeout, remaining)
        call = HttpCall(self.plan.endpoint, body, self.plan.headers, timeout)
        while not call.wait(POLL):
            if self.ctx.cancel.is_set():
                call.abort()
                raise cancelled()
            if self.deadline is not None and time.monotonic() >= self.deadline:
                call.abort()
                raise self.timed_out(f"waiting for {self.plan.endpoint.url}")
        if call.error is not None:
            raise self.network_error(call.error, timeout)
        assert call.reply is not None
        return call.reply

    def network_error(self, error: BaseException, timeout: float) -> BaseException:
        url, where = self.plan.endpoint.url, f"{self.plan.endpoint.host}:{self.plan.endpoint.port}"
        if isinstance(error, ResponseTooLarge):
            return RunFailed(f"{url}: {error}")
        if isinstance(error, _RESETS):  # RemoteDisconnected is a ConnectionResetError
            return _Reset(f"connection lost ({type(error).__name__}: {error})")
        if isinstance(error, TimeoutError):
            remaining = self.remaining()
            if remaining is not None and remaining <= POLL:
                return self.timed_out(f"waiting for {url}")
            return RunFailed(f"no response from {url} within request_timeout {timeout:g} s",
                             failure="timeout")
        if isinstance(error, ConnectionRefusedError):
            return RunFailed(f"connection refused by {where} (is the server running?)")
        if isinstance(error, socket.gaierror):
            return RunFailed(f"cannot resolve host {self.plan.endpoint.host!r}: {error}")
        if isinstance(error, OSError | http.client.HTTPException):
            return RunFailed(f"network error with {url}: {type(error).__name__}: {error}")
        return error

    def quote(self, body: bytes) -> str:
        text = body.decode("utf-8", "replace").strip()
        if len(self.plan.secret) >= 6:
            text = text.replace(self.plan.secret, "[redacted]")
        if len(text) > SHOWN_CHARS:
            text = f"{text[:SHOWN_CHARS]}... ({len(body)} bytes)"
        return text or "(empty body)"

    def keep(self, body: bytes) -> None:
        if self.keep_as is None:
            return
        try:
            (Path(self.ctx.workspace) / self.keep_as).write_bytes(body)
        except OSError as error:
            self.log.append(f"could not keep the response body: {error}")


class _Reset(Exception):
    """The connection was lost mid-request: worth a retry."""


def cancelled() -> RunFailed:
    return RunFailed("cancelled", exit_code=130)


def first_choice(data: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The message and finish reason of a chat-completions response's first choice."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ValueError("no `choices`")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise ValueError("`choices[0].message` is not an object")
    return message, choice.get("finish_reason")


def content_text(content: Any) -> str:
    """A message's `content` as text (of content parts, the text ones joined)."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):  # content parts: keep the text ones
        return "".join(
            part["text"] for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    raise ValueError(f"`content` must be a string or a list, not {type_name(content)}")


def token_usage(raw: Any) -> dict[str, Any]:
    """A response's `usage` in smevals' names (docs/runners.md#usage): input tokens (the
    cached ones included, as chat completions count them), output tokens (the reasoning
    ones included), total, and the cached and reasoning ones where the server says."""
    usage: dict[str, Any] = {}
    if not isinstance(raw, dict):
        return usage
    for theirs, ours in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens"),
                         ("total_tokens", "total_tokens")):
        if is_int(raw.get(theirs)) and raw[theirs] >= 0:
            usage[ours] = raw[theirs]
    for details, theirs, ours in (("prompt_tokens_details", "cached_tokens", "cached_input_tokens"),
                                  ("completion_tokens_details", "reasoning_tokens",
                                   "reasoning_tokens")):
        inner = raw.get(details)
        if isinstance(inner, dict) and is_int(inner.get(theirs)) and inner[theirs] >= 0:
            usage[ours] = inner[theirs]
    if "total_tokens" not in usage and {"input_tokens", "output_tokens"} <= usage.keys():
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    return usage


def tool_calls(raw: Any) -> list[dict[str, Any]]:
    """A message's `tool_calls` as `{name, arguments, id}` (arguments parsed from their JSON
    string, kept as the string when it is not JSON); ValueError when malformed."""
    if not isinstance(raw, list):
        raise ValueError("`tool_calls` is not a list")
    calls = []
    for index, item in enumerate(raw):
        function = item.get("function") if isinstance(item, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            raise ValueError(f"tool_calls[{index}] has no function name")
        assert isinstance(function, dict) and isinstance(item, dict)
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            with contextlib.suppress(orjson.JSONDecodeError):
                arguments = orjson.loads(arguments)
        call: dict[str, Any] = {"name": name, "arguments": arguments}
        if isinstance(item.get("id"), str):
            call["id"] = item["id"]
        calls.append(call)
    return calls
