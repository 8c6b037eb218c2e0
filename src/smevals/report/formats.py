"""Machine formats of the report: JSON (documented in docs/reports.md), CSV and JUnit XML."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import TypedDict

import orjson

from smevals import stats
from smevals.grade.score import score_note, score_text
from smevals.report import junit
from smevals.report.checks import CheckRow, check_rows
from smevals.report.document import EvalReport, Settings
from smevals.report.jsondoc import (
    EvalEntry,
    ExcludedEntry,
    Figures,
    Filters,
    GatesEntry,
    LeaderEntry,
    RepeatsEntry,
    ReportDoc,
    RowEntry,
    RunnerCount,
    Summary,
    TamperingCount,
)
from smevals.report.repeats import Repeats
from smevals.report.rows import ERRORED, FAILED, OLDER, STALE, UNGRADED, Collected, Excluded, Row
from smevals.report.suite import summary_json as summary_json_of
from smevals.report.summary import Group, by_task, metrics, ranked_by, ranks, tag_counts
from smevals.report.taskpass import DEFAULT, task_passes

JSON_FORMAT = 1


class _Runners(TypedDict, total=False):
    runners: list[RunnerCount]


class _Judged(TypedDict, total=False):
    errored: int
    tampering: TamperingCount
    judge: dict[str, float]
CSV_COLUMNS = ("eval", "task", "config", "model", "sample", "run_id", "grade_id",
               "grader_version", "outcome", "score", "stale", "tags", "metrics", "score_note")


# --- JSON ------------------------------------------------------------------------------


def to_json(reports: list[EvalReport], settings: Settings, rev: str | None, filters: Filters,
            gates: GatesEntry) -> str:
    doc: ReportDoc = {"format": JSON_FORMAT, "generated": settings.generated, "rev": rev,
                      "filters": filters, "gates": gates, "task_pass": settings.task_pass,
                      "evals": [eval_json(r, settings.task_pass) for r in reports],
                      "suite": summary_json_of(reports)}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE).decode()


def eval_json(report: EvalReport, task_pass: str = DEFAULT) -> EvalEntry:
    c = report.collected
    groups = report.groups
    return {
        "eval": report.name, "path": report.path, "store": report.store,
        "rev": report.rev, "commit": report.commit,
        "grader": {"name": report.grader, "version": report.version, "choice": report.choice,
                   "current_version": report.current},
        "grader_version": report.version,
        "excluded_failed_runs": c.count(FAILED),
        "summary": summary_json(report),
        "ranked_by": ranked_by(groups),
        "leaderboard": [group_json(g, rank, task_pass,
                                   report.checks.pairs.get((g.config, g.model), []))
                        for rank, g in zip(ranks(groups), groups, strict=True)],
        "tags": [{"tag": tag, "count": n, "total": len(c.rows), "share": n / len(c.rows)}
                 for tag, n in tag_counts(c.rows)],
        "repeats": [repeats_json(r) for r in report.repeats],
        "rows": [row_json(row, report.store) for row in c.rows],
        "excluded": [excluded_json(e) for e in c.excluded],
        "notes": list(report.notes),
        "damaged": list(report.damaged),
    }


def summary_json(report: EvalReport) -> Summary:
    c = report.collected
    everything = Group("", "", c.rows)
    return {
        "runs": len(c.runs), "graded": len(c.rows), "passed": c.passed,
        "failed": len(c.rows) - c.passed,
        "ungraded": c.count(UNGRADED) + c.count(OLDER),
        "older_version_only": c.count(OLDER), "failed_runs_excluded": c.count(FAILED),
        "stale_excluded": c.count(STALE), "stale_reasons": {why.replace(" ", "_"): n
                                                          for why, n in report.stale.items()},
        "stale_included": c.stale_included,
        "other_version_grades": report.older_versions,
        **_judged(c),
        **_stats(everything),
        "checks": [row.as_dict() for row in report.checks.overall],
    }


def _judged(c: Collected) -> _Judged:
    """`errored` (Runs whose Grade is an error), `tampering` (Runs whose Grade marks
    tampering: their count and the count by kind) and `judge` (judge usage summed): present
    only when there are any."""
    out: _Judged = {}
    if c.count(ERRORED):
        out["errored"] = c.count(ERRORED)
    tampered = c.tampering()
    if tampered:
        out["tampering"] = {"runs": tampered.pop("runs"), "kinds": tampered}
    usage = c.judge_usage()
    if usage:
        out["judge"] = usage
    return out


def _stats(group: Group) -> Figures:
    low, high = group.wilson
    return {"scored": len(group.scores), "mean": group.mean, "stderr": group.stderr,
            "pass_rate": group.pass_rate if group.n else None, "pass_rate_ci": [low, high]}


def group_json(group: Group, rank: int, task_pass: str = DEFAULT,
               checks: list[CheckRow] | None = None) -> LeaderEntry:
    """A leaderboard entry; `checks`: its per-Check figures (EvalReport.checks.pairs, which
    count the errored Grades too), by default over the group's rows."""
    if checks is None:
        checks = check_rows(row.grade.record for row in group.rows)
    return {
        "rank": rank, "config": group.config, "model": group.model, "runs": group.n,
        "passed": group.passed, "failed": group.failed, **_stats(group),
        "metrics": [{"name": m.name, "kind": m.kind, "n": m.n,
                     "mean": sum(m.values) / m.n,
                     "stderr": None if m.kind == "boolean" else stats.stderr(m.values)}
                    for m in metrics(group.rows)],
        "tasks": [{"task": t.task, "runs": t.n, "passed": t.passed,
                   "task_passed": task_passes(t.rows, task_pass), **_stats(t)}
                  for t in by_task(group)],
        "checks": [c.as_dict() for c in checks],
        **_runners(group),
    }


