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
`num_turns`, `duration_ms`, `total_cost_usd`, `usage` (`input_tokens`, without the cached
ones, `output_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`) and
`modelUsage` (the same per model, side requests included, with `costUSD` and, in 2.1.332,
`costBasis`: `list`, `managed` or `unknown`, an unknown model priced by a guess). Seen in
Claude Code 2.1.332 against a local server: a request that fails (401, 500, no server)
ends in an assistant message of model `<synthetic>` with `is_api_error_message` and a
`result` of subtype `success` with `is_error: true`, `api_error_status` and
`api_error_type` or `api_error`; `system` events of subtype `api_retry` (`attempt`,
`max_retries`, `error_status`, `error`) while it retries, and `status`. Claude Code keeps
its settings, credentials and sessions in `CLAUDE_CONFIG_DIR`, which points into the Run's
private home; `ANTHROPIC_API_KEY` (listed in `env:`) authenticates it.

A Config's `base_url` becomes `ANTHROPIC_BASE_URL` (without its `/v1`), the key of
`api_key_env` `ANTHROPIC_API_KEY`, and the model every model alias (`ANTHROPIC_MODEL`,
`ANTHROPIC_DEFAULT_{HAIKU,SONNET,OPUS}_MODEL`, `ANTHROPIC_SMALL_FAST_MODEL`, the
sub-agents'), since the server serves the one model; `max_retries` becomes
`CLAUDE_CODE_MAX_RETRIES`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


_ALIASES = ("ANTHROPIC_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL",
            "ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_SMALL_FAST_MODEL",
            "CLAUDE_CODE_SUBAGENT_MODEL")


def _home(home: Path) -> dict[str, str]:
    return {"CLAUDE_CONFIG_DIR": common.folder(home / ".claude")}


def _prepare(launch: common.Launch) -> list[str]:
    config, env = launch.config, launch.env
    mode = str(config.get("permission_mode") or DEFAULT_PERMISSION_MODE)
    launch.own_sandbox = f"none (permission mode {mode})"
    env["DISABLE_AUTOUPDATER"] = "1"
    retries = common.max_retries(launch)
    if retries is not None:
        env["CLAUDE_CODE_MAX_RETRIES"] = str(retries)
    argv = ["-p", "--output-format", "stream-json", "--verbose", "--permission-mode", mode]
    model = common.model_of(launch.ctx)
    server = launch.server
    if server is not None:
        model = common.model_of_server(launch)
        env.update({"ANTHROPIC_BASE_URL": server.root,
                    "ANTHROPIC_API_KEY": server.key_or_placeholder,
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
        env.update(dict.fromkeys(_ALIASES, model))
        if server.key_env and not server.key:
            launch.notes.append(f"api_key_env: {server.key_env} is not set, so a placeholder "
                                "key is sent")
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


def _retrying(event: Event) -> bool:
    return event.get("type") == "system" and event.get("subtype") == "api_retry"


class ClaudeReader:
    """Claude Code's events into the transcript; usage and verdict from `result`."""

    def __init__(self) -> None:
        self.message_ids: list[str] = []
        self.last_text = ""

    def read(self, event: Event, into: Collector) -> bool:
        kind = event.get("type")
        if kind == "system":
            return _system(event, into)
        if kind == "assistant" and isinstance(event.get("message"), dict):
            if _synthetic(event):
                into.error(blocks_text(event["message"].get("content")) or "API error")
            else:
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


def _system(event: Event, into: Collector) -> bool:
    subtype = event.get("subtype")
    if subtype == "init":
        if isinstance(event.get("model"), str):
            into.usage["model"] = event["model"]
        return False            # kept: it says which tools and model the session had
    if subtype == "api_retry":
        status = event.get("error_status")
        said = " ".join(str(p) for p in (status, event.get("error")) if p not in (None, ""))
        into.note(event, f"retrying after an API error ({said or 'unknown'}): attempt "
                         f"{event.get('attempt')} of {event.get('max_retries')}")
        return True
    return subtype == "status"      # what it is busy with (compacting ...): not kept


def _synthetic(event: Event) -> bool:
    """An assistant message Claude Code made up to say a request failed."""
    message = event.get("message")
    return event.get("is_api_error_message") is True or (
        isinstance(message, dict) and message.get("model") == "<synthetic>")


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


_RESULT_FIELDS = (("num_turns", "turns", count), ("duration_ms", "duration_ms", count))


def _result(event: Event, into: Collector, last_text: str) -> None:
    into.ended = True
    usage = into.usage
    _tokens(event, usage)
    for theirs, ours, read in _RESULT_FIELDS:
        if (value := read(event.get(theirs))) is not None:
            usage[ours] = value
    cost = amount(event.get("total_cost_usd"))
    if cost is not None and not _guessed(event.get("modelUsage")):
        usage["cost_usd"] = cost
    subtype = text(event.get("subtype"))
    api = _api_error(event)
    if api is not None:
        into.fail(api)
        into.final = ""             # Claude Code's words for the error, not the model's
    elif event.get("is_error") is True or subtype != "success":
        errors = listing(event.get("errors"))
        words = [e for e in errors if isinstance(e, str)] or [text(event.get("result"))]
        into.fail(f"{subtype or 'error'}: {'; '.join(w for w in words if w) or 'no reason given'}")
        into.final = last_text
    else:
        into.final = text(event.get("result")) if isinstance(event.get("result"), str) \
            else last_text


def _api_error(event: Event) -> str | None:
    """A request that failed, in words: `API error 401 (authentication_error): ...`."""
    status, kind = event.get("api_error_status"), event.get("api_error_type")
    kind = kind if isinstance(kind, str) and kind else event.get("api_error")
    status = status if isinstance(status, int) and not isinstance(status, bool) else None
    kind = kind if isinstance(kind, str) and kind else None
    if event.get("is_error") is not True or (
            status is None and kind is None and event.get("terminal_reason") != "api_error"):
        return None
    words = " ".join(["API error", *([str(status)] if status is not None else []),
                      *([f"({kind})"] if kind else [])])
    return f"{words}: {text(event.get('result')) or 'no reason given'}"


def _tokens(event: Event, usage: dict[str, Any]) -> None:
    """Tokens as smevals counts them (docs/runners.md#usage): `modelUsage` when given, as it
    counts every model's requests (a side request's too), else `usage`; the input
    holds the tokens read from and written to the cache (Claude Code's `input_tokens` does
    not), the output the thinking ones."""
    models = [m for m in mapping(event.get("modelUsage")).values() if isinstance(m, dict)]
    names = (("inputTokens", "outputTokens", "cacheReadInputTokens",
              "cacheCreationInputTokens", "thinkingTokens") if models else
             ("input_tokens", "output_tokens", "cache_read_input_tokens",
              "cache_creation_input_tokens", ""))
    raw = mapping(event.get("usage"))
    for part in models or [raw]:
        fresh, out, read, written, thinking = (count(part.get(n)) if n else None
                                               for n in names)
        if not models:
            thinking = count(mapping(raw.get("output_tokens_details")).get("thinking_tokens"))
        input_tokens = None if fresh is None else fresh + (read or 0) + (written or 0)
        add_tokens(usage, input_tokens=input_tokens, output_tokens=out,
                   cached_input_tokens=read, cache_creation_input_tokens=written,
                   reasoning_tokens=thinking)
    set_total(usage)


def _guessed(models: object) -> bool:
    """Whether Claude Code priced a model by a guess (`costBasis: unknown`): then its cost
    is not known."""
    return any(isinstance(m, dict) and m.get("costBasis") == "unknown"
               for m in mapping(models).values())


HARNESS = common.Harness(NAME, "claude", "@anthropic-ai/claude-code", _home, _prepare, _prompt,
                         lambda _config: ClaudeReader(), SCHEMA, retrying=_retrying,
                         noise=("[claude-code:unrecognized_model]",))
