"""`runner: smevals:openai`: one chat-completions request per Run to an OpenAI-compatible server.

Retries 429, 5xx and lost connections with bounded exponential backoff; honours the Run's
timeout and the cancel event (a request in flight is aborted by shutting its socket down).
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import orjson

from smevals.runners.base import (
    BuiltinContext,
    BuiltinOutcome,
    Problems,
    RunFailed,
    chat_messages,
    is_int,
    type_name,
)
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
from smevals.runners.options import (
    ENV_NAME,
    FORMATS,
    MAPPING,
    TEXT,
    config_problems_for,
    http_url,
    options_schema,
)
from smevals.version import __version__

NAME = "openai"
PREFIX = "smevals:openai"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_RETRIES = 4
DEFAULT_REQUEST_TIMEOUT = 120.0
SHOWN_CHARS = 300  # of a response body quoted in stderr
POLL = 0.05  # seconds between looks at the cancel event and the deadline during a request
RESPONSE_FILE = "openai-response.json"  # the last response body, kept in the Run's workspace
RESERVED_PARAMS = ("model", "messages", "stream")
_RESETS = (ConnectionResetError, ConnectionAbortedError, BrokenPipeError,
           http.client.IncompleteRead)


def _base_url(value: str) -> str | None:
    if problem := http_url(value):
        return problem
    if urlsplit(value).path.rstrip("/").endswith("/chat/completions"):
        return "must stop before /chat/completions (smevals appends it)"
    return None


FORMATS["openai-base-url"] = _base_url
_TOKEN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"  # an HTTP header name
_AT_LEAST_0 = {"type": "number", "minimum": 0}
_SET_BY_SMEVALS = {"not": {}, "x-problem": "must not be set (smevals sets it)"}
_HEADER_NAME = {"type": "string", "pattern": _TOKEN, "x-problem": {
    "type": "keys must be strings", "pattern": "bad header name {value!r}"}}
_ONE_LINE = {"type": "string", "not": {"type": "string", "pattern": r"[\r\n]"},
             "x-problem": {"not": "must be a one-line string"}}
SCHEMA = options_schema({
    "base_url": {"type": "string", "pattern": r"\S", "format": "openai-base-url"},
    "api_key_env": ENV_NAME,
    "system": TEXT,
    "temperature": _AT_LEAST_0,
    "max_tokens": {"type": "integer", "exclusiveMinimum": 0},
    "params": {**MAPPING, "properties": dict.fromkeys(RESERVED_PARAMS, _SET_BY_SMEVALS)},
    "headers": {**MAPPING, "propertyNames": _HEADER_NAME, "additionalProperties": _ONE_LINE},
    "retries": {"type": "integer", "minimum": 0, "maximum": 100},
    "request_timeout": {"type": "number", "exclusiveMinimum": 0},
    "backoff": {"type": "object", "properties": {"base": _AT_LEAST_0, "cap": _AT_LEAST_0},
                "additionalProperties": False},
})


def config_problems(config: Mapping[str, Any]) -> Problems:
    return config_problems_for(NAME, config, SCHEMA)


@dataclass(frozen=True)
class Plan:
    """The request of one Run and how to retry it."""

    endpoint: Endpoint
    body: bytes
    headers: dict[str, str] = field(repr=False)
    secret: str = field(repr=False)  # the API key: only used to redact it from quoted bodies
    retries: int = DEFAULT_RETRIES
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    backoff_base: float = BACKOFF_BASE
    backoff_cap: float = BACKOFF_CAP


def make_plan(ctx: BuiltinContext) -> Plan:
    config = ctx.config
    if problems := config_problems(config):
        text = "; ".join(f"{key}: {message}" for key, message in problems)
        raise RunFailed(f"bad config: {text}", failure="launch")
    secret = ctx.environ.get(config.get("api_key_env") or DEFAULT_KEY_ENV, "").strip()
    backoff = config.get("backoff") or {}
    return Plan(
        Endpoint.parse(config.get("base_url") or DEFAULT_BASE_URL, "/chat/completions"),
        request_body(ctx), request_headers(config, secret), secret,
        retries=int(_given(config.get("retries"), DEFAULT_RETRIES)),
        request_timeout=_given(config.get("request_timeout"), DEFAULT_REQUEST_TIMEOUT),
        backoff_base=_given(backoff.get("base"), BACKOFF_BASE),
        backoff_cap=_given(backoff.get("cap"), BACKOFF_CAP),
    )


def request_body(ctx: BuiltinContext) -> bytes:
    """model, messages, temperature and max_tokens, then the config's `params` merged in."""
    if not ctx.model:
        raise RunFailed("no model: set `model:` in the config or pass -m", failure="launch")
    config = ctx.config
    chat = chat_messages(ctx.task, config.get("system"))
    body: dict[str, Any] = {"model": ctx.model, "messages": chat}
    if config.get("temperature") is not None:
        body["temperature"] = config["temperature"]
    if config.get("max_tokens") is not None:   # JSON Schema's integer: 256.0 is one too
        body["max_tokens"] = int(config["max_tokens"])
    body.update(config.get("params") or {})
    try:
        return orjson.dumps(body)
    except TypeError as error:
        raise RunFailed(f"cannot encode the request as JSON: {error}", failure="launch") from None


