"""`smevals validate`: every problem of every file, and the checks across files
(smevals.grade.problems)."""

from __future__ import annotations

from dataclasses import dataclass, field

from smevals.errors import Problem
from smevals.evaldef.discover import find_evals
from smevals.evaldef.load import read_eval
from smevals.grade.problems import cross_file_problems, task_key_warnings


@dataclass
class Summary:
    evals: int = 0
    tasks: int = 0
    configs: int = 0
    graders: int = 0
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def line(self) -> str:
        parts = [(self.evals, "eval"), (self.tasks, "task"), (self.configs, "config"),
                 (self.graders, "grader")]
        words = ", ".join(_count(n, w) for n, w in parts)
        more = f", {_count(len(self.warnings), 'warning')}" if self.warnings else ""
        return f"OK: {words}; no problems{more}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def validate_paths(paths: list[str]) -> Summary:
    summary = Summary()
    for path in find_evals(paths):
        ev, problems = read_eval(path)
        problems.extend(cross_file_problems(ev))
        summary.warnings.extend(w for task in ev.tasks for w in task_key_warnings(task))
        summary.evals += 1
        summary.tasks += len(ev.tasks)
        summary.configs += len(ev.configs)
        summary.graders += len(ev.graders)
        summary.problems.extend(problems)
    return summary
