"""Prompting a model of Simon Willison's `llm` library (smevals' optional `llm` extra),
shared by the `llm` judge backend and the `smevals:llm` runner. `llm` is passed in, so this
module imports without it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PASSED_OPTIONS = ("temperature", "max_tokens", "seed")


def prompt_model(llm: Any, model_id: str, prompt: str, system: str | None,
                 params: Mapping[str, Any], key: str | None,
                 options: Mapping[str, Any] | None = None, attachments: list[Any] | None = None
                 ) -> tuple[str, dict[str, Any]]:
    """(text, usage) of one prompt. Of `params`, those the model's plugin does not declare
    as options are left out (an echo model has no temperature); `options` are all passed
    (the plugin refuses an unknown one)."""
    model = llm.get_model(model_id)
    declared = getattr(getattr(model, "Options", None), "model_fields", {}) or {}
    options = {**{name: params[name] for name in PASSED_OPTIONS
                  if name in params and name in declared}, **(options or {})}
    kwargs: dict[str, Any] = {}
    schema = ((params.get("response_format") or {}).get("json_schema") or {}).get("schema")
    if schema and getattr(model, "supports_schema", False):
        kwargs["schema"] = schema
    if key and getattr(model, "needs_key", None):
        model.key = key
    if attachments:                 # images for a judge (llm.Attachment)
        kwargs["attachments"] = attachments
    response = model.prompt(prompt, system=system, **kwargs, **options)
    text = response.text()
    usage: dict[str, Any] = {}
    found = response.usage()
    for theirs, ours in (("input", "input_tokens"), ("output", "output_tokens")):
        value = getattr(found, theirs, None)
        if isinstance(value, int):
            usage[ours] = value
    if {"input_tokens", "output_tokens"} <= usage.keys():
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    return text, usage
