"""`runner: smevals:agent`: smevals' own small agent, for models that have no harness.

A tool-calling loop (loop.py) over an OpenAI-compatible server or recorded sessions
(backends.py), with four tools confined to the Run's workspace (tools.py, confined.py):
`bash` runs in smevals' sandbox (smevals.proc.sandbox), the file tools never leave the
workspace nor follow a link. Leaves `transcript.jsonl` and the usage of every Run.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from smevals.proc.setting import Setting
from smevals.runners.agent.backends import Backend, OpenAIBackend, ReplayBackend, session_path
from smevals.runners.agent.loop import LOOP_VERSION, Limits, Loop
from smevals.runners.agent.tools import NAMES, Toolbox
from smevals.runners.base import BuiltinContext, BuiltinOutcome, Problems, RunFailed
from smevals.runners.options import ENV_NAME, MAPPING, TEXT, config_problems_for, options_schema

if TYPE_CHECKING:
    from smevals.runners.chatapi import Session

NAME = "agent"
PREFIX = "smevals:agent"
DEFAULT_SYSTEM = (
    "You are a careful software agent. You work in a folder, the workspace, through the "
    "tools: read, write and list its files, and run bash commands in it (paths are relative "
    "to the workspace; there is no network). When the work is done, answer with a short "
    "final message and no tool call.")
_POSITIVE = {"type": "integer", "exclusiveMinimum": 0}
OPENAI_KEYS = ("base_url", "api_key_env", "temperature", "params", "headers", "retries",
               "request_timeout")
_SET_BY_SMEVALS = {"not": {}, "x-problem": "must not be set (smevals sets it)"}
SCHEMA = options_schema({
    "backend": {"enum": ["openai", "replay"]},
    "sessions": TEXT,
    "base_url": {"type": "string", "pattern": r"\S", "format": "http-url"},
    "api_key_env": ENV_NAME,
    "temperature": {"type": "number", "minimum": 0},
    "params": {**MAPPING, "properties": dict.fromkeys(
        ("model", "messages", "stream", "tools"), _SET_BY_SMEVALS)},
    "headers": {**MAPPING, "additionalProperties": {"type": "string"}},
    "retries": {"type": "integer", "minimum": 0, "maximum": 100},
    "request_timeout": {"type": "number", "exclusiveMinimum": 0},
    "max_turns": {"type": "integer", "minimum": 1, "maximum": 10000},
    "max_tokens": _POSITIVE,
    "max_tool_output": {"type": "integer", "minimum": 256},
    "tool_timeout": {"type": "number", "exclusiveMinimum": 0},
    "tools": {"type": "array", "items": {"enum": list(NAMES)}, "uniqueItems": True},
    "sandbox": True,        # the common `sandbox:` setting (proc/setting.py, config schema)
})


def config_problems(config: Mapping[str, Any]) -> Problems:
    problems = config_problems_for(NAME, config, SCHEMA)
    replay = config.get("backend") == "replay"
    if replay and config.get("sessions") is None:
        problems.append(("sessions", "required by smevals:agent with backend: replay"))
    if config.get("backend") in (None, "openai") and config.get("sessions") is not None:
        problems.append(("sessions", "only for backend: replay"))
    if replay:
        problems += [(key, "only for backend: openai (the default)") for key in config
                     if key in OPENAI_KEYS and config[key] is not None]
    return problems


T = TypeVar("T")         # the type of a setting: its default's (the config passed its schema)


def _given(config: Mapping[str, Any], key: str, default: T) -> T:
    value = config.get(key)
    return default if value is None else value


def backend(ctx: BuiltinContext) -> tuple[Backend, Session | None]:
    """The model's side of the loop, and the HTTP session to read its log from (or None)."""
    if ctx.config.get("backend") == "replay":
        path, shown = session_path(ctx)
        return ReplayBackend(path, shown), None
    from smevals.net.chat import request_headers
    from smevals.net.http import Endpoint
    from smevals.runners.chatapi import DEFAULT_REQUEST_TIMEOUT, Plan, Session

    config = ctx.config
    if not ctx.model:
        raise RunFailed("no model: set `model:` in the config or pass -m", failure="launch")
    secret = ctx.environ.get(config.get("api_key_env") or "OPENAI_API_KEY", "").strip()
    plan = Plan(Endpoint.parse(_given(config, "base_url", "https://api.openai.com/v1"),
                               "/chat/completions"),
                b"", request_headers(config, secret), secret,
                retries=int(_given(config, "retries", 4)),
                request_timeout=_given(config, "request_timeout", DEFAULT_REQUEST_TIMEOUT))
    session = Session(ctx, plan, PREFIX)
    extra = dict(config.get("params") or {})
    if config.get("temperature") is not None:
        extra.setdefault("temperature", config["temperature"])
    return OpenAIBackend(session, ctx.model, extra), session


def _setting(ctx: BuiltinContext) -> Setting:
    """The Config's `sandbox:` with the Task's on top (checked by `run` before it starts)."""
    try:
        return Setting.merged(ctx.config.get("sandbox"), ctx.task.get("sandbox"))
    except ValueError as error:
        raise RunFailed(str(error), failure="launch") from None


def run(ctx: BuiltinContext) -> BuiltinOutcome:
    if problems := config_problems(ctx.config):
        text = "; ".join(f"{key}: {message}" for key, message in problems)
        raise RunFailed(f"bad config: {text}", failure="launch")
    model, session = backend(ctx)
    config = ctx.config
    home = Path(tempfile.mkdtemp(prefix="smevals-agent-home-"))
    toolbox = Toolbox(ctx.workspace, home, ctx.environ,
                      names=tuple(_given(config, "tools", NAMES)),
                      tool_timeout=float(_given(config, "tool_timeout", 60.0)),
                      max_output=int(_given(config, "max_tool_output", 16384)),
                      setting=_setting(ctx), children=ctx.children)
    limits = Limits(int(_given(config, "max_turns", 20)), config.get("max_tokens"))
    loop = Loop(ctx, model, toolbox, limits)
    try:
        outcome = loop.run(_given(config, "system", DEFAULT_SYSTEM))
        outcome.stderr = "" if session is None else session.stderr()
    except RunFailed as failed:
        outcome = failed.outcome(PREFIX, "" if session is None else session.stderr())
    finally:
        shutil.rmtree(home, ignore_errors=True)
    outcome.provenance = {"runner": {"name": PREFIX, "version": LOOP_VERSION}}
    return outcome
