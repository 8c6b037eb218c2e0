"""`runner: smevals:codex`: OpenAI's Codex CLI, headless (`codex exec --json`), in the Run's
workspace.

The stream, as read in openai/codex (codex-rs/exec/src/exec_events.rs, `ThreadEvent`, and
codex-rs/exec/src/event_processor_with_jsonl_output.rs): one JSON object per line, each
with a `type`: `thread.started` (`thread_id`), `turn.started`, `item.started` /
`item.updated` / `item.completed` (an `item` with `id`, `type` and its fields),
`turn.completed` (`usage`: `input_tokens`, `cached_input_tokens`, `output_tokens`, the
thread's totals so far), `turn.failed` (`error.message`) and `error` (`message`, not fatal
by itself). Item types: `agent_message` (`text`; the last one is the final answer),
`reasoning`, `command_execution` (`command`, `aggregated_output`, `exit_code`, `status`),
`file_change` (`changes`: `path`, `kind`; `status`), `mcp_tool_call` (`server`, `tool`,
`arguments`, `result.content`, `error.message`, `status`), `web_search` (`query`),
`todo_list`, `error` (`message`). Codex keeps its config, credentials and sessions in
`CODEX_HOME` (codex-rs/utils/home-dir: it must exist), which points into the Run's private
home; `CODEX_API_KEY` or `OPENAI_API_KEY` (listed in `env:`) authenticate it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from smevals.runners import harness as common
from smevals.runners.base import BuiltinContext, BuiltinOutcome, Problems
from smevals.runners.events import Collector, Event, blocks_text, count, listing, text

NAME = "codex"
SANDBOXES = ("read-only", "workspace-write", "danger-full-access")
DEFAULT_SANDBOX = "workspace-write"
SCHEMA = common.schema({"sandbox_mode": {"enum": list(SANDBOXES),
                                    "x-problem": {"enum": "must be one of "
                                                  + ", ".join(SANDBOXES)}}})


def _home(home: Path) -> dict[str, str]:
    codex_home = common.folder(home / ".codex")
    return {"CODEX_HOME": codex_home, "CODEX_SQLITE_HOME": codex_home}


def _options(ctx: BuiltinContext) -> list[str]:
    argv = ["exec", "--json", "--skip-git-repo-check", "--color", "never",
            "--sandbox", str(ctx.config.get("sandbox_mode") or DEFAULT_SANDBOX)]
    model = common.model_of(ctx)
    return argv + (["--model", model] if model else [])


def _prompt(ctx: BuiltinContext, prompt: str) -> list[str]:
    """`codex exec` has no system-prompt flag: a Config's `system` goes first in the prompt."""
    system = ctx.config.get("system")
    if isinstance(system, str) and system.strip():
        prompt = f"{system}\n\n{prompt}"
    return ["--", prompt]


class CodexReader:
    """Codex's events into the transcript; usage from the last `turn.completed`."""

    def __init__(self) -> None:
        self.started = 0
        self.turns = 0
        self.last_error: str | None = None

    def read(self, event: Event, into: Collector) -> bool:
        kind = event.get("type")
        if kind in ("thread.started", "item.started", "item.updated"):
            return True     # the completed item carries all an item has
        if kind == "turn.started":
            into.turn, self.started = self.started, self.started + 1
            return True
        if kind == "turn.completed":
            self.turns += 1
            into.ended = True
            _tokens(event.get("usage"), into.usage)
            return True
        if kind == "turn.failed":
            self.turns += 1
            into.ended = True
            error = event.get("error")
            into.fail(text(error.get("message")) if isinstance(error, dict) else "turn failed")
            return True
        if kind == "error":
            self.last_error = text(event.get("message")) or "error"
            into.error(self.last_error)
            return True
        if kind == "item.completed" and isinstance(event.get("item"), dict):
            return _item(event["item"], into)
        return False

    def finish(self, into: Collector) -> None:
        into.usage["turns"] = self.turns
        if not into.ended and self.last_error is not None:
            into.failure = f"the stream ended after an error: {self.last_error}"


def _tokens(raw: Any, usage: dict[str, Any]) -> None:
    """The thread's totals (each `turn.completed` gives them so far, so the last wins)."""
    if not isinstance(raw, dict):
        return
    for key in ("input_tokens", "cached_input_tokens", "output_tokens"):
        if (value := count(raw.get(key))) is not None:
            usage[key] = value
    if {"input_tokens", "output_tokens"} <= usage.keys():
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]


def _item(item: dict[str, Any], into: Collector) -> bool:
    kind, item_id = item.get("type"), text(item.get("id"))
    if kind == "agent_message":
        into.final = text(item.get("text"))
        into.message("assistant", into.final)
    elif kind in ("reasoning", "todo_list"):
        pass        # neither is a message nor a tool call: not in the transcript
    elif kind == "command_execution":
        code = item.get("exit_code")
        into.call(item_id, "command_execution", {"command": item.get("command")})
        into.result(item_id, text(item.get("aggregated_output")),
                    item.get("status") != "completed" or bool(code), count(code))
    elif kind == "file_change":
        changes = listing(item.get("changes"))
        into.call(item_id, "file_change", {"changes": changes})
        lines = [f"{c.get('kind')} {c.get('path')}" for c in changes if isinstance(c, dict)]
        into.result(item_id, "\n".join(lines), item.get("status") == "failed")
    elif kind == "mcp_tool_call":
        _mcp(item_id, item, into)
    elif kind == "web_search":
        into.call(item_id, "web_search", {"query": item.get("query")})
    elif kind == "error":
        into.error(text(item.get("message")))
    else:
        return False
    return True


def _mcp(item_id: str, item: dict[str, Any], into: Collector) -> None:
    into.call(item_id, text(item.get("tool")), item.get("arguments"))
    result, error = item.get("result"), item.get("error")
    output = blocks_text(result.get("content")) if isinstance(result, dict) else ""
    if isinstance(error, dict):
        output = text(error.get("message")) or output
    into.result(item_id, output, item.get("status") == "failed" or isinstance(error, dict))


HARNESS = common.Harness(NAME, "codex", "@openai/codex", _home, _options, _prompt,
                         CodexReader, SCHEMA)


def config_problems(config: Mapping[str, Any]) -> Problems:
    return common.config_problems(HARNESS, config)


def preflight(config: Mapping[str, Any], config_dir: Path, environ: Mapping[str, str]) -> \
        str | None:
    return common.preflight(HARNESS, config, config_dir, environ)


def run(ctx: BuiltinContext) -> BuiltinOutcome:
    return common.run(HARNESS, ctx)
