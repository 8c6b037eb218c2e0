"""The agent's four tools (`bash`, `read_file`, `write_file`, `list_files`): their
descriptions for the model, and one call of them. Every problem with a call (an unknown tool,
arguments that are not a JSON object, a missing argument, a path outside the workspace, a
command that failed) becomes the tool's result, marked as an error, for the model to read:
it never ends the Run. Only a sandbox that refuses to run here does (SandboxRefused)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smevals.proc.child import Children
from smevals.proc.policy import Policy
from smevals.proc.sandbox import (
    Outcome,
    SandboxRefused,
    choose,
    describe,
    refusal,
    run_sandboxed,
)
from smevals.proc.setting import Setting
from smevals.runners.agent import confined
from smevals.runners.agent.confined import ToolError

NAMES = ("bash", "read_file", "write_file", "list_files")
_PATH = {"type": "string", "description": "a path relative to the workspace, e.g. src/app.py"}
SPECS: dict[str, dict[str, Any]] = {
    "bash": {"description": "Run a bash command in the workspace (no network); returns its "
                            "output and exit code.",
             "parameters": {"type": "object", "required": ["command"], "properties": {
                 "command": {"type": "string", "description": "the command line"}}}},
    "read_file": {"description": "Read a text file of the workspace.",
                  "parameters": {"type": "object", "required": ["path"],
                                 "properties": {"path": _PATH}}},
    "write_file": {"description": "Write a text file in the workspace (its folders are made; "
                                  "an existing file is replaced).",
                   "parameters": {"type": "object", "required": ["path", "content"],
                                  "properties": {"path": _PATH, "content": {"type": "string"}}}},
    "list_files": {"description": "List the files below a folder of the workspace (all of "
                                  "it by default).",
                   "parameters": {"type": "object", "properties": {"path": _PATH}}},
}


def specs(names: tuple[str, ...]) -> list[dict[str, Any]]:
    """The `tools` of a chat-completions request, for the tools named."""
    return [{"type": "function", "function": {"name": name, **SPECS[name]}} for name in names]


@dataclass(frozen=True)
class Result:
    """A tool call's result, as the model reads it."""

    output: str
    is_error: bool = False
    exit_code: int | None = None


@dataclass
class Toolbox:
    """The tools of one Run: its workspace, its private home for `bash`, its limits."""

    workspace: Path
    home: Path
    environ: Mapping[str, str]
    names: tuple[str, ...] = NAMES
    tool_timeout: float = 60.0
    max_output: int = 16384           # characters of a result shown to the model
    setting: Setting = field(default_factory=Setting)   # the `sandbox:` of Config and Task
    deadline: float | None = None     # time.monotonic() at which the Run ends
    written: int = 0                  # bytes written by write_file so far
    children: Children | None = None  # the Run's processes: Ctrl-C ends a command at once

    def policy(self, timeout: float) -> Policy:
        """How `bash` runs: the `sandbox:` setting (no network by default; its own view
        of the filesystem, the workspace at /workspace and a private home; with `view:
        host`, everything but the workspace and the home read-only wherever the machine
        can)."""
        return self.setting.policy(timeout, self.home, cap=self.max_output * 4,
                                   environ=self.environ, read_only=True)

    def sandbox(self) -> str:
        """What contains `bash` here; SandboxRefused when the setting cannot be met, or
        when a command could read smevals' secrets here (sandbox.refusal)."""
        if "bash" not in self.names:
            return ""
        policy = self.policy(self.tool_timeout)
        why = refusal(os.environ, policy.env, choose(policy))
        if why is not None:
            raise SandboxRefused(why, describe(policy))
        return describe(policy)

    def call(self, name: str, arguments: object) -> Result:
        """Run one tool call; never raises for the call's problems (SandboxRefused aside)."""
        if name not in self.names:
            return Result(f"unknown tool {name!r}; the tools are: {', '.join(self.names)}",
                          is_error=True)
        if isinstance(arguments, str):
            return Result(f"the arguments of {name} are not valid JSON: {arguments[:200]!r}",
                          is_error=True)
        if not isinstance(arguments, dict):
            return Result(f"the arguments of {name} must be a JSON object", is_error=True)
        try:
            result = self._tools()[name](arguments)
        except ToolError as error:
            result = Result(str(error), is_error=True)
        except OSError as error:          # what the agent's bash did to the workspace
            result = Result(f"{name} failed: {error.strerror or error}", is_error=True)
        if name == "bash":             # capped before its notes, which the model must see
            return result
        return Result(self.capped(result.output), result.is_error, result.exit_code)

    def _tools(self) -> dict[str, Callable[[dict[str, Any]], Result]]:
        return {"bash": self.bash, "read_file": self.read, "write_file": self.write,
                "list_files": self.list}

    def capped(self, text: str) -> str:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
        if len(text) <= self.max_output:
            return text
        return text[:self.max_output] + f"\n[... {len(text) - self.max_output} more " \
                                        "characters not shown]"

    def read(self, arguments: dict[str, Any]) -> Result:
        return Result(confined.read_file(self.workspace, _required(arguments, "path")))

    def write(self, arguments: dict[str, Any]) -> Result:
        path, content = _required(arguments, "path"), _required(arguments, "content")
        size = len(content.encode("utf-8", "replace")) if isinstance(content, str) else 0
        if self.written + size > confined.WRITE_BUDGET:
            raise ToolError(f"not written: the Run's write_file calls may write "
                            f"{confined.WRITE_BUDGET >> 20} MiB in all, and "
                            f"{self.written} bytes are written")
        done = Result(confined.write_file(self.workspace, path, content))
        self.written += size
        return done

    def list(self, arguments: dict[str, Any]) -> Result:
        return Result(confined.list_files(self.workspace, arguments.get("path") or "."))

    def bash(self, arguments: dict[str, Any]) -> Result:
        command = _required(arguments, "command")
        if not isinstance(command, str) or not command.strip():
            raise ToolError("`command` must be a non-empty string")
        timeout = self.tool_timeout
        if self.deadline is not None:
            timeout = max(0.1, min(timeout, self.deadline - time.monotonic()))
        policy = self.policy(timeout)
        out = run_sandboxed(["bash", "-c", command], self.workspace, policy, self.children)
        return _command_result(out, policy, self.capped)


def _required(arguments: dict[str, Any], key: str) -> Any:
    if key not in arguments:
        raise ToolError(f"missing argument `{key}`")
    return arguments[key]


def _command_result(out: Outcome, policy: Policy, cap: Callable[[str], str]) -> Result:
    """stdout, then stderr, capped; then what went wrong, in the sandbox's words
    (`[exited with code 1]`, `[timed out after 60 s (every process it started was
    killed)]`, `[killed by SIGXFSZ: ...]`)."""
    text = out.stdout.decode("utf-8", "replace")
    if out.stderr:
        text += ("" if not text or text.endswith("\n") else "\n") + \
            out.stderr.decode("utf-8", "replace")
    text = cap(text)
    why = out.why(policy)
    if why:
        text += ("" if not text or text.endswith("\n") else "\n") + f"[{why}]"
    failed = out.timed_out or out.error is not None or out.exit_code != 0
    return Result(text, is_error=failed, exit_code=out.exit_code)