def _runners(group: Group) -> _Runners:
    """Harness runners and the agent, with their versions: present only when there are any."""
    if not group.runners:
        return {}
    return {"runners": [{"runner": name, "runs": n} for name, n in group.runners]}


def repeats_json(rep: Repeats) -> RepeatsEntry:
    return {
        "config": rep.config, "model": rep.model, "tasks": len(rep.cells),
        "stable_pass": rep.count("stable_pass"), "stable_fail": rep.count("stable_fail"),
        "flaky": rep.count("flaky"),
        "cells": [{"task": c.task, "runs": c.n, "passed": c.passed, "class": c.kind}
                  for c in rep.cells],
        "k": [{"k": k, "pass_at_k": at, "pass_hat_k": hat, "tasks": n}
              for k, at, hat, n in rep.table()],
    }


def row_json(row: Row, store: str) -> RowEntry:
    run, grade = row.run.record, row.grade.record
    marks = row.tampering
    entry: RowEntry = {
        "task": row.task, "config": row.config, "model": row.model,
        "outcome": grade.get("outcome"), "score": row.score, "tags": row.tags,
        "metrics": row.metrics, "run_dir": f"{store}/{row.run.rel}",
        "run_id": row.run.id, "run_rel": row.run.rel, "sample": run.get("sample"),
        "started": run.get("started"), "duration_seconds": run.get("duration_seconds"),
        "grade_id": row.grade.id, "grade_rel": row.grade.rel,
        "grader_version": row.version, "graded": grade.get("graded"), "stale": row.stale,
        "score_note": score_note(grade) or None,
    }
    return {"tampering": marks, **entry} if marks else entry


def excluded_json(item: Excluded) -> ExcludedEntry:
    return {"task": item.task, "config": item.config, "model": item.model,
            "run_id": item.run.id, "run_rel": item.run.rel, "reason": item.reason,
            "grade_id": item.grade.id if item.grade else None}


# --- CSV -------------------------------------------------------------------------------


