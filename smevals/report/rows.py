"""Rows of a report: every Run that matches the filters, with the Grade that counts for it.

A Run becomes a row when it succeeded, is current (or stale Runs are included) and has a
Grade chosen by `smevals.grade.select`. Every other matching Run is kept as an `Excluded`
entry with the reason, so the header counts and the JSON can say what was left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from smevals.grade.select import Choice, grades_by_run, pick
from smevals.store.store import Obj

FAILED = "failed"          # the runner failed: never graded, never counted
STALE = "stale"            # made from an older task, config or runner
UNGRADED = "ungraded"      # no Grade from this grader at all
OLDER = "older_version"    # only Grades from other grader versions (or older answer keys)


@dataclass(frozen=True)
class Filters:
    tasks: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    configs: tuple[str, ...] = ()

    def match(self, task: str, config: str, model: str) -> bool:
        return ((not self.tasks or task in self.tasks)
                and (not self.models or model in self.models)
                and (not self.configs or config in self.configs))

    def describe(self) -> str:
        parts = [f"{flag} {v}" for flag, values in (("-t", self.tasks), ("-c", self.configs),
                                                    ("-m", self.models)) for v in values]
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Row:
    """One graded Run and the Grade that counts for it."""

    task: str
    config: str
    model: str
    run: Obj
    grade: Obj
    stale: bool = False
    passed: bool = False              # the Grade's outcome is "pass"
    score: float | None = None        # the Grade's score

    @classmethod
    def of(cls, cell: tuple[str, str, str], run: Obj, grade: Obj, stale: bool = False) -> Row:
        value = grade.record.get("score")
        return cls(*cell, run, grade, stale, grade.record.get("outcome") == "pass",
                   None if value is None else float(value))

    @property
    def tags(self) -> list[str]:
        tags = self.grade.record.get("tags")
        return [str(t) for t in tags] if tags else []

    @property
    def metrics(self) -> dict[str, Any]:
        metrics = self.grade.record.get("metrics")
        return metrics if isinstance(metrics, dict) else {}

    @property
    def version(self) -> str:
        return str(self.grade.record.get("grader", {}).get("version", ""))


@dataclass(frozen=True, slots=True)
class Excluded:
    """A matching Run left out of the rows, and why (FAILED, STALE, UNGRADED or OLDER)."""

    task: str
    config: str
    model: str
    run: Obj
    reason: str
    grade: Obj | None = None      # for OLDER: the newest Grade of another version


@dataclass
class Collected:
    rows: list[Row] = field(default_factory=list)
    excluded: list[Excluded] = field(default_factory=list)
    runs: list[Obj] = field(default_factory=list)    # every Run matching the filters
    stale_included: int = 0

    def count(self, reason: str) -> int:
        return sum(1 for e in self.excluded if e.reason == reason)

    @property
    def passed(self) -> int:
        return sum(1 for r in self.rows if r.passed)


def cell_of(run: Obj) -> tuple[str, str, str]:
    """(task, config, model) of a Run record."""
    rec = run.record
    try:
        return (rec["task"]["name"], rec["config"]["name"], rec["model"])
    except (KeyError, TypeError):
        pass
    task, config = rec.get("task"), rec.get("config")
    return (str(task.get("name") if isinstance(task, dict) else task),
            str(config.get("name") if isinstance(config, dict) else config),
            str(rec.get("model")))


def collect(runs: list[Obj], grades: list[Obj], choice: Choice, filters: Filters = Filters(),
            is_stale: Callable[[Obj, tuple[str, str, str]], bool] | None = None,
            include_stale: bool = False) -> Collected:
    """Rows and exclusions for `runs` (in store path order), choosing Grades by `choice`."""
    history = grades_by_run(grades, choice.grader)
    out = Collected()
    for run in sorted(runs, key=lambda r: r.rel):
        cell = task, config, model = cell_of(run)
        if not filters.match(task, config, model):
            continue
        out.runs.append(run)
        if run.record.get("status") != "ok":
            out.excluded.append(Excluded(task, config, model, run, FAILED))
            continue
        stale = bool(is_stale and is_stale(run, cell))
        if stale and not include_stale:
            out.excluded.append(Excluded(task, config, model, run, STALE))
            continue
        past = history.get(run.rel, [])
        grade = pick(past, choice)
        if grade is None:
            reason = OLDER if past else UNGRADED
            out.excluded.append(Excluded(task, config, model, run, reason,
                                         past[-1] if past else None))
            continue
        out.stale_included += stale
        out.rows.append(Row.of(cell, run, grade, stale))
    return out
