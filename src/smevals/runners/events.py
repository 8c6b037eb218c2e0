"""Reading a harness's JSON-lines event stream into a Run: the transcript, the final
message, the usage and the verdict (runners/harness.py runs the harness).

Everything in the stream is hostile: a line that is not JSON, not UTF-8, not an object or
larger than MAX_LINE becomes an `error` entry naming the line and the reading goes on; an
event the harness's reader does not know is kept verbatim as an `event` entry; in a known
one a field of an unexpected type reads as absent (the helpers below), and an event that
still cannot be read is kept verbatim with an `error` entry: never a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from smevals.files.transcript import Entry
from smevals.net.chat import is_int
from smevals.runners.base import is_number

MAX_LINE = 4 * 1024 * 1024      # bytes of one event; a longer line is skipped (and said)
OUTPUT_CAP = 64 * 1024          # characters kept of one tool result's output
ARGUMENTS_CAP = 8 * 1024        # bytes of a call's arguments kept in usage.tool_calls
MAX_USAGE_CALLS = 1000          # calls listed in usage.tool_calls (all are in the transcript)
SHOWN = 200                     # characters of a bad line quoted in its error entry

Event = dict[str, Any]


@dataclass
class Collector:
    """The transcript of one Run as it is read, and what the usage says about it."""

    entries: list[Entry] = field(default_factory=list)
    final: str = ""                     # the final message (output.txt)
    failure: str | None = None          # why the harness says the Run failed
    ended: bool = False                 # the stream's last event was seen
    usage: dict[str, Any] = field(default_factory=dict)
    turn: int | None = None
    t: float | None = None              # when the line being read arrived (seconds)
    names: dict[str, str] = field(default_factory=dict)     # call id -> tool name
    calls: int = 0
    notes: list[str] = field(default_factory=list)  # what the harness said in passing

    def _add(self, entry: Entry) -> None:
        if self.turn is not None:
            entry["turn"] = self.turn
        if self.t is not None:
            entry["t"] = self.t
        self.entries.append(entry)

    def message(self, role: str, text: str) -> None:
        self._add({"type": "message", "role": role, "text": text})

    def call(self, call_id: str, name: str, arguments: object) -> None:
        self.names[call_id] = name
        self.calls += 1
        self._add({"type": "tool_call", "id": call_id, "name": name, "arguments": arguments})

    def result(self, call_id: str, output: str, is_error: bool,
               exit_code: int | None = None, name: str | None = None) -> None:
        entry: Entry = {"type": "tool_result", "id": call_id,
                        "name": name or self.names.get(call_id, ""),
                        "output": capped(output), "is_error": is_error}
        if exit_code is not None:
            entry["exit_code"] = exit_code
        self._add(entry)

    def error(self, message: str) -> None:
        self._add({"type": "error", "message": message})

    def event(self, raw: object) -> None:
        self._add({"type": "event", "raw": raw})

    def note(self, raw: object, words: str) -> None:
        """An event that says something in passing (a warning, a retry): kept verbatim in
        the transcript, and its words in stderr.txt."""
        self.event(raw)
        if words and words not in self.notes:
            self.notes.append(words)

    def fail(self, reason: str) -> None:
        """The harness reported a failed turn: the first reason is the Run's (said once in
        the transcript when the harness's error event just said it)."""
        last = self.entries[-1] if self.entries else None
        if not (last and last["type"] == "error" and last.get("message") == reason):
            self.error(reason)
        if self.failure is None:
            self.failure = reason


class Reader(Protocol):
    """One harness's reading of its events (known ones into the Collector)."""

    def read(self, event: Event, into: Collector) -> bool:
        """Record `event`; False when this reader does not know it (kept verbatim)."""
        ...

    def finish(self, into: Collector) -> None:
        """After the last line: fill in the usage and the final message."""
        ...


