"""The summary over the Evals of a Suite: one line per Eval x config x model (each Eval's
leaderboard order), which `report` prints before the details when it covers several Evals.
Also the CSV lines of `--csv-lines checks|summary`."""

from __future__ import annotations

import csv
import io

from smevals import stats
from smevals.report.document import EvalReport
from smevals.report.jsondoc import SuiteLine
from smevals.report.summary import Group
from smevals.report.summary import table_cell as _cell

SUMMARY_COLUMNS = ("eval", "config", "model", "runs", "passed", "failed", "scored", "mean",
                   "stderr", "pass_rate", "pass_rate_low", "pass_rate_high")
CHECK_COLUMNS = ("eval", "config", "model", "check", "runs", "passed", "failed", "errors",
                 "skipped", "pass_rate", "pass_rate_low", "pass_rate_high", "scored", "mean")


def summary_json(reports: list[EvalReport]) -> list[SuiteLine]:
    """One entry per Eval x config x model with graded Runs."""
    out: list[SuiteLine] = []
    for report in reports:
        for g in report.groups:
            low, high = g.wilson
            out.append({"eval": report.name, "config": g.config, "model": g.model,
                        "runs": g.n, "passed": g.passed, "failed": g.failed,
                        "scored": len(g.scores), "mean": g.mean, "stderr": g.stderr,
                        "pass_rate": g.pass_rate, "pass_rate_ci": [low, high]})
    return out


def summary_markdown(reports: list[EvalReport]) -> list[str]:
    """`# Summary: 2 Evals` and its table; an Eval without graded Runs has one line that
    says so."""
    lines = [f"# Summary: {len(reports)} Evals", "",
             "| Eval | config | model | runs | score | pass rate | 95% CI |",
             "|---|---|---|---|---|---|---|"]
    for report in reports:
        if not report.groups:
            lines.append(f"| {_cell(report.name)} | - | - | 0 | - | no graded Runs | - |")
        for g in report.groups:
            lines.append(f"| {_cell(report.name)} | {_cell(g.config)} | {_cell(g.model)} "
                         f"| {g.n} | {_score(g)} | {g.pass_rate:.0%} ({g.passed}/{g.n}) "
                         f"| {stats.fmt_ci(g.wilson)} |")
    return lines


def _score(group: Group) -> str:
    return group.score_text if group.scores else "-"


def _number(value: float | None) -> str:
    return "" if value is None else repr(value)


def summary_csv(reports: list[EvalReport]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(SUMMARY_COLUMNS)
    for entry in summary_json(reports):
        low, high = entry["pass_rate_ci"]
        writer.writerow([entry["eval"], entry["config"], entry["model"], entry["runs"],
                         entry["passed"], entry["failed"], entry["scored"],
                         _number(entry["mean"]), _number(entry["stderr"]),
                         _number(entry["pass_rate"]), repr(low), repr(high)])
    return buffer.getvalue()


def checks_csv(reports: list[EvalReport]) -> str:
    """One line per Eval x config x model x Check (pairs by config, then model; Checks in
    the grader's order)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CHECK_COLUMNS)
    for report in reports:
        pairs = report.checks.pairs
        for config, model in sorted(pairs):
            for c in pairs[(config, model)]:
                low, high = c.wilson
                writer.writerow([report.name, config, model, c.check, c.runs, c.passed,
                                 c.failed, c.errors, c.skipped, _number(c.pass_rate),
                                 repr(low), repr(high), len(c.scores), _number(c.mean)])
    return buffer.getvalue()