def to_csv(reports: list[EvalReport]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for report in reports:
        for row in report.collected.rows:
            score = "" if row.score is None else repr(row.score)
            metrics_text = orjson.dumps(row.metrics, option=orjson.OPT_SORT_KEYS).decode()
            writer.writerow([report.name, row.task, row.config, row.model,
                             row.run.record.get("sample", ""), row.run.id, row.grade.id,
                             row.version, row.grade.record.get("outcome"), score,
                             str(row.stale).lower(), " ".join(row.tags), metrics_text,
                             score_note(row.grade.record)])
    return buffer.getvalue()


# --- JUnit XML -------------------------------------------------------------------------


def to_junit(reports: list[EvalReport], task_pass: str = DEFAULT) -> str:
    """One testsuite per Eval x config x model, one testcase per task: a task passes by the
    `--task-pass` rule over its graded Runs (by default more than half pass); ungraded tasks
    are skipped, runner failures errors."""
    suites = [_suite(f"{report.name} / {config} / {model}", cells, task_pass)
              for report in reports for (config, model), cells in _cells(report).items()]
    return junit.junit_xml("smevals", suites)


Cells = dict[str, tuple[list[Row], list[Excluded]]]


def _cells(report: EvalReport) -> dict[tuple[str, str], Cells]:
    out: dict[tuple[str, str], Cells] = {}
    for row in report.collected.rows:
        cell = out.setdefault((row.config, row.model), {}).setdefault(row.task, ([], []))
        cell[0].append(row)
    for item in report.collected.excluded:
        if item.reason != STALE:
            cell = out.setdefault((item.config, item.model), {}).setdefault(item.task, ([], []))
            cell[1].append(item)
    return {key: out[key] for key in sorted(out)}


def _suite(name: str, cells: Cells, task_pass: str) -> junit.Suite:
    cases = []
    for task in sorted(cells):
        rows, excluded = cells[task]
        seconds = sum(float(r.run.record.get("duration_seconds") or 0) for r in rows)
        cases.append(junit.Case(name, task, seconds,
                                verdict=_verdict(rows, excluded, task_pass)))
    return junit.Suite(name, cases)


def _verdict(rows: list[Row], excluded: list[Excluded], task_pass: str) -> junit.Verdict | None:
    if rows:
        passed = sum(1 for r in rows if r.passed)
        flaky = " (flaky)" if 0 < passed < len(rows) else ""
        counts = f"{passed}/{len(rows)} runs passed{flaky}; --task-pass {task_pass}"
        if not task_passes(rows, task_pass):
            return junit.Verdict("failure", "\n".join(_row_detail(r) for r in rows), "fail",
                                 counts)
        if passed < len(rows):
            return junit.Verdict("system-out", "\n".join(
                [counts, *(_row_detail(r) for r in rows if not r.passed)]))
        return None
    failed = [e for e in excluded if e.reason == FAILED]
    if failed and len(failed) == len(excluded):
        return junit.Verdict("error", "\n".join(_failure_detail(e) for e in failed),
                             "runner_failed", f"the runner failed in {len(failed)} run(s)")
    return junit.Verdict("skipped", message="no Grade that counts (ungraded)")


def _row_detail(row: Row) -> str:
    shown = score_text(row.grade.record)
    score = f" score={shown}" if shown else ""
    notes = [f"  {c.get('name') or c.get('checker')}: {c.get('notes', 'failed')}"
             for c in row.grade.record.get("checks") or []
             if isinstance(c, dict) and c.get("ok") is False]
    head = f"run {row.run.id} grade {row.grade.id}: {row.grade.record.get('outcome')}{score}"
    return "\n".join([head, *notes])


def _failure_detail(item: Excluded) -> str:
    failure: Mapping[str, object] = item.run.record.get("failure") or {}
    return f"run {item.run.id}: {failure.get('kind', 'failed')}: {failure.get('detail', '')}"
