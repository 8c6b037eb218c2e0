"""Each Check's results per config x model: the Eval page's Checks table.

A Check is named by its `name`, else its checker; a name that occurs twice in one Grade
gets ` #2`, ` #3` after its later occurrences, so `contains` and `contains #2` are two
Checks. Its verdict in one Grade is `p` (passed), `f` (failed), `e` (error: no verdict),
`s` (skipped) or `-` (the Grade has no such Check).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from smevals.report.rows import ERRORED, Excluded, Row
from smevals.store.read import Obj
from smevals.store.records import GradeBrief

NAME_LIMIT = 200            # characters of a Check's name


def verdict(check: dict[str, Any]) -> str:
    """p, f, e or s: a Check record's result."""
    if check.get("skipped"):
        return "s"
    if check.get("ok"):
        return "p"
    return "e" if check.get("error") else "f"


def checks_of(grade: Obj[GradeBrief]) -> list[tuple[str, dict[str, Any]]]:
    """(name, record) of each Check of a Grade, in order, names made unique."""
    checks = grade.record.get("checks")
    seen: dict[str, int] = {}
    out = []
    for check in checks if isinstance(checks, list) else []:
        if not isinstance(check, dict):
            continue
        base = str(check.get("name") or check.get("checker") or "check")[:NAME_LIMIT]
        seen[base] = seen.get(base, 0) + 1
        out.append((base if seen[base] == 1 else f"{base} #{seen[base]}", check))
    return out


def check_names(grades: Iterable[Obj[GradeBrief]]) -> list[str]:
    """Every Check name of `grades`, in the order they first appear."""
    names: dict[str, None] = {}
    for grade in grades:
        for name, _check in checks_of(grade):
            names.setdefault(name, None)
    return list(names)


def _tally(figures: dict[str, Any], check: dict[str, Any]) -> None:
    figures[{"p": "passed", "f": "failed", "e": "errors", "s": "skipped"}[verdict(check)]] += 1
    score = check.get("score")
    if isinstance(score, int | float) and not isinstance(score, bool) and not check.get("skipped"):
        figures["scores"].append(float(score))


def _finish(figures: dict[str, Any]) -> dict[str, Any]:
    scores = figures.pop("scores")
    verdicts = figures["passed"] + figures["failed"]
    return {**figures, "pass_rate": figures["passed"] / verdicts if verdicts else None,
            "mean": sum(scores) / len(scores) if scores else None, "scored": len(scores)}


def check_table(rows: list[Row], errored: list[Obj[GradeBrief]],
                columns: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Per Check, per column (config, model): the counted Grades' verdicts (passed, failed,
    skipped, pass rate over passed + failed, mean score where it scores) and the errors,
    counted over the counted Grades and the errored Grades left out of them."""
    graded: list[tuple[tuple[str, str], Obj[GradeBrief]]] = \
        [((r.config, r.model), r.grade) for r in rows]
    graded += [((str(_run_of(g).get("config")), str(_run_of(g).get("model"))), g)
               for g in errored]
    table: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    for name in check_names(g for _c, g in graded):
        table[name] = {}
    for column, grade in graded:
        for name, check in checks_of(grade):
            figures = table[name].setdefault(column, {"runs": 0, "passed": 0, "failed": 0,
                                                      "errors": 0, "skipped": 0, "scores": []})
            figures["runs"] += 1
            _tally(figures, check)
    return [{"check": name, "columns": [
        {"config": c, "model": m, **_finish(cells[(c, m)])} if (c, m) in cells else None
        for c, m in columns]} for name, cells in table.items()]


def _run_of(grade: Obj[GradeBrief]) -> dict[str, Any]:
    run = grade.record.get("run")
    return run if isinstance(run, dict) else {}


def errored_grades(excluded: list[Excluded]) -> list[Obj[GradeBrief]]:
    """The errored Grades of Runs left out of the rows (a Check got no verdict)."""
    return [e.grade for e in excluded if e.reason == ERRORED and e.grade is not None]
