"""The harness runners' own cost: reading an event stream (Claude Code's `stream-json`, E
events of a realistic mix: assistant text, tool calls and results), and one whole Run of
`smevals:codex` on a harness that only prints a recorded stream, against starting that same
program in the sandbox directly (so the difference is smevals' share: the private home, the
environment, reading the stream, writing the transcript), median and best of R.

Usage: python bench/harness.py [--events 20000] [--repeats 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import timed_calls as timed  # noqa: E402
from smevals.proc.sandbox import Policy, run_sandboxed, sandbox_env  # noqa: E402
from smevals.runners import BuiltinContext, run_builtin  # noqa: E402
from smevals.runners.claude_code import ClaudeReader  # noqa: E402
from smevals.runners.events import read_stream  # noqa: E402

CODEX = ROOT / "tests" / "fixtures" / "harness" / "codex-good.jsonl"


def claude_stream(events: int) -> bytes:
    """`events` lines: per turn an assistant text, a tool call and its result (1 KiB)."""
    lines = [{"type": "system", "subtype": "init", "model": "m", "tools": ["Bash"]}]
    for turn in range(events // 3):
        message = {"id": f"msg_{turn}", "role": "assistant"}
        lines += [
            {"type": "assistant", "message": {**message, "content": [
                {"type": "text", "text": f"Step {turn}: running the tests."}]}},
            {"type": "assistant", "message": {**message, "content": [
                {"type": "tool_use", "id": f"t{turn}", "name": "Bash",
                 "input": {"command": f"pytest -q tests/test_{turn}.py"}}]}},
            {"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t{turn}", "content": "." * 1024}]}}]
    lines.append({"type": "result", "subtype": "success", "is_error": False, "result": "ok",
                  "num_turns": events // 3, "usage": {"input_tokens": 1, "output_tokens": 1}})
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)



def one_run(tmp: Path, program: Path, count: list[int]) -> None:
    count[0] += 1
    workspace = tmp / f"ws{count[0]}"
    workspace.mkdir()
    ctx = BuiltinContext(config={"executable": str(program)}, config_dir=tmp,
                         task={"name": "t", "prompt": "Fix slugify"}, model="m",
                         sample_index=0, workspace=workspace, timeout=60,
                         environ=dict(os.environ), cancel=threading.Event())
    outcome = run_builtin("codex", ctx)
    if outcome.exit_code != 0:
        raise SystemExit(f"the Run failed: {outcome.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    data = claude_stream(args.events)
    median, best = timed(lambda: read_stream(data, ClaudeReader()), args.repeats)
    lines = data.count(b"\n")
    print(f"read_stream of {lines} Claude Code events ({len(data) / 1e6:.1f} MB): "
          f"{median:.1f} ms median, {best:.1f} ms best ({args.repeats} reads); "
          f"{median * 1000 / lines:.1f} us per event")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        program = tmp / "codex"
        # the stream inside the program: the fixture's folder is not in the harness's view
        program.write_text(f"#!/bin/sh\ncat <<'EOF'\n{CODEX.read_text()}EOF\n")
        program.chmod(0o755)
        count = [0]
        median, best = timed(lambda: one_run(tmp, program, count), args.repeats)
        print(f"a whole smevals:codex Run (14 recorded events): {median:.1f} ms median, "
              f"{best:.1f} ms best ({args.repeats} Runs)")
        home = tmp / "home"
        home.mkdir()
        policy = Policy(60, sandbox_env(os.environ, home), network=True, memory_mb=32768,
                        processes=256, cap=64 * 1024 * 1024)
        base, base_best = timed(lambda: run_sandboxed([str(program)], home, policy),
                                args.repeats)
        print(f"the same program started in the sandbox directly: {base:.1f} ms median, "
              f"{base_best:.1f} ms best; smevals' share of a Run: {median - base:.1f} ms")


if __name__ == "__main__":
    main()
