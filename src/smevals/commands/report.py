"""`smevals report`: read each Eval's store (in the working tree or at a git revision,
smevals.sides), choose the Grade that counts for every Run, and render the report in one
format; and `smevals report --agreement GRADER[:VERSION] [--against human|GRADER[:VERSION]]`:
pick the Grade that counts for each Run on each side, then compare (smevals.report.agreement).

An agreement side is `human` (each Run's newest label), `NAME:VERSION` (the newest Grade of
that version prefix, whether or not the grader still exists), or `NAME` (the newest Grade
of the grader's current version and the Tasks' current answer keys, as `report` counts).
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from smevals.errors import SmevalsError
from smevals.evaldef.model import Eval
from smevals.evaldef.pick import load_evals, pick_grader
from smevals.grade.labels import HUMAN
from smevals.grade.select import Choice, choose
from smevals.grade.version import grader_version
from smevals.report import agreement, formats, gates, jsondoc, markdown, suite, taskpass
from smevals.report.document import EvalReport, Settings, generated_at
from smevals.report.rows import Filters
from smevals.sides.read import SideSpec, current_choice, keep, load_sides
from smevals.store.index import gc_paused
from smevals.store.read import Obj, Store, store_root
from smevals.store.records import GradeRecord

FORMATS = ("markdown", "json", "csv", "junit")
CSV_LINES = ("runs", "checks", "summary")


@dataclass(frozen=True)
class ReportOptions:
    paths: tuple[str, ...]
    side: SideSpec = SideSpec()
    fmt: str = "markdown"
    by_task: bool = False
    fail_under: str | None = None
    min_pass_rate: str | None = None
    allow_incomplete: bool = False
    task_pass: str = taskpass.DEFAULT
    csv_lines: str | None = None        # what one CSV line is (CSV_LINES; None: runs)


@dataclass
class ReportResult:
    text: str
    gate_failures: list[str]


def report_command(opts: ReportOptions) -> ReportResult:
    with gc_paused():
        return _report(opts)


def _report(opts: ReportOptions) -> ReportResult:
    if opts.fmt not in FORMATS:
        raise SmevalsError(f"--format: '{opts.fmt}' is not one of {', '.join(FORMATS)}")
    if opts.task_pass not in taskpass.RULES:
        raise SmevalsError(f"--task-pass: '{opts.task_pass}' is not one of "
                           f"{', '.join(taskpass.RULES)}")
    if opts.csv_lines is not None and (opts.fmt != "csv" or opts.csv_lines not in CSV_LINES):
        raise SmevalsError(f"--csv-lines: '{opts.csv_lines}' is not one of "
                           f"{', '.join(CSV_LINES)}" if opts.fmt == "csv" else
                           f"--csv-lines goes with --format csv, not {opts.fmt}")
    if opts.side.version and opts.side.any_version:
        raise SmevalsError("--grader-version and --any-version exclude each other")
    try:
        limits = gates.Gates(gates.parse_score(opts.fail_under),
                             gates.parse_rate(opts.min_pass_rate), opts.allow_incomplete)
    except gates.GateError as exc:
        raise SmevalsError(str(exc)) from None
    sides = load_sides(opts.paths, opts.side)
    keep(sides)
    reports = [side.report for side in sides]
    failures = gates.check(limits, reports)
    settings = Settings(generated_at(), opts.by_task, opts.task_pass)
    text = _render(opts, reports, settings, limits, failures)
    return ReportResult(text, failures)


def _render(opts: ReportOptions, reports: list[EvalReport], settings: Settings,
            limits: gates.Gates, failures: list[str]) -> str:
    if opts.fmt == "json":
        return formats.to_json(reports, settings, opts.side.rev, _filters_json(opts.side.filters),
                               {**limits.as_dict(), "passed": not failures,
                                "failures": failures})
    if opts.fmt == "csv":
        if opts.csv_lines == "checks":
            return suite.checks_csv(reports)
        if opts.csv_lines == "summary":
            return suite.summary_csv(reports)
        return formats.to_csv(reports)
    if opts.fmt == "junit":
        return formats.to_junit(reports, opts.task_pass)
    return markdown.render(reports, settings, opts.side.filters.describe())


def _filters_json(filters: Filters) -> jsondoc.Filters:
    return {"tasks": list(filters.tasks), "models": list(filters.models),
            "configs": list(filters.configs)}


def agreement_command(paths: tuple[str, ...], grader: str, against: str, filters: Filters,
                      store: str | None, fmt: str) -> str:
    if fmt not in ("markdown", "json"):
        raise SmevalsError(f"--agreement: the format is markdown or json, not {fmt}")
    results = []
    for ev in load_evals(paths):
        (a_name, a_choice), (b_name, b_choice) = side(ev, grader), side(ev, against)
        grades = Store(store_root(ev.path, ev.name, store)).grades()
        results.append((ev.name, agreement.compare(a_name, b_name,
                                                   _chosen(grades, a_choice, filters),
                                                   _chosen(grades, b_choice, filters))))
    if fmt == "json":
        docs = [agreement.as_json(name, ag) for name, ag in results]
        return orjson.dumps({"agreement": docs}, option=orjson.OPT_INDENT_2).decode() + "\n"
    return "\n".join(agreement.markdown(name, ag) for name, ag in results)


def side(ev: Eval, spec: str) -> tuple[str, Choice]:
    """(how the side is shown, how its Grades are chosen) for `NAME[:VERSION]` or human."""
    name, _, version = spec.strip().partition(":")
    if not name:
        raise SmevalsError(f"--agreement/--against: '{spec}' names no grader")
    if name == HUMAN:
        return HUMAN, Choice(HUMAN, None, any_version=True)
    if version:
        return f"{name}@{version}", Choice(name, version)
    grader = pick_grader(ev, name)
    current = grader_version(grader)
    return f"{name}@{current}", current_choice(ev, name, current)


def _chosen(grades: list[Obj[GradeRecord]], choice: Choice,
            filters: Filters) -> dict[str, Obj[GradeRecord]]:
    counted, _newest = choose(grades, choice)
    out: dict[str, Obj[GradeRecord]] = {}
    for rel, grade in counted.items():
        run = grade.record.get("run") or {}
        if filters.match(str(run.get("task")), str(run.get("config")), str(run.get("model"))):
            out[rel] = grade
    return out
