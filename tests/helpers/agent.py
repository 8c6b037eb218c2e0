"""Recorded sessions and readers of a Run for the tests of smevals:agent
(tests/runners/test_agent*.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from smevals.files import transcript
from smevals.runners import BuiltinContext, BuiltinOutcome, run_builtin

REPLAY = {"runner": "smevals:agent", "backend": "replay", "sessions": "sessions"}
TASK = {"name": "t1", "prompt": "Make hello.txt say hi."}


def record(root: Path, responses: Sequence[dict[str, Any] | str], model: str = "m1",
           task: str = "t1") -> Path:
    """A recorded session: one response of the model per line."""
    path = root / "sessions" / model / f"{task}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in responses]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def call(name: str, arguments: Any, ident: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"name": name, "arguments": arguments}
    if ident:
        item["id"] = ident
    return item


def tools(*calls: dict[str, Any], text: str | None = None, tokens: int = 0) -> dict[str, Any]:
    """A response calling tools."""
    response: dict[str, Any] = {"content": text, "tool_calls": list(calls)}
    if tokens:
        response["usage"] = {"input_tokens": tokens, "output_tokens": 1}
    return response


def answer(text: str) -> dict[str, Any]:
    return {"content": text, "usage": {"input_tokens": 5, "output_tokens": 2}}


def entries(workspace: Path) -> list[dict[str, Any]]:
    """The Run's transcript without its timings."""
    found = list(transcript.parse((workspace / transcript.NAME).read_bytes()))
    return [{k: v for k, v in e.items() if k != "t"} for e in found]


def results(workspace: Path) -> list[tuple[str, str, bool]]:
    return [(e["name"], e["output"], e["is_error"]) for e in entries(workspace)
            if e["type"] == "tool_result"]


def timeless(usage: dict[str, Any] | None) -> dict[str, Any]:
    assert usage is not None
    rest = dict(usage)
    for key in ("latency_ms", "duration_ms"):
        assert isinstance(rest.pop(key), float)
    return rest


def agent(make_ctx: Callable[..., BuiltinContext], config: dict[str, Any] | None = None,
          **overrides: Any) -> tuple[BuiltinOutcome, Path]:
    ctx = make_ctx({**REPLAY, **(config or {})}, overrides.pop("task", TASK), **overrides)
    return run_builtin("agent", ctx), ctx.workspace
