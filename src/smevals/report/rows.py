"""Rows of a report: every Run that matches the filters, with the Grade that counts for it.

A Run becomes a row when it succeeded, is current (or stale Runs are included) and has a
Grade chosen by `smevals.grade.select`. Every other matching Run is kept as an `Excluded`
entry with the reason, so the header counts and the JSON can say what was left out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from smevals.grade.select import Choice, choose
from smevals.store.read import Obj
from smevals.store.records import GradeBrief, RunBrief, TamperMark

FAILED = "failed"          # the runner failed: never graded, never counted
STALE = "stale"            # made from an older task, config or runner
UNGRADED = "ungraded"      # no Grade from this grader at all
OLDER = "older_version"    # only Grades from other grader versions (or older answer keys)
ERRORED = "error"          # its Grade is an error: a Check got no verdict (judge, webhook)


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


@dataclass(slots=True)
class Row:
    """One graded Run and the Grade that counts for it."""

    task: str
    config: str
    model: str
    run: Obj[RunBrief]
    grade: Obj[GradeBrief]
    stale: bool = False
    passed: bool = False              # the Grade's outcome is "pass"
    score: float | None = None        # the Grade's score

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

    @property
    def tampering(self) -> list[TamperMark]:
        """The Grade's tampering marks ({path, kind}); [] when none."""
        return tampering_of(self.grade.record)


def tampering_of(record: object) -> list[TamperMark]:
    """The tampering marks of a Grade record ({path, kind}, well-formed ones only)."""
    marks = record.get("tampering") if isinstance(record, dict) else None
    if not isinstance(marks, list):
        return []
    return [{"path": str(m["path"]), "kind": str(m["kind"])} for m in marks
            if isinstance(m, dict) and isinstance(m.get("path"), str)
            and isinstance(m.get("kind"), str)]


@dataclass(frozen=True, slots=True)
class Excluded:
    """A matching Run left out of the rows, and why (FAILED, STALE, UNGRADED, OLDER or
    ERRORED)."""

    task: str
    config: str
    model: str
    run: Obj[RunBrief]
    reason: str
    grade: Obj[GradeBrief] | None = None      # for OLDER: the newest Grade of another version; for
                                  # ERRORED: the errored Grade


@dataclass
class Collected:
    rows: list[Row] = field(default_factory=list)
    excluded: list[Excluded] = field(default_factory=list)
    runs: list[Obj[RunBrief]] = field(default_factory=list)    # every Run matching the filters
    stale_included: int = 0

    def count(self, reason: str) -> int:
        return sum(1 for e in self.excluded if e.reason == reason)

    def tampering(self) -> dict[str, int]:
        """Runs (counted ones) whose Grade marks tampering: {"runs": N, KIND: runs, ...};
        {} when none."""
        out: dict[str, int] = {}
        for row in self.rows:
            kinds = {m["kind"] for m in row.tampering}
            if kinds:
                out["runs"] = out.get("runs", 0) + 1
                for kind in kinds:
                    out[kind] = out.get(kind, 0) + 1
        return out

    @property
    def passed(self) -> int:
        return sum(1 for r in self.rows if r.passed)

    def judge_usage(self) -> dict[str, float]:
        """Judge calls, cached answers, tokens and cost summed over the Grades counted and
        the errored ones (their calls were made too)."""
        grades = [r.grade for r in self.rows] + [e.grade for e in self.excluded
                                                 if e.reason == ERRORED and e.grade]
        total: dict[str, float] = {}
        for grade in grades:
            usage = grade.record.get("judge")
            if usage.__class__ is not dict:
                continue
            for key, value in usage.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    total[key] = total.get(key, 0) + value
        return total


def cell_of(run: Obj[RunBrief]) -> tuple[str, str, str]:
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


def runner_of(run: Obj[RunBrief]) -> str | None:
    """`smevals:codex 0.171.0`: the runner and version a Run records in its provenance (a
    harness runner or `smevals:agent`), or None."""
    provenance = run.record.get("provenance")
    runner = provenance.get("runner") if isinstance(provenance, dict) else None
    if not isinstance(runner, dict):
        return None
    name, version = runner.get("name"), runner.get("version")
    return f"{name} {version}" if isinstance(name, str) and isinstance(version, str) else None


Want = tuple[tuple[str, str | None], ...]    # (inputs key, expected value) pairs
Expected = Callable[[tuple[str, str, str]], "Want | None"]


def collect(runs: Sequence[Obj[RunBrief]], grades: Sequence[Obj[GradeBrief]], choice: Choice,
            filters: Filters = Filters(),
            expected: Expected | None = None, include_stale: bool = False) -> Collected:
    """Rows and exclusions for `runs` (in store path order), choosing Grades by `choice`.

    `expected(cell)` gives the inputs a current Run of that task, config and model has
    (None: the task or config is gone, so every such Run is stale). One pass, with as
    little work per Run as possible: reports read 100,000 of them."""
    chosen, newest = choose(grades, choice)
    out = Collected()
    matching = filters.match if filters.tasks or filters.models or filters.configs else None
    last: tuple[str, str, str] | None = None
    want: Want | None = ()
    for run in sorted(runs, key=_rel):
        rec = run.record
        try:
            cell = (rec["task"]["name"], rec["config"]["name"], rec["model"])
        except (KeyError, TypeError):
            cell = cell_of(run)
        if matching and not matching(*cell):
            continue
        out.runs.append(run)
        if rec.get("status") != "ok":
            out.excluded.append(Excluded(*cell, run, FAILED))
            continue
        if expected is not None and cell != last:
            last, want = cell, expected(cell)
        stale = want is None or (bool(want) and _differs(rec, want))
        if stale and not include_stale:
            out.excluded.append(Excluded(*cell, run, STALE))
            continue
        grade = chosen.get(run.rel)
        if grade is None:
            _ungraded(out, cell, run, newest.get(run.rel))
            continue
        grec = grade.record
        if grec.get("outcome") == ERRORED:
            out.excluded.append(Excluded(*cell, run, ERRORED, grade))
            continue
        out.stale_included += stale
        score = grec.get("score")
        out.rows.append(Row(cell[0], cell[1], cell[2], run, grade, stale,
                            grec.get("outcome") == "pass", None if score is None else float(score)))
    return out


def _differs(rec: RunBrief, want: Want) -> bool:
    inputs = rec.get("inputs")
    if inputs.__class__ is not dict:
        return True
    for key, value in want:  # noqa: SIM110  (a loop: no generator per Run)
        if inputs.get(key) != value:
            return True
    return False


def _ungraded(out: Collected, cell: tuple[str, str, str], run: Obj[RunBrief],
              last: Obj[GradeBrief] | None) -> None:
    out.excluded.append(Excluded(*cell, run, OLDER if last else UNGRADED, last))


def _rel(obj: Obj[Any]) -> str:
    return obj.rel