def read_stream(data: bytes, reader: Reader,
                times: Callable[[int], float | None] | None = None) -> Collector:
    """Every line of `data` through `reader`; never raises for what the stream holds.
    `times(number)` says when line `number` arrived: each entry read from it gets that `t`."""
    into = Collector()
    for number, line, whole in _lines(data):
        into.t = times(number) if times is not None else None
        event = _event(number, line, whole, into)
        if event is None:
            continue
        try:
            known = reader.read(event, into)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
            into.error(f"line {number}: an event of an unexpected shape was kept as it is "
                       f"({type(error).__name__}: {error})")
            known = False
        if not known:
            into.event(event)
    into.t = None
    reader.finish(into)
    return into


def _lines(data: bytes) -> Iterator[tuple[int, bytes, bool]]:
    """(number, line, whether it ended with a newline) of each line that is not blank."""
    pieces = data.split(b"\n")
    last = len(pieces) - 1
    for index, piece in enumerate(pieces):
        line = piece.rstrip(b"\r")
        if line.strip():
            yield index + 1, line, index < last


def _event(number: int, line: bytes, whole: bool, into: Collector) -> Event | None:
    if len(line) > MAX_LINE:
        into.error(f"line {number} is {len(line)} bytes, over the {MAX_LINE} bytes one "
                   f"event may have; skipped")
        return None
    value = _loads(line)
    if value is _BAD:
        cut = "" if whole else " (the stream ends in the middle of it)"
        shown = line[:SHOWN].decode("utf-8", "replace")
        into.error(f"line {number} is not JSON{cut}: {shown!r}")
        return None
    if not isinstance(value, dict):
        into.error(f"line {number} is not a JSON object: {_short(value)}")
        return None
    return value


_BAD = object()


def _loads(line: bytes) -> Any:
    """The JSON value of a line; bytes that are not UTF-8 are replaced (U+FFFD) first."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        pass
    try:
        line.decode("utf-8")
        return _BAD                 # valid UTF-8, so the JSON itself is bad
    except UnicodeDecodeError:
        pass
    try:
        return orjson.loads(line.decode("utf-8", "replace"))
    except orjson.JSONDecodeError:
        return _BAD


def _short(value: object) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= SHOWN else text[:SHOWN] + "..."


# --- small readers of event fields (a field of the wrong type reads as absent) ---


def text(value: object) -> str:
    return value if isinstance(value, str) else ""


def mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def listing(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def count(value: object) -> int | None:
    return value if is_int(value) and value >= 0 else None


def amount(value: object) -> float | None:
    return float(value) if is_number(value) and value >= 0 else None


def capped(output: str) -> str:
    if len(output) <= OUTPUT_CAP:
        return output
    return f"{output[:OUTPUT_CAP]}\n... ({len(output) - OUTPUT_CAP} more characters)"


def blocks_text(content: object, kinds: tuple[str, ...] = ("text",)) -> str:
    """The text of a content that is a string or a list of `{type, text}` blocks."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") in kinds]
    return "\n".join(p for p in parts if isinstance(p, str))


def add_tokens(usage: dict[str, Any], **found: int | None) -> None:
    """Add each count given to the usage's own (absent counts are skipped)."""
    for key, value in found.items():
        if value is not None:
            usage[key] = usage.get(key, 0) + value


def set_total(usage: dict[str, Any]) -> None:
    """`total_tokens`: what the server was asked to bill, the input (cached tokens
    included) plus the output (reasoning included): docs/runners.md#usage."""
    if {"input_tokens", "output_tokens"} <= usage.keys():
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]


def usage_calls(entries: list[Entry]) -> list[dict[str, Any]]:
    """`usage.tool_calls`: `{name, arguments}` of each call (arguments larger than
    ARGUMENTS_CAP are left out and said so; the transcript has them all)."""
    calls: list[dict[str, Any]] = []
    for entry in entries:
        if entry["type"] != "tool_call" or len(calls) >= MAX_USAGE_CALLS:
            continue
        arguments = entry.get("arguments")
        size = len(orjson.dumps(arguments))
        if size > ARGUMENTS_CAP:
            arguments = f"({size} bytes: see transcript.jsonl)"
        calls.append({"name": entry.get("name", ""), "arguments": arguments})
    return calls
