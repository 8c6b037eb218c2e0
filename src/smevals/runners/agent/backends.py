"""Where the agent's turns come from: an OpenAI-compatible server (`backend: openai`, one
chat-completions request per turn, through runners/chatapi.py), or recorded sessions
(`backend: replay`, offline: the model's successive responses read from a file).

A recorded session is `SESSIONS/MODEL/TASK.jsonl` (SESSIONS is the config's `sessions`
folder), or one file per sample in the folder `SESSIONS/MODEL/TASK/`: one JSON object per
line, each one response of the model, in order: `{"content": TEXT or null, "tool_calls":
[{"id": ID?, "name": NAME, "arguments": OBJECT or STRING}], "usage": {"input_tokens": N,
"output_tokens": N}?}` (OpenAI's tool-call shape, `{"id", "function": {"name",
"arguments"}}`, is accepted too). The tools really run: only the
model's side is recorded.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from smevals.net.chat import content_text, first_choice, is_int, token_usage, type_name
from smevals.runners.base import BuiltinContext, RunFailed
from smevals.runners.chatapi import Session

SESSION_CAP = 16 << 20       # bytes of one recorded session file


@dataclass(frozen=True)
class Call:
    """One tool call of the model; `arguments` is the raw string when it is not JSON."""

    id: str
    name: str
    arguments: Any


@dataclass(frozen=True)
class Turn:
    """One response of the model."""

    text: str
    calls: list[Call]
    usage: dict[str, int] = field(default_factory=dict)
    latency_ms: float = 0.0


class Backend(Protocol):
    def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        """The model's next response to the conversation so far."""


def parse_calls(raw: object, turn: int) -> list[Call]:
    """`tool_calls` of a response (OpenAI's or the short shape); ValueError when malformed."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError(f"`tool_calls` must be a list, not {type_name(raw)}")
    return [_call(item, turn, index) for index, item in enumerate(raw)]


def _call(item: object, turn: int, index: int) -> Call:
    if not isinstance(item, dict):
        raise ValueError(f"tool_calls[{index}] is not an object")
    inner = item.get("function")
    function: dict[str, Any] = inner if isinstance(inner, dict) else item
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"tool_calls[{index}] has no name")
    arguments = function.get("arguments", {})
    if isinstance(arguments, str):
        with contextlib.suppress(orjson.JSONDecodeError):   # else kept: the model is told
            arguments = orjson.loads(arguments) if arguments.strip() else {}
    ident = item.get("id")
    return Call(ident if isinstance(ident, str) and ident else f"call_{turn}_{index}",
                name, arguments)


class OpenAIBackend:
    """One chat-completions request per turn, with the tools offered."""

    def __init__(self, session: Session, model: str, extra: dict[str, Any]) -> None:
        self.session, self.model, self.extra = session, model, extra

    def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        body = {"model": self.model, "messages": messages, "tools": tools, **self.extra}
        answer = self.session.post(orjson.dumps(body))
        try:
            message, _finish = first_choice(answer.data)
            calls = parse_calls(message.get("tool_calls") or None, len(messages))
            text = content_text(message.get("content"))
        except ValueError as error:
            raise self.session.malformed(answer.reply, error) from None
        usage = {k: v for k, v in token_usage(answer.data.get("usage")).items()
                 if k != "total_tokens"}
        return Turn(text, calls, usage, answer.reply.latency_ms)


class ReplayBackend:
    """The recorded responses of one model on one Task, in order."""

    def __init__(self, path: Path, shown: str) -> None:
        self.path, self.shown = path, shown
        self.turns = load_session(path, shown)
        self.next = 0

    def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Turn:
        started = time.monotonic()
        if self.next >= len(self.turns):
            raise RunFailed(f"the recorded session {self.shown} ended after {len(self.turns)} "
                            "responses, all of them calling tools")
        turn = self.turns[self.next]
        self.next += 1
        latency = round((time.monotonic() - started) * 1000, 3)
        return Turn(turn.text, turn.calls, turn.usage, latency)


def session_path(ctx: BuiltinContext) -> tuple[Path, str]:
    """The recorded session of this Run's model, Task and sample, and how to name it:
    `SESSIONS/MODEL/TASK.jsonl`, else the sample's file of the folder `SESSIONS/MODEL/TASK/`
    (its `*.jsonl` by name, sample i taking the i-th modulo their count)."""
    task, model = ctx.task.get("name"), ctx.model
    if not isinstance(task, str) or not task:
        raise RunFailed("the task has no name", failure="launch")
    for what, name in (("model", model), ("task", task)):
        if "/" in name or "\0" in name or name.startswith("."):
            raise RunFailed(f"the {what} name {name!r} cannot name a recorded session file",
                            failure="launch")
    folder = Path(str(ctx.config["sessions"]))
    shown = f"{folder.as_posix().rstrip('/')}/{model}/{task}"
    base = ctx.config_dir / folder / model
    single = base / f"{task}.jsonl"
    if single.exists() or not (base / task).is_dir():
        return single, f"{shown}.jsonl"
    samples = sorted(p.name for p in (base / task).glob("*.jsonl"))
    if not samples:
        raise RunFailed(f"no recorded session in {shown}/ for this model and task")
    name = samples[ctx.sample_index % len(samples)]
    return base / task / name, f"{shown}/{name}"


def load_session(path: Path, shown: str) -> list[Turn]:
    from smevals.files.regular import NotRegular, TooLarge, read_capped

    try:
        data = read_capped(str(path), SESSION_CAP, "a recorded session", "")[1]
    except FileNotFoundError:
        raise RunFailed(f"no recorded session {shown} for this model and task") from None
    except TooLarge:
        raise RunFailed(f"the recorded session {shown} is above {SESSION_CAP >> 20} MB: "
                        "split it into one file per sample", failure="launch") from None
    except (NotRegular, OSError) as error:
        raise RunFailed(f"cannot read the recorded session {shown}: {error}",
                        failure="launch") from None
    turns: list[Turn] = []
    for number, line in enumerate(data.removeprefix(b"\xef\xbb\xbf").split(b"\n"), 1):
        if line.strip():
            try:
                turns.append(_recorded(line, len(turns)))
            except ValueError as error:
                raise RunFailed(f"{shown}:{number}: {error}", failure="launch") from None
    if not turns:
        raise RunFailed(f"the recorded session {shown} is empty", failure="launch")
    return turns


def _recorded(line: bytes, turn: int) -> Turn:
    try:
        item = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        raise ValueError(f"invalid JSON: {error}") from None
    if not isinstance(item, dict):
        raise ValueError(f"expected a JSON object, got {type_name(item)}")
    content = item.get("content")
    if content is not None and not isinstance(content, str):
        raise ValueError(f"'content' must be a string or null, not {type_name(content)}")
    usage = item.get("usage") or {}
    if not isinstance(usage, dict):
        raise ValueError(f"'usage' must be an object, not {type_name(usage)}")
    counts = {k: v for k, v in usage.items() if k in ("input_tokens", "output_tokens")}
    for key, value in counts.items():
        if not (is_int(value) and value >= 0):
            raise ValueError(f"'usage.{key}' must be a count of tokens, not {value!r}")
    return Turn(content or "", parse_calls(item.get("tool_calls"), turn), counts)
