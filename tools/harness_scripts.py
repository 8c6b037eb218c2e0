"""The three real harnesses and what a scripted model does with each, for the end-to-end
tests (tests/runners/test_harness_real.py) and the recording of their streams
(tools/record_harness.py): which wire protocol each speaks (tools/model_servers.py), and
the scripted session in which the model writes hello.py and says it is done."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from tools.model_servers import Call, Received, Reply, Usage

CONTENT = "print('hello from the harness')\n"
COMMAND = "printf \"print('hello from the harness')\\n\" > hello.py"


@dataclass(frozen=True)
class Real:
    runner: str         # smevals:RUNNER
    program: str
    package: str
    protocol: str       # the wire protocol of its server (tools/model_servers.py)


REAL = {
    "codex": Real("codex", "codex", "@openai/codex", "responses"),
    "claude-code": Real("claude-code", "claude", "@anthropic-ai/claude-code", "anthropic"),
    "pi": Real("pi", "pi", "@mariozechner/pi-coding-agent", "chat"),
}

# What the scripted model bills: a first response (a tool call writing hello.py) and a last
# one (the final answer), with cached and reasoning tokens, so that every sum is tested.
FIRST = Usage(input=1100, cached=200, output=35, reasoning=5)
LAST = Usage(input=1300, cached=1000, output=12)


def workdir(request: Received) -> str | None:
    """The working folder the harness told its model (its system prompt or context)."""
    text = json.dumps(request.body)
    for pattern in (r"[Ww]orking directory: ([^\s\"\\]+)", r"<cwd>([^<\"\\]+)</cwd>"):
        found = re.search(pattern, text)
        if found:
            return found.group(1)
    return None


def tool_names(request: Received) -> list[str]:
    tools = request.body.get("tools") if isinstance(request.body, dict) else None
    names = []
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        if isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def write_call(runner: str, request: Received) -> Call:
    """The tool call that writes hello.py, as each harness offers it (an absolute path where
    the harness told the model its folder, as a real model would give)."""
    where = workdir(request)
    if runner == "codex":
        names = tool_names(request)
        if "exec_command" in names:
            return Call("exec_command", {"cmd": COMMAND, **({"workdir": where} if where else {})})
        if "shell_command" in names:
            return Call("shell_command", {"command": COMMAND})
        return Call("shell", {"command": ["bash", "-lc", COMMAND]})
    if runner == "claude-code":
        path = f"{where}/hello.py" if where else "hello.py"
        return Call("Write", {"file_path": path, "content": CONTENT})
    return Call("write", {"path": "hello.py", "content": CONTENT})


def script(runner: str) -> Callable[[Received, int], Reply]:
    """The scripted model of the good session: write hello.py, then say it is done."""
    def respond(request: Received, turn: int) -> Reply:
        if turn == 0:
            return Reply("I'll write hello.py.", (write_call(runner, request),), FIRST)
        return Reply("Done: hello.py prints the greeting.", (), LAST)
    return respond
