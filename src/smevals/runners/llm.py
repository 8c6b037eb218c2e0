"""`runner: smevals:llm`: one prompt per Run through Simon Willison's `llm` library and its
plugins (smevals' optional `llm` extra: the `llm` package). The model is an `llm` model id
(`llm models` lists them); keys come from `llm keys` or the variable named by `api_key_env`.

Config keys: `system` (a system prompt), `options` (the model's `llm` options, e.g.
temperature), `api_key_env`. The Task needs a string `prompt`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from smevals.runners.base import (
    BuiltinContext,
    BuiltinOutcome,
    Problems,
    RunFailed,
)
from smevals.runners.options import ENV_NAME, MAPPING, TEXT, config_problems_for, options_schema

NAME = "llm"
SCHEMA = options_schema({"system": TEXT, "options": MAPPING, "api_key_env": ENV_NAME})
POLL = 0.05


def config_problems(config: Mapping[str, Any]) -> Problems:
    return config_problems_for(NAME, config, SCHEMA)


def run(ctx: BuiltinContext) -> BuiltinOutcome:
    try:
        import llm
    except ImportError:
        raise RunFailed("the llm runner needs the `llm` package (smevals' `llm` extra): "
                        "pip install 'llm>=0.19' where smevals is installed",
                        failure="launch") from None
    if not ctx.model:
        raise RunFailed("no model: set `model:` in the config or pass -m", failure="launch")
    prompt = ctx.task.get("prompt")
    if not isinstance(prompt, str):
        raise RunFailed(f"task {ctx.task.get('name')!r} needs a string `prompt` for "
                        "smevals:llm", failure="launch")
    key_env = ctx.config.get("api_key_env")
    key = ctx.environ.get(key_env) if isinstance(key_env, str) else None
    box: dict[str, Any] = {}

    def work() -> None:
        from smevals.runners.llmlib import prompt_model

        try:
            box["done"] = prompt_model(llm, ctx.model, prompt, ctx.config.get("system"), {},
                                       key, ctx.config.get("options") or {})
        except Exception as error:  # a plugin's failure ends the Run, not smevals
            box["error"] = error

    thread = threading.Thread(target=work, daemon=True, name="smevals-llm")
    thread.start()
    _wait(thread, ctx)
    if "error" in box:
        error = box["error"]
        raise RunFailed(f"llm model {ctx.model!r}: {type(error).__name__}: {error}"[:1000])
    text, usage = box["done"]
    return BuiltinOutcome(stdout=text, usage=usage)


def _wait(thread: threading.Thread, ctx: BuiltinContext) -> None:
    waited = 0.0
    while thread.is_alive():
        if ctx.cancel.wait(POLL):
            raise RunFailed("cancelled", exit_code=130)
        waited += POLL
        if ctx.timeout is not None and waited >= ctx.timeout:
            raise RunFailed(f"timed out after {ctx.timeout:g} s", failure="timeout")
