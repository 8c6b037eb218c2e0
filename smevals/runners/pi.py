"""`runner: smevals:pi`: Mario Zechner's Pi coding agent, headless (`pi --mode json -p`), in
the Run's workspace.

The stream, as read in badlogic/pi-mono (packages/coding-agent/docs/json.md,
src/modes/print-mode.ts, src/cli/args.ts, src/config.ts; packages/ai/src/types.ts): a
`session` header line, then the session's events, one JSON object per line:
`agent_start`, `agent_end` (`messages`), `turn_start`, `turn_end` (`message`,
`toolResults`), `message_start` / `message_update` / `message_end` (`message`),
`tool_execution_start` / `_update` / `_end`, `auto_compaction_start` / `_end` and
`auto_retry_start` / `_end`. A message has a `role`: `user`, `assistant` (content blocks
`text`, `thinking`, `toolCall` with `id`, `name`, `arguments`; `usage` with `input`,
`output`, `cacheRead`, `cacheWrite`, `cost.total`; `stopReason`, `errorMessage`) or
`toolResult` (`toolCallId`, `toolName`, `content`, `isError`). In JSON mode Pi exits 0
even when the request failed: the last assistant message's `stopReason` (`error`,
`aborted`) says so. Pi keeps its settings, credentials and sessions in its agent folder,
`PI_CODING_AGENT_DIR` (default ~/.pi/agent), which points into the Run's private home; a
provider's key (e.g. `ANTHROPIC_API_KEY`, listed in `env:`) authenticates it. Its argument
parser has no `--`: a prompt starting with `-` or `@` is passed with a space before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from smevals.runners import harness as common
from smevals.runners.base import BuiltinContext, BuiltinOutcome, Problems
from smevals.runners.events import (
    Collector,
    Event,
    add_tokens,
    amount,
    blocks_text,
    count,
    listing,
    mapping,
    text,
)

NAME = "pi"
SCHEMA = common.schema({"allowed_tools": {**common.TOOLS, "items": {
    "type": "string", "pattern": "^[a-z_]+$",
    "x-problem": {"pattern": "is not a Pi tool name: {value!r}"}}}})
_QUIET = ("session", "agent_start", "message_start", "message_update",
          "tool_execution_start", "tool_execution_update", "tool_execution_end")


def _home(home: Path) -> dict[str, str]:
    return {"PI_CODING_AGENT_DIR": common.folder(home / ".pi" / "agent")}


def _options(ctx: BuiltinContext) -> list[str]:
    argv = ["--mode", "json", "-p", "--no-session"]
    model = common.model_of(ctx)
    if model:
        argv += ["--model", model]
    tools = ctx.config.get("allowed_tools")
    if isinstance(tools, list):
        argv += ["--tools", ",".join(tools)] if tools else ["--no-tools"]
    if isinstance(ctx.config.get("system"), str) and ctx.config["system"].strip():
        argv += ["--append-system-prompt", ctx.config["system"]]
    return argv


def _prompt(ctx: BuiltinContext, prompt: str) -> list[str]:
    return [f" {prompt}" if prompt.startswith(("-", "@")) else prompt]


class PiReader:
    """Pi's events into the transcript; usage summed over its assistant messages."""

    def __init__(self) -> None:
        self.turns = 0
        self.stop: tuple[str, str] = ("", "")     # the last assistant message's stop

    def read(self, event: Event, into: Collector) -> bool:
        kind = event.get("type")
        if kind in _QUIET:
            return True     # partial or repeated: message_end carries the whole message
        if kind == "turn_start":
            into.turn = self.turns
            return True
        if kind == "turn_end":
            self.turns += 1
            return True
        if kind == "agent_end":
            into.ended = True
            return True
        if kind == "message_end" and isinstance(event.get("message"), dict):
            return self._message(event["message"], into)
        return False

    def _message(self, message: dict[str, Any], into: Collector) -> bool:
        role = message.get("role")
        if role == "assistant":
            self._assistant(message, into)
        elif role == "toolResult":
            into.result(text(message.get("toolCallId")), blocks_text(message.get("content")),
                        message.get("isError") is True, name=text(message.get("toolName")))
        elif role == "user":
            into.message("user", blocks_text(message.get("content")))
        else:
            return False
        return True

    def _assistant(self, message: dict[str, Any], into: Collector) -> None:
        content = listing(message.get("content"))
        words = blocks_text(content)
        if words:
            into.message("assistant", words)
        for block in content:
            if isinstance(block, dict) and block.get("type") == "toolCall":
                into.call(text(block.get("id")), text(block.get("name")), block.get("arguments"))
        into.final = words
        _usage(message, into.usage)
        self.stop = (text(message.get("stopReason")), text(message.get("errorMessage")))
        if self.stop[0] in ("error", "aborted"):
            into.error(self.stop[1] or f"request {self.stop[0]}")

    def finish(self, into: Collector) -> None:
        into.usage["turns"] = self.turns
        reason, message = self.stop
        if reason in ("error", "aborted"):
            into.failure = message or f"request {reason}"


def _usage(message: dict[str, Any], usage: dict[str, Any]) -> None:
    raw = mapping(message.get("usage"))
    add_tokens(usage, input_tokens=count(raw.get("input")), output_tokens=count(raw.get("output")),
               cached_input_tokens=count(raw.get("cacheRead")),
               cache_creation_input_tokens=count(raw.get("cacheWrite")))
    if {"input_tokens", "output_tokens"} <= usage.keys():
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    cost = raw.get("cost")
    if isinstance(cost, dict) and (total := amount(cost.get("total"))) is not None:
        usage["cost_usd"] = round(usage.get("cost_usd", 0.0) + total, 10)
    if isinstance(message.get("model"), str):
        usage["model"] = message["model"]


HARNESS = common.Harness(NAME, "pi", "@mariozechner/pi-coding-agent", _home, _options, _prompt,
                         PiReader, SCHEMA, echoes_prompt=True)


def config_problems(config: Mapping[str, Any]) -> Problems:
    return common.config_problems(HARNESS, config)


def preflight(config: Mapping[str, Any], config_dir: Path, environ: Mapping[str, str]) -> \
        str | None:
    return common.preflight(HARNESS, config, config_dir, environ)


def run(ctx: BuiltinContext) -> BuiltinOutcome:
    return common.run(HARNESS, ctx)