def request_headers(config: Mapping[str, Any], secret: str) -> dict[str, str]:
    """JSON headers, a bearer token when there is an API key, then the config's `headers`."""
    headers = {"Content-Type": "application/json", "Accept": "application/json",
               "User-Agent": f"smevals/{__version__}"}
    if secret:
        headers["Authorization"] = f"Bearer {secret}"
    for key, value in (config.get("headers") or {}).items():
        headers = {k: v for k, v in headers.items() if k.lower() != key.lower()} | {key: value}
    return headers


def _given(value: Any, default: Any) -> Any:
    return default if value is None else value


@dataclass
class Retryable:
    reason: str
    retry_after: float | None = None
    usage: dict[str, Any] | None = None


class Session:
    """The attempts of one Run, their log, and the Run's deadline."""

    def __init__(self, ctx: BuiltinContext, plan: Plan) -> None:
        self.ctx = ctx
        self.plan = plan
        self.deadline = None if ctx.timeout is None else time.monotonic() + ctx.timeout
        self.log: list[str] = []

    def run(self) -> BuiltinOutcome:
        total = self.plan.retries + 1
        for attempt in range(1, total + 1):
            if self.ctx.cancel.is_set():
                raise _cancelled()
            result = self.attempt()
            if isinstance(result, BuiltinOutcome):
                return result
            if attempt == total:
                raise RunFailed(f"{result.reason} (gave up after {total} attempts)",
                                usage=result.usage)
            self.pause(attempt, total, result)
        raise AssertionError("unreachable")

    def stderr(self) -> str:
        return "".join(f"{PREFIX}: {line}\n" for line in self.log)

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
            raise _cancelled()

    def attempt(self) -> BuiltinOutcome | Retryable:
        try:
            reply = self.request()
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
            return self.success(reply)
        except ValueError as error:
            usage: dict[str, Any] = {"http_status": status, "latency_ms": reply.latency_ms}
            raise RunFailed(f"malformed response body (HTTP {status}): {error}; body: {shown}",
                            usage=usage) from None

    def request(self) -> Reply:
        timeout = self.plan.request_timeout
        remaining = self.remaining()
        if remaining is not None:
            if remaining <= 0:
                raise self.timed_out("before the request")
            timeout = min(timeout, remaining)
        call = HttpCall(self.plan.endpoint, self.plan.body, self.plan.headers, timeout)
        while not call.wait(POLL):
            if self.ctx.cancel.is_set():
                call.abort()
                raise _cancelled()
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

    def success(self, reply: Reply) -> BuiltinOutcome:
        try:
            data = orjson.loads(reply.body)
        except orjson.JSONDecodeError as error:
            raise ValueError(f"not JSON ({error})") from None
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {type_name(data)}")
        message, finish = first_choice(data)
        usage = token_usage(data.get("usage"))
        usage.update(latency_ms=reply.latency_ms, http_status=reply.status)
        if isinstance(data.get("model"), str):
            usage["model"] = data["model"]
        if isinstance(finish, str):
            usage["finish_reason"] = finish
        if message.get("tool_calls"):
            usage["tool_calls"] = _tool_calls(message["tool_calls"])
        return BuiltinOutcome(stdout=content_text(message.get("content")), stderr=self.stderr(),
                              usage=usage)

    def quote(self, body: bytes) -> str:
        text = body.decode("utf-8", "replace").strip()
        if len(self.plan.secret) >= 6:
            text = text.replace(self.plan.secret, "[redacted]")
        if len(text) > SHOWN_CHARS:
            text = f"{text[:SHOWN_CHARS]}... ({len(body)} bytes)"
        return text or "(empty body)"

    def keep(self, body: bytes) -> None:
        try:
            (self.ctx.workspace / RESPONSE_FILE).write_bytes(body)
        except OSError as error:
            self.log.append(f"could not keep the response body: {error}")


class _Reset(Exception):
    """The connection was lost mid-request: worth a retry."""


def _cancelled() -> RunFailed:
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
    """A response's `usage` in smevals' names (input, output and total tokens)."""
    usage: dict[str, Any] = {}
    if not isinstance(raw, dict):
        return usage
    for theirs, ours in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens"),
                         ("total_tokens", "total_tokens")):
        if is_int(raw.get(theirs)) and raw[theirs] >= 0:
            usage[ours] = raw[theirs]
    if "total_tokens" not in usage and {"input_tokens", "output_tokens"} <= usage.keys():
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    return usage


def _tool_calls(raw: Any) -> list[dict[str, Any]]:
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


def run(ctx: BuiltinContext) -> BuiltinOutcome:
    plan = make_plan(ctx)
    session = Session(ctx, plan)
    try:
        return session.run()
    except RunFailed as failed:
        return failed.outcome(PREFIX, session.stderr())
