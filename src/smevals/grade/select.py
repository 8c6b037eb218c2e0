"""Which Grade counts for each Run: `grades_by_run` and `counts` (grade and the site), and
`choose`, one pass over every Grade for report and diff."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from smevals.store.read import Obj
from smevals.store.records import GradeBrief

G = TypeVar("G", bound=Obj[GradeBrief])     # a Grade, full or brief: what goes in comes out


@dataclass(frozen=True)
class Choice:
    """How to pick: the newest Grade of `version` (a prefix), or of any version."""

    grader: str
    version: str | None            # the current version by default
    grading: dict[str, str] | None = None   # task name -> current grading hash, when known
    any_version: bool = False


def grades_by_run(grades: Sequence[G], grader: str) -> dict[str, list[G]]:
    """The grades of `grader` for each Run rel, oldest first."""
    out: dict[str, list[G]] = defaultdict(list)
    for grade in grades:
        rec = grade.record
        if rec.get("grader", {}).get("name") == grader:
            out[str(rec.get("run", {}).get("rel"))].append(grade)
    for items in out.values():
        items.sort(key=_newness)
    return out


def counts(grade: Obj[GradeBrief], choice: Choice) -> bool:
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


def choose(grades: Sequence[G], choice: Choice) -> tuple[dict[str, G], dict[str, G]]:
    """For each Run rel: the newest Grade of `choice.grader` that counts under `choice`, and
    the newest one of any version ("newest" orders by the time graded, then the id).

    Most Runs have one Grade of a grader, so Grades are first grouped by Run cheaply and
    only Runs with several are sorted; whether a Grade counts is worked out once for each
    (version, task, grading hash)."""
    first: dict[str, G] = {}
    more: dict[str, list[G]] = {}
    for grade in grades:
        rec = grade.record
        grader = rec.get("grader")
        if not isinstance(grader, dict) or grader.get("name") != choice.grader:
            continue
        run = rec.get("run")
        rel = str(run.get("rel")) if isinstance(run, dict) else "None"
        if rel in first:
            more.setdefault(rel, [first[rel]]).append(grade)
        else:
            first[rel] = grade
    verdict = _Verdicts(choice)
    chosen = {rel: grade for rel, grade in first.items() if verdict(grade)}
    for rel, history in more.items():
        history.sort(key=_newness)
        first[rel] = history[-1]
        counted = [grade for grade in history if verdict(grade)]
        if counted:
            chosen[rel] = counted[-1]
        else:
            chosen.pop(rel, None)
    return chosen, first


def _newness(grade: Obj[GradeBrief]) -> tuple[str, str]:
    return (str(grade.record.get("graded")), grade.id)


class _Verdicts:
    """`counts(grade, choice)`, remembered for each (version, task, grading hash)."""

    def __init__(self, choice: Choice):
        self.choice = choice
        self.known: dict[tuple[str, str, object], bool] = {}

    def __call__(self, grade: Obj[GradeBrief]) -> bool:
        rec = grade.record
        grader, run, ghash = rec["grader"], rec.get("run"), rec.get("grading_hash")
        facts = (str(grader.get("version", "")),
                 str(run.get("task")) if isinstance(run, dict) else "None",
                 ghash if ghash.__class__ is str else ("!", repr(ghash)))
        found = self.known.get(facts)
        if found is None:
            found = self.known[facts] = counts(grade, self.choice)
        return found


def superseded_errors(grades: Sequence[G]) -> set[str]:
    """Ids of the errored Grades (no verdict) that a later verdict (pass or fail) of the
    same grader version replaced for the same Run: retries that succeeded. `gc --errored`
    removes them, and lists of a Run's Grades leave them out."""
    latest: dict[tuple[str, str, str], tuple[str, str]] = {}    # newest verdict's newness
    errors: list[tuple[tuple[str, str, str], tuple[str, str], str]] = []
    for grade in grades:
        rec = grade.record
        grader, run = rec.get("grader"), rec.get("run")
        if not isinstance(grader, dict) or not isinstance(run, dict):
            continue
        key = (str(grader.get("name")), str(grader.get("version")), str(run.get("rel")))
        if rec.get("outcome") == "error":
            errors.append((key, _newness(grade), grade.id))
        elif rec.get("outcome") in ("pass", "fail"):
            latest[key] = max(latest.get(key, ("", "")), _newness(grade))
    return {gid for key, when, gid in errors if key in latest and latest[key] > when}
