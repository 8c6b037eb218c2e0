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
Seen in Pi 0.73.1: when a request fails and Pi retries it, `agent_end` is followed by
`auto_retry_start` (`attempt`, `maxAttempts`, `errorMessage`), a new `agent_start` ...
`agent_end`, and `auto_retry_end` (`success`, `finalError`). A message's usage counts
`input` without the tokens read from or written to the cache (`cacheRead`, `cacheWrite`).

A Config's `base_url` becomes the provider `smevals` of a `models.json` in that folder,
with the Config's model as its one model (`--model smevals/MODEL`), `api` as its wire
protocol (`openai-chat`, the default, is Pi's `openai-completions`) and `api_key_env` as
the variable its `apiKey` names; `max_retries` goes into its `settings.json`. Pi runs
offline otherwise (`PI_OFFLINE=1`: no update check).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from smevals.runners import harness as common
from smevals.runners.base import BuiltinContext
from smevals.runners.events import (
    Collector,
    Event,
    add_tokens,
    amount,
    blocks_text,
    count,
    listing,
    mapping,
    set_total,
    text,
)
from smevals.runners.server import API, NO_KEY

NAME = "pi"
SCHEMA = common.schema({"allowed_tools": {**common.TOOLS, "items": {
    "type": "string", "pattern": "^[a-z_]+$",
    "x-problem": {"pattern": "is not a Pi tool name: {value!r}"}}}, "api": API})
PROVIDER = "smevals"                    # the provider a `base_url` becomes
PI_APIS = {"openai-chat": "openai-completions", "openai-responses": "openai-responses",
           "anthropic-messages": "anthropic-messages"}
_QUIET = ("session", "agent_start", "message_start", "message_update",
          "tool_execution_start", "tool_execution_update", "tool_execution_end")


def _home(home: Path) -> dict[str, str]:
    return {"PI_CODING_AGENT_DIR": common.folder(home / ".pi" / "agent")}


def _prepare(launch: common.Launch) -> list[str]:
    ctx, folder = launch.ctx, launch.home / ".pi" / "agent"
    launch.env["PI_OFFLINE"] = "1"
    launch.own_sandbox = "none (Pi has none)"
    argv = ["--mode", "json", "-p", "--no-session"]
    model = common.model_of(ctx)
    if launch.server is not None:
        model = f"{PROVIDER}/{common.model_of_server(launch)}"
        common.write_file(folder / "models.json", _models(launch))
        launch.pass_key()
    retries = common.max_retries(launch)
    if retries is not None:      # its own retries, not its SDK's under them as well
        settings = {"retry": {"enabled": retries > 0, "maxRetries": retries,
                              "provider": {"maxRetries": 0}}}
        common.write_file(folder / "settings.json", orjson.dumps(settings).decode())
    if model:
        argv += ["--model", model]
    tools = ctx.config.get("allowed_tools")
    if isinstance(tools, list):
        argv += ["--tools", ",".join(tools)] if tools else ["--no-tools"]
    if isinstance(ctx.config.get("system"), str) and ctx.config["system"].strip():
        argv += ["--append-system-prompt", ctx.config["system"]]
    return argv


def _models(launch: common.Launch) -> str:
    """Pi's `models.json`: the Config's server as the provider `smevals`, its model as the
    one model (no price: Pi counts no cost for it)."""
    server = launch.server
    assert server is not None
    api = PI_APIS[server.api]
    provider = {"baseUrl": server.root if api == "anthropic-messages" else server.base_url,
                "api": api, "apiKey": server.key_env or NO_KEY,
                "models": [{"id": common.model_of_server(launch)}]}
    return orjson.dumps({"providers": {PROVIDER: provider}}).decode()


def _retrying(event: Event) -> bool:
    return event.get("type") in ("auto_retry_start", "auto_retry_end")


def _prompt(ctx: BuiltinContext, prompt: str) -> list[str]:
    return [f" {prompt}" if prompt.startswith(("-", "@")) else prompt]


class PiReader:
    """Pi's events into the transcript; usage summed over its assistant messages."""

    def __init__(self, own_server: bool = False) -> None:
        self.turns = 0
        self.stop: tuple[str, str] = ("", "")     # the last assistant message's stop
        self.priced = not own_server              # Pi knows the model's prices

    def read(self, event: Event, into: Collector) -> bool:
        kind = event.get("type")
        if kind in _QUIET:
            return True     # partial or repeated: message_end carries the whole message
        if kind == "auto_retry_start":
            into.note(event, f"retrying (attempt {event.get('attempt')} of "
                             f"{event.get('maxAttempts')}): {text(event.get('errorMessage'))}")
            return True
        if kind == "auto_retry_end":
            into.event(event)
            return True
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
        _usage(message, into.usage, self.priced)
        self.stop = (text(message.get("stopReason")), text(message.get("errorMessage")))
        if self.stop[0] in ("error", "aborted"):
            into.error(self.stop[1] or f"request {self.stop[0]}")

    def finish(self, into: Collector) -> None:
        into.usage["turns"] = self.turns
        reason, message = self.stop
        if reason in ("error", "aborted"):
            into.failure = message or f"request {reason}"


def _usage(message: dict[str, Any], usage: dict[str, Any], priced: bool = True) -> None:
    """Tokens as smevals counts them (docs/runners.md#usage): Pi's `input` leaves out the
    tokens read from and written to the cache, smevals' input holds them."""
    raw = mapping(message.get("usage"))
    fresh, read, written = (count(raw.get(key)) for key in ("input", "cacheRead", "cacheWrite"))
    add_tokens(usage, input_tokens=None if fresh is None else fresh + (read or 0) + (written or 0),
               output_tokens=count(raw.get("output")), cached_input_tokens=read,
               cache_creation_input_tokens=written)
    set_total(usage)
    cost = raw.get("cost")
    if priced and isinstance(cost, dict) and (total := amount(cost.get("total"))) is not None:
        usage["cost_usd"] = round(usage.get("cost_usd", 0.0) + total, 10)
    if isinstance(message.get("model"), str):
        usage["model"] = message["model"]


HARNESS = common.Harness(NAME, "pi", "@mariozechner/pi-coding-agent", _home, _prepare, _prompt,
                         lambda config: PiReader(config.get("base_url") is not None), SCHEMA,
                         echoes_prompt=True, retrying=_retrying)
