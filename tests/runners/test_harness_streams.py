"""The readers of the three harnesses' streams never raise, whatever a line holds: events of
the known types with fields of any JSON type, and lines that are not JSON at all."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from smevals.runners.claude_code import ClaudeReader
from smevals.runners.codex import CodexReader
from smevals.runners.events import read_stream
from smevals.runners.pi import PiReader

TYPES = ["thread.started", "turn.started", "turn.completed", "turn.failed", "error",
         "item.started", "item.completed", "system", "assistant", "user", "result",
         "stream_event", "session", "agent_start", "agent_end", "turn_start", "turn_end",
         "message_end", "message_update", "tool_execution_end", "auto_retry_start"]
KEYS = ["type", "item", "message", "usage", "error", "id", "text", "content", "role",
        "command", "aggregated_output", "exit_code", "status", "changes", "arguments",
        "result", "is_error", "subtype", "errors", "num_turns", "total_cost_usd", "name",
        "input", "tool_use_id", "stopReason", "errorMessage", "toolCallId", "isError", "cost",
        "input_tokens", "output_tokens", "model", "tool", "query", "total"]

scalars = st.none() | st.booleans() | st.integers(-5, 10**12) | st.floats(allow_nan=False) \
    | st.text(max_size=8) | st.sampled_from(TYPES)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4), max_leaves=12)
events = st.fixed_dictionaries({"type": st.sampled_from(TYPES)},
                               optional={key: values for key in KEYS[1:]})


@settings(max_examples=50)       # three readers per example: half the default's 100
@given(st.lists(events | st.binary(max_size=20), max_size=12))
def test_no_stream_crashes_a_reader(lines: list[Any]) -> None:
    data = b"\n".join(line if isinstance(line, bytes) else orjson.dumps(line)
                      for line in lines)
    for reader in (CodexReader(), ClaudeReader(), PiReader()):
        read = read_stream(data, reader)
        assert isinstance(read.final, str)
        orjson.dumps(read.entries)
        orjson.dumps(read.usage)


def test_paths_in_the_workspace_are_made_relative_to_it() -> None:
    """The host path of the Run's workspace and `/workspace` (where a sandbox's view shows
    it), whole paths only: a longer name or a path that only ends the same is left alone."""
    from smevals.runners.watch import pattern, relative

    paths = pattern(["/tmp/st/run-1", "/workspace"])
    assert relative({"file_path": "/tmp/st/run-1/src/a.py", "n": 3, "cmds": [
        "cd /tmp/st/run-1 && ls", 'cat "/workspace/notes.md"', "/tmp/st/run-12/x",
        "/home/u/workspace/x", "ls /workspace/", "(/workspace)"]}, paths) == {
        "file_path": "src/a.py", "n": 3, "cmds": [
            "cd . && ls", 'cat "notes.md"', "/tmp/st/run-12/x", "/home/u/workspace/x",
            "ls .", "(.)"]}
