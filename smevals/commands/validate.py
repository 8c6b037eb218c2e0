"""`smevals validate`: every problem of every file, and the checks across files."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from smevals.errors import Problem
from smevals.spec.discover import find_evals
from smevals.spec.load import display_path, read_eval
from smevals.spec.model import Check, Config, Eval, Grader
from smevals.spec.programs import ProgramError, resolve_program
from smevals.store.layout import slug


@dataclass
class Summary:
    evals: int = 0
    tasks: int = 0
    configs: int = 0
    graders: int = 0
    problems: list[Problem] = field(default_factory=list)

    def line(self) -> str:
        parts = [(self.evals, "eval"), (self.tasks, "task"), (self.configs, "config"),
                 (self.graders, "grader")]
        words = ", ".join(f"{n} {w}{'' if n == 1 else 's'}" for n, w in parts)
        return f"OK: {words}; no problems"


def validate_paths(paths: list[str]) -> Summary:
    summary = Summary()
    for path in find_evals(paths):
        ev, problems = read_eval(path)
        problems.extend(cross_file_problems(ev))
        summary.evals += 1
        summary.tasks += len(ev.tasks)
        summary.configs += len(ev.configs)
        summary.graders += len(ev.graders)
        summary.problems.extend(problems)
    return summary


def cross_file_problems(ev: Eval) -> list[Problem]:
    problems = _duplicate_tasks(ev)
    for config in ev.configs.values():
        problems.extend(config_problems(config))
    for grader in ev.graders.values():
        for check in grader.checks:
            problems.extend(check_problems(grader, check))
    return problems


def _duplicate_tasks(ev: Eval) -> list[Problem]:
    seen: dict[str, Path] = {}
    out = []
    for task in ev.tasks:
        key = slug(task.name)
        if key in seen:
            first = display_path(seen[key])
            out.append(Problem(display_path(task.path), 1, 1,
                               f"task name '{task.name}' is already used by {first}", "name"))
        seen.setdefault(key, task.path)
    return out


def config_problems(config: Config) -> list[Problem]:
    """The runner must exist and be executable, or be a built-in with valid settings."""
    from smevals.runners import builtin_name
    from smevals.runners import config_problems as builtin_problems

    shown = display_path(config.path)
    line, col = config.vlocs.get(("runner",), (1, 1))
    name = builtin_name(config.runner)
    if name is not None:
        return [Problem(shown, *(config.vlocs if key == "runner" else config.locs).get(
                    (key,), (line, col)), msg, key)
                for key, msg in builtin_problems(name, config.doc)]
    try:
        resolve_program(config.runner, config.path.parent)
    except ProgramError as exc:
        return [Problem(shown, line, col, f"runner {exc}", "runner")]
    return []


def check_problems(grader: Grader, check: Check) -> list[Problem]:
    """A built-in checker's options must be valid; a checker program must exist."""
    from smevals import checkers

    shown = display_path(grader.path)
    where = ("checks", check.index)
    line, col = grader.vlocs.get(where + ("checker",), grader.locs.get(where, (1, 1)))
    if checkers.is_builtin(check.checker):
        return [Problem(shown, *grader.locs.get(where + (opt.split(".")[0],),
                                                grader.locs.get(where, (line, col))),
                        msg, f"checks[{check.index}].{opt}")
                for opt, msg in checkers.option_problems(check.checker, check.options)]
    try:
        resolve_program(check.checker, grader.path.parent)
    except ProgramError as exc:
        return [Problem(shown, line, col, _unknown_checker(check.checker, exc),
                        f"checks[{check.index}].checker")]
    return []


def _unknown_checker(name: str, exc: ProgramError) -> str:
    from smevals import checkers

    if "/" in name or "\\" in name:
        return f"checker program {exc}"
    close = difflib.get_close_matches(checkers.canonical_name(name), checkers.checker_names(), 1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return (f"unknown checker '{name}': not a built-in checker{hint}, and no program of that "
            f"name next to the grader or on PATH")
