"""OpenAI-compatible chat completions, for every caller that talks to such a server (the
judges' backend, the `smevals:openai` and `smevals:agent` runners): the request's headers,
and the reading of a response (first choice, text, token counts, tool calls)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, TypeGuard

import orjson

from smevals.version import __version__


def request_headers(config: Mapping[str, Any], secret: str) -> dict[str, str]:
    """JSON headers, a bearer token when there is an API key, then the config's `headers`."""
    headers = {"Content-Type": "application/json", "Accept": "application/json",
               "User-Agent": f"smevals/{__version__}"}
    if secret:
        headers["Authorization"] = f"Bearer {secret}"
    for key, value in (config.get("headers") or {}).items():
        headers = {k: v for k, v in headers.items() if k.lower() != key.lower()} | {key: value}
    return headers


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


def type_name(value: object) -> str:
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


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
