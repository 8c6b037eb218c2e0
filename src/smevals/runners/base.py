"""What the in-process Runners (`runner: smevals:NAME`) share: the context and outcome of a Run
and a Task's chat messages (config keys: runners/options.py; HTTP: smevals/net/)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:
    from smevals.proc.child import Children

Problems = list[tuple[str, str]]   # (field path, message)


@dataclass(frozen=True)
class BuiltinContext:
    """Everything a built-in Runner gets for one Run."""

    config: Mapping[str, Any]
    config_dir: Path
    task: Mapping[str, Any]
    model: str
    sample_index: int
    workspace: Path
    timeout: float | None
    environ: Mapping[str, str]
    cancel: threading.Event
    children: Children | None = None     # where a built-in registers the processes it starts,
                                         # so Ctrl-C and SIGTERM end them at once


@dataclass
class BuiltinOutcome:
    """What a built-in Runner produced; the run engine stores it as a Run."""

    stdout: str
    stderr: str = ""
    exit_code: int = 0
    usage: dict[str, Any] | None = None
    failure: str | None = None
    provenance: dict[str, Any] | None = None     # added to the Run's (the runner's version)


class RunFailed(Exception):
    """Raised inside a built-in to end its Run as failed; `run_builtin` turns it into an outcome."""

    def __init__(
        self,
        reason: str,
        failure: str = "exit",
        exit_code: int = 1,
        usage: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.failure = failure
        self.exit_code = exit_code
        self.usage = usage

    def outcome(self, prefix: str, stderr: str = "") -> BuiltinOutcome:
        """The failed outcome, with `prefix: reason` appended to what `stderr` already holds."""
        return BuiltinOutcome(
            stdout="",
            stderr=f"{stderr}{prefix}: {self.reason}\n",
            exit_code=self.exit_code,
            usage=self.usage,
            failure=self.failure,
        )


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


# --- a Task as chat messages ---


def chat_messages(task: Mapping[str, Any], system: str | None) -> list[dict[str, Any]]:
    """The chat messages of a Task (`prompt` or `messages`), with the config's system prompt first
    unless the Task's messages already begin with a system message."""
    name = task.get("name", "?")
    if "prompt" in task and "messages" in task:
        raise RunFailed(f"task {name!r} has both `prompt` and `messages`", failure="launch")
    if isinstance(task.get("prompt"), str):
        chat = [{"role": "user", "content": task["prompt"]}]
    elif "messages" in task:
        chat = _task_messages(name, task["messages"])
    else:
        raise RunFailed(f"task {name!r} needs a string `prompt` or `messages`", failure="launch")
    if system and not (chat and chat[0].get("role") == "system"):
        chat.insert(0, {"role": "system", "content": system})
    return chat


def _task_messages(name: str, value: object) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise RunFailed(f"task {name!r}: `messages` must be a non-empty list", failure="launch")
    for index, item in enumerate(value):
        if not (isinstance(item, Mapping) and isinstance(item.get("role"), str)):
            raise RunFailed(
                f"task {name!r}: messages[{index}] needs a string `role`", failure="launch"
            )
    return [dict(item) for item in value]
