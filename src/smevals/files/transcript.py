"""`transcript.jsonl`: what an agent did, step by step, in one shape for every runner.

A Run of an agent (`smevals:agent`, `smevals:codex`, `smevals:claude-code`, `smevals:pi`,
or any program runner that writes one) leaves `transcript.jsonl` at the top of its
workspace: one JSON object per line, in the order things happened. Each has a `type`:

- `message`: `role` (`system`, `user`, `assistant`), `text`;
- `tool_call`: `id`, `name`, `arguments` (any JSON; a string when the model's arguments
  were not valid JSON);
- `tool_result`: `id` (of its call), `name`, `output` (text, capped), `is_error`
  (bool), and `exit_code` where the tool was a command;
- `error`: `message` (a failed turn, a truncated stream, a limit reached);
- `event`: `raw`, an event of the harness this reader does not know, kept verbatim.

Every entry may also carry `turn` (0-based) and `t` (seconds since the Run started).
The site shows it as a timeline; the `tool_*` checkers read its calls. Readers are
lenient: a line that is not a JSON object becomes an `error` entry naming the line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

import orjson

__all__ = ["NAME", "Entry", "dump", "parse", "tool_calls", "write"]

NAME = "transcript.jsonl"

Kind = Literal["message", "tool_call", "tool_result", "error", "event"]


class Entry(TypedDict):
    """One line of a transcript (see the module's docstring for the keys of each type)."""

    type: Kind
    role: NotRequired[str]
    text: NotRequired[str]
    id: NotRequired[str]
    name: NotRequired[str]
    arguments: NotRequired[Any]
    output: NotRequired[str]
    is_error: NotRequired[bool]
    exit_code: NotRequired[int | None]
    message: NotRequired[str]
    raw: NotRequired[Any]
    turn: NotRequired[int]
    t: NotRequired[float]


def dump(entries: Iterable[Entry]) -> bytes:
    """The file's bytes: one JSON object per line, each line ending in a newline."""
    return b"".join(orjson.dumps(entry) + b"\n" for entry in entries)


def write(path: Path, entries: Iterable[Entry]) -> None:
    """Write a transcript into a Run's workspace (before the Run is stored)."""
    path.write_bytes(dump(entries))


def parse(data: bytes) -> Iterator[Entry]:
    """The entries of a transcript's bytes; a bad line is an `error` entry naming it."""
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("type"), str):
            yield value  # type: ignore[misc]
        else:
            yield {"type": "error", "message": f"line {number} is not a transcript entry"}


def tool_calls(entries: Iterable[Entry]) -> list[tuple[str, Any]]:
    """(name, arguments) of each `tool_call`, in order."""
    return [(e["name"], e.get("arguments", {})) for e in entries
            if e.get("type") == "tool_call" and isinstance(e.get("name"), str)]
