"""Each Check's results per config x model: the Eval page's Checks table, and the verdict
letters of the explore data.

The figures are `smevals.report.checks.check_rows`, the one computation `report` and
`diff` use: a Check is named by its `name`, else its checker (`contains #2` for a second
one in a Grade); it is counted over the Grades that count and the errored Grades; its
pass rate is over its verdicts. Each cell also carries the text `report` prints for it
(`CheckRow.cell`), so the site and the Markdown report say the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from smevals.report.checks import CheckRow, check_rows, labelled
from smevals.report.checks import verdict as verdict_word
from smevals.report.rows import ERRORED, Excluded, Row
from smevals.site.pagedata import CheckCell, CheckLine
from smevals.store.read import Obj
from smevals.store.records import GradeBrief

LETTERS = {"pass": "p", "fail": "f", "error": "e", "skipped": "s"}
Pair = tuple[str, str]


def verdict(check: Mapping[str, Any]) -> str:
    """p, f, e or s: a Check record's result (report.checks.verdict, as one letter)."""
    return LETTERS[verdict_word(check)]


def checks_of(grade: Obj[GradeBrief]) -> list[tuple[str, Mapping[str, Any]]]:
    """(name, record) of each Check of a Grade, in order, names made unique."""
    return labelled(grade.record.get("checks"))


def check_names(grades: Iterable[Obj[GradeBrief]]) -> list[str]:
    """Every Check name of `grades`, in the grader's order."""
    return [row.check for row in check_rows(g.record for g in grades)]


def errored_grades(excluded: list[Excluded]) -> list[Excluded]:
    """The Runs left out of the rows because their Grade is an error (a Check got no
    verdict): their Checks are counted too."""
    return [e for e in excluded if e.reason == ERRORED and e.grade is not None]


def cell_json(row: CheckRow) -> CheckCell:
    return {**row.as_dict(), "text": row.cell}


def check_table(rows: list[Row], errored: list[Excluded],
                columns: list[Pair]) -> list[CheckLine]:
    """Per Check (in the grader's order), per column (config, model) of `columns`: its
    figures over that column's Grades (None for a column without any)."""
    grades: dict[Pair, list[Mapping[str, Any]]] = {}
    for row in rows:
        grades.setdefault((row.config, row.model), []).append(row.grade.record)
    for item in errored:
        if item.grade is not None:
            grades.setdefault((item.config, item.model), []).append(item.grade.record)
    overall = check_rows(g for pair in grades.values() for g in pair)
    per = {pair: {r.check: r for r in check_rows(records)} for pair, records in grades.items()}
    return [{"check": name, "columns": [_cell(per.get(pair), name, len(grades.get(pair, [])))
                                        for pair in columns]}
            for name in (row.check for row in overall)]


def _cell(rows: dict[str, CheckRow] | None, name: str, total: int) -> CheckCell | None:
    if rows is None:
        return None
    row = rows.get(name) or CheckRow(name, total, 0, 0, 0, total)     # never in these Grades
    return cell_json(row)
