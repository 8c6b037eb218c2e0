"""The shape of `smevals report --format json` (docs/reports.md#json, schemas/
report.schema.json), for the type checker: report/formats.py builds it, the site reuses its
leaderboard entries and summaries. At run time these are plain dicts, dumped as built (key
order included); `tests/report/test_report_json_types.py` holds every TypedDict here to its
schema node and a real report to the schema.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from smevals.store.records import TamperMark

__all__ = ["CheckFigures", "Damaged", "EvalEntry", "ExcludedEntry", "Figures", "Filters",
           "GateLimits", "GatesEntry", "GraderChoice", "LeaderEntry", "MetricFigures", "PassAtK",
           "RepeatCell", "RepeatsEntry", "ReportDoc", "RowEntry", "RunnerCount", "SuiteLine",
           "Summary", "TagShare", "TamperingCount", "TaskFigures"]


class Figures(TypedDict):
    """Scores and pass rate of some Grades: `mean` is None with no score, `stderr` with
    fewer than two, `pass_rate` with nothing graded; `pass_rate_ci` is Wilson's [low, high]."""

    scored: int
    mean: float | None
    stderr: float | None
    pass_rate: float | None
    pass_rate_ci: list[float]


class CheckFigures(TypedDict):
    """One Check's results (report/checks.py CheckRow.as_dict)."""

    check: str
    runs: int
    passed: int
    failed: int
    errors: int
    skipped: int
    pass_rate: float | None
    pass_rate_ci: list[float]
    scored: int
    mean: float | None
    stderr: float | None


class MetricFigures(TypedDict):
    name: str
    kind: str                       # boolean (a rate) or number
    n: int
    mean: float
    stderr: float | None


class TaskFigures(Figures):
    task: str
    runs: int
    passed: int
    task_passed: bool               # by the report's --task-pass rule


class RunnerCount(TypedDict):
    runner: str                     # a harness runner or the agent, with its version
    runs: int


class LeaderEntry(Figures):
    """One config x model of the leaderboard."""

    rank: int
    config: str
    model: str
    runs: int
    passed: int
    failed: int
    metrics: list[MetricFigures]
    tasks: list[TaskFigures]
    checks: list[CheckFigures]
    runners: NotRequired[list[RunnerCount]]


class TagShare(TypedDict):
    tag: str
    count: int
    total: int
    share: float


# `class` is a keyword: the functional form
RepeatCell = TypedDict("RepeatCell", {"task": str, "runs": int, "passed": int, "class": str})


class PassAtK(TypedDict):
    k: int
    pass_at_k: float
    pass_hat_k: float
    tasks: int                      # tasks with at least k Runs


class RepeatsEntry(TypedDict):
    config: str
    model: str
    tasks: int
    stable_pass: int
    stable_fail: int
    flaky: int
    cells: list[RepeatCell]
    k: list[PassAtK]


class RowEntry(TypedDict):
    """A graded Run and the Grade that counts for it."""

    tampering: NotRequired[list[TamperMark]]
    task: str
    config: str
    model: str
    outcome: str | None
    score: float | None
    tags: list[str]
    metrics: dict[str, Any]         # the Grade's metrics, as its Checks gave them
    run_dir: str
    run_id: str
    run_rel: str
    sample: int | None
    started: str | None
    duration_seconds: float | None
    grade_id: str
    grade_rel: str
    grader_version: str
    graded: str | None
    stale: bool
    score_note: str | None


class ExcludedEntry(TypedDict):
    task: str
    config: str
    model: str
    run_id: str
    run_rel: str
    reason: str                     # failed, stale, ungraded, older_version or error
    grade_id: str | None


class TamperingCount(TypedDict):
    runs: int
    kinds: dict[str, int]           # Runs by kind of mark


class Summary(Figures):
    """An Eval's counts over every config x model."""

    runs: int
    graded: int
    passed: int
    failed: int
    ungraded: int
    older_version_only: int
    failed_runs_excluded: int
    stale_excluded: int
    stale_reasons: dict[str, int]
    stale_included: int
    other_version_grades: int
    errored: NotRequired[int]
    tampering: NotRequired[TamperingCount]
    judge: NotRequired[dict[str, float]]    # calls, cached, tokens, cost_usd summed
    checks: list[CheckFigures]


class GraderChoice(TypedDict):
    name: str
    version: str                    # the current version, or the prefix asked for
    choice: str                     # current, version or any
    current_version: str


class Damaged(TypedDict):
    path: str
    problem: str


class EvalEntry(TypedDict):
    """One Eval of the report."""

    eval: str
    path: str
    store: str
    rev: str | None
    commit: str | None
    grader: GraderChoice
    grader_version: str
    excluded_failed_runs: int
    summary: Summary
    ranked_by: str                  # score or pass_rate
    leaderboard: list[LeaderEntry]
    tags: list[TagShare]
    repeats: list[RepeatsEntry]
    rows: list[RowEntry]
    excluded: list[ExcludedEntry]
    notes: list[str]
    damaged: list[Damaged]


class SuiteLine(Figures):
    """One Eval x config x model of the Suite's summary."""

    eval: str
    config: str
    model: str
    runs: int
    passed: int
    failed: int


class Filters(TypedDict):
    tasks: list[str]
    models: list[str]
    configs: list[str]


class GateLimits(TypedDict):
    fail_under: float | None
    min_pass_rate: float | None
    allow_incomplete: bool


class GatesEntry(GateLimits):
    passed: bool
    failures: list[str]


class ReportDoc(TypedDict):
    """The whole document."""

    format: int
    generated: str
    rev: str | None
    filters: Filters
    gates: GatesEntry
    task_pass: str
    evals: list[EvalEntry]
    suite: list[SuiteLine]
