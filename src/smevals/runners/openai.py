"""`runner: smevals:openai`: one chat-completions request per Run to an OpenAI-compatible server.

Retries 429, 5xx and lost connections with bounded exponential backoff; honours the Run's
timeout and the cancel event (the request and its retries are runners/chatapi.py's, shared
with `smevals:agent`; the reading of a response is net/chat.py's, shared with the judges).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

import orjson

from smevals.net.chat import content_text, first_choice, request_headers, token_usage, tool_calls
from smevals.net.http import Endpoint
from smevals.net.retry import BACKOFF_BASE, BACKOFF_CAP
from smevals.runners.base import (
    BuiltinContext,
    BuiltinOutcome,
    Problems,
    RunFailed,
    chat_messages,
)
from smevals.runners.chatapi import DEFAULT_REQUEST_TIMEOUT, DEFAULT_RETRIES, Answer, Plan, Session
from smevals.runners.options import (
    ENV_NAME,
    FORMATS,
    MAPPING,
    TEXT,
    config_problems_for,
    http_url,
    options_schema,
)

__all__ = ["Plan", "config_problems", "make_plan", "request_body", "run"]

NAME = "openai"
PREFIX = "smevals:openai"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
RESPONSE_FILE = "openai-response.json"  # the last response body, kept in the Run's workspace
RESERVED_PARAMS = ("model", "messages", "stream")


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


T = TypeVar("T")


def _given(value: T | None, default: T) -> T:
    return default if value is None else value


def outcome(session: Session, answer: Answer) -> BuiltinOutcome:
    """The Run of a chat completion: its text as output, its counts as usage."""
    data, reply = answer.data, answer.reply
    try:
        message, finish = first_choice(data)
        usage = token_usage(data.get("usage"))
        usage.update(latency_ms=reply.latency_ms, http_status=reply.status)
        if isinstance(data.get("model"), str):
            usage["model"] = data["model"]
        if isinstance(finish, str):
            usage["finish_reason"] = finish
        if message.get("tool_calls"):
            usage["tool_calls"] = tool_calls(message["tool_calls"])
        text = content_text(message.get("content"))
    except ValueError as error:
        raise session.malformed(reply, error) from None
    return BuiltinOutcome(stdout=text, stderr=session.stderr(), usage=usage)


def run(ctx: BuiltinContext) -> BuiltinOutcome:
    plan = make_plan(ctx)
    session = Session(ctx, plan, PREFIX, keep=RESPONSE_FILE)
    try:
        return outcome(session, session.post())
    except RunFailed as failed:
        return failed.outcome(PREFIX, session.stderr())
