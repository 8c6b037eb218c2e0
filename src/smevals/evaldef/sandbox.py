"""Whether this machine can give the `sandbox:` settings of what `run` or `grade` is about
to start: a Problem (exit 2, before anything starts) for each one it cannot give, at the
setting that asks for it, naming what the machine has (smevals.proc.setting).

A Config's `sandbox:` is checked for every Run of it, and a Task's for the Runs of a
Config that has one or whose runner is a built-in agent runner (those run code in the
sandbox). Such a runner is checked even without any setting: its code runs in its own
view of the filesystem by default, and a machine that cannot build one refuses it at the
Config's `runner:` (unless `view: host` says to run with the machine's files in sight);
an `smevals:agent` Config whose `tools:` leave out `bash` runs no code. For grading, the
`sandbox:` of every Check whose checker runs code (`match_output`, `command`), with each
graded Task's on top. Each `expose:` path must exist here and must not hold the Eval's
folder: a Problem at that item. `validate` checks only their shape (the schemas): what
the machine gives is a question for the machine that runs them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smevals.errors import Problem
from smevals.evaldef.load import display_path
from smevals.evaldef.model import Config, Grader, Task

if TYPE_CHECKING:       # imported where a setting is checked: `validate` never needs them
    from smevals.proc.setting import Setting

__all__ = ["AGENT_RUNNERS", "SANDBOXED_CHECKERS", "grade_sandbox_problems",
           "run_sandbox_problems"]

AGENT_RUNNERS = frozenset({"smevals:agent", "smevals:codex", "smevals:claude-code", "smevals:pi"})
SANDBOXED_CHECKERS = frozenset({"match_output", "command"})

# Where a layer is written: its file, the positions of its document, the field path of
# its `sandbox` key there, and the position to name when it has none.
Where = tuple[Path, dict[Any, tuple[int, int]], tuple[str | int, ...], tuple[int, int]]


def run_sandbox_problems(config: Config, tasks: Iterable[Task]) -> list[Problem]:
    """The settings of `config` and `tasks` this machine cannot give, for `run`."""
    base = config.doc.get("sandbox")
    runs_code = config.runner in AGENT_RUNNERS and _offers_bash(config)
    if base is None and not runs_code:
        return []
    pos = config.locs.get(("sandbox",), config.locs.get(("runner",), (1, 1)))
    own: Where = (config.path, config.locs, ("sandbox",), pos)
    return _problems(base, own, tasks, config.path.parent.parent)


def _offers_bash(config: Config) -> bool:
    tools = config.doc.get("tools")
    return config.runner != "smevals:agent" or not isinstance(tools, list) or "bash" in tools


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
        own: Where = (grader.path, grader.locs, (*where, "sandbox"), pos)
        out += _problems(check.options.get("sandbox"), own, listed, grader.path.parent.parent)
    return out


def _problems(base: object, own: Where, tasks: Iterable[Task], eval_dir: Path) -> list[Problem]:
    found: dict[tuple[str, tuple[int, int], str], str] = {}
    _exposed(found, own, base, eval_dir)
    _note(found, own, base, None)
    for task in tasks:
        layer = task.doc.get("sandbox")
        if layer is not None:
            at: Where = (task.path, task.locs, ("sandbox",), task.pos("sandbox"))
            _exposed(found, at, layer, eval_dir)
            _note(found, at, base, layer)
    return [Problem(path, line, col, reason, field)
            for (path, (line, col), field), reason in found.items()]


def _field(where: tuple[str | int, ...]) -> str:
    from smevals.evaldef.yamlio import dotted

    return dotted(where)


def _note(found: dict[tuple[str, tuple[int, int], str], str], at: Where, base: object,
          layer: object) -> None:
    reason = _refusal(base, layer)
    if reason is not None:
        found.setdefault((display_path(at[0]), at[3], _field(at[2])), reason)


def _exposed(found: dict[tuple[str, tuple[int, int], str], str], at: Where, layer: object,
             eval_dir: Path) -> None:
    """A Problem at each `expose:` item of `layer` that cannot be given here."""
    from smevals.proc.view import expose_problem

    paths = layer.get("expose") if isinstance(layer, dict) else None
    if not isinstance(paths, list):
        return
    for index, path in enumerate(paths):
        if not isinstance(path, str):
            continue
        why = expose_problem(path, holds=str(eval_dir))
        if why is not None:
            where = (*at[2], "expose", index)
            pos = at[1].get(where, at[3])
            found.setdefault((display_path(at[0]), pos, _field(where)), why)


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
