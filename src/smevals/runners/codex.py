"""`runner: smevals:codex`: OpenAI's Codex CLI, headless (`codex exec --json`), in the Run's
workspace.

The stream, as read in openai/codex (codex-rs/exec/src/exec_events.rs, `ThreadEvent`, and
codex-rs/exec/src/event_processor_with_jsonl_output.rs) and as Codex 0.171.0 writes it:
one JSON object per line, each with a `type`: `thread.started` (`thread_id`),
`turn.started`, `item.started` / `item.updated` / `item.completed` (an `item` with `id`,
`type` and its fields), `turn.completed` (`usage`: `input_tokens`, cached ones included,
`cached_input_tokens`, `cache_write_input_tokens`, `output_tokens`,
`reasoning_output_tokens`: the thread's totals so far), `turn.failed` (`error.message`) and
`error` (`message`: "Reconnecting... 1/5 (...)" while it retries, and once more before
`turn.failed`). Item types: `agent_message` (`text`; the last one is the final answer),
`reasoning`, `command_execution` (`command`, `aggregated_output`, `exit_code`, `status`),
`file_change` (`changes`: `path`, `kind`, `diff`; `status`), `mcp_tool_call` (`server`,
`tool`, `arguments`, `result.content`, `error.message`, `status`), `web_search` (`query`),
`todo_list`, and `error` (`message`: a warning, e.g. "Model metadata for `M` not found",
which it writes for every model it has no metadata of: not a failure). Codex keeps its
config, credentials and sessions in `CODEX_HOME` (codex-rs/utils/home-dir: it must exist),
which points into the Run's private home.

A Config's `base_url` becomes a model provider in that home's `config.toml` (Codex speaks
only the Responses API: `wire_api = "responses"`), with `api_key_env` as its `env_key` and
`max_retries` as its request and stream retries. Codex's own sandbox (bubblewrap) cannot
start inside smevals' sandbox, so where smevals' sandbox is in force Codex runs with
`--sandbox danger-full-access` (said in `usage.harness_sandbox`), and with
`workspace-write` where it is off, unless `sandbox_mode` says otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from smevals.runners import harness as common
from smevals.runners.base import BuiltinContext, Problems
from smevals.runners.events import (
    Collector,
    Event,
    blocks_text,
    count,
    listing,
    set_total,
    text,
)

NAME = "codex"
SANDBOXES = ("read-only", "workspace-write", "danger-full-access")
OWN_SANDBOX = "workspace-write"         # where smevals' sandbox is off
IN_SMEVALS_SANDBOX = "danger-full-access"
PROVIDER = "smevals"                    # the model provider a `base_url` becomes
SCHEMA = common.schema({"sandbox_mode": {"enum": list(SANDBOXES),
                                    "x-problem": {"enum": "must be one of "
                                                  + ", ".join(SANDBOXES)}}})


def _home(home: Path) -> dict[str, str]:
    codex_home = common.folder(home / ".codex")
    return {"CODEX_HOME": codex_home, "CODEX_SQLITE_HOME": codex_home}


def _prepare(launch: common.Launch) -> list[str]:
    mode = launch.given("sandbox_mode")
    if isinstance(mode, str) and mode:
        launch.own_sandbox = f"{mode} (sandbox_mode)"
    elif launch.contained:
        mode = IN_SMEVALS_SANDBOX
        launch.own_sandbox = f"off ({mode}): smevals' sandbox contains it"
    else:
        mode = OWN_SANDBOX
        launch.own_sandbox = f"{mode}: smevals' sandbox is off"
    argv = ["exec", "--json", "--skip-git-repo-check", "--color", "never", "--sandbox", mode]
    model = common.model_of_server(launch) if launch.server else common.model_of(launch.ctx)
    common.write_file(launch.home / ".codex" / "config.toml", _config_toml(launch))
    launch.pass_key()
    return argv + (["--model", model] if model else [])


def _config_toml(launch: common.Launch) -> str:
    """Codex's settings for the Run: no update check, no analytics; the Config's server as a
    provider (server-sent events, not WebSockets)."""
    lines = ["check_for_update_on_startup = false", "", "[analytics]", "enabled = false"]
    server = launch.server
    if server is None:
        return "\n".join(lines) + "\n"
    lines[:0] = [f"model_provider = {_toml(PROVIDER)}"]
    lines += ["", f"[model_providers.{PROVIDER}]", f"name = {_toml(PROVIDER)}",
              f"base_url = {_toml(server.base_url)}", 'wire_api = "responses"',
              "supports_websockets = false"]
    if server.key_env and server.key:        # Codex refuses an `env_key` that is not set
        lines.append(f"env_key = {_toml(server.key_env)}")
    retries = common.max_retries(launch)
    if retries is not None:
        lines += [f"request_max_retries = {retries}", f"stream_max_retries = {retries}"]
    return "\n".join(lines) + "\n"


def _toml(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, for these characters)."""
    return orjson.dumps(value).decode()


def _problems(config: Mapping[str, Any]) -> Problems:
    if config.get("max_retries") is not None and config.get("base_url") is None:
        return [("max_retries", "only with base_url for smevals:codex (its own provider "
                                "keeps its retries)")]
    return []


def _retrying(event: Event) -> bool:
    """"Reconnecting..." (a retry; with no server listening Codex says it for ever)."""
    return event.get("type") == "error" and text(event.get("message")).startswith("Reconnecting")


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
            if _retrying(event):
                into.note(event, self.last_error)
            else:
                into.error(self.last_error)
            return True
        if kind == "item.completed" and isinstance(event.get("item"), dict):
            return _item(event, event["item"], into)
        return False

    def finish(self, into: Collector) -> None:
        into.usage["turns"] = self.turns
        if not into.ended and self.last_error is not None:
            into.failure = f"the stream ended after an error: {self.last_error}"


_TOKENS = (("input_tokens", "input_tokens"), ("cached_input_tokens", "cached_input_tokens"),
           ("cache_write_input_tokens", "cache_creation_input_tokens"),
           ("output_tokens", "output_tokens"), ("reasoning_output_tokens", "reasoning_tokens"))


def _tokens(raw: object, usage: dict[str, Any]) -> None:
    """The thread's totals (each `turn.completed` gives them so far, so the last wins):
    Codex's `input_tokens` holds the cached ones and `output_tokens` the reasoning ones,
    as smevals counts them."""
    if not isinstance(raw, dict):
        return
    for theirs, ours in _TOKENS:
        if (value := count(raw.get(theirs))) is not None:
            usage[ours] = value
    set_total(usage)


def _item(event: Event, item: dict[str, Any], into: Collector) -> bool:
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
    elif kind == "error":      # a warning: the turn goes on
        into.note(event, text(item.get("message")))
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


HARNESS = common.Harness(NAME, "codex", "@openai/codex", _home, _prepare, _prompt,
                         lambda _config: CodexReader(), SCHEMA, retrying=_retrying,
                         noise=("Reading additional input from stdin...",),
                         problems=_problems)
