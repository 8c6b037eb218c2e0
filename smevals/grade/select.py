"""Which Grade counts for each Run: `grades_by_run` and `pick`, used by grade, report, diff
and the site."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from smevals.store.store import Obj


@dataclass(frozen=True)
class Choice:
    """How to pick: the newest Grade of `version` (a prefix), or of any version."""

    grader: str
    version: str | None            # the current version by default
    grading: dict[str, str] | None = None   # task name -> current grading hash, when known
    any_version: bool = False


def grades_by_run(grades: list[Obj], grader: str) -> dict[str, list[Obj]]:
    """The grades of `grader` for each Run rel, oldest first."""
    out: dict[str, list[Obj]] = defaultdict(list)
    for grade in grades:
        rec = grade.record
        if rec.get("grader", {}).get("name") == grader:
            out[str(rec.get("run", {}).get("rel"))].append(grade)
    for items in out.values():
        items.sort(key=lambda g: (str(g.record.get("graded")), g.id))
    return out


def counts(grade: Obj, choice: Choice) -> bool:
    """Whether `grade` is of the chosen version (and, by default, current grading data)."""
    if choice.any_version:
        return True
    version = str(grade.record.get("grader", {}).get("version", ""))
    if choice.version is None or not version.startswith(choice.version):
        return False
    if choice.grading is None:
        return True
    task = str(grade.record.get("run", {}).get("task"))
    want = choice.grading.get(task)
    return want is None or grade.record.get("grading_hash") == want


def pick(history: list[Obj], choice: Choice) -> Obj | None:
    """The newest Grade in `history` (oldest first) that counts under `choice`."""
    for grade in reversed(history):
        if counts(grade, choice):
            return grade
    return None

