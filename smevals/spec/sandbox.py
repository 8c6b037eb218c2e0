"""Whether this machine can give the `sandbox:` settings of what `run` or `grade` is about
to start: a Problem (exit 2, before anything starts) for each one it cannot give, at the
setting that asks for it, naming what the machine has (smevals.proc.setting).

A Config's `sandbox:` is checked for every Run of it, and a Task's for the Runs of a
Config that has one or whose runner is a built-in agent runner (those run code in the
sandbox). For grading, the `sandbox:` of a Check whose checker runs code (`match_output`,
`command`), with each graded Task's on top. `validate` checks only their shape (the
schemas): what the machine gives is a question for the machine that runs them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from smevals.errors import Problem
from smevals.spec.load import display_path
from smevals.spec.model import Config, Grader, Task

if TYPE_CHECKING:       # imported where a setting is checked: `validate` never needs them
    from smevals.proc.setting import Setting

__all__ = ["AGENT_RUNNERS", "SANDBOXED_CHECKERS", "grade_sandbox_problems",
           "run_sandbox_problems"]

AGENT_RUNNERS = frozenset({"smevals:agent", "smevals:codex", "smevals:claude-code", "smevals:pi"})
SANDBOXED_CHECKERS = frozenset({"match_output", "command"})


def run_sandbox_problems(config: Config, tasks: Iterable[Task]) -> list[Problem]:
    """The settings of `config` and `tasks` this machine cannot give, for `run`."""
    base = config.doc.get("sandbox")
    if base is None and config.runner not in AGENT_RUNNERS:
        return []
    own = (config.path, config.locs.get(("sandbox",), (1, 1)), "sandbox")
    return _problems(base, own, tasks)


def grade_sandbox_problems(grader: Grader, tasks: Iterable[Task]) -> list[Problem]:
    """The settings of `grader`'s Checks that run code, with `tasks`', this machine cannot
    give, for `grade` (and `run -g`, `test`)."""
    listed = list(tasks)
    out: list[Problem] = []
    for check in grader.checks:
        if check.checker not in SANDBOXED_CHECKERS:
            continue
        where = ("checks", check.index)
        pos = grader.locs.get(where + ("sandbox",), grader.locs.get(where, (1, 1)))
        own = (grader.path, pos, f"checks[{check.index}].sandbox")
        out += _problems(check.options.get("sandbox"), own, listed)
    return out


def _problems(base: object, own: tuple[Path, tuple[int, int], str],
              tasks: Iterable[Task]) -> list[Problem]:
    found: dict[tuple[str, tuple[int, int], str], str] = {}
    if base is not None:
        _note(found, own, base, None)
    for task in tasks:
        layer = task.doc.get("sandbox")
        if layer is not None:
            _note(found, (task.path, task.pos("sandbox"), "sandbox"), base, layer)
    return [Problem(path, line, col, reason, field)
            for (path, (line, col), field), reason in found.items()]


def _note(found: dict[tuple[str, tuple[int, int], str], str],
          at: tuple[Path, tuple[int, int], str], base: object, layer: object) -> None:
    reason = _refusal(base, layer)
    if reason is not None:
        found.setdefault((display_path(at[0]), at[1], at[2]), reason)


def _refusal(base: object, layer: object) -> str | None:
    from smevals.proc.setting import Setting

    try:
        setting = Setting.merged(base, layer)
    except ValueError as exc:       # the schema has said so already; never a crash here
        return str(exc)
    return _refused(setting, os.environ.get("PATH", ""))


@functools.cache
def _refused(setting: Setting, path: str) -> str | None:
    """Why this machine cannot give `setting` (asked once per setting and PATH)."""
    from smevals.proc.sandbox import SandboxRefused

    try:
        setting.describe()
    except SandboxRefused as refused:
        return refused.reason.removeprefix("sandbox: ")
    return None
