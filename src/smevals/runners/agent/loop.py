"""The agent's loop: ask the model, run the tools it calls, give it their results, until it
answers without calling a tool (the Run's output) or a limit ends the Run.

Limits: `max_turns` responses of the model; `max_tokens` tokens in all (input + output, as
the server counts them); the Run's `timeout` (the model's requests and the commands both stop
at it). A model still calling tools at its last turn fails the Run with the reason. What
happened is kept, whatever the end, as `transcript.jsonl` (files/transcript.py) and `usage`.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from smevals.files import transcript
from smevals.files.transcript import Entry
from smevals.proc.sandbox import SandboxRefused
from smevals.runners.agent.backends import Backend, Call, Turn
from smevals.runners.agent.tools import Result, Toolbox, specs
from smevals.runners.base import BuiltinContext, BuiltinOutcome, RunFailed, chat_messages

# The loop's version, recorded in each Run's provenance (`provenance.runner`): raised when
# what the model meets changes (the default system prompt, the tools and their words, the
# limits), so that `diff` and `log` can say the runner changed.
LOOP_VERSION = "1"

@dataclass(frozen=True)
class Limits:
    max_turns: int = 20
    max_tokens: int | None = None


@dataclass
class Tally:
    """What the Run used so far: its usage."""

    started: float = field(default_factory=time.monotonic)
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    details: dict[str, int] = field(default_factory=dict)   # cached, reasoning: where said
    latency_ms: float = 0.0
    calls: list[dict[str, Any]] = field(default_factory=list)
    tool_errors: int = 0

    def usage(self, sandbox: str) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "total_tokens": self.input_tokens + self.output_tokens, **self.details,
            "turns": self.turns,
            "tool_calls": self.calls, "tool_errors": self.tool_errors,
            "latency_ms": round(self.latency_ms, 1),
            "duration_ms": round((time.monotonic() - self.started) * 1000, 1)}
        if sandbox:
            usage["sandbox"] = sandbox
        return usage


class Loop:
    """One Run of the agent."""

    def __init__(self, ctx: BuiltinContext, backend: Backend, toolbox: Toolbox,
                 limits: Limits) -> None:
        self.ctx, self.backend, self.toolbox, self.limits = ctx, backend, toolbox, limits
        self.tally = Tally()
        self.entries: list[Entry] = []
        self.deadline = None if ctx.timeout is None else self.tally.started + ctx.timeout
        toolbox.deadline = self.deadline
        self.sandbox = ""

    def start(self) -> None:
        """Find what will contain `bash` (SandboxRefused ends the Run before any turn)."""
        try:
            self.sandbox = self.toolbox.sandbox()
        except SandboxRefused as refused:
            raise RunFailed(f"sandbox refused: {refused.reason}", failure="launch") from None

    def run(self, system: str | None) -> BuiltinOutcome:
        """The Run; its transcript is written into the workspace whatever the end."""
        try:
            self.start()
            text = self.converse(chat_messages(self.ctx.task, system))
        except RunFailed as failed:
            self.note(failed.reason)
            failed.usage = self.usage()
            with contextlib.suppress(RunFailed):    # the first reason is the Run's
                self.keep()
            raise
        self.keep()
        return BuiltinOutcome(stdout=text, usage=self.usage())

    def keep(self) -> None:
        """Write the transcript (RunFailed when the agent left no workspace to write it in)."""
        try:
            put_own(self.ctx.workspace, transcript.NAME, transcript.dump(self.entries))
        except OSError as error:
            raise RunFailed(f"cannot write {transcript.NAME} into the workspace: "
                            f"{error.strerror or error}", usage=self.usage()) from None

    def usage(self) -> dict[str, Any]:
        return self.tally.usage(self.sandbox)

    def converse(self, messages: list[dict[str, Any]]) -> str:
        for message in messages:
            if isinstance(message.get("content"), str):
                self.add({"type": "message", "role": str(message["role"]),
                          "text": message["content"]})
        tools = specs(self.toolbox.names)
        for turn in range(self.limits.max_turns):
            self.check_time()
            reply = self.backend.respond(messages, tools)
            self.count(reply)
            if reply.text or not reply.calls:
                self.add({"type": "message", "role": "assistant", "text": reply.text},
                         turn)
            if not reply.calls:
                return reply.text
            messages.append(assistant_message(reply))
            for call in reply.calls:
                messages.append(self.use(call, turn))
        raise RunFailed(f"turn limit: the model was still calling tools after max_turns "
                        f"{self.limits.max_turns}")

    def count(self, reply: Turn) -> None:
        tally = self.tally
        tally.turns += 1
        tally.input_tokens += reply.usage.get("input_tokens", 0)
        tally.output_tokens += reply.usage.get("output_tokens", 0)
        for key in ("cached_input_tokens", "reasoning_tokens"):
            if key in reply.usage:
                tally.details[key] = tally.details.get(key, 0) + reply.usage[key]
        tally.latency_ms += reply.latency_ms
        used = tally.input_tokens + tally.output_tokens
        if self.limits.max_tokens is not None and used > self.limits.max_tokens:
            raise RunFailed(f"token limit: {used} tokens used, above max_tokens "
                            f"{self.limits.max_tokens}")

    def use(self, call: Call, turn: int) -> dict[str, Any]:
        """Run one tool call; the `tool` message giving its result to the model."""
        self.tally.calls.append({"name": call.name, "arguments": brief(call.arguments),
                                 "id": call.id})
        self.add({"type": "tool_call", "id": call.id, "name": call.name,
                  "arguments": call.arguments}, turn)
        self.check_time()
        try:
            result: Result = self.toolbox.call(call.name, call.arguments)
        except SandboxRefused as refused:
            raise RunFailed(f"sandbox refused: {refused.reason}", failure="launch") from None
        self.tally.tool_errors += result.is_error
        entry: Entry = {"type": "tool_result", "id": call.id, "name": call.name,
                        "output": result.output, "is_error": result.is_error}
        if call.name == "bash":
            entry["exit_code"] = result.exit_code
        self.add(entry, turn)
        self.check_time()
        return {"role": "tool", "tool_call_id": call.id, "content": result.output}

    def check_time(self) -> None:
        if self.ctx.cancel.is_set():
            raise RunFailed("cancelled", exit_code=130)
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise RunFailed(f"timed out after {self.ctx.timeout:g} s", failure="timeout")

    def add(self, entry: Entry, turn: int | None = None) -> None:
        if turn is not None:
            entry["turn"] = turn
        entry["t"] = round(time.monotonic() - self.tally.started, 3)
        self.entries.append(entry)

    def note(self, reason: str) -> None:
        self.add({"type": "error", "message": reason})


USAGE_TEXT = 2000      # characters of a string argument kept in usage.tool_calls


def brief(value: object) -> object:
    """A call's arguments for `usage.tool_calls`: each long string cut to USAGE_TEXT
    characters, so that a Run writing big files keeps its usage under the usage file's
    limit (the transcript keeps the arguments whole)."""
    if isinstance(value, str) and len(value) > USAGE_TEXT:
        return f"{value[:USAGE_TEXT]}[... {len(value) - USAGE_TEXT} more characters]"
    if isinstance(value, dict):
        return {key: brief(item) for key, item in value.items()}
    if isinstance(value, list):
        return [brief(item) for item in value]
    return value


def put_own(workspace: Path, name: str, data: bytes) -> None:
    """Write one of smevals' own files at the top of the workspace as a new file: whatever
    the agent left at that name (a link out, a FIFO) is removed first, never written
    through."""
    from smevals.files.workspace import open_dir, remove, write_new

    fd = open_dir(workspace)
    try:
        remove(fd, name)
        write_new(fd, name, data)
    finally:
        os.close(fd)


def assistant_message(reply: Turn) -> dict[str, Any]:
    """The model's response as it goes back to it in the next request."""
    calls = [{"id": call.id, "type": "function", "function": {
        "name": call.name, "arguments": call.arguments if isinstance(call.arguments, str)
        else orjson.dumps(call.arguments).decode()}} for call in reply.calls]
    return {"role": "assistant", "content": reply.text or None, "tool_calls": calls}
