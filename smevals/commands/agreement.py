"""`smevals report --agreement GRADER[:VERSION] [--against human|GRADER[:VERSION]]`: pick
the Grade that counts for each Run on each side, then compare (smevals.report.agreement).

A side is `human` (each Run's newest label), `NAME:VERSION` (the newest Grade of that
version prefix, whether or not the grader still exists), or `NAME` (the newest Grade of
the grader's current version and the Tasks' current answer keys, as `report` counts).
"""

from __future__ import annotations

import orjson

from smevals.errors import SmevalsError
from smevals.grade.labels import HUMAN
from smevals.grade.select import Choice, choose
from smevals.grade.version import grader_version, grading_hash
from smevals.report import agreement
from smevals.report.rows import Filters
from smevals.spec.model import Eval
from smevals.spec.pick import load_evals, pick_grader
from smevals.store.read import Obj, Store, store_root
from smevals.store.records import GradeRecord


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
    grading = {t.name: grading_hash(dict(t.grading)) for t in ev.tasks}
    return f"{name}@{current}", Choice(name, current, grading)


def _chosen(grades: list[Obj[GradeRecord]], choice: Choice,
            filters: Filters) -> dict[str, Obj[GradeRecord]]:
    counted, _newest = choose(grades, choice)
    out: dict[str, Obj[GradeRecord]] = {}
    for rel, grade in counted.items():
        run = grade.record.get("run") or {}
        if filters.match(str(run.get("task")), str(run.get("config")), str(run.get("model"))):
            out[rel] = grade
    return out
