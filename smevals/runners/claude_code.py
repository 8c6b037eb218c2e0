"""`runner: smevals:claude-code`: Anthropic's Claude Code, headless
(`claude -p --output-format stream-json --verbose`), in the Run's workspace.

The stream, as documented for Claude Code's headless mode and the Agent SDK's message types
(the SDK's `SDKMessage`; anthropics/claude-code's CHANGELOG for the flags and fields: the
`init` event, `total_cost_usd`, `--max-budget-usd`, `--max-turns`, `CLAUDE_CONFIG_DIR`):
one JSON object per line, each with a `type`: `system` (`subtype: init` with `model`,
`tools`, `cwd`, `session_id`; other subtypes later), `assistant` and `user` (an Anthropic
Messages object under `message`: content blocks `text`, `thinking`, `tool_use` with `id`,
`name`, `input`, and `tool_result` with `tool_use_id`, `content`, `is_error`),
`stream_event` (partial messages, only with `--include-partial-messages`) and a last
`result`: `subtype` (`success`, `error_max_turns`, `error_during_execution`,
`error_max_budget_usd`, ...), `is_error`, `result` (the final answer), `errors`,
`num_turns`, `duration_ms`, `total_cost_usd` and `usage` (`input_tokens`, `output_tokens`,
`cache_read_input_tokens`, `cache_creation_input_tokens`). Claude Code keeps its settings,
credentials and sessions in `CLAUDE_CONFIG_DIR`, which points into the Run's private home;
`ANTHROPIC_API_KEY` (listed in `env:`) authenticates it.
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

NAME = "claude-code"
DEFAULT_PERMISSION_MODE = "acceptEdits"
SCHEMA = common.schema({
    "permission_mode": {"type": "string", "pattern": "^[A-Za-z]+$",
                        "x-problem": {"pattern": "is not a permission mode: {value!r}"}},
    "allowed_tools": common.TOOLS,
    "disallowed_tools": common.TOOLS,
    "max_turns": {"type": "integer", "exclusiveMinimum": 0},
    "max_budget_usd": {"type": "number", "exclusiveMinimum": 0},
})


def _home(home: Path) -> dict[str, str]:
    return {"CLAUDE_CONFIG_DIR": common.folder(home / ".claude")}


def _options(ctx: BuiltinContext) -> list[str]:
    config = ctx.config
    argv = ["-p", "--output-format", "stream-json", "--verbose",
            "--permission-mode", str(config.get("permission_mode") or DEFAULT_PERMISSION_MODE)]
    model = common.model_of(ctx)
    if model:
        argv += ["--model", model]
    if config.get("max_turns") is not None:
        argv += ["--max-turns", str(int(config["max_turns"]))]
    if config.get("max_budget_usd") is not None:
        argv += ["--max-budget-usd", f"{float(config['max_budget_usd']):g}"]
    if isinstance(config.get("system"), str) and config["system"].strip():
        argv += ["--append-system-prompt", config["system"]]
    for key, flag in (("allowed_tools", "--allowedTools"),
                      ("disallowed_tools", "--disallowedTools")):
        if config.get(key):
            argv += [flag, *config[key]]
    return argv


def _prompt(ctx: BuiltinContext, prompt: str) -> list[str]:
    return ["--", prompt]


class ClaudeReader:
    """Claude Code's events into the transcript; usage and verdict from `result`."""

    def __init__(self) -> None:
        self.message_ids: list[str] = []
        self.last_text = ""

    def read(self, event: Event, into: Collector) -> bool:
        kind = event.get("type")
        if kind == "system":
            if event.get("subtype") == "init" and isinstance(event.get("model"), str):
                into.usage["model"] = event["model"]
            return False            # kept: it says which tools and model the session had
        if kind == "assistant" and isinstance(event.get("message"), dict):
            self._assistant(event["message"], into)
            return True
        if kind == "user" and isinstance(event.get("message"), dict):
            _user(event["message"], into)
            return True
        if kind == "result":
            _result(event, into, self.last_text)
            return True
        return kind == "stream_event"   # partial messages: the whole ones follow

    def _assistant(self, message: dict[str, Any], into: Collector) -> None:
        message_id = text(message.get("id"))
        if not self.message_ids or message_id != self.message_ids[-1]:
            self.message_ids.append(message_id)
            into.turn = len(self.message_ids) - 1
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                self.last_text = text(block.get("text"))
                into.message("assistant", self.last_text)
            elif kind == "tool_use":
                into.call(text(block.get("id")), text(block.get("name")), block.get("input"))
            elif kind not in ("thinking", "redacted_thinking"):
                into.event(block)

    def finish(self, into: Collector) -> None:
        if not into.ended:
            into.final = self.last_text


def _user(message: dict[str, Any], into: Collector) -> None:
    content = message.get("content")
    if isinstance(content, str):
        into.message("user", content)
        return
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "tool_result":
            into.result(text(block.get("tool_use_id")),
                        blocks_text(block.get("content")), block.get("is_error") is True)
        elif kind == "text":
            into.message("user", text(block.get("text")))
        else:
            into.event(block)


_RESULT_FIELDS = (("total_cost_usd", "cost_usd", amount), ("num_turns", "turns", count),
                  ("duration_ms", "duration_ms", count))


def _result(event: Event, into: Collector, last_text: str) -> None:
    into.ended = True
    usage = into.usage
    raw = mapping(event.get("usage"))
    add_tokens(usage, input_tokens=count(raw.get("input_tokens")),
               output_tokens=count(raw.get("output_tokens")),
               cached_input_tokens=count(raw.get("cache_read_input_tokens")),
               cache_creation_input_tokens=count(raw.get("cache_creation_input_tokens")))
    if {"input_tokens", "output_tokens"} <= usage.keys():
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    for theirs, ours, read in _RESULT_FIELDS:
        if (value := read(event.get(theirs))) is not None:
            usage[ours] = value
    subtype = text(event.get("subtype"))
    if event.get("is_error") is True or subtype != "success":
        errors = listing(event.get("errors"))
        words = [e for e in errors if isinstance(e, str)] or [text(event.get("result"))]
        into.fail(f"{subtype or 'error'}: {'; '.join(w for w in words if w) or 'no reason given'}")
        into.final = last_text
    else:
        into.final = text(event.get("result")) if isinstance(event.get("result"), str) \
            else last_text


HARNESS = common.Harness(NAME, "claude", "@anthropic-ai/claude-code", _home, _options, _prompt,
                         ClaudeReader, SCHEMA)


def config_problems(config: Mapping[str, Any]) -> Problems:
    return common.config_problems(HARNESS, config)


def preflight(config: Mapping[str, Any], config_dir: Path, environ: Mapping[str, str]) -> \
        str | None:
    return common.preflight(HARNESS, config, config_dir, environ)


def run(ctx: BuiltinContext) -> BuiltinOutcome:
    return common.run(HARNESS, ctx)
