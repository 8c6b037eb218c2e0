"""The typed records of the read API: one `RunResult` per Run, one `CheckResult` per Check
a counted (or errored) Grade lists, and `EvalResults`, one Eval's store as `report` reads it.

A RunResult is made from the Run's record and the Grade that counts for it, both as the
store read them (`smevals.report.rows`): it holds references to them, never a copy, so a
store of 100,000 Runs is in memory once. They are NamedTuples, like the store's own `Obj`:
immutable, typed, and made in a blink (a frozen dataclass of thirty fields costs three
microseconds more to make, a third of a second per 100,000 Runs).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

from smevals.report.checks import labelled, verdict
from smevals.report.document import EvalReport
from smevals.report.formats import summary_json
from smevals.report.jsondoc import Damaged, Summary
from smevals.report.rows import ERRORED, STALE, Excluded, Row
from smevals.store.read import Obj
from smevals.store.records import GradeBrief, RunBrief, RunRecord, Usage

EMPTY: Mapping[str, Any] = {}


class CheckResult(NamedTuple):
    """One Check as one Grade records it (`smevals.report.checks` labels and verdicts)."""

    eval: str
    task: str
    config: str
    model: str
    sample: int | None
    run_id: str
    grade_id: str
    grader_version: str
    counted: bool               # the Grade counts (False: an errored Grade, left out)
    position: int               # 1 for the Grade's first Check
    check: str                  # its name, else its checker (`contains #2` for a second)
    checker: str
    verdict: str                # pass, fail, error or skipped
    passed: bool | None         # None for error and skipped
    score: float | None         # None when skipped (as report's per-Check means count it)
    notes: str | None           # a failed Check's notes
    commit: str | None


class RunResult(NamedTuple):
    """One Run, the Grade that counts for it (None when it is left out: `left_out` says
    why), and what it cost."""

    eval: str
    task: str
    config: str
    model: str
    sample: int | None
    run_id: str
    run_rel: str
    status: str                 # ok, or failed (the runner failed)
    failure: str | None         # the failure's kind: exit, timeout, signal, launch, artifact
    started: str | None         # ISO-8601, as recorded
    ended: str | None
    duration_seconds: float | None
    counted: bool               # its Grade counts in `report`
    left_out: str | None        # else why: failed, stale, ungraded, older_version, error
    stale: bool                 # made from an older task, config or runner
    grader: str
    grade_id: str | None        # the Grade that counts (or the errored one)
    grade_rel: str | None
    grader_version: str | None
    graded: str | None
    outcome: str | None         # pass, fail, or error
    passed: bool | None         # outcome == pass, for a counted Run; None otherwise
    score: float | None         # the counted Grade's score; None otherwise
    tags: tuple[str, ...]
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    cost_usd: float | None
    latency_ms: float | None
    judge_calls: float | None
    judge_cached: float | None
    judge_input_tokens: float | None
    judge_output_tokens: float | None
    judge_cost_usd: float | None
    commit: str | None          # the commit the store was read at (None: the working tree)
    run_commit: str | None      # the Eval's commit when the Run was made (its provenance)
    store: str                  # where the store was read (a folder, or REV:folder)
    task_keys: Mapping[str, Any]    # the Task document given to the runner
    metrics: Mapping[str, Any]      # the Grade's metrics
    usage: Usage                    # the Run's usage as recorded (empty when none)
    run_record: RunBrief        # the record itself (full: a RunRecord)
    grade_record: GradeBrief | None    # the Grade's brief view (store/brief.py)

    def checks(self) -> list[CheckResult]:
        """The Checks of its Grade (none for a Run left out, but for an errored Grade)."""
        if self.grade_record is None or self.grade_id is None:
            return []
        return list(_checks_of(self, self.grade_record.get("checks")))


RUN_FIELDS = RunResult._fields
CHECK_FIELDS = CheckResult._fields


def _checks_of(run: RunResult, checks: object) -> Iterator[CheckResult]:
    for position, (label, check) in enumerate(labelled(checks), 1):
        said = verdict(check)
        score = _number(check.get("score")) if said != "skipped" else None
        notes = check.get("notes")
        yield CheckResult(run.eval, run.task, run.config, run.model, run.sample, run.run_id,
                          str(run.grade_id), str(run.grader_version), run.counted, position,
                          label, str(check.get("checker") or ""), said,
                          (said == "pass") if said in ("pass", "fail") else None, score,
                          notes if isinstance(notes, str) else None, run.commit)


def _number(value: object) -> float | None:
    """A finite number (not a bool) as a float, else None."""
    if value.__class__ in (int, float) and value - value == 0:
        return float(value)
    return None


def _count(value: object) -> int | None:
    """A whole number within 64 bits (what every table format holds), else None."""
    return value if value.__class__ is int and -2**63 <= value < 2**63 else None


@dataclass
class EvalResults:
    """One Eval's store on one side (the working tree or a revision), read as `report`
    reads it: which Grade counts, stale and damaged objects left out and counted."""

    report: EvalReport = field(repr=False)

    @property
    def name(self) -> str:
        return self.report.name

    @property
    def path(self) -> str:
        return self.report.path

    @property
    def store(self) -> str:
        return self.report.store

    @property
    def rev(self) -> str | None:
        return self.report.rev

    @property
    def commit(self) -> str | None:
        return self.report.commit

    @property
    def grader(self) -> str:
        return self.report.grader

    @property
    def grader_version(self) -> str:
        """The version whose Grades count (the prefix given, with `grader_version=`)."""
        return self.report.version

    @property
    def damaged(self) -> list[Damaged]:
        """The damaged objects left out (`path`, `problem`): nothing in them is counted."""
        return list(self.report.damaged)

    @property
    def notes(self) -> list[str]:
        return list(self.report.notes)

    @cached_property
    def summary(self) -> Summary:
        """`report --format json`'s `summary` of this Eval: the counts of the Runs counted
        and of those left out, the mean score, the pass rate, the per-Check figures."""
        return summary_json(self.report)

    def runs(self) -> Iterator[RunResult]:
        """Every Run matching the filters, in store path order: counted ones with their
        Grade, and the ones left out with the reason."""
        c = self.report.collected
        made = _Maker(self.report)
        rows = iter(c.rows)
        left = {e.run.rel: e for e in c.excluded}
        for run in c.runs:
            item = left.get(run.rel)
            if item is None:
                yield made.counted(next(rows))
            else:
                yield made.left(item)

    def checks(self) -> Iterator[CheckResult]:
        """Each Check of the Grades whose Checks `report` counts: the counted Grades and the
        errored ones (a Check's error is its figure)."""
        return checks_of(self.runs())


def checks_of(runs: Iterable[RunResult]) -> Iterator[CheckResult]:
    """The Checks of the Runs' Grades that `report`'s per-Check figures count."""
    for run in runs:
        if run.grade_record is not None and (run.counted or run.left_out == ERRORED):
            yield from _checks_of(run, run.grade_record.get("checks"))


class _Maker:
    """RunResults of one EvalReport (what every Run of it shares, looked up once).

    Made 100,000 times in a row, so every field is read once, with no call where none is
    needed: the records have passed their schema (the store leaves out the others), so
    `status`, `started`, `ended`, `duration_seconds`, the Grade's `outcome`, `graded`,
    `tags`, `grader` and `judge` have their schema's types. What no schema shapes (usage,
    provenance, the Task document) is checked value by value."""

    def __init__(self, report: EvalReport):
        self.eval = report.name
        self.grader = report.grader
        self.commit = report.commit
        self.store = report.store

    def counted(self, row: Row) -> RunResult:
        return self.make(row.task, row.config, row.model, row.run, row.grade, True, None,
                         row.stale)

    def left(self, item: Excluded) -> RunResult:
        grade = item.grade if item.reason == ERRORED else None
        return self.make(item.task, item.config, item.model, item.run, grade, False,
                         item.reason, item.reason == STALE)

    def make(self, task: str, config: str, model: str, run: Obj[RunBrief],
             grade: Obj[GradeBrief] | None, counted: bool, left_out: str | None,
             stale: bool) -> RunResult:
        rec: Any = run.record           # a full record (SideSpec.full_runs), read as such
        full: RunRecord = rec
        usage = full.get("usage")
        spent = _usage(usage) if usage else NO_USAGE
        failure = full.get("failure")
        task_doc = full.get("task")
        sample = full.get("sample")
        if grade is None:
            graded: tuple[Any, ...] = NOT_GRADED
        else:
            g = grade.record
            outcome = g.get("outcome")
            judge = g.get("judge")
            graded = (grade.id, grade.rel, g.get("grader", {}).get("version"),
                      g.get("graded"), outcome, (outcome == "pass") if counted else None,
                      _number(g.get("score")) if counted else None, tuple(g.get("tags") or ()),
                      *(_judge(judge) if judge else NO_JUDGE),
                      g.get("metrics") or EMPTY, g)
        git = full.get("provenance", EMPTY).get("git")
        made = git.get("commit") if git.__class__ is dict else None
        return _new(RunResult, (
            self.eval, task, config, model,
            sample if sample.__class__ is int and sample < INT64 else None,
            run.id, run.rel, full.get("status"),
            failure.get("kind") if failure.__class__ is dict else None,
            full.get("started"), full.get("ended"), full.get("duration_seconds"),
            counted, left_out, stale, self.grader, *graded[:8], *spent, *graded[8:13],
            self.commit, made if made.__class__ is str else None, self.store,
            task_doc if task_doc.__class__ is dict else EMPTY, graded[13],
            usage if usage.__class__ is dict else EMPTY, run.record, graded[14]))


_new = tuple.__new__        # a NamedTuple made without its Python-level __new__ (2x faster)
INT64 = 2**63
NO_USAGE = (None,) * 5
NO_JUDGE = (None,) * 5
NOT_GRADED: tuple[Any, ...] = (None,) * 7 + ((),) + NO_JUDGE + (EMPTY, None)


def _usage(usage: Usage) -> tuple[int | None, int | None, int | None, float | None,
                                float | None]:
    """input, output and total tokens, cost_usd and latency_ms of a Run's usage (which no
    schema shapes: anything but a whole number, or a finite number, is None)."""
    if usage.__class__ is not dict:
        return NO_USAGE
    return (_count(usage.get("input_tokens")), _count(usage.get("output_tokens")),
            _count(usage.get("total_tokens")), _number(usage.get("cost_usd")),
            _number(usage.get("latency_ms")))


def _judge(judge: object) -> tuple[float | None, float | None, float | None, float | None,
                                float | None]:
    """calls, cached, input and output tokens and cost_usd of a Grade's judge calls."""
    if judge.__class__ is not dict:
        return NO_JUDGE
    return (_number(judge.get("calls")), _number(judge.get("cached")),
            _number(judge.get("input_tokens")), _number(judge.get("output_tokens")),
            _number(judge.get("cost_usd")))
